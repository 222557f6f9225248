package fit

import (
	"math"
	"sort"
	"strings"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/initializer"
	"github.com/pkg/errors"
)

// Optimizer state lives under OptimizerScope, outside the model's scopes:
//
//	/optimizer/step                    int64 scalar: updates done so far (s)
//	/optimizer/m/<scope>/<name>        first moment of the variable <scope>/<name>, same shape
//	/optimizer/v/<scope>/<name>        second moment
//
// In a safetensors checkpoint these become "optimizer.step", "optimizer.m.<scope>.<name>", "optimizer.v.…".
const (
	OptimizerScope = "/optimizer"
	StepVariable   = "step"
)

// computeDType is the dtype optimizer arithmetic uses for a variable of dtype dt: float32 for 16-bit floats (their
// moments would underflow), dt otherwise.
func computeDType(dt dtypes.DType) dtypes.DType {
	if dt.IsFloat16() {
		return dtypes.Float32
	}
	return dt
}

// LearningRate returns the learning rate of update number s+1, given s, the number of updates already done, as a
// float scalar node (doc.go, equation 1):
//
//	s < W:  lr_s = LR·(s+1)/W
//	s ≥ W:  lr_s = LR_min + ½(LR − LR_min)(1 + cos(π·min(1, (s−W)/max(1, S−W)))),   LR_min = MinLRFrac·LR
//
// The result has s's dtype.
func LearningRate(s *Node, cfg Config) *Node {
	lrMax := cfg.LR
	lrMin := cfg.MinLRFrac * cfg.LR
	span := math.Max(1, float64(cfg.Steps-cfg.WarmupSteps))
	progress := ClipScalar(DivScalar(AddScalar(s, -float64(cfg.WarmupSteps)), span), 0, 1)
	cosine := AddScalar(MulScalar(AddScalar(Cos(MulScalar(progress, math.Pi)), 1), 0.5*(lrMax-lrMin)), lrMin)
	if cfg.WarmupSteps == 0 {
		return cosine
	}
	warm := MulScalar(AddScalar(s, 1), lrMax/float64(cfg.WarmupSteps))
	return Where(LessThan(s, Scalar(s.Graph(), s.DType(), float64(cfg.WarmupSteps))), warm, cosine)
}

// GlobalNorm returns ‖g‖ = sqrt(Σ_i Σ g_i²) over all gradients, as a scalar of dtype.
func GlobalNorm(grads []*Node, dtype dtypes.DType) *Node {
	if len(grads) == 0 {
		panic(errors.New("fit.GlobalNorm: no gradients"))
	}
	sq := make([]*Node, len(grads))
	for i, g := range grads {
		sq[i] = ReduceAllSum(Square(ConvertDType(g, dtype)))
	}
	return Sqrt(ReduceAllSum(Stack(sq, 0)))
}

// ClipByGlobalNorm scales every gradient by min(1, maxNorm/‖g‖) (doc.go, equation 2), written as maxNorm/max(‖g‖,
// maxNorm) so a zero gradient needs no epsilon. norm is GlobalNorm(grads, dtype), the norm before clipping. maxNorm
// must be > 0.
func ClipByGlobalNorm(grads []*Node, maxNorm float64, dtype dtypes.DType) (clipped []*Node, norm *Node) {
	if !(maxNorm > 0) {
		panic(errors.Errorf("fit.ClipByGlobalNorm: maxNorm=%g, want > 0", maxNorm))
	}
	norm = GlobalNorm(grads, dtype)
	scale := Div(Scalar(norm.Graph(), dtype, maxNorm), MaxScalar(norm, maxNorm))
	clipped = make([]*Node, len(grads))
	for i, g := range grads {
		clipped[i] = Mul(g, ConvertDType(scale, g.DType()))
	}
	return clipped, norm
}

// AdamW returns one AdamW update of one tensor (doc.go, equation 3). w, g, m and v have one shape and dtype; lr and
// t (the 1-based update number, as a float) are scalars of that dtype. decay selects whether the decoupled weight
// decay λ = cfg.WeightDecay applies.
//
//	m' = β1·m + (1−β1)·g
//	v' = β2·v + (1−β2)·g²
//	w' = w − lr·( (m'/(1−β1ᵗ)) / (sqrt(v'/(1−β2ᵗ)) + ε) + λ·w )     (λ·w only when decay)
func AdamW(w, g, m, v, lr, t *Node, decay bool, cfg Config) (newW, newM, newV *Node) {
	if !w.Shape().Equal(g.Shape()) || !w.Shape().Equal(m.Shape()) || !w.Shape().Equal(v.Shape()) {
		panic(errors.Errorf("fit.AdamW: shapes w=%s g=%s m=%s v=%s must be equal", w.Shape(), g.Shape(),
			m.Shape(), v.Shape()))
	}
	b1, b2 := cfg.Beta1, cfg.Beta2
	newM = Add(MulScalar(m, b1), MulScalar(g, 1-b1))
	newV = Add(MulScalar(v, b2), MulScalar(Square(g), 1-b2))
	g0 := w.Graph()
	dt := w.DType()
	corr1 := OneMinus(Pow(Scalar(g0, dt, b1), t)) // 1 − β1ᵗ
	corr2 := OneMinus(Pow(Scalar(g0, dt, b2), t)) // 1 − β2ᵗ
	mHat := Div(newM, corr1)
	vHat := Div(newV, corr2)
	step := Div(mHat, AddScalar(Sqrt(vHat), cfg.Eps))
	if decay && cfg.WeightDecay != 0 {
		step = Add(step, MulScalar(w, cfg.WeightDecay))
	}
	newW = Sub(w, Mul(lr, step))
	return newW, newM, newV
}

// stepOutputs are the extra outputs of the training step graph, besides the updated variables.
type stepOutputs struct {
	loss, gradNorm, lr *Node
}

// applyAdamW builds the optimizer part of the training step: gradients of loss with respect to every trainable
// float variable the graph uses, optional clipping, the schedule, AdamW on each variable, and the step counter. Every
// variable update is guarded by the finiteness of loss and gradient norm, so a step that produces NaN or Inf leaves
// all weights, moments and the step counter as they were.
func applyAdamW(scope *model.Scope, loss *Node, cfg Config) stepOutputs {
	g := loss.Graph()
	var params []*model.Variable
	for v := range scope.IterVariables() {
		if v.Trainable && v.DType().IsFloat() && v.InUseByGraph(g) && !inOptimizerScope(v.Scope()) {
			params = append(params, v)
		}
	}
	if len(params) == 0 {
		panic(errors.New("fit: the loss uses no trainable float variables"))
	}
	// Creation order differs between a fresh run and a resumed one (variables restored from a checkpoint come first);
	// a fixed order keeps the global-norm sum, and so resumed runs, bit-identical.
	sort.Slice(params, func(i, j int) bool { return params[i].Path() < params[j].Path() })
	values := make([]*Node, len(params))
	for i, v := range params {
		values[i] = v.NodeValue(g)
	}
	grads := Gradient(loss, values...)

	normDType := computeDType(loss.DType())
	var norm *Node
	if cfg.ClipNorm > 0 {
		grads, norm = ClipByGlobalNorm(grads, cfg.ClipNorm, normDType)
	} else {
		norm = GlobalNorm(grads, normDType)
	}
	finite := LogicalAnd(IsFinite(loss), IsFinite(norm))

	optCtx := scope.Store().Scope(OptimizerScope)
	stepVar := optCtx.VariableWithValue(StepVariable, int64(0)).SetTrainable(false)
	s := stepVar.NodeValue(g)
	sFloat := ConvertDType(s, normDType)
	lr := LearningRate(sFloat, cfg)
	t := AddScalar(sFloat, 1)

	for i, p := range params {
		dt := computeDType(p.DType())
		mVar := slot(optCtx, "m", p, dt)
		vVar := slot(optCtx, "v", p, dt)
		w := values[i]
		m, v := mVar.NodeValue(g), vVar.NodeValue(g)
		newW, newM, newV := AdamW(ConvertDType(w, dt), ConvertDType(grads[i], dt), m, v,
			ConvertDType(lr, dt), ConvertDType(t, dt), cfg.Decays(p.Path(), p.Shape().Rank()), cfg)
		p.SetNodeValue(Where(finite, ConvertDType(newW, p.DType()), w))
		mVar.SetNodeValue(Where(finite, newM, m))
		vVar.SetNodeValue(Where(finite, newV, v))
	}
	stepVar.SetNodeValue(Where(finite, AddScalar(s, 1), s))
	return stepOutputs{loss: loss, gradNorm: norm, lr: lr}
}

// slot returns the zero-initialised optimizer variable /optimizer/<kind>/<p's scope>/<p's name>.
func slot(optCtx *model.Scope, kind string, p *model.Variable, dt dtypes.DType) *model.Variable {
	scope := OptimizerScope + "/" + kind
	if p.Scope() != model.RootScopePath {
		scope += p.Scope()
	}
	return optCtx.Store().Scope(scope).WithInitializer(initializer.Zero).
		VariableWithShape(p.Name(), shapes.Make(dt, p.Shape().Dimensions...)).SetTrainable(false)
}

func inOptimizerScope(scope string) bool {
	return scope == OptimizerScope || strings.HasPrefix(scope, OptimizerScope+"/")
}
