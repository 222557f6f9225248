package prior

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// MaxTreeDepth is the deepest tree the package accepts: D = 2^K − 1 and the 2^K leaves are enumerated densely.
const MaxTreeDepth = 20

// Tree is the hierarchical tree prior of spec §2.2, eq. (2.3)–(2.7). Start from DefaultTree. The zero value is not
// valid; call Validate.
type Tree struct {
	Depth     int     `json:"depth"`     // K ≥ 1; D = 2^K − 1. Spec default 8 (6 for fast runs).
	Alpha     float64 `json:"alpha"`     // α ∈ (0, 1), the scale ratio between levels. Spec default 0.6.
	Normalize bool    `json:"normalize"` // scale θ so that E‖θ‖² = 1 (the factor c of eq. 2.4). Off by default.
}

// DefaultTree returns the spec's default tree prior: K = 8, α = 0.6, no normalisation (D = 255, E‖θ‖² ≈ 1.562).
func DefaultTree() Tree { return Tree{Depth: 8, Alpha: 0.6} }

// Validate reports whether the depth and the scale ratio are in range.
func (t Tree) Validate() error {
	if t.Depth < 1 || t.Depth > MaxTreeDepth {
		return fmt.Errorf("prior.Tree: depth=%d, want 1 ≤ K ≤ %d", t.Depth, MaxTreeDepth)
	}
	if !(t.Alpha > 0 && t.Alpha < 1) {
		return fmt.Errorf("prior.Tree: alpha=%g, want 0 < α < 1", t.Alpha)
	}
	return nil
}

// Dim returns D = 2^K − 1, the number of internal nodes and the dimension of θ.
func (t Tree) Dim() int { return 1<<t.Depth - 1 }

// NumLeaves returns 2^K, the number of equiprobable leaves.
func (t Tree) NumLeaves() int { return 1 << t.Depth }

// Scale returns the factor c of eq. (2.4): 1, or √((1 − α²)/(1 − α^{2K})) when Normalize is set.
func (t Tree) Scale() float64 {
	if !t.Normalize {
		return 1
	}
	a2 := t.Alpha * t.Alpha
	return math.Sqrt((1 - a2) / (1 - math.Pow(a2, float64(t.Depth))))
}

// Amplitude returns c·α^{k−1}, the magnitude |e_{n_k}ᵀθ| of the level-k component of every θ_σ. Panics unless
// 1 ≤ k ≤ K.
func (t Tree) Amplitude(k int) float64 {
	if k < 1 || k > t.Depth {
		panic(fmt.Sprintf("prior.Tree.Amplitude: level %d outside 1…%d", k, t.Depth))
	}
	return t.Scale() * math.Pow(t.Alpha, float64(k-1))
}

// Level returns k(n) = ⌊log₂ n⌋ + 1, the level of heap node n ≥ 1 (the root is at level 1). Panics if n < 1.
func Level(n int) int {
	if n < 1 {
		panic(fmt.Sprintf("prior.Level: node %d < 1", n))
	}
	k := 0
	for ; n > 0; n >>= 1 {
		k++
	}
	return k
}

// LevelVariance returns c²α^{2(k−1)}, the total prior variance of level k summed over its 2^{k−1} nodes, eq. (2.6).
func (t Tree) LevelVariance(k int) float64 {
	a := t.Amplitude(k)
	return a * a
}

// NodeVariance returns c²λ_n = c²(α²/2)^{k(n)−1}, the prior variance of coordinate n (heap numbering, 1-based) of θ,
// eq. (2.5). Panics unless 1 ≤ n ≤ D.
func (t Tree) NodeVariance(n int) float64 {
	if n < 1 || n > t.Dim() {
		panic(fmt.Sprintf("prior.Tree.NodeVariance: node %d outside 1…%d", n, t.Dim()))
	}
	k := Level(n)
	// The level's variance is shared equally by its 2^{k−1} nodes, each on the path with probability 2^{1−k}.
	return t.LevelVariance(k) / float64(int(1)<<(k-1))
}

// MeanSquaredNorm returns E‖θ‖² = c²(1 − α^{2K})/(1 − α²), eq. (2.7). Every θ_σ has this norm exactly.
func (t Tree) MeanSquaredNorm() float64 {
	a2 := t.Alpha * t.Alpha
	c := t.Scale()
	return c * c * (1 - math.Pow(a2, float64(t.Depth))) / (1 - a2)
}

// Variance returns the prior variance of the 0-based coordinate i of θ (that is node n = i + 1), so Tree satisfies
// Prior.
func (t Tree) Variance(i int) float64 { return t.NodeVariance(i + 1) }

// Bit returns b_k ∈ {0, 1} of a leaf (eq. 2.3). Panics unless 1 ≤ k ≤ K.
func (t Tree) Bit(leaf, k int) int {
	if k < 1 || k > t.Depth {
		panic(fmt.Sprintf("prior.Tree.Bit: level %d outside 1…%d", k, t.Depth))
	}
	return (leaf >> (t.Depth - k)) & 1
}

// PathNode returns n_k, the heap node that leaf's path visits at level k (eq. 2.3). Panics unless 1 ≤ k ≤ K.
func (t Tree) PathNode(leaf, k int) int {
	if k < 1 || k > t.Depth {
		panic(fmt.Sprintf("prior.Tree.PathNode: level %d outside 1…%d", k, t.Depth))
	}
	return (1<<t.Depth + leaf) >> (t.Depth - k + 1)
}

// LeafRange returns the half-open range [lo, hi) of the leaves whose path visits node n. Panics unless 1 ≤ n ≤ D.
func (t Tree) LeafRange(n int) (lo, hi int) {
	if n < 1 || n > t.Dim() {
		panic(fmt.Sprintf("prior.Tree.LeafRange: node %d outside 1…%d", n, t.Dim()))
	}
	k := Level(n)
	width := 1 << (t.Depth - k + 1)
	lo = (n - 1<<(k-1)) * width
	return lo, lo + width
}

// Coord returns v_{σ,n} = e_nᵀθ_σ: c·α^{k−1}g_k if node n (at level k) lies on the leaf's path, and 0 otherwise.
// Panics unless 1 ≤ n ≤ D.
func (t Tree) Coord(leaf, n int) float64 {
	k := Level(n)
	if t.PathNode(leaf, k) != n {
		return 0
	}
	return float64(2*t.Bit(leaf, k)-1) * t.Amplitude(k)
}

// Theta writes θ_σ of eq. (2.4) into dst (length D, coordinate n − 1 for node n) and returns it; a nil dst is
// allocated. Panics if dst has the wrong length or the leaf is outside [0, 2^K).
func (t Tree) Theta(leaf int, dst []float64) []float64 {
	if leaf < 0 || leaf >= t.NumLeaves() {
		panic(fmt.Sprintf("prior.Tree.Theta: leaf %d outside [0, %d)", leaf, t.NumLeaves()))
	}
	dst = prepare(dst, t.Dim(), "prior.Tree.Theta")
	for k := 1; k <= t.Depth; k++ {
		dst[t.PathNode(leaf, k)-1] = float64(2*t.Bit(leaf, k)-1) * t.Amplitude(k)
	}
	return dst
}

// SampleLeaf draws a uniform leaf σ ∈ [0, 2^K), i.e. K i.i.d. Bernoulli(½) bits.
func (t Tree) SampleLeaf(rng *rand.Rand) int { return rng.IntN(t.NumLeaves()) }

// Sample draws θ from the tree prior into dst (length D; nil is allocated) and returns it.
func (t Tree) Sample(rng *rand.Rand, dst []float64) []float64 {
	return t.Theta(t.SampleLeaf(rng), dst)
}

// prepare returns dst zeroed, allocating it when nil; it panics (naming the caller) on a length mismatch.
func prepare(dst []float64, n int, who string) []float64 {
	if dst == nil {
		return make([]float64, n)
	}
	if len(dst) != n {
		panic(fmt.Sprintf("%s: len(dst)=%d, want %d", who, len(dst), n))
	}
	clear(dst)
	return dst
}
