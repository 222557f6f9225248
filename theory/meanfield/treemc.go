package meanfield

import (
	"fmt"
	"math/rand/v2"

	"github.com/protolab/protolab/theory/prior"
)

// TreeMC configures a Monte Carlo estimate of the MSE of a measurement strategy on the tree prior, spec §4.2–4.5 and
// §8 item 7. Each context draws a leaf, measures nodes, and scores the readout's ‖θ − θ̂‖²; the estimates for
// M = 1…Measurements share their contexts.
type TreeMC struct {
	// Prior is the tree prior θ is drawn from.
	Prior prior.Tree `json:"prior"`
	// Tau is τ > 0: the noise std of the measurement model (§4) and the std that the Bayes readout of eq. (4.9) assumes.
	Tau float64 `json:"tau"`
	// Tokens selects the channel. 0: measurement model, m_n = e_nᵀθ + N(0, τ²) independent (§4). N > 0: real
	// linear-attention statistics φ_n = (1/N)Σ_i (e_nᵀx_i)·y_i of N tokens of eq. (2.1) (§3; correlated,
	// θ-dependent noise). Pick τ = √TokenTau2 to match the spec's convention.
	Tokens int `json:"tokens"`
	// LabelNoise is s ≥ 0, the label-noise std of the tokens (used when Tokens > 0).
	LabelNoise float64 `json:"label_noise"`
	// Measurements is the largest M (L for the adaptive strategy, at most K there).
	Measurements int `json:"measurements"`
	// Contexts is the number of Monte Carlo contexts (≥ 2).
	Contexts int `json:"contexts"`
	// Seed fixes every random draw; the result does not depend on GOMAXPROCS.
	Seed uint64 `json:"seed"`
}

// validate reports whether the configuration is usable; maxM is the largest number of measurements the strategy
// allows.
func (c TreeMC) validate(who string, maxM int) error {
	if err := c.Prior.Validate(); err != nil {
		return fmt.Errorf("meanfield.%s: %w", who, err)
	}
	switch {
	case !(c.Tau > 0):
		return fmt.Errorf("meanfield.%s: tau=%g, want > 0", who, c.Tau)
	case c.Tokens < 0 || c.LabelNoise < 0:
		return fmt.Errorf("meanfield.%s: tokens=%d label_noise=%g, want ≥ 0", who, c.Tokens, c.LabelNoise)
	case c.Measurements < 1 || c.Measurements > maxM:
		return fmt.Errorf("meanfield.%s: measurements=%d, want 1…%d", who, c.Measurements, maxM)
	case c.Contexts < 2:
		return fmt.Errorf("meanfield.%s: contexts=%d, want ≥ 2", who, c.Contexts)
	}
	return nil
}

// AdaptiveMC estimates the MSE of greedy binary search (ideal Model A, §4.2) with the exact Bayes readout of eq.
// (4.9): layer k measures the node n̂_k reached by the decoded bits, b̂_k = [m_k > 0]. Entry L − 1 is the MSE after L
// layers, L = 1…Measurements ≤ K. At τ → 0 it tends to AdaptiveNoiseless; with noise, decoding errors add a floor.
func AdaptiveMC(c TreeMC) ([]Estimate, error) {
	if err := c.validate("AdaptiveMC", c.Prior.Depth); err != nil {
		return nil, err
	}
	return monteCarlo(c.Contexts, c.Seed, c.Measurements, func() sampler {
		ch, post := newTreeChannel(c), NewPosterior(c.Prior, c.Tau)
		return func(rng *rand.Rand, out []float64) {
			leaf := ch.start(rng)
			post.Reset()
			// The layers a strategy runs do not depend on how many come after, so one run of L layers gives the
			// estimates for every prefix 1…L on the same contexts (common random numbers across M).
			node := 1
			for l := range out {
				m := ch.measure(rng, node)
				post.Observe(node, m)
				out[l] = post.SquaredError(leaf)
				node = 2*node + b2i(m > 0)
			}
		}
	}), nil
}

// NonAdaptiveMC estimates the MSE of the Bayes readout (eq. 4.9) of the M top-variance nodes 1…M in BFS order
// (ideal Model B, §4.3). Entry M − 1 is for M = 1…Measurements ≤ D. At τ → 0 it tends to NonAdaptiveNoiseless.
func NonAdaptiveMC(c TreeMC) ([]Estimate, error) {
	if err := c.validate("NonAdaptiveMC", c.Prior.Dim()); err != nil {
		return nil, err
	}
	return monteCarlo(c.Contexts, c.Seed, c.Measurements, func() sampler {
		ch, post := newTreeChannel(c), NewPosterior(c.Prior, c.Tau)
		return func(rng *rand.Rand, out []float64) {
			leaf := ch.start(rng)
			post.Reset()
			for i := range out {
				post.Observe(i+1, ch.measure(rng, i+1))
				out[i] = post.SquaredError(leaf)
			}
		}
	}), nil
}

// LinearMC estimates the MSE of the per-node linear readout θ̂_n = λ_n/(λ_n + τ_n²)·m_n of nodes 1…M (ideal Model C,
// §4.4), with τ_n² = τ² in the measurement model and τ_n² = NodeTau2 on tokens. Its expectation is LMMSE (resp.
// LMMSETokens) exactly, so it checks eqs. (3.6) and (4.8). Entry M − 1 is for M = 1…Measurements ≤ D.
func LinearMC(c TreeMC) ([]Estimate, error) {
	if err := c.validate("LinearMC", c.Prior.Dim()); err != nil {
		return nil, err
	}
	// The coordinates are uncorrelated and the noise of distinct nodes is uncorrelated on average, so the LMMSE
	// readout is diagonal: each measured coordinate is shrunk by its own gain.
	gain := make([]float64, c.Measurements+1) // gain[n] = λ_n/(λ_n + τ_n²)
	for n := 1; n <= c.Measurements; n++ {
		lam, tn := c.Prior.NodeVariance(n), c.Tau*c.Tau
		if c.Tokens > 0 {
			tn = NodeTau2(c.Prior, n, c.LabelNoise, c.Tokens)
		}
		gain[n] = lam / (lam + tn)
	}
	return monteCarlo(c.Contexts, c.Seed, c.Measurements, func() sampler {
		ch := newTreeChannel(c)
		return func(rng *rand.Rand, out []float64) {
			leaf := ch.start(rng)
			// Unmeasured coordinates are estimated by their prior mean 0.
			sq := c.Prior.MeanSquaredNorm()
			for i := range out {
				n := i + 1
				v := c.Prior.Coord(leaf, n)
				e := v - gain[n]*ch.measure(rng, n)
				sq += e*e - v*v
				out[i] = sq
			}
		}
	}), nil
}

// treeChannel produces the measurements of one context: either the measurement model or real tokens. With tokens
// it draws the columns x_{·,n} lazily: coordinates of x are i.i.d., so a column first needed by a measurement can be
// drawn then, and only the K path columns enter y.
type treeChannel struct {
	t     prior.Tree
	tau   float64
	n     int     // tokens per context; 0 for the measurement model.
	s     float64 // label-noise std.
	leaf  int
	amp   []float64   // [K+1] c·α^{k−1}
	cols  [][]float64 // [D+1][N] columns x_{·,n}, valid when stamp[n] == gen.
	stamp []int
	gen   int
	y     []float64 // [N]
}

// newTreeChannel allocates the scratch space of one goroutine.
func newTreeChannel(c TreeMC) *treeChannel {
	ch := &treeChannel{t: c.Prior, tau: c.Tau, n: c.Tokens, s: c.LabelNoise, amp: make([]float64, c.Prior.Depth+1)}
	for k := 1; k <= c.Prior.Depth; k++ {
		ch.amp[k] = c.Prior.Amplitude(k)
	}
	if ch.n > 0 {
		ch.cols = make([][]float64, c.Prior.Dim()+1)
		ch.stamp = make([]int, c.Prior.Dim()+1)
		ch.y = make([]float64, ch.n)
	}
	return ch
}

// start draws a new leaf (and, with tokens, the path columns and the labels) and returns the leaf.
func (ch *treeChannel) start(rng *rand.Rand) int {
	ch.leaf = ch.t.SampleLeaf(rng)
	if ch.n == 0 {
		return ch.leaf
	}
	// A new generation invalidates every cached column without clearing them.
	ch.gen++
	for i := range ch.y {
		ch.y[i] = ch.s * rng.NormFloat64()
	}
	for k := 1; k <= ch.t.Depth; k++ {
		v := float64(2*ch.t.Bit(ch.leaf, k)-1) * ch.amp[k]
		for i, x := range ch.column(rng, ch.t.PathNode(ch.leaf, k)) {
			ch.y[i] += v * x
		}
	}
	return ch.leaf
}

// measure returns the measurement of node n of the current context: e_nᵀθ + τ·N(0,1), or (1/N)Σ_i x_{i,n}·y_i.
func (ch *treeChannel) measure(rng *rand.Rand, n int) float64 {
	if ch.n == 0 {
		return ch.coord(n) + ch.tau*rng.NormFloat64()
	}
	// The key e_n reads coordinate n of every token: φ_n = (1/N)Σ_i x_{i,n}·y_i (eq. 3.1 with u = e_n). Reading the
	// same node twice in a context returns the same value, as on real tokens.
	return dot(ch.column(rng, n), ch.y) / float64(ch.n)
}

// coord returns v_{σ,n} of the current leaf (prior.Tree.Coord without the power).
func (ch *treeChannel) coord(n int) float64 {
	k := prior.Level(n)
	if ch.t.PathNode(ch.leaf, k) != n {
		return 0
	}
	return float64(2*ch.t.Bit(ch.leaf, k)-1) * ch.amp[k]
}

// column returns x_{·,n}, drawing it on first use within the current context.
func (ch *treeChannel) column(rng *rand.Rand, n int) []float64 {
	if ch.stamp[n] != ch.gen {
		if ch.cols[n] == nil {
			ch.cols[n] = make([]float64, ch.n)
		}
		for i := range ch.cols[n] {
			ch.cols[n][i] = rng.NormFloat64()
		}
		ch.stamp[n] = ch.gen
	}
	return ch.cols[n]
}

// b2i converts a bool to 0 or 1.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
