package prismhead

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

	"github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/theory/curvature"
)

// Approximation names of Curvature.Approx, in order (doc.go equations 4–6; theory/curvature equations 3, 6, 8, 9,
// 17). ApproxRouted keeps the routing's dependence on P (the Jacobian of the cosine activations) and drops only the
// second-order terms; the others freeze the routing. ApproxStructuredCos is spec §5's structured form with the
// clustering blocks of the cosine distance the model trains with in place of the isotropic squared-L2 surrogate Δ ⊗ I
// (its CE part is the K-FAC factorisation C ⊗ S).
const (
	ApproxRouted        = "GN routed"                 // Σ_t J_tᵀ (G_t + 2λ_rec w_t I) J_t + cosine clustering blocks ("cos" scale only)
	ApproxFrozen        = "frozen routing"            // Σ_t (a aᵀ) ⊗ G_t + 2λ_rec C_rec ⊗ I + cosine clustering blocks
	ApproxStructuredCos = "structured, cosine blocks" // C ⊗ S + 2λ_rec C_rec ⊗ I + cosine clustering blocks
	ApproxStructured    = "structured"                // spec §5: C ⊗ S + 2λ_rec C_rec ⊗ I + Δ ⊗ I (isotropic surrogate)
	ApproxDiagonalC     = "diagonal C"                // spec §5's default preconditioner: the diagonal blocks of "structured"
)

// Score compares one matrix with the exact Hessian (theory/curvature, equations 11–14).
type Score struct {
	Name string `json:"name"`
	// RelFrobenius is ‖A − H‖_F/‖H‖_F against the exact H (0 for the exact Hessian itself).
	RelFrobenius float64 `json:"rel_frobenius"`
	// BlockMass is the share of ‖A‖_F² on the D×D diagonal blocks.
	BlockMass float64 `json:"block_mass"`
	// MinEig and MaxEig are the extreme eigenvalues; Cond is κ = MaxEig/MinEig (+Inf, stored as -1, when
	// MinEig ≤ 0).
	MinEig float64 `json:"min_eig"`
	MaxEig float64 `json:"max_eig"`
	Cond   float64 `json:"cond"`
	// DampedCond is κ of A + λI with λ = 0.1 × the mean diagonal entry of the structured approximation (spec §5's
	// damping heuristic), the matrix a preconditioner actually inverts.
	DampedCond float64 `json:"damped_cond"`
	// BlockCondMedian and BlockCondMax summarise κ of the M diagonal blocks (−1 for +Inf).
	BlockCondMedian float64 `json:"block_cond_median"`
	BlockCondMax    float64 `json:"block_cond_max"`
	// BlockMinEig and BlockMaxEig are the extreme eigenvalues of each diagonal block, in the order of
	// Curvature.Prototypes: κ of the blocks at any damping (BlockCondMedianAt).
	BlockMinEig []float64 `json:"block_min_eig"`
	BlockMaxEig []float64 `json:"block_max_eig"`
	// Blocks is the M×M matrix of block Frobenius norms ‖A_ij‖_F (the heatmap of the block structure).
	Blocks [][]float64 `json:"blocks"`
}

// CondAt returns κ(A + λI) at damping λ from the extreme eigenvalues; NaN when A + λI is not positive definite.
func (s Score) CondAt(lambda float64) float64 {
	return nanIfInf(curvature.DampedCondition([]float64{s.MinEig, s.MaxEig}, lambda))
}

// BlockCondMedianAt returns the median over the diagonal blocks of κ(A_jj + λI) at damping λ; NaN when a block is
// not positive definite at that damping, or when the scores hold no block spectra.
func (s Score) BlockCondMedianAt(lambda float64) float64 {
	if len(s.BlockMinEig) == 0 || len(s.BlockMinEig) != len(s.BlockMaxEig) {
		return math.NaN()
	}
	k := make([]float64, len(s.BlockMinEig))
	for j := range k {
		k[j] = curvature.DampedCondition([]float64{s.BlockMinEig[j], s.BlockMaxEig[j]}, lambda)
		if math.IsInf(k[j], 0) {
			return math.NaN()
		}
	}
	slices.Sort(k)
	return k[len(k)/2]
}

func nanIfInf(x float64) float64 {
	if math.IsInf(x, 0) {
		return math.NaN()
	}
	return x
}

// Curvature is the Hessian study of one PRISM model (doc.go, equations 3–7; docs/spec/prism.md §5).
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
	Exact Score `json:"exact"`
	// Asymmetry is ‖H − Hᵀ‖_F/‖H‖_F of the exact Hessian before symmetrisation (round-off only).
	Asymmetry float64 `json:"asymmetry"`
	// CERec scores H_CE+REC = H − H_clust, the exact Hessian without the clustering terms (doc.go, equation 8), on
	// its own (its RelFrobenius is 0): its BlockMass is the block share of the co-usage-coupled part alone.
	CERec Score `json:"ce_rec"`
	// CERecApprox scores C ⊗ S + 2λ_rec C_rec ⊗ I against H_CE+REC.
	CERecApprox Score `json:"ce_rec_approx"`
	// ClusterBlocksError is ‖B − H_clust‖_F/‖H_clust‖_F of the closed-form cosine clustering blocks B that the
	// approximations use (theory/curvature equation 10, nearest choices frozen) against the exact H_clust (0 when
	// λ_1 = λ_2 = 0).
	ClusterBlocksError float64 `json:"cluster_blocks_error"`
	// Approx scores the approximations ApproxRouted (cosine activations only), ApproxFrozen, ApproxStructuredCos,
	// ApproxStructured and ApproxDiagonalC.
	Approx []Score `json:"approx"`
	// OffDiagonalMass is Σ_{i≠j} C_ij/Σ_ij C_ij of the co-usage matrix over the whole bank; OffDiagonalMassJ the
	// same within J.
	OffDiagonalMass  float64 `json:"off_diagonal_mass"`
	OffDiagonalMassJ float64 `json:"off_diagonal_mass_j"`
	// CoUsage is C restricted to J (M×M), for a heatmap.
	CoUsage [][]float64 `json:"co_usage"`
	// Damping is λ of Score.DampedCond: 0.1 × the mean diagonal entry of ApproxStructured (spec §5).
	Damping float64 `json:"damping"`
	// Seconds is the wall time of the exact Hessians (H and H_clust: M·D Hessian-vector products each).
	Seconds float64 `json:"seconds"`
}

// Approximation returns the score called name, or false.
func (c Curvature) Approximation(name string) (Score, bool) {
	for _, s := range c.Approx {
		if s.Name == name {
			return s, true
		}
	}
	return Score{}, false
}

// String is a short table.
func (c Curvature) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "λ1=%g λ2=%g λ_rec=%g, %d tokens, M=%d prototypes (D=%d): C off-diagonal mass %.3f (bank), "+
		"%.3f (J)\n", c.R1Weight, c.R2Weight, c.RecWeight, c.Tokens, len(c.Prototypes), c.D, c.OffDiagonalMass,
		c.OffDiagonalMassJ)
	fmt.Fprintf(&b, "%-26s %9s %9s %10s %10s %10s %10s\n", "matrix", "rel.err", "blockmass", "min eig", "max eig",
		"κ damped", "κ block")
	for _, s := range append([]Score{c.Exact, c.CERec, c.CERecApprox}, c.Approx...) {
		fmt.Fprintf(&b, "%-26s %9.3f %9.3f %10.3g %10.3g %10.3g %10.3g\n", s.Name, s.RelFrobenius, s.BlockMass,
			s.MinEig, s.MaxEig, s.DampedCond, s.BlockCondMedian)
	}
	fmt.Fprintf(&b, "damping λ = %.3g; closed-form cosine clustering blocks vs exact: relative error %.2g\n",
		c.Damping, c.ClusterBlocksError)
	return b.String()
}

// ComputeCurvature runs the Hessian study on a PRISM model: the objective of doc.go (equation 3) summed over the
// tokens of the first cc.Batches of batches ([B, T+1] token tensors, EvalBatches), its exact Hessian and that of its
// clustering terms on the principal submatrix of the cc.Prototypes most used prototypes, and the approximations of
// Curvature.Approx built by theory/curvature from the same tokens' codes and logits.
func ComputeCurvature(m *lm.Model, cc CurvatureConfig, batches []*tensors.Tensor) (Curvature, error) {
	if m.Dense() {
		return Curvature{}, errors.New("prismhead.ComputeCurvature: the dense model has no prototype bank")
	}
	pc, mc := m.Config.Prism.Config, m.Config.Model
	if err := cc.validate(pc.NumPrototypes); err != nil {
		return Curvature{}, errors.WithMessage(err, "prismhead.ComputeCurvature")
	}
	if len(batches) < cc.Batches {
		return Curvature{}, errors.Errorf("prismhead.ComputeCurvature: %d evaluation batches, curvature.batches=%d "+
			"(raise eval.docs or lower curvature.batches)", len(batches), cc.Batches)
	}
	st, err := m.HeadStats(batches[:cc.Batches])
	if err != nil {
		return Curvature{}, err
	}
	hp := &headProblem{N: st.N, D: mc.Width, K: pc.NumPrototypes, V: mc.VocabSize, Z: st.Z, Targets: st.Targets,
		Cfg: pc}
	if hp.Bank, err = m.Bank(); err != nil {
		return Curvature{}, err
	}
	if hp.W, err = m.Unembed(); err != nil {
		return Curvature{}, err
	}
	return hp.study(m.Backend, cc.Prototypes)
}

// mostUsed returns the M prototypes used by the most codes, ties to the lower index.
func mostUsed(K, M int, codes []curvature.Code) []int {
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

func (hp *headProblem) study(backend compute.Backend, M int) (Curvature, error) {
	pc, D, K := hp.Cfg, hp.D, hp.K
	res := Curvature{R1Weight: pc.R1Weight, R2Weight: pc.R2Weight, RecWeight: pc.RecWeight, Tokens: hp.N, D: D}
	fw, err := hp.forward(backend)
	if err != nil {
		return res, err
	}
	J := mostUsed(K, M, fw.Codes)
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
	res.CoUsage = denseRows(C)

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
	if pc.ActivationScale == prism.ScaleCos {
		approx = append(approx, named{ApproxRouted, sum(hp.routedGN(J, rc, gs, recW), local)})
	}
	approx = append(approx, []named{
		{ApproxFrozen, sum(curvature.GaussNewton(M, rc, gs), rec, local)},
		{ApproxStructuredCos, sum(curvature.Kron(C, S), rec, local)},
		{ApproxStructured, structured},
		{ApproxDiagonalC, curvature.DiagonalC(C, S, Crec, pc.RecWeight, delta)},
	}...)
	_, res.Damping = curvature.Damped(structured, 0.1)
	if res.Exact, err = score("exact", exact, exact, D, res.Damping); err != nil {
		return res, err
	}
	if res.CERec, err = score("exact CE+REC", cerec, cerec, D, res.Damping); err != nil {
		return res, err
	}
	if res.CERecApprox, err = score("C⊗S + REC", sum(curvature.Kron(C, S), rec), cerec, D, res.Damping); err != nil {
		return res, err
	}
	for _, a := range approx {
		s, err := score(a.name, a.h, exact, D, res.Damping)
		if err != nil {
			return res, err
		}
		res.Approx = append(res.Approx, s)
	}
	return res, nil
}

// score compares A with the exact H (theory/curvature equations 11–14).
func score(name string, A, H *mat.SymDense, D int, damping float64) (Score, error) {
	s := Score{Name: name, RelFrobenius: curvature.RelFrobenius(A, H), BlockMass: curvature.BlockMass(A, D),
		Blocks: curvature.BlockMassMatrix(A, D)}
	eig, err := curvature.Eigenvalues(A)
	if err != nil {
		return s, errors.WithMessagef(err, "prismhead: spectrum of %s", name)
	}
	s.MinEig, s.MaxEig, s.Cond = eig[0], eig[len(eig)-1], finite(curvature.Condition(eig))
	damped := make([]float64, len(eig))
	for i, e := range eig {
		damped[i] = e + damping
	}
	s.DampedCond = finite(curvature.Condition(damped))
	if s.BlockMinEig, s.BlockMaxEig, err = curvature.BlockEigenRanges(A, D); err != nil {
		return s, errors.WithMessagef(err, "prismhead: block spectra of %s", name)
	}
	bc := make([]float64, len(s.BlockMinEig))
	for j := range bc {
		bc[j] = curvature.Condition([]float64{s.BlockMinEig[j], s.BlockMaxEig[j]})
	}
	slices.Sort(bc)
	s.BlockCondMedian, s.BlockCondMax = finite(bc[len(bc)/2]), finite(bc[len(bc)-1])
	return s, nil
}

// finite maps +Inf (an indefinite or singular matrix) to −1, which JSON can store.
func finite(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return -1
	}
	return x
}

func denseRows(m mat.Symmetric) [][]float64 {
	n := m.SymmetricDim()
	out := make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, n)
		for j := range out[i] {
			out[i][j] = m.At(i, j)
		}
	}
	return out
}
