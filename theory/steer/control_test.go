package steer

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// randomProblem builds a controller problem with awkward sizes: V = 7 tokens, P = 5 prototypes, 6 items of 2
// or 3 options with 1 or 2 tokens each; rows have 1–3 active prototypes.
func randomProblem(seed uint64) *Problem {
	rng := testRNG(seed)
	const V, P = 7, 5
	p := &Problem{}
	for i := range P {
		p.Signatures = append(p.Signatures, normal(rng, V, 1))
		p.IDs = append(p.IDs, 10+i)
	}
	newRow := func() int {
		r := Row{Logits: normal(rng, V, 1)}
		for _, c := range rng.Perm(P)[:1+rng.IntN(3)] {
			r.Units = append(r.Units, c)
			r.Acts = append(r.Acts, rng.Float64())
		}
		p.Rows = append(p.Rows, r)
		return len(p.Rows) - 1
	}
	for range 6 {
		shared := newRow()
		it := Item{}
		nOpt := 2 + rng.IntN(2)
		for range nOpt {
			opt := []Token{{Row: shared, Target: int32(rng.IntN(V))}}
			if rng.IntN(2) == 0 {
				opt = append(opt, Token{Row: newRow(), Target: int32(rng.IntN(V))})
			}
			it.Options = append(it.Options, opt)
		}
		it.Correct = rng.IntN(nOpt)
		p.Items = append(p.Items, it)
	}
	return p
}

func allItems(p *Problem) []int {
	out := make([]int, len(p.Items))
	for i := range out {
		out[i] = i
	}
	return out
}

// referenceScore is (S1)–(S2) written directly: Σ over the option's tokens of log softmax(l + Σ_j γ a_j s_j)[y].
func referenceScore(p *Problem, gamma []float64, opt []Token) float64 {
	total := 0.0
	for _, t := range opt {
		row := p.Rows[t.Row]
		l := make([]float64, len(row.Logits))
		for v := range l {
			l[v] = row.Logits[v]
			for j, c := range row.Units {
				l[v] += gamma[c] * row.Acts[j] * p.Signatures[c][v]
			}
		}
		z := 0.0
		for _, x := range l {
			z += math.Exp(x)
		}
		total += l[t.Target] - math.Log(z)
	}
	return total
}

// TestController_ScoresMatchReference checks the option scores (S2) and the loss (S3 without L1) against the direct
// formulas, at γ = 0 (the frozen model's log-probabilities) and at a random γ.
func TestController_ScoresMatchReference(t *testing.T) {
	p := randomProblem(1)
	items := allItems(p)
	for _, gamma := range [][]float64{make([]float64, len(p.Signatures)), normal(testRNG(2), len(p.Signatures), 0.7)} {
		res := p.Eval(gamma, items, false)
		wantLoss := 0.0
		for ii, i := range items {
			var want []float64
			for _, opt := range p.Items[i].Options {
				want = append(want, referenceScore(p, gamma, opt))
			}
			requireClose(t, "scores", want, res.Scores[ii], 1e-12)
			z := 0.0
			for _, s := range want {
				z += math.Exp(s)
			}
			wantLoss += (math.Log(z) - want[p.Items[i].Correct]) / float64(len(items))
		}
		require.InDelta(t, wantLoss, res.Loss, 1e-12*(1+wantLoss))
	}
}

// TestController_GradientMatchesFiniteDifferences checks (S4) through the loss against central finite differences.
func TestController_GradientMatchesFiniteDifferences(t *testing.T) {
	p := randomProblem(3)
	items := allItems(p)
	gamma := normal(testRNG(4), len(p.Signatures), 0.5)
	grad := p.Eval(gamma, items, true).Grad
	requireGradient(t, "∂L/∂γ", func(x []float64) float64 { return p.Eval(x, items, false).Loss }, gamma, grad,
		gradTol)
}

// knownProblem: every item has options "token 0" and "token 1", the correct one is token 0, and the frozen logits
// favour token 1 by 1 nat. Prototype 0 (a = 1 everywhere) has the signature e₀ − e₁, which a gain γ > 1/2 turns
// into a correct preference; prototype 1 (a = 0.5) has a constant signature, which shifts every logit equally and
// so changes no probability: its gradient is exactly 0.
func knownProblem(n int) *Problem {
	p := &Problem{Signatures: [][]float64{{1, -1, 0}, {2, 2, 2}}, IDs: []int{3, 8}}
	for range n {
		p.Rows = append(p.Rows, Row{Logits: []float64{0, 1, 0.5}, Units: []int{0, 1}, Acts: []float64{1, 0.5}})
		r := len(p.Rows) - 1
		p.Items = append(p.Items, Item{Options: [][]Token{{{r, 1}}, {{r, 0}}}, Correct: 1})
	}
	return p
}

// TestController_LearnsTheHelpfulPrototype fits the known problem: accuracy goes from 0 to 1, only the helpful
// prototype gets a gain (> 1/2), and the irrelevant one stays exactly 0 under the L1 proximal step.
func TestController_LearnsTheHelpfulPrototype(t *testing.T) {
	p := knownProblem(5)
	items := allItems(p)
	before, _ := p.Accuracy([]float64{0, 0}, items)
	require.Equal(t, 0.0, before)
	gamma := p.Fit(items, FitConfig{Beta: 1e-3, Steps: 200, LR: 1e-2})
	after, hits := p.Accuracy(gamma, items)
	require.Equal(t, 1.0, after, "gamma=%v hits=%v", gamma, hits)
	require.Greater(t, gamma[0], 0.5)
	require.Equal(t, 0.0, gamma[1], "a constant signature has zero gradient; L1 keeps its gain at exactly 0")
}

// TestController_LargeBetaKeepsEveryGainZero: with β above every |∂L/∂γ_i| at γ = 0 (here |∂L/∂γ_0| ≤ 2), the
// proximal step never leaves 0, and MaxActive caps the number of gains.
func TestController_LargeBetaKeepsEveryGainZero(t *testing.T) {
	p := knownProblem(4)
	gamma := p.Fit(allItems(p), FitConfig{Beta: 10, Steps: 50, LR: 1e-2})
	require.Equal(t, []float64{0, 0}, gamma)

	x := []float64{0.5, -3, 0, 2, -2}
	KeepLargest(x, 2)
	require.Equal(t, []float64{0, -3, 0, 2, 0}, x, "the two largest |x| survive; ties keep the lower index")
}

// TestSelectBeta_PrefersTheSparserOnTies: on the known problem every β ≤ 1e-2 separates the items perfectly, so
// the tie goes to the largest β.
func TestSelectBeta_PrefersTheSparserOnTies(t *testing.T) {
	p := knownProblem(10)
	best, accs := p.SelectBeta(allItems(p), []float64{1e-4, 1e-2, 1e-3}, 0.2, 1, FitConfig{Steps: 100, LR: 1e-2})
	require.Equal(t, []float64{1, 1, 1}, accs)
	require.Equal(t, 1, best)
}

// TestBiasController_ScoresAndGradient checks the bias-only controller (S6) on a random problem: its option scores
// against log softmax(l + b) written out, and its gradient against central finite differences.
func TestBiasController_ScoresAndGradient(t *testing.T) {
	p := randomProblem(5)
	p.Bias, p.Vocab = true, 7
	items := allItems(p)
	b := normal(testRNG(6), p.Units(), 0.8)
	res := p.Eval(b, items, true)
	for ii, i := range items {
		var want []float64
		for _, opt := range p.Items[i].Options {
			total := 0.0
			for _, tk := range opt {
				l := p.Rows[tk.Row].Logits
				z := 0.0
				for v := range l {
					z += math.Exp(l[v] + b[v])
				}
				total += l[tk.Target] + b[tk.Target] - math.Log(z)
			}
			want = append(want, total)
		}
		requireClose(t, "scores", want, res.Scores[ii], 1e-12)
	}
	requireGradient(t, "∂L/∂b", func(x []float64) float64 { return p.Eval(x, items, false).Loss }, b, res.Grad,
		gradTol)
	shifted := p.Shifted(0, b, nil)
	for v := range shifted {
		require.InDelta(t, p.Rows[0].Logits[v]+b[v], shifted[v], 1e-15)
	}
}

// TestBiasController_LearnsTheAnswerToken: on the known problem the correct answer is always token 0 and the frozen
// logits favour token 1, so a bias alone fixes every item, with gains on the two option tokens only (the others'
// gradients are the softmax weights' small share, which the L1 step keeps at 0).
func TestBiasController_LearnsTheAnswerToken(t *testing.T) {
	p := knownProblem(5)
	p.Bias, p.Vocab = true, 3
	gamma := p.Fit(allItems(p), FitConfig{Beta: 1e-2, Steps: 200, LR: 1e-2})
	after, _ := p.Accuracy(gamma, allItems(p))
	require.Equal(t, 1.0, after)
	require.Greater(t, gamma[0]-gamma[1], 1.0, "b_0 − b_1 must overcome the 1-nat preference for token 1")
}
