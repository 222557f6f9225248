package fit

import (
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/wbtest"
)

// Test model: x [B, F=4] float64, labels [B, 1] int32 in [0, C=3).
//
//	h = tanh(x·W1 + b1) ⊙ gain         W1 [4, 5] "/hidden/dense/weights", gain [5] "/norm/gain"
//	logits = h·W2 + b2 + h·P           W2 [5, 3] "/out/dense/weights", P [5, 3] "/mix/prototypes"
//	loss = mean cross-entropy
//
// It has one variable of each decay group: rank-2 decayed (W1, W2), rank-1 (biases, gain), rank-2 exempt by name (P).
const (
	testB = 5
	testF = 4
	testC = 3
)

func mlpLoss(scope *model.Scope, inputs []*Node) *Node {
	x, labels := inputs[0], inputs[1]
	g := x.Graph()
	h := Tanh(layers.Dense(scope.At("hidden"), x, true, 5)) // [B, 5]
	gain := scope.At("norm").VariableWithValue("gain", []float64{1, 1, 1, 1, 1})
	h = Mul(h, Reshape(gain.NodeValue(g), 1, 5)) // [B, 5]
	protos := scope.At("mix").VariableWithShape("prototypes", wbtest.Tensor64(make([]float64, 15), 5, 3).Shape())
	logits := Add(layers.Dense(scope.At("out"), h, true, testC), MatMul(h, protos.NodeValue(g))) // [B, C]
	return ReduceAllMean(loss.SparseCategoricalCrossEntropyLogits([]*Node{labels}, []*Node{logits}))
}

// mlpBatches returns n random batches [x [B, F] float64, labels [B, 1] int32].
func mlpBatches(seed uint64, n int) [][]*tensors.Tensor {
	rng := wbtest.RNG(seed)
	out := make([][]*tensors.Tensor, n)
	for i := range out {
		x := wbtest.Tensor64(wbtest.Normal(rng, testB*testF, 1), testB, testF)
		labels := make([]int32, testB)
		for j := range labels {
			labels[j] = int32(rng.IntN(testC))
		}
		out[i] = []*tensors.Tensor{x, tensors.FromFlatDataAndDimensions(labels, testB, 1)}
	}
	return out
}

func mustSlice(t testing.TB, batches [][]*tensors.Tensor) *SliceBatches {
	t.Helper()
	s, err := NewSliceBatches(batches)
	if err != nil {
		t.Fatalf("%+v", err)
	}
	return s
}

// testConfig is a short float64 run with every feature on.
func testConfig() Config {
	cfg := DefaultConfig()
	cfg.Steps = 12
	cfg.LR = 0.05
	cfg.WarmupSteps = 3
	cfg.WeightDecay = 0.3
	cfg.ClipNorm = 0.8
	cfg.EvalEvery = 3
	cfg.EvalBatches = 2
	cfg.CheckpointEvery = 4
	cfg.KeepCheckpoints = 2
	return cfg
}

// gradProbe evaluates the loss and its gradients with respect to every trainable float variable of the model, in a
// fixed order (paths), on the current weights of scope.
type gradProbe struct {
	exec  *model.Exec
	paths []string
}

func newGradProbe(t testing.TB, scope *model.Store) *gradProbe {
	p := &gradProbe{}
	var err error
	p.exec, err = model.NewExec(wbtest.Backend(t), scope, func(scope *model.Scope, inputs []*Node) []*Node {
		loss := mlpLoss(scope, inputs)
		g := loss.Graph()
		var values []*Node
		p.paths = nil
		for v := range scope.IterVariables() {
			if v.Trainable && v.DType().IsFloat() && v.InUseByGraph(g) && !inOptimizerScope(v.Scope()) {
				p.paths = append(p.paths, v.Path())
				values = append(values, v.NodeValue(g))
			}
		}
		return append([]*Node{loss}, Gradient(loss, values...)...)
	})
	if err != nil {
		t.Fatalf("%+v", err)
	}
	return p
}

// run returns the loss and the gradients by path.
func (p *gradProbe) run(t testing.TB, batch []*tensors.Tensor) (float64, map[string][]float64) {
	t.Helper()
	outs, err := p.exec.Exec(batch[0], batch[1])
	if err != nil {
		t.Fatalf("%+v", err)
	}
	grads := map[string][]float64{}
	for i, path := range p.paths {
		grads[path] = wbtest.Flat64(outs[1+i])
	}
	return tensors.ToScalar[float64](outs[0]), grads
}

// snapshot copies the values of all float variables of scope, by path.
func snapshot(vars *model.Store) map[string][]float64 {
	out := map[string][]float64{}
	for v := range vars.IterVariables() {
		if v.DType() == dtypes.Float64 && v.HasValue() {
			out[v.Path()] = wbtest.Flat64(v.MustValue())
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// crashingBatches fails on the call to Next after `after` successful ones, like a process dying mid-run.
type crashingBatches struct {
	Batches
	after, calls int
}

func (c *crashingBatches) Next() ([]*tensors.Tensor, error) {
	c.calls++
	if c.calls > c.after {
		return nil, errors.New("simulated crash")
	}
	return c.Batches.Next()
}

// randomFloat64s is a helper for stateless tests.
func randomFloat64s(rng *rand.Rand, n int) []float64 { return wbtest.Normal(rng, n, 1) }
