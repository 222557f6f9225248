package meanfield

import (
	"fmt"
	"math"

	"github.com/protolab/protolab/theory/prior"
)

// Posterior is the exact posterior over the 2^K leaves of a tree prior given noisy measurements m_n = e_nᵀθ + η,
// η ~ N(0, τ²) independent, eq. (4.9). The measured set may be chosen adaptively: the likelihood does not depend on
// how the nodes were chosen. The zero value is not usable; call NewPosterior. Not safe for concurrent use.
type Posterior struct {
	tree  prior.Tree
	tau2  float64
	logw  []float64 // [2^K] unnormalised log-weights.
	mass  []float64 // [2^{K+1}] heap-indexed posterior mass of every subtree; leaves at 2^K + σ.
	mean  []float64 // [D] θ̂, valid when fresh.
	amp   []float64 // [K+1] amp[k] = c·α^{k−1}.
	fresh bool
}

// NewPosterior returns the prior (uniform) posterior of tree t for measurement-noise std τ > 0. Panics if t is
// invalid or τ ≤ 0 (take τ small, e.g. 1e−4, for the noise-free limit).
func NewPosterior(t prior.Tree, tau float64) *Posterior {
	if err := t.Validate(); err != nil {
		panic(fmt.Sprintf("meanfield.NewPosterior: %v", err))
	}
	if !(tau > 0) {
		panic(fmt.Sprintf("meanfield.NewPosterior: τ=%g, want > 0", tau))
	}
	amp := make([]float64, t.Depth+1)
	for k := 1; k <= t.Depth; k++ {
		amp[k] = t.Amplitude(k)
	}
	return &Posterior{
		tree: t, tau2: tau * tau,
		logw: make([]float64, t.NumLeaves()),
		mass: make([]float64, 2*t.NumLeaves()),
		mean: make([]float64, t.Dim()),
		amp:  amp,
	}
}

// Reset forgets every measurement, returning to the uniform prior over leaves.
func (p *Posterior) Reset() {
	clear(p.logw)
	p.fresh = false
}

// Observe adds the measurement m of node n (1 ≤ n ≤ D; panics otherwise): log w_σ += (2 m v_{σ,n} − v_{σ,n}²)/(2τ²),
// eq. (4.9). Only the leaves below n have v_{σ,n} ≠ 0: −c·α^{k−1} on the left half (b_k = 0), +c·α^{k−1} on the right.
func (p *Posterior) Observe(n int, m float64) {
	lo, hi := p.tree.LeafRange(n)
	a := p.amp[prior.Level(n)]
	mid := (lo + hi) / 2
	inc := func(v float64) float64 { return (2*m*v - v*v) / (2 * p.tau2) }
	left, right := inc(-a), inc(a)
	for s := lo; s < mid; s++ {
		p.logw[s] += left
	}
	for s := mid; s < hi; s++ {
		p.logw[s] += right
	}
	p.fresh = false
}

// Weights writes the normalised posterior probabilities of the leaves into dst (length 2^K; nil is allocated) and
// returns it. The normalisation uses log-sum-exp.
func (p *Posterior) Weights(dst []float64) []float64 {
	p.update()
	if dst == nil {
		dst = make([]float64, len(p.logw))
	}
	copy(dst, p.mass[len(p.logw):])
	return dst
}

// Mean writes the posterior mean θ̂ = Σ_σ w_σ θ_σ / Σ_σ w_σ (length D; nil is allocated) into dst and returns it.
func (p *Posterior) Mean(dst []float64) []float64 {
	p.update()
	if dst == nil {
		dst = make([]float64, len(p.mean))
	}
	copy(dst, p.mean)
	return dst
}

// SquaredError returns ‖θ_σ − θ̂‖² for the true leaf σ, the per-context loss whose average is the MSE.
func (p *Posterior) SquaredError(leaf int) float64 {
	p.update()
	t := p.tree
	// ‖θ_σ − θ̂‖² = ‖θ_σ‖² − 2θ_σᵀθ̂ + ‖θ̂‖², and θ_σ has only K non-zero coordinates.
	cross := 0.0
	for k := 1; k <= t.Depth; k++ {
		n := t.PathNode(leaf, k)
		cross += float64(2*t.Bit(leaf, k)-1) * p.amp[k] * p.mean[n-1]
	}
	return t.MeanSquaredNorm() - 2*cross + dot(p.mean, p.mean)
}

// ExpectedSquaredError returns tr Cov(θ | measurements) = E‖θ‖² − ‖θ̂‖², the posterior's own expected loss (every
// θ_σ has the same norm). Its prior average equals the MSE of the Bayes readout.
func (p *Posterior) ExpectedSquaredError() float64 {
	p.update()
	return p.tree.MeanSquaredNorm() - dot(p.mean, p.mean)
}

// setLogWeights replaces the log-weights (used by the full-data bound, eq. 4.10).
func (p *Posterior) setLogWeights(logw []float64) {
	copy(p.logw, logw)
	p.fresh = false
}

// update normalises the weights, sums them up the tree and recomputes θ̂ if a measurement arrived since.
func (p *Posterior) update() {
	if p.fresh {
		return
	}
	nl := len(p.logw)
	// Log-sum-exp: at small τ the log-weights span ~1/τ², far beyond exp's range.
	top := math.Inf(-1)
	for _, l := range p.logw {
		top = max(top, l)
	}
	total := 0.0
	for s, l := range p.logw {
		w := math.Exp(l - top)
		p.mass[nl+s] = w
		total += w
	}
	for s := range p.logw {
		p.mass[nl+s] /= total
	}
	// Heap order makes the subtree sums one backward pass.
	for n := nl - 1; n >= 1; n-- {
		p.mass[n] = p.mass[2*n] + p.mass[2*n+1]
	}
	// θ̂_n = c·α^{k−1}·(P(path through 2n+1) − P(path through 2n)).
	k := 0
	for n := 1; n < nl; n++ {
		if n&(n-1) == 0 { // n is a power of two: the first node of the next level.
			k++
		}
		p.mean[n-1] = p.amp[k] * (p.mass[2*n+1] - p.mass[2*n])
	}
	p.fresh = true
}
