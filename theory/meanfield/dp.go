package meanfield

import (
	"fmt"
	"math"
	"math/bits"

	"gonum.org/v1/gonum/integrate/quad"

	"github.com/protolab/protolab/theory/prior"
)

// MaxNoiselessDepth is the deepest tree OptimalNoiseless accepts (its states are subsets of the 2^K ≤ 64 leaves).
const MaxNoiselessDepth = 6

// OptimalNoiseless returns the exact value of the dynamic programme of eq. (3.2) in the noise-free measurement
// model, with the class Ψ of single node keys e_1…e_D (d = 1 channel per layer): the smallest expected posterior
// MSE reachable after L adaptive layers. A noise-free reading of e_n tells which of three sets the leaf lies in
// (left of n, right of n, or not below n), so the posterior stays uniform on a set of leaves and the programme runs
// over those sets. It is ≤ AdaptiveNoiseless(t, L), with strict inequality in general: reading a deep node also
// reveals whether the path passes through it. Returns an error if t is invalid, K > MaxNoiselessDepth or L < 0.
func OptimalNoiseless(t prior.Tree, layers int) (float64, error) {
	if err := t.Validate(); err != nil {
		return 0, fmt.Errorf("meanfield.OptimalNoiseless: %w", err)
	}
	if t.Depth > MaxNoiselessDepth || layers < 0 {
		return 0, fmt.Errorf("meanfield.OptimalNoiseless: depth=%d layers=%d, want K ≤ %d and L ≥ 0",
			t.Depth, layers, MaxNoiselessDepth)
	}
	// The memo grows quickly with K and L: K = 5 takes well under a second for every L, K = 6 with L ≥ 4 seconds
	// to minutes.
	s := newSetDP(t)
	return s.value(s.full, layers), nil
}

// setDP memoises the noise-free programme over sets of leaves (bit σ of a mask is leaf σ).
type setDP struct {
	t           prior.Tree
	full        uint64
	left, right []uint64  // [D+1] leaves below node n with b_k = 0 (resp. 1) at n's level k.
	amp2        []float64 // [D+1] (c·α^{k(n)−1})²
	memo        []map[uint64]float64
}

// newSetDP precomputes the leaf masks of every node.
func newSetDP(t prior.Tree) *setDP {
	s := &setDP{t: t, left: make([]uint64, t.Dim()+1), right: make([]uint64, t.Dim()+1), amp2: make([]float64, t.Dim()+1)}
	s.full = ^uint64(0) >> (64 - t.NumLeaves())
	for n := 1; n <= t.Dim(); n++ {
		lo, hi := t.LeafRange(n)
		mid := (lo + hi) / 2
		s.left[n] = rangeMask(lo, mid)
		s.right[n] = rangeMask(mid, hi)
		a := t.Amplitude(prior.Level(n))
		s.amp2[n] = a * a
	}
	return s
}

// rangeMask returns the mask of leaves lo…hi−1.
func rangeMask(lo, hi int) uint64 {
	if hi-lo == 64 {
		return ^uint64(0)
	}
	return (uint64(1)<<(hi-lo) - 1) << lo
}

// value returns V_ℓ for the uniform posterior on set with `left` layers to go.
func (s *setDP) value(set uint64, left int) float64 {
	if left == 0 {
		return s.terminal(set)
	}
	for len(s.memo) < left+1 {
		s.memo = append(s.memo, map[uint64]float64{})
	}
	if v, ok := s.memo[left][set]; ok {
		return v
	}
	total := float64(bits.OnesCount64(set))
	best := s.value(set, left-1) // a wasted layer: never better, but always available.
	for n := 1; n <= s.t.Dim(); n++ {
		l, r := set&s.left[n], set&s.right[n]
		if l|r == 0 || l|r == set && (l == 0 || r == 0) {
			continue // the reading is known in advance: no information.
		}
		v := 0.0
		for _, part := range [3]uint64{l, r, set &^ (l | r)} {
			if part != 0 {
				v += float64(bits.OnesCount64(part)) / total * s.value(part, left-1)
			}
		}
		best = min(best, v)
	}
	s.memo[left][set] = best
	return best
}

// terminal returns tr Cov(θ) for the uniform distribution on set: E‖θ‖² − ‖E θ‖², eq. (3.2) at ℓ = L.
func (s *setDP) terminal(set uint64) float64 {
	total := float64(bits.OnesCount64(set))
	mean2 := 0.0
	for n := 1; n <= s.t.Dim(); n++ {
		d := float64(bits.OnesCount64(set&s.right[n])-bits.OnesCount64(set&s.left[n])) / total
		mean2 += s.amp2[n] * d * d
	}
	return s.t.MeanSquaredNorm() - mean2
}

// DP is the dynamic programme of eq. (3.2) for a small tree in the measurement model of §4: each layer measures one
// node key e_n (Ψ = {e_1…e_D}, d = 1) with independent N(0, τ²) noise; V_L = tr Cov(θ | m_1…m_L) and
// V_ℓ = min_n E[V_{ℓ+1} | m_1…m_ℓ]. The posterior over leaves is the state. The expectation over a measurement is
// exact up to quadrature: its predictive law is a mixture of at most three Gaussians N(μ, τ²), μ ∈ {0, ±c·α^{k−1}},
// each integrated with Gauss–Hermite nodes. The cost is about (3·Q·D)^L posterior updates of 2^K weights: K = 3 and
// L = 2 take a fraction of a second at Q = 40; L = 3 takes minutes.
type DP struct {
	// Prior is the tree; keep it small (K ≤ 3).
	Prior prior.Tree `json:"prior"`
	// Tau is τ > 0, the measurement-noise std.
	Tau float64 `json:"tau"`
	// Layers is L ≥ 0 (≤ K for Greedy).
	Layers int `json:"layers"`
	// Quadrature is the number of Gauss–Hermite nodes per mixture component; 0 means 40. The posterior changes over
	// m-scales of τ²/(c·α^{k−1}), so convergence in Q is algebraic: compare with 2Q to bound the error.
	Quadrature int `json:"quadrature"`
}

// Optimal returns the optimal adaptive value E V_0 of eq. (3.2).
func (d DP) Optimal() (float64, error) { return d.run("Optimal", false) }

// Greedy returns the value of greedy binary search (ideal Model A, §4.2: layer k reads the node decoded from the
// signs of the earlier readings) with the same Bayes readout and quadrature, so that Optimal ≤ Greedy holds exactly
// and Greedy can be checked against AdaptiveMC.
func (d DP) Greedy() (float64, error) { return d.run("Greedy", true) }

// run validates d and evaluates the programme (greedy: policy evaluation instead of minimisation).
func (d DP) run(who string, greedy bool) (float64, error) {
	if err := d.Prior.Validate(); err != nil {
		return 0, fmt.Errorf("meanfield.DP.%s: %w", who, err)
	}
	q := d.Quadrature
	if q == 0 {
		q = 40
	}
	// Greedy reads one node per level along a single path, so it cannot run more than K layers.
	if !(d.Tau > 0) || d.Layers < 0 || q < 1 || (greedy && d.Layers > d.Prior.Depth) {
		return 0, fmt.Errorf("meanfield.DP.%s: tau=%g layers=%d quadrature=%d out of range", who, d.Tau, d.Layers, q)
	}
	e := &dpEval{t: d.Prior, tau2: d.Tau * d.Tau, greedy: greedy, x: make([]float64, q), wq: make([]float64, q)}
	quad.Hermite{}.FixedLocations(e.x, e.wq, math.Inf(-1), math.Inf(1))
	for j := range e.x { // ∫ N(m; μ, τ²) f(m) dm = Σ_j wq_j/√π · f(μ + √2 τ x_j)
		e.x[j] *= math.Sqrt2 * d.Tau
		e.wq[j] /= math.SqrtPi
	}
	e.amp, e.mass = make([]float64, d.Prior.Dim()+1), make([]float64, 2*d.Prior.NumLeaves())
	for n := 1; n <= d.Prior.Dim(); n++ {
		e.amp[n] = d.Prior.Amplitude(prior.Level(n))
	}
	e.w = make([][]float64, d.Layers+1)
	for i := range e.w {
		e.w[i] = make([]float64, d.Prior.NumLeaves())
	}
	// Before any reading the posterior is the prior: K fair bits, so uniform over the leaves.
	for s := range e.w[0] {
		e.w[0][s] = 1 / float64(d.Prior.NumLeaves())
	}
	return e.value(0, d.Layers, 1), nil
}

// dpEval holds the quadrature rule and one posterior buffer per depth.
type dpEval struct {
	t      prior.Tree
	tau2   float64
	greedy bool
	x, wq  []float64   // quadrature offsets (already × √2τ) and weights (already / √π).
	w      [][]float64 // [L+1][2^K] normalised posterior weights at each depth.
	amp    []float64   // [D+1] c·α^{k(n)−1}
	mass   []float64   // [2^{K+1}] scratch for meanNorm2.
}

// value returns V for the posterior e.w[depth] with `left` layers to go; next is greedy's decoded node.
func (e *dpEval) value(depth, left, next int) float64 {
	w := e.w[depth]
	if left == 0 {
		// V_L = tr Cov(θ | readings) = E‖θ‖² − ‖θ̂‖², since every θ_σ has the same norm.
		return e.t.MeanSquaredNorm() - e.meanNorm2(w)
	}
	// The optimum minimises over every node key; greedy has no choice, its node is decoded from the signs so far.
	lo, hi := 1, e.t.Dim()
	if e.greedy {
		lo, hi = next, next
	}
	best := math.Inf(1)
	for n := lo; n <= hi; n++ {
		a := e.amp[n]
		rlo, rhi := e.t.LeafRange(n)
		mid := (rlo + rhi) / 2
		// The predictive law of m is Σ_c mass_c·N(μ_c, τ²): leaves outside n's subtree read 0, its two halves ∓a.
		var mass [3]float64 // components μ = 0 (not below n), −a (left), +a (right)
		for s, ws := range w {
			switch {
			case s < rlo || s >= rhi:
				mass[0] += ws
			case s < mid:
				mass[1] += ws
			default:
				mass[2] += ws
			}
		}
		v := 0.0
		for c, mu := range [3]float64{0, -a, a} {
			if mass[c] < 1e-300 {
				continue // an impossible component contributes nothing; skipping it saves Q recursive calls.
			}
			for j, off := range e.x {
				m := mu + off
				e.condition(depth, a, rlo, mid, rhi, m)
				// Greedy's next node follows the sign of m, as the multiplexer of ideal Model A does.
				v += mass[c] * e.wq[j] * e.value(depth+1, left-1, 2*n+b2i(m > 0))
			}
		}
		best = min(best, v)
	}
	return best
}

// condition writes into e.w[depth+1] the posterior after reading m at node n (eq. 4.9, normalised).
func (e *dpEval) condition(depth int, a float64, rlo, mid, rhi int, m float64) {
	inc := [3]float64{0, (-2*m*a - a*a) / (2 * e.tau2), (2*m*a - a*a) / (2 * e.tau2)}
	// Shift by the largest increment before exponentiating: at small τ the increments reach ~a²/τ².
	top := max(inc[0], inc[1], inc[2])
	f := [3]float64{math.Exp(inc[0] - top), math.Exp(inc[1] - top), math.Exp(inc[2] - top)}
	src, dst := e.w[depth], e.w[depth+1]
	total := 0.0
	for s, ws := range src {
		c := 0
		if s >= rlo && s < rhi {
			c = 1 + b2i(s >= mid)
		}
		dst[s] = ws * f[c]
		total += dst[s]
	}
	for s := range dst {
		dst[s] /= total
	}
}

// meanNorm2 returns ‖θ̂‖² for normalised leaf weights w: θ̂_n = c·α^{k−1}(P(right of n) − P(left of n)).
func (e *dpEval) meanNorm2(w []float64) float64 {
	nl, mass := len(w), e.mass
	copy(mass[nl:], w)
	for n := nl - 1; n >= 1; n-- {
		mass[n] = mass[2*n] + mass[2*n+1]
	}
	sum := 0.0
	for n := 1; n < nl; n++ {
		d := e.amp[n] * (mass[2*n+1] - mass[2*n])
		sum += d * d
	}
	return sum
}

// OptimalNonAdaptiveNoiseless returns the smallest noise-free MSE of the Bayes readout of any fixed set of M node
// keys, found by brute force over all sets, with one minimising set. Noise-free, a set of keys splits the leaves by
// their vector of readings and the posterior is uniform on the leaf's class. BFS order (§4.3) is not optimal in
// general: the 2^{k−1} nodes of level k alone resolve levels 1…k. Returns an error if t is invalid,
// K > 4 (the search visits C(2^K − 1, M) sets) or M is outside 0…2^K − 1.
func OptimalNonAdaptiveNoiseless(t prior.Tree, m int) (float64, []int, error) {
	if err := t.Validate(); err != nil {
		return 0, nil, fmt.Errorf("meanfield.OptimalNonAdaptiveNoiseless: %w", err)
	}
	if t.Depth > 4 || m < 0 || m > t.Dim() {
		return 0, nil, fmt.Errorf("meanfield.OptimalNonAdaptiveNoiseless: depth=%d M=%d, want K ≤ 4 and 0 ≤ M ≤ %d",
			t.Depth, m, t.Dim())
	}
	s := newSetDP(t)
	// Enumerate the sets in increasing node order; ties keep the first set found (the smallest in that order).
	best, bestSet := math.Inf(1), []int(nil)
	set := make([]int, 0, m)
	var search func(from int)
	search = func(from int) {
		if len(set) == m {
			if v := s.partitionValue(set); v < best-1e-12 {
				best, bestSet = v, append([]int(nil), set...)
			}
			return
		}
		for n := from; n <= t.Dim()-(m-len(set))+1; n++ {
			set = append(set, n)
			search(n + 1)
			set = set[:len(set)-1]
		}
	}
	search(1)
	return best, bestSet, nil
}

// partitionValue returns the noise-free Bayes MSE of reading the given nodes: the leaves are grouped by their
// readings (−, 0, + per node) and each group contributes its weight times its within-group tr Cov.
func (s *setDP) partitionValue(nodes []int) float64 {
	groups := map[string]uint64{}
	key := make([]byte, len(nodes))
	for leaf := 0; leaf < s.t.NumLeaves(); leaf++ {
		bit := uint64(1) << leaf
		for i, n := range nodes {
			key[i] = byte(b2i(s.left[n]&bit != 0) + 2*b2i(s.right[n]&bit != 0))
		}
		groups[string(key)] |= bit
	}
	v := 0.0
	for _, g := range groups {
		v += float64(bits.OnesCount64(g)) / float64(s.t.NumLeaves()) * s.terminal(g)
	}
	return v
}
