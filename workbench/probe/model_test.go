package probe

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/initializer"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/wbtest"
)

// A small causal model for the tests, built on a test-local copy of layers/hook (workbench cannot import layers):
// the same alias type, per-graph hooks, dotted scope names, patchable Emit and observe-only Observe.

var (
	hooksMu sync.Mutex
	hooks   = map[*Graph]func(string, *Node) *Node{}
)

func testAttach(g *Graph, f func(name string, x *Node) *Node) func() {
	hooksMu.Lock()
	defer hooksMu.Unlock()
	if _, ok := hooks[g]; ok {
		panic("testAttach: graph already has a hook")
	}
	hooks[g] = f
	return func() {
		hooksMu.Lock()
		delete(hooks, g)
		hooksMu.Unlock()
	}
}

func probeName(scope *model.Scope, short string) string {
	prefix := strings.Trim(strings.ReplaceAll(scope.Scope(), model.ScopeSeparator, "."), ".")
	if prefix == "" {
		return short
	}
	return prefix + "." + short
}

func emit(scope *model.Scope, short string, x *Node) *Node {
	hooksMu.Lock()
	f, ok := hooks[x.Graph()]
	hooksMu.Unlock()
	if !ok {
		return x
	}
	name := probeName(scope, short)
	y := f(name, x)
	if y == nil {
		return x
	}
	if !y.Shape().Equal(x.Shape()) {
		panic(errors.Errorf("emit %q: shape %s, want %s", name, y.Shape(), x.Shape()))
	}
	return y
}

func observe(scope *model.Scope, short string, x *Node) {
	if emit(scope, short, x) != x {
		panic(errors.Errorf("hook: probe %q is observe-only", probeName(scope, short)))
	}
}

// tinyModel is V tokens, width D, R "prototypes" and L blocks; Step's attention-like pattern has capacity S.
type tinyModel struct{ V, D, R, L, S int }

var testModel = tinyModel{V: 7, D: 4, R: 3, L: 2, S: 9}

func (m tinyModel) weights(scope *model.Scope, g *Graph) (emb *Node, protos, w []*Node) {
	c := scope.WithInitializer(initializer.RandomNormalFn(scope, 0.7))
	emb = c.At("embed").VariableWithShape("embeddings", shapes.Make(dtypes.Float64, m.V, m.D)).NodeValue(g)
	for l := 0; l < m.L; l++ {
		pc := c.At("block_%02d", l).At("protot")
		protos = append(protos, pc.VariableWithShape("prototypes", shapes.Make(dtypes.Float64, m.R, m.D)).NodeValue(g))
		w = append(w, pc.VariableWithShape("w", shapes.Make(dtypes.Float64, m.R, m.D)).NodeValue(g))
	}
	return
}

// block is h + (π·W) ⊙ mean_{s≤t} h_s with π = softmax(h·Pᵀ); weights [B, 1, T, S] are the causal mean's.
func (m tinyModel) block(scope *model.Scope, l int, h, mean, weights, proto, w *Node) *Node {
	c := scope.At("block_%02d", l)
	pc := c.At("protot")
	pi := Softmax(Einsum("btd,rd->btr", h, proto), -1)
	observe(pc, "pi", pi)
	observe(c.At("attn"), "pattern", weights)
	mix := emit(pc, "mix_out", Mul(Einsum("btr,rd->btd", pi, w), mean))
	return emit(c, "resid_post", Add(h, mix))
}

// Forward: tokens [B, T] → logits [B, T, V].
func (m tinyModel) Forward(scope *model.Scope, tokens *Node) *Node {
	g := tokens.Graph()
	B, T := tokens.Shape().Dim(0), tokens.Shape().Dim(1)
	emb, protos, ws := m.weights(scope, g)
	h := Gather(emb, InsertAxes(tokens, -1)) // [B, T, D]
	causal := ConvertDType(LowerTriangular(g, T), dtypes.Float64)
	avg := Div(causal, ReduceAndKeep(causal, ReduceSum, -1)) // [T, T]: row t is 1/(t+1) on s ≤ t
	weights := BroadcastToDims(Reshape(avg, 1, 1, T, T), B, 1, T, T)
	for l := 0; l < m.L; l++ {
		h = emit(scope.At("block_%02d", l), "resid_pre", h)
		h = m.block(scope, l, h, Einsum("ts,bsd->btd", avg, h), weights, protos[l], ws[l])
	}
	return emit(scope, "logits", Einsum("btd,vd->btv", h, emb))
}

// Step: token [B, 1], pos, state (running sums [B, 1, D] per block) → logits [B, V] and the new state.
func (m tinyModel) Step(scope *model.Scope, token, pos *Node, state []*Node) (*Node, []*Node) {
	g := token.Graph()
	B := token.Shape().Dim(0)
	emb, protos, ws := m.weights(scope, g)
	h := Gather(emb, InsertAxes(token, -1)) // [B, 1, D]
	n := ConvertDType(AddScalar(pos, 1), dtypes.Float64)
	seq := Iota(g, shapes.Make(dtypes.Int32, m.S), 0)
	row := Div(ConvertDType(LessOrEqual(seq, pos), dtypes.Float64), n)
	weights := BroadcastToDims(Reshape(row, 1, 1, 1, m.S), B, 1, 1, m.S)
	var next []*Node
	for l := 0; l < m.L; l++ {
		h = emit(scope.At("block_%02d", l), "resid_pre", h)
		sum := Add(state[l], h)
		next = append(next, sum)
		h = m.block(scope, l, h, Div(sum, n), weights, protos[l], ws[l])
	}
	return Reshape(emit(scope, "logits", Einsum("btd,vd->btv", h, emb)), B, m.V), next
}

func (m tinyModel) NewState(batch int) []*tensors.Tensor {
	out := make([]*tensors.Tensor, m.L)
	for i := range out {
		out[i] = tensors.FromShape(shapes.Make(dtypes.Float64, batch, 1, m.D))
	}
	return out
}

// allNames is the emission order of the test model's probes.
func (m tinyModel) allNames() []string {
	var out []string
	for l := 0; l < m.L; l++ {
		b := fmt.Sprintf("block_%02d", l)
		out = append(out, b+".resid_pre", b+".protot.pi", b+".attn.pattern", b+".protot.mix_out", b+".resid_post")
	}
	return append(out, "logits")
}

// newTestModel returns the Model of m on a fresh context with initialised variables, on the test backend.
func newTestModel(t testing.TB, m tinyModel, seed int64) Model {
	t.Helper()
	return newModelOn(wbtest.Backend(t), m, seed)
}

// newModelOn is newTestModel on a given backend.
func newModelOn(backend compute.Backend, m tinyModel, seed int64) Model {
	vars := model.NewStore()
	vars.SetParam(model.ParamInitialSeed, seed)
	// Create and initialise the variables with one plain forward run.
	model.MustExecOnce(backend, vars, m.Forward, tensors.FromValue([][]int32{{0}}))
	return Model{Backend: backend, Store: vars, Forward: m.Forward, Step: m.Step, NewState: m.NewState, Attach: testAttach}
}

// tokensOf returns [B, T] int32 tokens (b·5 + 3t + 1) mod V.
func tokensOf(B, T, V int) *tensors.Tensor {
	out := make([][]int32, B)
	for b := range out {
		out[b] = make([]int32, T)
		for t := range out[b] {
			out[b][t] = int32((b*5 + 3*t + 1) % V)
		}
	}
	return tensors.FromValue(out)
}

// plainForward runs Forward without hooks.
func plainForward(t testing.TB, m Model, tokens *tensors.Tensor) []float64 {
	return wbtest.Flat64(model.MustExecOnce(m.Backend, m.Store, m.Forward, tokens))
}
