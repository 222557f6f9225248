package prism

// Curvature of the prototype pathway (prismhead study; docs/spec/prism.md §5). ComputeCurvature differentiates, on
// the N tokens of some evaluation batches with z_t, W and the residual r_t of the logits frozen (layers/prism (17),
// prismlayer.BankObjective),
//
//	(3) L(P) = Σ_t [ CE(W sg(r_t) + W P a_t(P), y_t) + λ_rec·REC_t(P) + λ_2·R2_t(P) ] + λ_1·Σ_j R1_j(P)
//
// exactly (curvature_problem.go: double backpropagation in float64; the top-k and nearest-neighbour choices held at
// their forward values), on the principal submatrix of the M most used prototypes J. Against it (theory/curvature
// equations 3–17):
//
//	(4) H_CE ≈ C ⊗ S,   C = Σ_t a_t a_tᵀ,   S = (1/N) Σ_t Wᵀ(diag π_t − π_t π_tᵀ)W,   π_t = softmax(l_t)
//	(5) H ≈ C ⊗ S + 2λ_rec·C_rec ⊗ I + Δ ⊗ I,   Δ = diag(δ_j),   δ_j = 2λ_1 + 2λ_2·n_j         ("structured")
//	(5′) H ≈ C ⊗ S + 2λ_rec·C_rec ⊗ I + B_cos                              ("structured, cosine blocks")
//	(6) H_jj ≈ c_j S + (2λ_rec c_j^rec + δ_j) I,   off-diagonal blocks 0                         ("diagonal C")
//
// with C_rec = Σ_t a_t a_tᵀ/(‖z_t‖² + ε) (C with rec_norm false), n_j the tokens whose nearest prototype is j, and
// B_cos the block-diagonal Hessian of the cosine clustering terms the model trains with (theory/curvature (10),
// nearest choices frozen), in place of the spec's isotropic squared-L2 surrogate Δ ⊗ I. "GN routed" keeps the
// routing's Jacobian ∂a/∂P in the Gauss–Newton matrix of CE and REC (theory/curvature (17)), "frozen routing" drops
// it (theory/curvature (3)), both with B_cos. Every matrix A is scored against the exact H (CurvatureScore) by
// ‖A − H‖_F/‖H‖_F, its mass on the D×D diagonal blocks, its spectrum and
//
//	(7) κ(A + λI) = (λ_max + λ)/(λ_min + λ),   λ = 0.1 × the mean diagonal entry of (5)        (spec §5 damping)
//
// The clustering terms involve one prototype each, so their Hessian H_clust is block-diagonal by construction; the
// study also reports the part without them, and κ at any other damping (CurvatureScore.CondAt):
//
//	(8) H_CE+REC = H − H_clust                    (H_clust: the exact Hessian of the λ_1, λ_2 terms alone)

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/pkg/errors"
	"gonum.org/v1/gonum/mat"

	prismlayer "github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/theory/curvature"
)

// Approximation names of Curvature.Approx, in order (equations 4–6; theory/curvature equations 3, 6, 8, 9, 17).
// ApproxRouted keeps the routing's dependence on P (the Jacobian of the cosine activations) and drops only the
// second-order terms; the others freeze the routing. ApproxStructuredCos is spec §5's structured form with the
// clustering blocks of the cosine distance the model trains with in place of the isotropic squared-L2 surrogate Δ ⊗ I
// (its CE part is the K-FAC factorisation C ⊗ S).
const (
	// ApproxRouted is Σ_t J_tᵀ (G_t + 2λ_rec w_t I) J_t + cosine clustering blocks ("cos" scale only).
	ApproxRouted        = "GN routed"
	ApproxFrozen        = "frozen routing"            // Σ_t (a aᵀ) ⊗ G_t + 2λ_rec C_rec ⊗ I + cosine clustering blocks
	ApproxStructuredCos = "structured, cosine blocks" // C ⊗ S + 2λ_rec C_rec ⊗ I + cosine clustering blocks
	ApproxStructured    = "structured"                // spec §5: C ⊗ S + 2λ_rec C_rec ⊗ I + Δ ⊗ I (isotropic surrogate)
	// ApproxDiagonalC is spec §5's default preconditioner: the diagonal blocks of "structured".
	ApproxDiagonalC = "diagonal C"
)

// Curvature is the Hessian study of one PRISM model (equations 3–7; docs/spec/prism.md §5).
type Curvature struct {
	// R1Weight, R2Weight and RecWeight are the model's λ_1, λ_2 and λ_rec (the objective's weights).
	R1Weight  float64 `json:"r1_weight"`
	R2Weight  float64 `json:"r2_weight"`
	RecWeight float64 `json:"rec_weight"`
	// Tokens is N, the validation tokens the objective sums over; D the width.
	Tokens int `json:"tokens"`
	D      int `json:"d"`
	// Prototypes is J, the M most used prototypes on those tokens (by count, ties to the lower index).
	Prototypes []int `json:"prototypes"`
	// Exact scores the exact Hessian (double backpropagation through the head, top-k and nearest choices held).
	Exact CurvatureScore `json:"exact"`
	// Asymmetry is ‖H − Hᵀ‖_F/‖H‖_F of the exact Hessian before symmetrisation (round-off only).
	Asymmetry float64 `json:"asymmetry"`
	// CERec scores H_CE+REC = H − H_clust, the exact Hessian without the clustering terms (equation 8), on
	// its own (its RelFrobenius is 0): its BlockMass is the block share of the co-usage-coupled part alone.
	CERec CurvatureScore `json:"ce_rec"`
	// CERecApprox scores C ⊗ S + 2λ_rec C_rec ⊗ I against H_CE+REC.
	CERecApprox CurvatureScore `json:"ce_rec_approx"`
	// ClusterBlocksError is ‖B − H_clust‖_F/‖H_clust‖_F of the closed-form cosine clustering blocks B that the
	// approximations use (theory/curvature equation 10, nearest choices frozen) against the exact H_clust (0 when
	// λ_1 = λ_2 = 0).
	ClusterBlocksError float64 `json:"cluster_blocks_error"`
	// Approx scores the approximations ApproxRouted (cosine activations only), ApproxFrozen, ApproxStructuredCos,
	// ApproxStructured and ApproxDiagonalC.
	Approx []CurvatureScore `json:"approx"`
	// OffDiagonalMass is Σ_{i≠j} C_ij/Σ_ij C_ij of the co-usage matrix over the whole bank; OffDiagonalMassJ the
	// same within J.
	OffDiagonalMass  float64 `json:"off_diagonal_mass"`
	OffDiagonalMassJ float64 `json:"off_diagonal_mass_j"`
	// CoUsage is C restricted to J (M×M), for a heatmap.
	CoUsage [][]float64 `json:"co_usage"`
	// Damping is λ of CurvatureScore.DampedCond: 0.1 × the mean diagonal entry of ApproxStructured (spec §5).
	Damping float64 `json:"damping"`
	// Seconds is the wall time of the exact Hessians (H and H_clust: M·D Hessian-vector products each).
	Seconds float64 `json:"seconds"`
}

// Approximation returns the score called name, or false.
func (c Curvature) Approximation(name string) (CurvatureScore, bool) {
	for _, s := range c.Approx {
		if s.Name == name {
			return s, true
		}
	}
	return CurvatureScore{}, false
}

// String is a short table.
func (c Curvature) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "λ1=%g λ2=%g λ_rec=%g, %d tokens, M=%d prototypes (D=%d): C off-diagonal mass %.3f (bank), "+
		"%.3f (J)\n", c.R1Weight, c.R2Weight, c.RecWeight, c.Tokens, len(c.Prototypes), c.D, c.OffDiagonalMass,
		c.OffDiagonalMassJ)
	fmt.Fprintf(&b, "%-26s %9s %9s %10s %10s %10s %10s\n", "matrix", "rel.err", "blockmass", "min eig", "max eig",
		"κ damped", "κ block")
	for _, s := range append([]CurvatureScore{c.Exact, c.CERec, c.CERecApprox}, c.Approx...) {
		fmt.Fprintf(&b, "%-26s %9.3f %9.3f %10.3g %10.3g %10.3g %10.3g\n", s.Name, s.RelFrobenius, s.BlockMass,
			s.MinEig, s.MaxEig, s.DampedCond, s.BlockCondMedian)
	}
	fmt.Fprintf(&b, "damping λ = %.3g; closed-form cosine clustering blocks vs exact: relative error %.2g\n",
		c.Damping, c.ClusterBlocksError)
	return b.String()
}

// ComputeCurvature runs the Hessian study on a PRISM model: the objective (3) summed over the tokens of batches
// ([B, T+1] token tensors, EvalBatches), its exact Hessian and that of its clustering terms on the principal
// submatrix of the `prototypes` most used prototypes (M, in [1, K]), and the approximations of Curvature.Approx built
// by theory/curvature from the same tokens' codes and logits.
func ComputeCurvature(m *lm.Model, batches []*tensors.Tensor, prototypes int) (Curvature, error) {
	if m.Dense() {
		return Curvature{}, errors.New("prism.ComputeCurvature: the dense model has no prototype bank")
	}
	pc, mc := m.Config.Prism.Config, m.Config.Model
	if prototypes < 1 || prototypes > pc.NumPrototypes {
		return Curvature{}, errors.Errorf("prism.ComputeCurvature: prototypes=%d, want in [1, prism.num_prototypes=%d]",
			prototypes, pc.NumPrototypes)
	}
	if len(batches) == 0 {
		return Curvature{}, errors.New("prism.ComputeCurvature: no evaluation batches")
	}
	st, err := m.HeadStats(batches)
	if err != nil {
		return Curvature{}, err
	}
	hp := &curvatureProblem{N: st.N, D: mc.Width, K: pc.NumPrototypes, V: mc.VocabSize, Z: st.Z, Targets: st.Targets,
		Cfg: pc}
	if hp.Bank, err = m.Bank(); err != nil {
		return Curvature{}, err
	}
	if hp.W, err = m.Unembed(); err != nil {
		return Curvature{}, err
	}
	return hp.study(m.Backend, prototypes)
}

// curvatureMostUsed returns the M prototypes used by the most codes, ties to the lower index.
func curvatureMostUsed(K, M int, codes []curvature.Code) []int {
	count := make([]int, K)
	for _, c := range codes {
		for _, j := range c.Idx {
			count[j]++
		}
	}
	order := make([]int, K)
	for j := range order {
		order[j] = j
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(count[b], count[a]) })
	return order[:M]
}

func (hp *curvatureProblem) study(backend compute.Backend, M int) (Curvature, error) {
	pc, D, K := hp.Cfg, hp.D, hp.K
	res := Curvature{R1Weight: pc.R1Weight, R2Weight: pc.R2Weight, RecWeight: pc.RecWeight, Tokens: hp.N, D: D}
	fw, err := hp.forward(backend)
	if err != nil {
		return res, err
	}
	J := curvatureMostUsed(K, M, fw.Codes)
	res.Prototypes = J
	start := time.Now()
	exact, asym, err := hp.hessian(backend, J)
	if err != nil {
		return res, err
	}
	clust, err := hp.clusterHessian(backend, J)
	if err != nil {
		return res, err
	}
	res.Seconds = time.Since(start).Seconds()
	res.Asymmetry = asym
	cerec := mat.NewSymDense(M*D, nil) // H − H_clust
	for r := 0; r < M*D; r++ {
		for c := r; c < M*D; c++ {
			cerec.SetSym(r, c, exact.At(r, c)-clust.At(r, c))
		}
	}

	// Per-token output curvatures G_t, their mean S, and the co-usage matrices.
	Wm := mat.NewDense(hp.V, D, hp.W)
	gs := make([]*mat.SymDense, hp.N)
	for t := range gs {
		gs[t] = curvature.OutputCurvature(Wm, curvature.Softmax(fw.Logits[t]))
	}
	S := curvature.MeanSym(gs)
	z := make([][]float64, hp.N)
	for t := range z {
		z[t] = hp.Z[t*D : (t+1)*D]
	}
	var recW []float64
	if pc.RecNorm {
		recW = curvature.RecWeights(z)
	}
	res.OffDiagonalMass = curvature.OffDiagonalMass(curvature.CoUsage(K, fw.Codes, nil))
	rc, pos := curvature.Restrict(K, fw.Codes, J)
	C := curvature.CoUsage(M, rc, nil)
	Crec := curvature.CoUsage(M, rc, recW)
	res.OffDiagonalMassJ = curvature.OffDiagonalMass(C)
	res.CoUsage = curvatureRows(C)

	tokProto, protoToks := hp.nearest()
	nearJ := make([]int, len(tokProto))
	for t, j := range tokProto {
		nearJ[t] = pos[j]
	}
	local := hp.clusterBlocks(J, tokProto, protoToks)
	res.ClusterBlocksError = curvature.RelFrobenius(local, clust)
	if math.IsInf(res.ClusterBlocksError, 0) || math.IsNaN(res.ClusterBlocksError) {
		res.ClusterBlocksError = -1 // H_clust = 0 but the closed form is not: JSON cannot store +Inf
	}
	rec := curvature.Isotropic(Crec, pc.RecWeight, make([]float64, M), D)
	sum := func(ms ...*mat.SymDense) *mat.SymDense {
		out := mat.NewSymDense(M*D, nil)
		for _, x := range ms {
			out.AddSym(out, x)
		}
		return out
	}
	delta := curvature.ClusterDiag(M, pc.R1Weight, pc.R2Weight, nearJ)
	structured := curvature.Structured(C, S, Crec, pc.RecWeight, delta)
	type named struct {
		name string
		h    *mat.SymDense
	}
	var approx []named
	if pc.ActivationScale == prismlayer.ScaleCos {
		approx = append(approx, named{ApproxRouted, sum(hp.routedGN(J, rc, gs, recW), local)})
	}
	approx = append(approx, []named{
		{ApproxFrozen, sum(curvature.GaussNewton(M, rc, gs), rec, local)},
		{ApproxStructuredCos, sum(curvature.Kron(C, S), rec, local)},
		{ApproxStructured, structured},
		{ApproxDiagonalC, curvature.DiagonalC(C, S, Crec, pc.RecWeight, delta)},
	}...)
	_, res.Damping = curvature.Damped(structured, 0.1)
	if res.Exact, err = curvatureScoreOf("exact", exact, exact, D, res.Damping); err != nil {
		return res, err
	}
	if res.CERec, err = curvatureScoreOf("exact CE+REC", cerec, cerec, D, res.Damping); err != nil {
		return res, err
	}
	res.CERecApprox, err = curvatureScoreOf("C⊗S + REC", sum(curvature.Kron(C, S), rec), cerec, D, res.Damping)
	if err != nil {
		return res, err
	}
	for _, a := range approx {
		s, err := curvatureScoreOf(a.name, a.h, exact, D, res.Damping)
		if err != nil {
			return res, err
		}
		res.Approx = append(res.Approx, s)
	}
	return res, nil
}
