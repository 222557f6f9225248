package steering

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/wbtest"
)

// randomCtrlProblem builds a controller problem with awkward sizes: V = 7 tokens, P = 5 prototypes, 6 items of 2
// or 3 options with 1 or 2 tokens each; rows have 1–3 active prototypes.
func randomCtrlProblem(seed uint64) *ctrlProblem {
	rng := wbtest.RNG(seed)
	const V, P = 7, 5
	p := &ctrlProblem{}
	for i := range P {
		p.sig = append(p.sig, wbtest.Normal(rng, V, 1))
		p.bankID = append(p.bankID, 10+i)
	}
	newRow := func() int {
		r := ctrlRow{logits: wbtest.Normal(rng, V, 1)}
		for _, c := range rng.Perm(P)[:1+rng.IntN(3)] {
			r.protos = append(r.protos, c)
			r.acts = append(r.acts, rng.Float64())
		}
		p.rows = append(p.rows, r)
		return len(p.rows) - 1
	}
	for range 6 {
		shared := newRow()
		it := ctrlItem{}
		nOpt := 2 + rng.IntN(2)
		for range nOpt {
			opt := []ctrlTok{{row: shared, target: int32(rng.IntN(V))}}
			if rng.IntN(2) == 0 {
				opt = append(opt, ctrlTok{row: newRow(), target: int32(rng.IntN(V))})
			}
			it.options = append(it.options, opt)
		}
		it.correct = rng.IntN(nOpt)
		p.items = append(p.items, it)
	}
	return p
}

func allItems(p *ctrlProblem) []int {
	out := make([]int, len(p.items))
	for i := range out {
		out[i] = i
	}
	return out
}

// referenceScore is (S1)–(S2) written directly: Σ over the option's tokens of log softmax(l + Σ_j γ a_j s_j)[y].
func referenceScore(p *ctrlProblem, gamma []float64, opt []ctrlTok) float64 {
	total := 0.0
	for _, t := range opt {
		row := p.rows[t.row]
		l := make([]float64, len(row.logits))
		for v := range l {
			l[v] = row.logits[v]
			for j, c := range row.protos {
				l[v] += gamma[c] * row.acts[j] * p.sig[c][v]
			}
		}
		z := 0.0
		for _, x := range l {
			z += math.Exp(x)
		}
		total += l[t.target] - math.Log(z)
	}
	return total
}

// TestController_ScoresMatchReference checks the option scores (S2) and the loss (S3 without L1) against the direct
// formulas, at γ = 0 (the frozen model's log-probabilities) and at a random γ.
func TestController_ScoresMatchReference(t *testing.T) {
	p := randomCtrlProblem(1)
	items := allItems(p)
	for _, gamma := range [][]float64{make([]float64, len(p.sig)), wbtest.Normal(wbtest.RNG(2), len(p.sig), 0.7)} {
		res := p.eval(gamma, items, false)
		wantLoss := 0.0
		for ii, i := range items {
			var want []float64
			for _, opt := range p.items[i].options {
				want = append(want, referenceScore(p, gamma, opt))
			}
			wbtest.RequireClose(t, "scores", want, res.scores[ii], 1e-12)
			z := 0.0
			for _, s := range want {
				z += math.Exp(s)
			}
			wantLoss += (math.Log(z) - want[p.items[i].correct]) / float64(len(items))
		}
		require.InDelta(t, wantLoss, res.loss, 1e-12*(1+wantLoss))
	}
}

// TestController_GradientMatchesFiniteDifferences checks (S4) through the loss against central finite differences.
func TestController_GradientMatchesFiniteDifferences(t *testing.T) {
	p := randomCtrlProblem(3)
	items := allItems(p)
	gamma := wbtest.Normal(wbtest.RNG(4), len(p.sig), 0.5)
	grad := p.eval(gamma, items, true).grad
	wbtest.RequireGradient(t, "∂L/∂γ", func(x []float64) float64 { return p.eval(x, items, false).loss }, gamma, grad,
		wbtest.GradTol)
}

// knownCtrlProblem: every item has options "token 0" and "token 1", the correct one is token 0, and the frozen logits
// favour token 1 by 1 nat. Prototype 0 (a = 1 everywhere) has the signature e₀ − e₁, which a gain γ > 1/2 turns
// into a correct preference; prototype 1 (a = 0.5) has a constant signature, which shifts every logit equally and
// so changes no probability: its gradient is exactly 0.
func knownCtrlProblem(n int) *ctrlProblem {
	p := &ctrlProblem{sig: [][]float64{{1, -1, 0}, {2, 2, 2}}, bankID: []int{3, 8}}
	for range n {
		p.rows = append(p.rows, ctrlRow{logits: []float64{0, 1, 0.5}, protos: []int{0, 1}, acts: []float64{1, 0.5}})
		r := len(p.rows) - 1
		p.items = append(p.items, ctrlItem{options: [][]ctrlTok{{{r, 1}}, {{r, 0}}}, correct: 1})
	}
	return p
}

// TestController_LearnsTheHelpfulPrototype fits the known problem: accuracy goes from 0 to 1, only the helpful
// prototype gets a gain (> 1/2), and the irrelevant one stays exactly 0 under the L1 proximal step.
func TestController_LearnsTheHelpfulPrototype(t *testing.T) {
	p := knownCtrlProblem(5)
	items := allItems(p)
	before, _ := p.accuracy([]float64{0, 0}, items)
	require.Equal(t, 0.0, before)
	gamma := p.fit(items, ctrlFit{beta: 1e-3, steps: 200, lr: 1e-2})
	after, hits := p.accuracy(gamma, items)
	require.Equal(t, 1.0, after, "gamma=%v hits=%v", gamma, hits)
	require.Greater(t, gamma[0], 0.5)
	require.Equal(t, 0.0, gamma[1], "a constant signature has zero gradient; L1 keeps its gain at exactly 0")
}

// TestController_LargeBetaKeepsEveryGainZero: with β above every |∂L/∂γ_i| at γ = 0 (here |∂L/∂γ_0| ≤ 2), the
// proximal step never leaves 0, and MaxActive caps the number of gains.
func TestController_LargeBetaKeepsEveryGainZero(t *testing.T) {
	p := knownCtrlProblem(4)
	gamma := p.fit(allItems(p), ctrlFit{beta: 10, steps: 50, lr: 1e-2})
	require.Equal(t, []float64{0, 0}, gamma)

	x := []float64{0.5, -3, 0, 2, -2}
	keepTopK(x, 2)
	require.Equal(t, []float64{0, -3, 0, 2, 0}, x, "the two largest |x| survive; ties keep the lower index")
}

// TestSelectBeta_PrefersTheSparserOnTies: on the known problem every β ≤ 1e-2 separates the items perfectly, so
// the tie goes to the largest β.
func TestSelectBeta_PrefersTheSparserOnTies(t *testing.T) {
	p := knownCtrlProblem(10)
	best, accs := p.selectBeta(allItems(p), []float64{1e-4, 1e-2, 1e-3}, 0.2, 1, ctrlFit{steps: 100, lr: 1e-2})
	require.Equal(t, []float64{1, 1, 1}, accs)
	require.Equal(t, 1, best)
}

// TestHeldOutDoc_FractionAndPairedSE checks the document split's fraction (within 4 standard errors over 20,000
// documents) and pairedSE on a case computed by hand.
func TestHeldOutDoc_FractionAndPairedSE(t *testing.T) {
	const n, f = 20000, 0.3
	k := 0
	for d := range n {
		if heldOutDoc(d, 5, f) {
			k++
		}
	}
	require.InDelta(t, f, float64(k)/n, 4*math.Sqrt(f*(1-f)/n))
	// Differences (1, 0, 0, -1): mean 0, sample variance 2/3, SE √(2/3/4).
	se := pairedSE([]bool{false, true, false, true}, []bool{true, true, false, false})
	require.InDelta(t, math.Sqrt(2.0/3/4), se, 1e-15)
}

// TestBiasController_ScoresAndGradient checks the bias-only controller (S6) on a random problem: its option scores
// against log softmax(l + b) written out, and its gradient against central finite differences.
func TestBiasController_ScoresAndGradient(t *testing.T) {
	p := randomCtrlProblem(5)
	p.bias, p.vocab = true, 7
	items := allItems(p)
	b := wbtest.Normal(wbtest.RNG(6), p.units(), 0.8)
	res := p.eval(b, items, true)
	for ii, i := range items {
		var want []float64
		for _, opt := range p.items[i].options {
			total := 0.0
			for _, tk := range opt {
				l := p.rows[tk.row].logits
				z := 0.0
				for v := range l {
					z += math.Exp(l[v] + b[v])
				}
				total += l[tk.target] + b[tk.target] - math.Log(z)
			}
			want = append(want, total)
		}
		wbtest.RequireClose(t, "scores", want, res.scores[ii], 1e-12)
	}
	wbtest.RequireGradient(t, "∂L/∂b", func(x []float64) float64 { return p.eval(x, items, false).loss }, b, res.grad,
		wbtest.GradTol)
	shifted := p.shifted(0, b, nil)
	for v := range shifted {
		require.InDelta(t, p.rows[0].logits[v]+b[v], shifted[v], 1e-15)
	}
}

// TestBiasController_LearnsTheAnswerToken: on the known problem the correct answer is always token 0 and the frozen
// logits favour token 1, so a bias alone fixes every item, with gains on the two option tokens only (the others'
// gradients are the softmax weights' small share, which the L1 step keeps at 0).
func TestBiasController_LearnsTheAnswerToken(t *testing.T) {
	p := knownCtrlProblem(5)
	p.bias, p.vocab = true, 3
	gamma := p.fit(allItems(p), ctrlFit{beta: 1e-2, steps: 200, lr: 1e-2})
	after, _ := p.accuracy(gamma, allItems(p))
	require.Equal(t, 1.0, after)
	require.Greater(t, gamma[0]-gamma[1], 1.0, "b_0 − b_1 must overcome the 1-nat preference for token 1")
}

// TestTInterval checks the Student-t interval against the tabulated quantile t_{0.975, 2} = 4.302653 for three
// values, and the degenerate cases.
func TestTInterval(t *testing.T) {
	in := tInterval([]float64{1, 2, 3})
	se := 1 / math.Sqrt(3) // sample sd 1
	require.InDelta(t, 2, in.Mean, 1e-15)
	require.InDelta(t, se, in.SE, 1e-15)
	require.InDelta(t, 2-4.302653*se, in.Lo, 1e-6)
	require.InDelta(t, 2+4.302653*se, in.Hi, 1e-6)
	require.Equal(t, 3, in.N)
	require.Equal(t, Interval{Mean: 5, Lo: 5, Hi: 5, N: 1}, tInterval([]float64{5}))
	require.Equal(t, Interval{}, tInterval(nil))
}

// handModels builds two models with two splits each and two controllers on one task: the prototype controller
// gains 0.04 and 0.06 on model 1's splits and 0.02, 0.04 on model 2's; the bias controller 0.01 everywhere.
func handModels() []ModelRun {
	run := func(c string, before, after float64) ControllerRun {
		return ControllerRun{Controller: c, MeanBefore: before, MeanAfter: after, Tasks: []TaskResult{
			{Task: TaskNumber, Before: before, After: after, Chance: 0.5, ActiveWeights: 2}}}
	}
	model := func(seed uint64, g1, g2 float64) ModelRun {
		return ModelRun{Seed: seed, Splits: []SplitRun{
			{Seed: 31, Controllers: []ControllerRun{run(ControllerPrototype, 0.5, 0.5+g1),
				run(ControllerBias, 0.5, 0.51)}},
			{Seed: 32, Controllers: []ControllerRun{run(ControllerPrototype, 0.6, 0.6+g2),
				run(ControllerBias, 0.6, 0.61)}},
		}}
	}
	return []ModelRun{model(1, 0.04, 0.06), model(2, 0.02, 0.04)}
}

// TestSummarise_AveragesSplitsWithinModels: each model contributes the mean over its splits (0.05 and 0.03), the
// interval runs over the two models, and the paired difference to the bias controller is 0.04 and 0.02.
func TestSummarise_AveragesSplitsWithinModels(t *testing.T) {
	sums := summarise(handModels(), []string{ControllerPrototype, ControllerBias})
	require.Len(t, sums, 2)
	p, b := sums[0], sums[1]
	require.InDelta(t, 0.04, p.Gain.Mean, 1e-12)
	require.InDelta(t, 0.01, p.Gain.SE, 1e-12) // |0.05 − 0.03| / 2
	require.Equal(t, 2, p.Gain.N)
	require.InDelta(t, 0.55, p.Before.Mean, 1e-12)
	require.Zero(t, p.VsPrototype.Mean)
	require.InDelta(t, 0.01, b.Gain.Mean, 1e-12)
	require.InDelta(t, 0.03, b.VsPrototype.Mean, 1e-12)
	require.InDelta(t, 0.01, b.VsPrototype.SE, 1e-12)
	require.Len(t, p.Tasks, 1)
	require.InDelta(t, 0.04, p.Tasks[0].Gain.Mean, 1e-12)
	require.InDelta(t, 0.5, p.Tasks[0].Chance, 1e-15)
	require.InDelta(t, 2, p.ActiveWeights, 1e-15)
}

// TestCharts renders the figures of a constructed result (no training needed).
func TestCharts(t *testing.T) {
	sr := &Result{Summaries: summarise(handModels(), []string{ControllerPrototype, ControllerBias})}
	opt := AccuracyChart(sr).RenderSnippet().Option
	for _, s := range []string{"frozen PRISM model", "with bias controller", "prototype +4.0", "chance", "number"} {
		require.Contains(t, opt, s)
	}
	opt = GainChart(sr).RenderSnippet().Option
	for _, s := range []string{`"name":"prototype"`, "gain (points)", "mean"} {
		require.Contains(t, opt, s)
	}
}
