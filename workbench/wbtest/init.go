package wbtest

import (
	"math"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// InitWidth is the model width of the initialisation tests: with it every checked weight of a mixer has at least
// 256 entries, as CheckInitLaw's tolerances need.
const InitWidth = 64

// InitValues builds mixer on a [1, 3, InitWidth] float64 input with a fixed initial seed and returns the initial
// values of its trainable float64 variables by name.
func InitValues(t testing.TB, mixer func(scope *model.Scope, x *Node) *Node) map[string][]float64 {
	t.Helper()
	scope := model.NewStore()
	scope.SetParam(model.ParamInitialSeed, int64(17))
	model.MustExecOnce(Backend(t), scope, mixer, tensors.FromShape(shapes.Make(dtypes.Float64, 1, 3, InitWidth)))
	out := map[string][]float64{}
	for v := range scope.IterVariables() {
		if v.Trainable && v.Shape().DType == dtypes.Float64 {
			out[v.Name()] = Flat64(v.MustValue())
		}
	}
	return out
}

// CheckInitLaw checks that vals are drawn from N(0, std²) when std > 0, else from U(±1/√fanIn) (PyTorch's
// nn.Linear and Conv1d default). Tolerances are 4 standard errors under the law: the mean square within
// 4·v·√((κ−1)/n) of its variance v (kurtosis κ = 3 normal, 9/5 uniform); for the uniform law every entry within
// the bound; for the normal law the fraction beyond √3·std, which a uniform law of the same variance never
// exceeds, within 4·√(p(1−p)/n) of p = P(|Z| > √3) — so neither law passes for the other at n ≥ 256.
func CheckInitLaw(t testing.TB, label string, vals []float64, std float64, fanIn int) {
	t.Helper()
	if len(vals) < 256 {
		t.Fatalf("%s: %d values, want ≥ 256 for the test's tolerances", label, len(vals))
	}
	n := float64(len(vals))
	ms, tail, maxAbs := 0.0, 0.0, 0.0
	v, kurt, bound := std*std, 3.0, math.Sqrt(3)*std
	if std == 0 {
		bound = 1 / math.Sqrt(float64(fanIn))
		v, kurt = bound*bound/3, 9.0/5
	}
	for _, x := range vals {
		ms += x * x / n
		maxAbs = max(maxAbs, math.Abs(x))
		if math.Abs(x) > bound {
			tail += 1 / n
		}
	}
	if tol := 4 * v * math.Sqrt((kurt-1)/n); math.Abs(ms-v) > tol {
		t.Errorf("%s: mean square %g, want %g ± %g", label, ms, v, tol)
	}
	if std == 0 && maxAbs > bound*(1+1e-12) {
		t.Errorf("%s: max |w| = %g beyond U(±%g)", label, maxAbs, bound)
	}
	if p := math.Erfc(math.Sqrt(1.5)); std > 0 && math.Abs(tail-p) > 4*math.Sqrt(p*(1-p)/n) {
		t.Errorf("%s: fraction beyond √3·σ = %g, want %g for N(0, %g²)", label, tail, p, std)
	}
}
