package prismhead

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/theory/curvature"
	"github.com/protolab/protolab/workbench/wbtest"
)

// randomProblem is a small float64 head problem with awkward sizes: N = 7 tokens, D = 3, K = 5, V = 6, k = 2.
func randomProblem(seed uint64, dist string) *headProblem {
	rng := rand.New(rand.NewPCG(seed, 3))
	N, D, K, V := 7, 3, 5, 6
	normal := func(n int, mean float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = mean + rng.NormFloat64()
		}
		return out
	}
	pc := prism.DefaultConfig()
	pc.NumPrototypes, pc.TopK = K, 2
	pc.RecWeight, pc.R1Weight, pc.R2Weight = 0.3, 0.2, 0.4
	pc.Dist = dist
	targets := make([]int32, N)
	for t := range targets {
		targets[t] = int32(rng.IntN(V))
	}
	// A positive mean keeps most cosines positive, so most tokens have two active prototypes.
	return &headProblem{N: N, D: D, K: K, V: V, Z: normal(N*D, 0.8), Bank: normal(K*D, 0.8), W: normal(V*D, 0),
		Targets: targets, Cfg: pc}
}

// TestHeadProblemHessian_MatchesFiniteDifferencesOfGradient checks the double-backprop Hessian columns against
// central differences of the gomlx gradient (float64) of the objective with the logits' residual fixed at
// r_0 = z − ẑ(P_0), for both distances, and its symmetry. (Differencing the stop-gradient form instead would move
// r with P and miss the Gauss–Newton term.)
func TestHeadProblemHessian_MatchesFiniteDifferencesOfGradient(t *testing.T) {
	backend := wbtest.Backend(t)
	for _, dist := range []string{prism.DistCos, prism.DistSqL2} {
		hp := randomProblem(1, dist)
		J := []int{3, 0, 4}
		H, asym, err := hp.hessian(backend, J)
		require.NoError(t, err)
		fw, err := hp.forward(backend)
		require.NoError(t, err)
		require.Less(t, asym, 1e-10, "the exact Hessian is symmetric up to round-off")
		const h = 1e-5
		for c, j := range J {
			for m := 0; m < hp.D; m++ {
				plus, minus := append([]float64(nil), hp.Bank...), append([]float64(nil), hp.Bank...)
				plus[j*hp.D+m] += h
				minus[j*hp.D+m] -= h
				gp, err := hp.gradient(backend, plus, fw.Residual)
				require.NoError(t, err)
				gm, err := hp.gradient(backend, minus, fw.Residual)
				require.NoError(t, err)
				for r, i := range J {
					for mp := 0; mp < hp.D; mp++ {
						want := (gp[i*hp.D+mp] - gm[i*hp.D+mp]) / (2 * h)
						got := H.At(r*hp.D+mp, c*hp.D+m)
						require.InDelta(t, want, got, 1e-6*(1+math.Abs(want)), "%s: H[(%d,%d),(%d,%d)]", dist, i, mp, j, m)
					}
				}
			}
		}
	}
}

// TestHeadProblemStudy_Structure checks the study's invariants on a random problem: the exact Hessian scores zero
// error against itself, the diagonal-C approximation is block-diagonal, the block heatmaps are M×M, and with
// squared-L2 clustering the frozen-routing approximation's clustering part is exact, so its error comes only from
// the routing (it is below the K-FAC and structured errors here).
func TestHeadProblemStudy_Structure(t *testing.T) {
	backend := wbtest.Backend(t)
	hp := randomProblem(2, prism.DistCos)
	res, err := hp.study(backend, 4)
	require.NoError(t, err)
	require.Len(t, res.Prototypes, 4)
	require.Equal(t, 0.0, res.Exact.RelFrobenius)
	require.Len(t, res.Exact.Blocks, 4)
	require.Len(t, res.Approx, 5)
	diag, ok := res.Approximation(ApproxDiagonalC)
	require.True(t, ok)
	require.InDelta(t, 1.0, diag.BlockMass, 1e-12)
	for _, s := range res.Approx {
		require.Greater(t, s.RelFrobenius, 0.0, s.Name)
		require.True(t, s.BlockMass > 0 && s.BlockMass <= 1+1e-12, s.Name)
	}
	require.True(t, res.OffDiagonalMass > 0 && res.OffDiagonalMass < 1)
	require.Greater(t, res.Damping, 0.0)
	require.Contains(t, res.String(), ApproxStructured)
}

// TestHeadProblemHessian_OffDiagonalBlocksAreRoutedGaussNewton checks the exact Hessian against theory/curvature:
// ẑ = Σ_i a_i(p_i)·p_i has no mixed second derivatives in two prototypes and the clustering terms involve one
// prototype each, so the off-diagonal blocks of the exact Hessian are those of the routed Gauss–Newton matrix
// (equation 17), while the diagonal blocks also hold second-order terms.
func TestHeadProblemHessian_OffDiagonalBlocksAreRoutedGaussNewton(t *testing.T) {
	backend := wbtest.Backend(t)
	hp := randomProblem(3, prism.DistCos)
	fw, err := hp.forward(backend)
	require.NoError(t, err)
	J := []int{0, 1, 2, 3, 4}
	exact, _, err := hp.hessian(backend, J)
	require.NoError(t, err)
	rc, _ := curvature.Restrict(hp.K, fw.Codes, J)
	W := mat.NewDense(hp.V, hp.D, hp.W)
	gs := make([]*mat.SymDense, hp.N)
	z := make([][]float64, hp.N)
	for t := range gs {
		gs[t] = curvature.OutputCurvature(W, curvature.Softmax(fw.Logits[t]))
		z[t] = hp.Z[t*hp.D : (t+1)*hp.D]
	}
	gn := hp.routedGN(J, rc, gs, curvature.RecWeights(z))
	D, diagDiff := hp.D, 0.0
	for r := 0; r < len(J)*D; r++ {
		for c := 0; c < len(J)*D; c++ {
			want, got := gn.At(r, c), exact.At(r, c)
			if r/D != c/D {
				require.InDelta(t, want, got, 1e-6*(1+math.Abs(want)), "off-diagonal block entry (%d, %d)", r, c)
			} else {
				diagDiff = math.Max(diagDiff, math.Abs(got-want))
			}
		}
	}
	require.Greater(t, diagDiff, 1e-3, "the diagonal blocks hold second-order terms")
}
