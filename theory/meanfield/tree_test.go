package meanfield

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/protolab/protolab/theory/prior"
)

// treesForTests are awkward small trees: several depths and ratios, with and without normalisation.
var treesForTests = []prior.Tree{
	{Depth: 1, Alpha: 0.6}, {Depth: 3, Alpha: 0.5}, {Depth: 4, Alpha: 0.7, Normalize: true}, {Depth: 5, Alpha: 0.6},
}

// greedyPolicy is the noise-free greedy binary search: follow the signs of the readings.
func greedyPolicy(readings []float64) int {
	node := 1
	for _, m := range readings {
		node = 2*node + b2i(m > 0)
	}
	return node
}

// TestNoiselessClosedForms_MatchBruteForce checks eqs. (4.5) and (4.6) against the exact noise-free Bayes MSE of the
// same strategies, computed by enumerating the leaves with full θ vectors (§8 item 3).
func TestNoiselessClosedForms_MatchBruteForce(t *testing.T) {
	for _, tr := range treesForTests {
		for l := 0; l <= tr.Depth; l++ {
			want := referenceNoiselessMSE(tr, l, greedyPolicy)
			requireClose(t, fmt.Sprintf("%+v MSE_A(%d)", tr, l), AdaptiveNoiseless(tr, l), want, 1e-12)
		}
		for m := 0; m <= tr.Dim(); m++ {
			want := referenceNoiselessMSE(tr, m, func(r []float64) int { return len(r) + 1 })
			requireClose(t, fmt.Sprintf("%+v MSE_NA(%d)", tr, m), NonAdaptiveNoiseless(tr, m), want, 1e-12)
		}
	}
}

// TestNoiselessClosedForms_Identities checks the special cases of §4.3–4.4 and the orderings of §8 items 3–4.
func TestNoiselessClosedForms_Identities(t *testing.T) {
	for _, tr := range append(treesForTests, prior.DefaultTree()) {
		c2 := tr.Scale() * tr.Scale()
		a2 := tr.Alpha * tr.Alpha
		requireClose(t, "MSE_A(0) = E‖θ‖²", AdaptiveNoiseless(tr, 0), tr.MeanSquaredNorm(), 1e-12)
		requireClose(t, "MSE_NA(0) = E‖θ‖²", NonAdaptiveNoiseless(tr, 0), tr.MeanSquaredNorm(), 1e-12)
		for k := 0; k <= tr.Depth; k++ {
			m := 1<<k - 1
			// Non-adaptive with M = 2^k − 1 equals adaptive with k (§4.3).
			requireClose(t, fmt.Sprintf("MSE_NA(2^%d−1) = MSE_A(%d)", k, k), NonAdaptiveNoiseless(tr, m), AdaptiveNoiseless(tr, k), 1e-12)
			// The power law differs from MSE_NA there by the finite-depth term c²α^{2K}/(1 − α²).
			requireClose(t, "power law offset", PowerLaw(tr, m)-NonAdaptiveNoiseless(tr, m), c2*math.Pow(a2, float64(tr.Depth))/(1-a2), 1e-12)
		}
		for m := 1; m <= tr.Dim(); m++ {
			// MSE_C → MSE_NA as τ → 0 (§8 item 3).
			requireClose(t, fmt.Sprintf("LMMSE(%d, τ²=0)", m), LMMSE(tr, m, 0), NonAdaptiveNoiseless(tr, m), 1e-12)
			requireClose(t, "LMMSE(τ²=1e−12)", LMMSE(tr, m, 1e-12), NonAdaptiveNoiseless(tr, m), 1e-9)
			if m <= tr.Depth {
				// Ordering (§8 item 4): MSE_A ≤ MSE_NA ≤ MSE_C, equality of the first two at L = 1.
				a, na, c := AdaptiveNoiseless(tr, m), NonAdaptiveNoiseless(tr, m), LMMSE(tr, m, 0.0025)
				if a > na+1e-15 || na > c {
					t.Errorf("%+v M=%d: want MSE_A %.6g ≤ MSE_NA %.6g ≤ MSE_C %.6g", tr, m, a, na, c)
				}
				if m == 1 {
					requireClose(t, "MSE_A(1) = MSE_NA(1)", a, na, 1e-15)
				} else if m < tr.Depth && !(a < na) {
					t.Errorf("%+v M=%d: want MSE_A %.6g < MSE_NA %.6g", tr, m, a, na)
				}
			}
		}
		requireWithin(t, "MSE_A(K)", AdaptiveNoiseless(tr, tr.Depth), 0, 1e-15)
		requireWithin(t, "MSE_NA(2^K−1)", NonAdaptiveNoiseless(tr, tr.Dim()), 0, 1e-15)
	}
}

// TestPosterior_MatchesReference compares eq. (4.9) with a direct enumeration, for random measurement sets with
// repeats, on an awkward normalised tree, at moderate and tiny noise (large log-weights).
func TestPosterior_MatchesReference(t *testing.T) {
	tr := prior.Tree{Depth: 4, Alpha: 0.55, Normalize: true}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tau := range []float64{0.3, 1e-3} {
		for trial := 0; trial < 20; trial++ {
			leaf := tr.SampleLeaf(rng)
			post := NewPosterior(tr, tau)
			var nodes []int
			var values []float64
			for i := 0; i < 1+trial%7; i++ {
				n := 1 + rng.IntN(tr.Dim())
				m := tr.Coord(leaf, n) + tau*rng.NormFloat64()
				post.Observe(n, m)
				nodes, values = append(nodes, n), append(values, m)
			}
			want := referencePosteriorMean(tr, tau, nodes, values)
			got := post.Mean(nil)
			for j := range want {
				requireClose(t, fmt.Sprintf("τ=%g trial %d θ̂[%d]", tau, trial, j), got[j], want[j], 1e-10)
			}
			th := tr.Theta(leaf, nil)
			requireClose(t, "SquaredError", post.SquaredError(leaf), sqDist(th, want), 1e-10)
			w := post.Weights(nil)
			sum := 0.0
			for _, v := range w {
				sum += v
			}
			requireClose(t, "Σ w", sum, 1, 1e-12)
			// tr Cov = E_post‖θ − θ̂‖² computed from the weights directly.
			thetas := referenceThetas(tr)
			cov := 0.0
			for s, v := range w {
				cov += v * sqDist(thetas[s], want)
			}
			requireClose(t, "ExpectedSquaredError", post.ExpectedSquaredError(), cov, 1e-10)
		}
	}
}

// TestTreeMC_NoiselessLimit checks that the exact-posterior Monte Carlo at τ = 1e−4 reproduces the τ → 0 closed
// forms (§8 item 3), for the adaptive, non-adaptive and linear readouts.
func TestTreeMC_NoiselessLimit(t *testing.T) {
	tr := prior.Tree{Depth: 5, Alpha: 0.6}
	c := TreeMC{Prior: tr, Tau: 1e-4, Measurements: tr.Depth, Contexts: 3000, Seed: 7}
	a, err := AdaptiveMC(c)
	if err != nil {
		t.Fatal(err)
	}
	c.Measurements = tr.Dim()
	na, err := NonAdaptiveMC(c)
	if err != nil {
		t.Fatal(err)
	}
	lin, err := LinearMC(c)
	if err != nil {
		t.Fatal(err)
	}
	for m := 1; m <= tr.Dim(); m++ {
		// Allowance: at τ = 1e−4 the readout's residual noise adds ≈ M·τ² ≤ 3.1e−7 to the noise-free value.
		if m <= tr.Depth {
			requireEstimate(t, fmt.Sprintf("adaptive M=%d", m), a[m-1], AdaptiveNoiseless(tr, m), 1e-6)
		}
		requireEstimate(t, fmt.Sprintf("non-adaptive M=%d", m), na[m-1], NonAdaptiveNoiseless(tr, m), 1e-6)
		requireEstimate(t, fmt.Sprintf("linear M=%d", m), lin[m-1], LMMSE(tr, m, 1e-8), 1e-6)
	}
}

// TestReferenceTable_K8 reproduces the K = 8, α = 0.6, τ = 0.05 table of §4.7 (§8 item 9): the Monte Carlo columns
// within the combined sampling error of both computations (the spec used 2000 contexts), and the closed-form columns
// to the printed digits.
func TestReferenceTable_K8(t *testing.T) {
	tr := prior.Tree{Depth: 8, Alpha: 0.6}
	requirePrinted(t, "E‖θ‖²", tr.MeanSquaredNorm(), 1.562, 3)
	type row struct {
		adaptive, adaptive0, nonAdaptive, nonAdaptive0, lmmse float64
		digits                                                [5]int
	}
	table := []row{
		{0.562, 0.562, 0.562, 0.562, 0.565, [5]int{3, 3, 3, 3, 3}},
		{0.202, 0.202, 0.384, 0.382, 0.387, [5]int{3, 3, 3, 3, 3}},
		{0.0725, 0.0725, 0.202, 0.202, 0.209, [5]int{4, 4, 3, 3, 3}},
		{0.0258, 0.0258, 0.173, 0.170, 0.179, [5]int{4, 4, 3, 3, 3}},
		{0.0092, 0.0090, 0.139, 0.137, 0.149, [5]int{4, 4, 3, 3, 3}},
		{0.0044, 0.0030, 0.105, 0.105, 0.119, [5]int{4, 4, 3, 3, 3}},
		{0.0033, 0.0008, 0.0725, 0.0725, 0.089, [5]int{4, 4, 4, 4, 3}},
		{0.0033, 0, 0.0663, 0.0666, 0.085, [5]int{4, 4, 4, 4, 3}},
	}
	c := TreeMC{Prior: tr, Tau: 0.05, Measurements: 8, Contexts: contexts(6000, 100000), Seed: 2026}
	a, err := AdaptiveMC(c)
	if err != nil {
		t.Fatal(err)
	}
	na, err := NonAdaptiveMC(c)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range table {
		m := i + 1
		requireMatchesSpec(t, fmt.Sprintf("adaptive MC M=%d", m), a[i], r.adaptive, 2000, r.digits[0])
		requirePrinted(t, fmt.Sprintf("adaptive τ→0 M=%d", m), AdaptiveNoiseless(tr, m), r.adaptive0, r.digits[1])
		requireMatchesSpec(t, fmt.Sprintf("non-adaptive MC M=%d", m), na[i], r.nonAdaptive, 2000, r.digits[2])
		requirePrinted(t, fmt.Sprintf("non-adaptive τ→0 M=%d", m), NonAdaptiveNoiseless(tr, m), r.nonAdaptive0, r.digits[3])
		requirePrinted(t, fmt.Sprintf("LMMSE_C M=%d", m), LMMSE(tr, m, 0.05*0.05), r.lmmse, r.digits[4])
		t.Logf("M=%d adaptive %.5f±%.5f (spec %.4g)  non-adaptive %.5f±%.5f (spec %.4g)",
			m, a[i].Mean, a[i].StdErr, r.adaptive, na[i].Mean, na[i].StdErr, r.nonAdaptive)
	}
}

// TestReferenceTable_K6 reproduces the K = 6, α = 0.6, τ = 0.11 lists of §4.7 (§8 item 9). The spec does not state
// its number of contexts; we assume the 2000 of the K = 8 table.
func TestReferenceTable_K6(t *testing.T) {
	tr := prior.Tree{Depth: 6, Alpha: 0.6}
	requirePrinted(t, "τ = √((E‖θ‖² + s²)/128)", math.Sqrt(TokenTau2(tr, 0.1, 128)), 0.11, 2)
	adaptive := []float64{0.559, 0.199, 0.0696, 0.0271, 0.0160, 0.0131}
	nonAdaptive := []float64{0.559, 0.375, 0.199, 0.168, 0.135, 0.103}
	c := TreeMC{Prior: tr, Tau: 0.11, Measurements: 6, Contexts: contexts(6000, 100000), Seed: 6}
	a, err := AdaptiveMC(c)
	if err != nil {
		t.Fatal(err)
	}
	na, err := NonAdaptiveMC(c)
	if err != nil {
		t.Fatal(err)
	}
	for i := range adaptive {
		requireMatchesSpec(t, fmt.Sprintf("adaptive M=%d", i+1), a[i], adaptive[i], 2000, 3+b2i(adaptive[i] < 0.1))
		requireMatchesSpec(t, fmt.Sprintf("non-adaptive M=%d", i+1), na[i], nonAdaptive[i], 2000, 3)
		t.Logf("M=%d adaptive %.5f±%.5f (spec %.4g)  non-adaptive %.5f±%.5f (spec %.4g)",
			i+1, a[i].Mean, a[i].StdErr, adaptive[i], na[i].Mean, na[i].StdErr, nonAdaptive[i])
	}
}

// TestLinearMC_TokensMatchPerNodeLMMSE checks §4.4 on real tokens: with keys e_n and a linear readout, eq. (4.8)
// with τ_n² = (E‖θ‖² + s² + λ_n)/N is exact (0.1741 at K = 6, α = 0.6, N = 128, M = 6; 0.1636 with the constant τ²).
func TestLinearMC_TokensMatchPerNodeLMMSE(t *testing.T) {
	tr := prior.Tree{Depth: 6, Alpha: 0.6}
	requirePrinted(t, "MSE_C tokens M=6", LMMSETokens(tr, 6, 0.1, 128), 0.1741, 4)
	requirePrinted(t, "MSE_C constant τ² M=6", LMMSE(tr, 6, TokenTau2(tr, 0.1, 128)), 0.1636, 4)
	est, err := LinearMC(TreeMC{Prior: tr, Tau: 0.11, Tokens: 128, LabelNoise: 0.1, Measurements: 6,
		Contexts: contexts(8000, 100000), Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for m := 1; m <= 6; m++ {
		requireEstimate(t, fmt.Sprintf("tokens M=%d", m), est[m-1], LMMSETokens(tr, m, 0.1, 128), 0)
	}
}

// TestIdealModelA_Tokens runs the hand-wired multiplexer (keys e_{n̂_ℓ}ᵀx_i, sign decoding, Bayes readout at τ = 0.11)
// as real linear attention on N = 128 tokens, and compares it with the §4.7 adaptive list (§8 item 7). Allowance: the
// spec reports the token curve up to 3% below the measurement model (CLT and the dropped E(uᵀθ)² term), so 3% of the
// value is added to the combined sampling tolerance.
func TestIdealModelA_Tokens(t *testing.T) {
	tr := prior.Tree{Depth: 6, Alpha: 0.6}
	adaptive := []float64{0.559, 0.199, 0.0696, 0.0271, 0.0160, 0.0131}
	c := TreeMC{Prior: tr, Tau: 0.11, Tokens: 128, LabelNoise: 0.1, Measurements: 6,
		Contexts: contexts(6000, 100000), Seed: 4}
	est, err := AdaptiveMC(c)
	if err != nil {
		t.Fatal(err)
	}
	for i, spec := range adaptive {
		e := est[i]
		seSpec := e.StdErr * math.Sqrt(float64(e.Samples)/2000)
		requireWithin(t, fmt.Sprintf("tokens adaptive M=%d", i+1), e.Mean, spec,
			4*math.Hypot(e.StdErr, seSpec)+0.03*spec+0.5e-3)
		t.Logf("M=%d tokens %.5f±%.5f (spec measurement model %.4g)", i+1, e.Mean, e.StdErr, spec)
	}
}

// TestTau2_TreeRoot checks eq. (3.6) for the tree root key at K = 6, α = 0.6, N = 128, s = 0.1: the spec's 0.0201
// (0.0123 without the E(uᵀθ)² term), against the prior-averaged variance of φ simulated on real tokens.
func TestTau2_TreeRoot(t *testing.T) {
	tr := prior.Tree{Depth: 6, Alpha: 0.6}
	requirePrinted(t, "τ_1²", NodeTau2(tr, 1, 0.1, 128), 0.0201, 4)
	requirePrinted(t, "τ² without E(uᵀθ)²", TokenTau2(tr, 0.1, 128), 0.0123, 4)
	rng := rand.New(rand.NewPCG(5, 5))
	u := make([]float64, tr.Dim())
	u[0] = 1
	var mom moments
	var tok *prior.Tokens
	for i := 0; i < contexts(3000, 50000); i++ {
		theta := tr.Sample(rng, nil)
		tok = prior.SampleTokens(rng, theta, 128, 0.1, tok)
		d := Statistic(tok, u) - theta[0]
		mom.add(d * d)
	}
	requireEstimate(t, "prior-averaged Var φ at the root", mom.estimate(), NodeTau2(tr, 1, 0.1, 128), 0)
}

// TestTreeMC_Deterministic checks that a seed fixes the result whatever the parallelism, and that a different seed
// changes it.
func TestTreeMC_Deterministic(t *testing.T) {
	c := TreeMC{Prior: prior.Tree{Depth: 4, Alpha: 0.6}, Tau: 0.2, Measurements: 4, Contexts: 1000, Seed: 9}
	a, _ := AdaptiveMC(c)
	b, _ := AdaptiveMC(c)
	c.Seed++
	d, _ := AdaptiveMC(c)
	if a[3] != b[3] || a[3] == d[3] {
		t.Errorf("seeded estimates: %v, %v (same seed), %v (other seed)", a[3], b[3], d[3])
	}
	if a[3].Samples != 1000 {
		t.Errorf("samples = %d, want 1000", a[3].Samples)
	}
}

// TestTreeMC_Validate checks that bad configurations are errors naming the field.
func TestTreeMC_Validate(t *testing.T) {
	good := TreeMC{Prior: prior.Tree{Depth: 3, Alpha: 0.6}, Tau: 0.1, Measurements: 3, Contexts: 10}
	for name, mutate := range map[string]func(*TreeMC){
		"alpha": func(c *TreeMC) { c.Prior.Alpha = 1 },
		"tau":   func(c *TreeMC) { c.Tau = 0 },
		"measurements": func(c *TreeMC) {
			c.Measurements = 4 // > K for the adaptive strategy
		},
		"contexts": func(c *TreeMC) { c.Contexts = 1 },
	} {
		c := good
		mutate(&c)
		if _, err := AdaptiveMC(c); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
	if _, err := AdaptiveMC(good); err != nil {
		t.Errorf("good config: %v", err)
	}
}
