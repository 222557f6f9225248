package prism

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	prismlayer "github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/theory/curvature"
	"github.com/protolab/protolab/workbench/wbtest"
)

// curvatureRandomProblem is a small float64 head problem with awkward sizes: N = 7 tokens, D = 3, K = 5, V = 6, k = 2.
func curvatureRandomProblem(seed uint64, dist string) *curvatureProblem {
	rng := rand.New(rand.NewPCG(seed, 3))
	N, D, K, V := 7, 3, 5, 6
	normal := func(n int, mean float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = mean + rng.NormFloat64()
		}
		return out
	}
	pc := prismlayer.DefaultConfig()
	pc.NumPrototypes, pc.TopK = K, 2
	pc.RecWeight, pc.R1Weight, pc.R2Weight = 0.3, 0.2, 0.4
	pc.Dist = dist
	targets := make([]int32, N)
	for t := range targets {
		targets[t] = int32(rng.IntN(V))
	}
	// A positive mean keeps most cosines positive, so most tokens have two active prototypes.
	return &curvatureProblem{N: N, D: D, K: K, V: V, Z: normal(N*D, 0.8), Bank: normal(K*D, 0.8), W: normal(V*D, 0),
		Targets: targets, Cfg: pc}
}

// TestHeadProblemHessian_MatchesFiniteDifferencesOfGradient checks the double-backprop Hessian columns against
// central differences of the gomlx gradient (float64) of the objective with the logits' residual fixed at
// r_0 = z − ẑ(P_0), for both distances, and its symmetry. (Differencing the stop-gradient form instead would move
// r with P and miss the Gauss–Newton term.)
func TestHeadProblemHessian_MatchesFiniteDifferencesOfGradient(t *testing.T) {
	backend := wbtest.Backend(t)
	for _, dist := range []string{prismlayer.DistCos, prismlayer.DistSqL2} {
		hp := curvatureRandomProblem(1, dist)
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
// error against itself, the diagonal-C approximation is block-diagonal, the block heatmaps and block spectra have M
// entries, and each block's spectrum lies within the whole matrix's (a principal submatrix interlaces).
func TestHeadProblemStudy_Structure(t *testing.T) {
	backend := wbtest.Backend(t)
	hp := curvatureRandomProblem(2, prismlayer.DistCos)
	res, err := hp.study(backend, 4)
	require.NoError(t, err)
	require.Len(t, res.Prototypes, 4)
	require.Equal(t, 0.0, res.Exact.RelFrobenius)
	require.Equal(t, 0.0, res.CERec.RelFrobenius)
	require.Len(t, res.Exact.Blocks, 4)
	require.Len(t, res.Exact.BlockMinEig, 4)
	require.Len(t, res.CERec.BlockMaxEig, 4)
	require.Len(t, res.Approx, 5)
	for j := range res.Exact.BlockMinEig {
		require.LessOrEqual(t, res.Exact.BlockMinEig[j], res.Exact.BlockMaxEig[j])
		require.LessOrEqual(t, res.Exact.MinEig, res.Exact.BlockMinEig[j]+1e-12, "Cauchy interlacing")
		require.GreaterOrEqual(t, res.Exact.MaxEig, res.Exact.BlockMaxEig[j]-1e-12, "Cauchy interlacing")
	}
	require.Less(t, res.ClusterBlocksError, 1e-5, "the closed-form cosine clustering blocks are the exact ones")
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
	hp := curvatureRandomProblem(3, prismlayer.DistCos)
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

// TestClusterHessian_SplitsTheExactHessian checks equation 8 of curvature.go on random problems, for both
// distances: H − H_clust equals the exact Hessian of the objective with λ_1 = λ_2 = 0 (a separate double-backprop
// graph, so the clustering objective is weighted as prismlayer.BankObjective weighs it), and H_clust equals the
// closed-form clustering blocks of theory/curvature (equation 10 for "cos", 2I per pair for "sqL2"), which is
// block-diagonal.
func TestClusterHessian_SplitsTheExactHessian(t *testing.T) {
	backend := wbtest.Backend(t)
	for _, dist := range []string{prismlayer.DistCos, prismlayer.DistSqL2} {
		hp := curvatureRandomProblem(4, dist)
		J := []int{4, 1, 2}
		H, _, err := hp.hessian(backend, J)
		require.NoError(t, err)
		clust, err := hp.clusterHessian(backend, J)
		require.NoError(t, err)
		noClust := *hp
		noClust.Cfg.R1Weight, noClust.Cfg.R2Weight = 0, 0
		want, _, err := noClust.hessian(backend, J)
		require.NoError(t, err)
		n := len(J) * hp.D
		for r := 0; r < n; r++ {
			for c := 0; c < n; c++ {
				w := want.At(r, c)
				require.InDelta(t, w, H.At(r, c)-clust.At(r, c), 1e-9*(1+math.Abs(w)), "%s: (%d, %d)", dist, r, c)
			}
		}
		tokProto, protoToks := hp.nearest()
		closed := hp.clusterBlocks(J, tokProto, protoToks)
		// The cosine's ε = 1e-6 in the denominator, which the closed form ignores, bounds the agreement.
		require.Less(t, curvature.RelFrobenius(closed, clust), 1e-5, dist)
		require.InDelta(t, 1.0, curvature.BlockMass(clust, hp.D), 1e-12, "%s: H_clust is block-diagonal", dist)

		zero, err := noClust.clusterHessian(backend, J)
		require.NoError(t, err)
		require.Equal(t, 0.0, mat.Norm(zero, 2), "no clustering terms, no H_clust")
	}
}

// TestCurvatureScore_DampedConditions checks CurvatureScore.CondAt and BlockCondMedianAt on hand values: κ(A + λI) =
// (λ_max + λ)/(λ_min + λ), the median over three blocks, and NaN where the damped matrix is indefinite.
func TestCurvatureScore_DampedConditions(t *testing.T) {
	s := CurvatureScore{MinEig: -1, MaxEig: 9, BlockMinEig: []float64{1, 2, -0.5}, BlockMaxEig: []float64{3, 10, 1.5}}
	require.InDelta(t, 11.0/1.0, s.CondAt(2), 1e-15)
	require.True(t, math.IsNaN(s.CondAt(0.5)), "λ_min + λ < 0")
	// At λ = 1 the block κ are 4/2, 11/3, 2.5/0.5: median 11/3.
	require.InDelta(t, 11.0/3, s.BlockCondMedianAt(1), 1e-15)
	require.True(t, math.IsNaN(s.BlockCondMedianAt(0.25)), "block 3 is indefinite at λ = 0.25")
	require.True(t, math.IsNaN(CurvatureScore{}.BlockCondMedianAt(1)), "no block spectra")
}
