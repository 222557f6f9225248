package prior

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// stat accumulates a sample mean and its standard error.
type stat struct{ n, sum, sum2 float64 }

func (s *stat) add(x float64) { s.n++; s.sum += x; s.sum2 += x * x }
func (s *stat) mean() float64 { return s.sum / s.n }
func (s *stat) se() float64 {
	m := s.mean()
	return math.Sqrt(math.Max(s.sum2/s.n-m*m, 0) / (s.n - 1))
}

// requireSample fails unless the sample mean is within 4 standard errors of want.
func requireSample(t *testing.T, what string, s stat, want float64) {
	t.Helper()
	if d := math.Abs(s.mean() - want); !(d <= 4*s.se()+1e-15) {
		t.Errorf("%s: sample mean %.6g, want %.6g (|Δ| = %.3g > 4 s.e. = %.3g)", what, s.mean(), want, d, 4*s.se())
	}
}

// samples returns the short-mode sample count, or long in the full run.
func samples(short, long int) int {
	if testing.Short() {
		return short
	}
	return long
}

// TestTree_Structure checks the heap numbering, the leaf encoding and eq. (2.4) exhaustively on small trees: the path
// recursion n_{k+1} = 2n_k + b_k, the leaf ranges, K non-zero coordinates of magnitude c·α^{k−1}, and ‖θ_σ‖² = E‖θ‖².
func TestTree_Structure(t *testing.T) {
	for _, tr := range []Tree{{Depth: 1, Alpha: 0.3}, {Depth: 3, Alpha: 0.6}, {Depth: 5, Alpha: 0.7, Normalize: true}} {
		for leaf := 0; leaf < tr.NumLeaves(); leaf++ {
			node := 1
			for k := 1; k <= tr.Depth; k++ {
				if got := tr.PathNode(leaf, k); got != node {
					t.Fatalf("%+v leaf %d level %d: node %d, want %d", tr, leaf, k, got, node)
				}
				if Level(node) != k {
					t.Fatalf("Level(%d) = %d, want %d", node, Level(node), k)
				}
				node = 2*node + tr.Bit(leaf, k)
			}
			if node != tr.NumLeaves()+leaf {
				t.Fatalf("leaf %d ends at heap node %d, want %d", leaf, node, tr.NumLeaves()+leaf)
			}
			th := tr.Theta(leaf, nil)
			nonzero, norm2 := 0, 0.0
			for n := 1; n <= tr.Dim(); n++ {
				lo, hi := tr.LeafRange(n)
				onPath := tr.PathNode(leaf, Level(n)) == n
				if (leaf >= lo && leaf < hi) != onPath {
					t.Fatalf("node %d range [%d,%d) vs path of leaf %d", n, lo, hi, leaf)
				}
				if th[n-1] != tr.Coord(leaf, n) {
					t.Fatalf("Theta[%d] = %g, Coord = %g", n-1, th[n-1], tr.Coord(leaf, n))
				}
				if th[n-1] != 0 {
					nonzero++
					if math.Abs(math.Abs(th[n-1])-tr.Scale()*math.Pow(tr.Alpha, float64(Level(n)-1))) > 1e-15 {
						t.Fatalf("|θ_%d| = %g", n, th[n-1])
					}
				}
				norm2 += th[n-1] * th[n-1]
			}
			if nonzero != tr.Depth || math.Abs(norm2-tr.MeanSquaredNorm()) > 1e-12 {
				t.Fatalf("%+v leaf %d: %d non-zeros, ‖θ‖² = %g; want %d and %g", tr, leaf, nonzero, norm2, tr.Depth, tr.MeanSquaredNorm())
			}
		}
	}
}

// TestTree_ClosedForms checks eqs. (2.5)–(2.7) against each other and the spec's numbers: E‖θ‖² = 1.562 at K = 8,
// α = 0.6; the λ_n of a level sum to α^{2(k−1)}; the normalised prior has E‖θ‖² = 1.
func TestTree_ClosedForms(t *testing.T) {
	tr := DefaultTree()
	if math.Abs(tr.MeanSquaredNorm()-1.562) > 5e-4 || tr.Dim() != 255 {
		t.Errorf("K=8, α=0.6: E‖θ‖² = %.4f (want 1.562), D = %d", tr.MeanSquaredNorm(), tr.Dim())
	}
	for _, tr := range []Tree{{Depth: 4, Alpha: 0.55}, {Depth: 6, Alpha: 0.6, Normalize: true}} {
		total := 0.0
		for k := 1; k <= tr.Depth; k++ {
			lev := 0.0
			for n := 1 << (k - 1); n < 1<<k; n++ {
				lev += tr.NodeVariance(n)
			}
			c2 := tr.Scale() * tr.Scale()
			if math.Abs(lev-c2*math.Pow(tr.Alpha, 2*float64(k-1))) > 1e-15 {
				t.Errorf("%+v level %d: Σλ = %g", tr, k, lev)
			}
			total += lev
		}
		if math.Abs(total-tr.MeanSquaredNorm()) > 1e-14 {
			t.Errorf("%+v: Σλ = %g, E‖θ‖² = %g", tr, total, tr.MeanSquaredNorm())
		}
	}
	n := Tree{Depth: 6, Alpha: 0.6, Normalize: true}
	if math.Abs(n.MeanSquaredNorm()-1) > 1e-14 {
		t.Errorf("normalised E‖θ‖² = %g, want 1", n.MeanSquaredNorm())
	}
}

// TestTree_SampleMoments checks the sampler against eqs. (2.5)–(2.6) within 4 standard errors (§8 item 1): zero
// mean and variance λ_n per coordinate, α^{2(k−1)} per level, and uniform leaves.
func TestTree_SampleMoments(t *testing.T) {
	tr := Tree{Depth: 5, Alpha: 0.6}
	rng := rand.New(rand.NewPCG(1, 2))
	n := samples(100000, 1000000)
	mean := make([]stat, tr.Dim())
	sq := make([]stat, tr.Dim())
	level := make([]stat, tr.Depth+1)
	leaves := make([]stat, tr.NumLeaves())
	theta := make([]float64, tr.Dim())
	for i := 0; i < n; i++ {
		leaf := tr.SampleLeaf(rng)
		tr.Theta(leaf, theta)
		for l := range leaves {
			leaves[l].add(float64(b2f(l == leaf)))
		}
		lev := make([]float64, tr.Depth+1)
		for j, v := range theta {
			mean[j].add(v)
			sq[j].add(v * v)
			lev[Level(j+1)] += v * v
		}
		for k := 1; k <= tr.Depth; k++ {
			level[k].add(lev[k])
		}
	}
	for j := range theta {
		requireSample(t, fmt.Sprintf("E θ_%d", j+1), mean[j], 0)
		requireSample(t, fmt.Sprintf("E θ_%d²", j+1), sq[j], tr.NodeVariance(j+1))
	}
	for k := 1; k <= tr.Depth; k++ {
		// The per-level energy is exactly α^{2(k−1)} in every sample: zero spread, so demand equality up to the
		// rounding of a long float64 sum.
		if math.Abs(level[k].mean()-tr.LevelVariance(k)) > 1e-9 {
			t.Errorf("level %d variance %g, want %g", k, level[k].mean(), tr.LevelVariance(k))
		}
	}
	for l := range leaves {
		requireSample(t, fmt.Sprintf("P(leaf %d)", l), leaves[l], 1/float64(tr.NumLeaves()))
	}
}

// TestGaussian_SampleMoments checks θ ~ N(0, I_D): zero mean, unit variance, zero covariance, E‖θ‖² = D.
func TestGaussian_SampleMoments(t *testing.T) {
	g := NewGaussian(3)
	rng := rand.New(rand.NewPCG(3, 4))
	var m0, v0, c01, norm stat
	for i := 0; i < samples(100000, 1000000); i++ {
		th := g.Sample(rng, nil)
		m0.add(th[0])
		v0.add(th[0] * th[0])
		c01.add(th[0] * th[1])
		norm.add(th[0]*th[0] + th[1]*th[1] + th[2]*th[2])
	}
	requireSample(t, "E θ_0", m0, 0)
	requireSample(t, "E θ_0²", v0, g.Variance(0))
	requireSample(t, "E θ_0θ_1", c01, 0)
	requireSample(t, "E‖θ‖²", norm, g.MeanSquaredNorm())
}

// TestSampleTokens_Moments checks eq. (2.1) for a fixed θ: E[x y] = θ, E y² = ‖θ‖² + s², E x_j² = 1.
func TestSampleTokens_Moments(t *testing.T) {
	theta := []float64{0.5, -1.5, 0.25}
	const s = 0.3
	rng := rand.New(rand.NewPCG(5, 6))
	xy := make([]stat, 3)
	var y2, x2 stat
	var tok *Tokens
	for i := 0; i < samples(20000, 200000); i++ {
		tok = SampleTokens(rng, theta, 5, s, tok)
		if tok.N != 5 || tok.D != 3 || len(tok.X) != 15 || len(tok.Y) != 5 {
			t.Fatalf("shape N=%d D=%d |X|=%d |Y|=%d", tok.N, tok.D, len(tok.X), len(tok.Y))
		}
		for r := 0; r < tok.N; r++ {
			x := tok.Row(r)
			for j := range xy {
				xy[j].add(x[j] * tok.Y[r])
			}
			y2.add(tok.Y[r] * tok.Y[r])
			x2.add(x[1] * x[1])
		}
	}
	for j := range xy {
		requireSample(t, fmt.Sprintf("E x_%d y", j), xy[j], theta[j])
	}
	requireSample(t, "E y²", y2, 0.25+2.25+0.0625+s*s)
	requireSample(t, "E x²", x2, 1)
}

// TestValidate checks that out-of-range priors are rejected and good ones accepted.
func TestValidate(t *testing.T) {
	for _, tr := range []Tree{{Depth: 0, Alpha: 0.5}, {Depth: 3, Alpha: 0}, {Depth: 3, Alpha: 1}, {Depth: MaxTreeDepth + 1, Alpha: 0.5}} {
		if tr.Validate() == nil {
			t.Errorf("%+v: want an error", tr)
		}
	}
	if err := DefaultTree().Validate(); err != nil {
		t.Error(err)
	}
	if NewGaussian(0).Validate() == nil || NewGaussian(2).Validate() != nil {
		t.Error("Gaussian.Validate")
	}
}

// b2f converts a bool to 0 or 1.
func b2f(b bool) int {
	if b {
		return 1
	}
	return 0
}
