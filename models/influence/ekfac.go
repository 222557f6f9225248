package influence

import (
	"math"

	"github.com/pkg/errors"
	"gonum.org/v1/gonum/mat"

	"github.com/protolab/protolab/workbench/stats"
)

// Values of EKFACConfig.Eigenvalues.
const (
	// EigenCorrected is EK-FAC: Λ = (1/N_seq) Σ_n (Q_Sᵀ G_n Q_A)^{∘2} (doc.go, equation 3).
	EigenCorrected = "ekfac"
	// EigenKronecker is K-FAC: Λ = λ_S λ_Aᵀ, so the preconditioner is (A ⊗ S + λI)⁻¹.
	EigenKronecker = "kfac"
)

// DefaultDampingScale is kronfluence's HEURISTIC_DAMPING_SCALE: λ = 0.1 × the mean eigenvalue (doc.go, (4), (10)).
const DefaultDampingScale = 0.1

// EKFACConfig configures EK-FAC. Start from DefaultEKFACConfig.
type EKFACConfig struct {
	// Eigenvalues is EigenCorrected ("ekfac", the default) or EigenKronecker ("kfac").
	Eigenvalues string `json:"eigenvalues"`
	// Damping is λ, added to every eigenvalue; 0 means DampingScale × mean(Λ) per layer.
	Damping float64 `json:"damping"`
	// DampingScale is the factor of the heuristic damping; > 0. Default 0.1 (kronfluence).
	DampingScale float64 `json:"damping_scale"`
}

// DefaultEKFACConfig returns EK-FAC with kronfluence's heuristic damping 0.1 × mean(Λ).
func DefaultEKFACConfig() EKFACConfig {
	return EKFACConfig{Eigenvalues: EigenCorrected, DampingScale: DefaultDampingScale}
}

// Validate reports the first problem of the configuration.
func (c EKFACConfig) Validate() error {
	switch {
	case c.Eigenvalues != EigenCorrected && c.Eigenvalues != EigenKronecker:
		return errors.Errorf("influence: eigenvalues=%q, want %q or %q", c.Eigenvalues, EigenCorrected, EigenKronecker)
	case c.Damping < 0 || math.IsNaN(c.Damping) || math.IsInf(c.Damping, 0):
		return errors.Errorf("influence: damping=%g, want a finite value ≥ 0 (0: heuristic)", c.Damping)
	case !(c.DampingScale > 0) || math.IsInf(c.DampingScale, 0):
		return errors.Errorf("influence: damping_scale=%g, want a finite value > 0", c.DampingScale)
	}
	return nil
}

// Linear names a tracked linear layer y = W x with W [Out, In] (In counts a bias's constant 1 if there is one).
type Linear struct {
	Name string `json:"name"`
	In   int    `json:"in"`
	Out  int    `json:"out"`
}

// Params returns In·Out, the size of the layer's gradient.
func (l Linear) Params() int { return l.In * l.Out }

// Factors are the fitted EK-FAC factors of one linear layer (doc.go, equations 1–4).
type Factors struct {
	Linear
	// TokensCov is N_A = N_S, the tokens AddCovariances saw; Sequences is N_seq, the gradients AddLambda saw.
	TokensCov, Sequences int
	// CovA [In, In] and CovS [Out, Out] are the sums Σ a aᵀ and Σ g gᵀ while fitting, the normalised and
	// symmetrised covariances after Decompose.
	CovA, CovS []float64
	// QA [In, In] and QS [Out, Out] hold the eigenvectors of A and S as columns; EigA and EigS the eigenvalues,
	// ascending.
	QA, QS     []float64
	EigA, EigS []float64
	// Lambda [Out, In] are the eigenvalues of the preconditioned Fisher in the Q_S ⊗ Q_A basis (equation 3).
	Lambda []float64
	// Damping is λ of this layer (equation 4), set by Finish.
	Damping float64
}

// EKFAC holds the factors of every tracked layer. Fitting runs in order: AddCovariances over the fitting tokens,
// Decompose, AddLambda over the fitting sequences (skipped for K-FAC), then Finish; afterwards Precondition and the
// scores may be used, concurrently.
type EKFAC struct {
	Config EKFACConfig
	Layers []*Factors
	stage  int // 0 covariances, 1 lambda, 2 finished
}

// NewEKFAC starts fitting the layers with cfg. It fails on an invalid config or a layer with a non-positive size.
func NewEKFAC(cfg EKFACConfig, layers []Linear) (*EKFAC, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	e := &EKFAC{Config: cfg}
	for _, l := range layers {
		if l.In <= 0 || l.Out <= 0 {
			return nil, errors.Errorf("influence.NewEKFAC: layer %q has In=%d, Out=%d; want both > 0", l.Name, l.In, l.Out)
		}
		e.Layers = append(e.Layers, &Factors{Linear: l, CovA: make([]float64, l.In*l.In), CovS: make([]float64, l.Out*l.Out)})
	}
	return e, nil
}

func (e *EKFAC) layer(caller string, m, stage int) (*Factors, error) {
	if m < 0 || m >= len(e.Layers) {
		return nil, errors.Errorf("influence.EKFAC.%s: layer %d out of range [0, %d)", caller, m, len(e.Layers))
	}
	if e.stage != stage {
		return nil, errors.Errorf("influence.EKFAC.%s: called at fitting stage %d, want %d (AddCovariances, Decompose, "+
			"AddLambda, Finish)", caller, e.stage, stage)
	}
	return e.Layers[m], nil
}

// AddCovariances adds n tokens of layer m to Σ a aᵀ and Σ g gᵀ: a [n, In] inputs, g [n, Out] output gradients
// (row-major). Tokens that are padding must be left out by the caller.
func (e *EKFAC) AddCovariances(m int, a, g []float64) error {
	f, err := e.layer("AddCovariances", m, 0)
	if err != nil {
		return err
	}
	if len(a)%f.In != 0 || len(g)%f.Out != 0 || len(a)/f.In != len(g)/f.Out {
		return errors.Errorf("influence.EKFAC.AddCovariances: layer %q: len(a)=%d, len(g)=%d, want n·%d and n·%d",
			f.Name, len(a), len(g), f.In, f.Out)
	}
	n := len(a) / f.In
	if n == 0 {
		return nil
	}
	addGram(f.CovA, a, n, f.In)
	addGram(f.CovS, g, n, f.Out)
	f.TokensCov += n
	return nil
}

// addGram adds xᵀx to sum [d, d] for x [n, d].
func addGram(sum, x []float64, n, d int) {
	xm := mat.NewDense(n, d, x)
	var gram mat.Dense
	gram.Mul(xm.T(), xm)
	raw := gram.RawMatrix()
	for i := 0; i < d; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+d]
		for j, v := range row {
			sum[i*d+j] += v
		}
	}
}

// Decompose normalises and symmetrises A and S and eigendecomposes them in float64 (equations 1–2). It fails if a
// layer saw no tokens or an eigendecomposition does not converge.
func (e *EKFAC) Decompose() error {
	if e.stage != 0 {
		return errors.Errorf("influence.EKFAC.Decompose: called twice")
	}
	for _, f := range e.Layers {
		if f.TokensCov == 0 {
			return errors.Errorf("influence.EKFAC.Decompose: layer %q saw no tokens", f.Name)
		}
		var err error
		if f.QA, f.EigA, err = EigenSym(normaliseSym(f.CovA, f.In, float64(f.TokensCov)), f.In); err != nil {
			return errors.WithMessagef(err, "layer %q: A", f.Name)
		}
		if f.QS, f.EigS, err = EigenSym(normaliseSym(f.CovS, f.Out, float64(f.TokensCov)), f.Out); err != nil {
			return errors.WithMessagef(err, "layer %q: S", f.Name)
		}
		f.Lambda = make([]float64, f.Out*f.In)
	}
	e.stage = 1
	return nil
}

// normaliseSym replaces m [d, d] by (M + Mᵀ)/(2n) in place and returns it.
func normaliseSym(m []float64, d int, n float64) []float64 {
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			v := (m[i*d+j] + m[j*d+i]) / (2 * n)
			m[i*d+j], m[j*d+i] = v, v
		}
	}
	return m
}

// EigenSym returns the eigendecomposition of the symmetric matrix m [d, d] (row-major; only symmetric input is
// meaningful): q [d, d] with the eigenvectors as columns and the eigenvalues, ascending. float64 throughout.
func EigenSym(m []float64, d int) (q, values []float64, err error) {
	var es mat.EigenSym
	if !es.Factorize(mat.NewSymDense(d, append([]float64(nil), m...)), true) {
		return nil, nil, errors.Errorf("influence.EigenSym: the eigendecomposition of a %d×%d matrix did not converge", d, d)
	}
	values = es.Values(nil)
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	q = make([]float64, d*d)
	raw := vecs.RawMatrix()
	for i := 0; i < d; i++ {
		copy(q[i*d:(i+1)*d], raw.Data[i*raw.Stride:i*raw.Stride+d])
	}
	return q, values, nil
}

// rotate returns Q_Sᵀ G Q_A [Out, In] for g [Out, In].
func (f *Factors) rotate(g []float64) *mat.Dense {
	var tmp, out mat.Dense
	tmp.Mul(mat.NewDense(f.Out, f.Out, f.QS).T(), mat.NewDense(f.Out, f.In, g))
	out.Mul(&tmp, mat.NewDense(f.In, f.In, f.QA))
	return &out
}

// AddLambda adds one sequence's gradient G_n [Out, In] of layer m to the eigenvalue correction (equation 3). Under
// K-FAC it only counts the sequence.
func (e *EKFAC) AddLambda(m int, grad []float64) error {
	f, err := e.layer("AddLambda", m, 1)
	if err != nil {
		return err
	}
	if len(grad) != f.Params() {
		return errors.Errorf("influence.EKFAC.AddLambda: layer %q: len(grad)=%d, want Out·In = %d", f.Name, len(grad), f.Params())
	}
	f.Sequences++
	if e.Config.Eigenvalues == EigenKronecker {
		return nil
	}
	r := f.rotate(grad).RawMatrix()
	for i := 0; i < f.Out; i++ {
		for j := 0; j < f.In; j++ {
			v := r.Data[i*r.Stride+j]
			f.Lambda[i*f.In+j] += v * v
		}
	}
	return nil
}

// Finish sets Λ (the mean over sequences for EK-FAC, λ_S λ_Aᵀ for K-FAC) and each layer's damping (equation 4).
// EK-FAC fails if a layer saw no sequences.
func (e *EKFAC) Finish() error {
	if e.stage != 1 {
		return errors.Errorf("influence.EKFAC.Finish: called at stage %d; want after Decompose", e.stage)
	}
	for _, f := range e.Layers {
		switch e.Config.Eigenvalues {
		case EigenKronecker:
			for i := 0; i < f.Out; i++ {
				for j := 0; j < f.In; j++ {
					f.Lambda[i*f.In+j] = f.EigS[i] * f.EigA[j]
				}
			}
		default:
			if f.Sequences == 0 {
				return errors.Errorf("influence.EKFAC.Finish: layer %q saw no sequences in AddLambda", f.Name)
			}
			for i := range f.Lambda {
				f.Lambda[i] /= float64(f.Sequences)
			}
		}
		f.Damping = e.Config.Damping
		if f.Damping == 0 {
			f.Damping = e.Config.DampingScale * stats.Mean(f.Lambda)
		}
	}
	e.stage = 2
	return nil
}

// Precondition returns Ĝ = Q_S[(Q_Sᵀ G Q_A) ⊘ (Λ + λ)]Q_Aᵀ [Out, In] for a gradient G [Out, In] of layer m
// (equation 5). It panics before Finish or on a wrong length (programming errors).
func (e *EKFAC) Precondition(m int, grad []float64) []float64 {
	if e.stage != 2 || m < 0 || m >= len(e.Layers) || len(grad) != e.Layers[m].Params() {
		panic(errors.Errorf("influence.EKFAC.Precondition: layer %d, len(grad)=%d, stage %d; want a layer of a finished EKFAC",
			m, len(grad), e.stage))
	}
	f := e.Layers[m]
	r := f.rotate(grad)
	raw := r.RawMatrix()
	for i := 0; i < f.Out; i++ {
		for j := 0; j < f.In; j++ {
			raw.Data[i*raw.Stride+j] /= f.Lambda[i*f.In+j] + f.Damping
		}
	}
	var tmp, out mat.Dense
	tmp.Mul(mat.NewDense(f.Out, f.Out, f.QS), r)
	out.Mul(&tmp, mat.NewDense(f.In, f.In, f.QA).T())
	return denseData(&out)
}

// Bytes returns the memory of the fitted factors in float64: Q_A, Q_S, their eigenvalues and Λ of every layer.
func (e *EKFAC) Bytes() int64 {
	var n int64
	for _, f := range e.Layers {
		n += int64(f.In*f.In + f.Out*f.Out + f.In + f.Out + f.In*f.Out)
	}
	return 8 * n
}

// NumParams returns Σ_layers In·Out, the length of the model gradient EK-FAC tracks.
func (e *EKFAC) NumParams() int {
	n := 0
	for _, f := range e.Layers {
		n += f.Params()
	}
	return n
}

// SequenceGradient returns G = Σ_t g_t a_tᵀ [out, in] of n tokens: a [n, in] inputs, g [n, out] output gradients.
// Panics on inconsistent lengths.
func SequenceGradient(a, g []float64, in, out int) []float64 {
	if in <= 0 || out <= 0 || len(a)%in != 0 || len(g)%out != 0 || len(a)/in != len(g)/out {
		panic(errors.Errorf("influence.SequenceGradient: len(a)=%d, len(g)=%d, want n·%d and n·%d", len(a), len(g), in, out))
	}
	n := len(a) / in
	res := make([]float64, out*in)
	if n == 0 {
		return res
	}
	var m mat.Dense
	m.Mul(mat.NewDense(n, out, g).T(), mat.NewDense(n, in, a))
	return denseData(&m)
}

// CodeGradient returns the dense G = Σ_t w_t u_t a_tᵀ [D, K] (doc.go, equation 7 with token weights; the [Out, In]
// layout of SequenceGradient with In = K, Out = D) of n tokens of a sparse-coded layer: codes idx [n, k] with
// activations acts [n, k], and output gradients u [n, D]. w [n] weights the tokens; nil weighs each by 1. Panics on
// inconsistent lengths or an index outside [0, K).
func CodeGradient(K, D, k int, idx []int32, acts, u, w []float64) []float64 {
	if K <= 0 || D <= 0 || k <= 0 || len(idx)%k != 0 || len(acts) != len(idx) || len(u) != len(idx)/k*D ||
		(w != nil && len(w) != len(idx)/k) {
		panic(errors.Errorf("influence.CodeGradient: K=%d, D=%d, k=%d, len(idx)=%d, len(acts)=%d, len(u)=%d, len(w)=%d; "+
			"want positive sizes and n·k, n·k, n·D, n (or nil)", K, D, k, len(idx), len(acts), len(u), len(w)))
	}
	G := make([]float64, D*K)
	for t := 0; t < len(idx)/k; t++ {
		wt := 1.0
		if w != nil {
			wt = w[t]
		}
		if wt == 0 {
			continue
		}
		for i := 0; i < k; i++ {
			a := wt * acts[t*k+i]
			if a == 0 {
				continue
			}
			j := int(idx[t*k+i])
			if j < 0 || j >= K {
				panic(errors.Errorf("influence.CodeGradient: index %d outside [0, %d)", j, K))
			}
			for d := 0; d < D; d++ {
				G[d*K+j] += a * u[t*D+d]
			}
		}
	}
	return G
}

// denseData returns m's elements row-major in a fresh slice.
func denseData(m *mat.Dense) []float64 {
	r, c := m.Dims()
	raw := m.RawMatrix()
	if raw.Stride == c {
		return append([]float64(nil), raw.Data[:r*c]...)
	}
	out := make([]float64, r*c)
	for i := 0; i < r; i++ {
		copy(out[i*c:(i+1)*c], raw.Data[i*raw.Stride:i*raw.Stride+c])
	}
	return out
}

// Dot returns Σ_i x_i y_i; the slices must have equal lengths (it panics otherwise).
func Dot(x, y []float64) float64 {
	if len(x) != len(y) {
		panic(errors.Errorf("influence.Dot: lengths %d and %d", len(x), len(y)))
	}
	s := 0.0
	for i, v := range x {
		s += v * y[i]
	}
	return s
}
