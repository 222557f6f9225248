package probe

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"
	"github.com/protolab/protolab/workbench/host"
)

// Filter selects the probe names whose activations a Runner caches. A nil Filter caches nothing (a Runner then
// only patches and generates).
type Filter func(name string) bool

// Match returns a Filter accepting the names that match any of the path.Match patterns; with no pattern it accepts
// every name. '*' matches any run of characters but '/', so it crosses the dots of probe names: "block_*.resid_post",
// "*.protot.pi", "block_0[0-2].*". Match panics on a malformed pattern (path.ErrBadPattern), like
// regexp.MustCompile: patterns are program text.
func Match(patterns ...string) Filter {
	for _, p := range patterns {
		if _, err := path.Match(p, ""); err != nil {
			panic(errors.Wrapf(err, "probe.Match: pattern %q", p))
		}
	}
	ps := slices.Clone(patterns)
	return func(name string) bool {
		if len(ps) == 0 {
			return true
		}
		for _, p := range ps {
			if ok, _ := path.Match(p, name); ok {
				return true
			}
		}
		return false
	}
}

// Model is what a Runner needs of a model. workbench cannot import layers, so the model comes in as functions:
// for a layers/decoder model, Forward wraps decoder.Logits, Step wraps decoder.Step, NewState wraps
// decoder.NewState (with the decoding capacity) and Attach is hook.Attach.
type Model struct {
	Backend compute.Backend
	// Store holds the model's variables. The Runner builds its graphs on Store once Store has variables.
	Store *model.Store
	// Forward maps tokens [B, T] (int32) to the model's output, e.g. logits [B, T, V].
	Forward func(scope *model.Scope, tokens *Node) *Node
	// Step decodes one position: token [B, 1] int32, pos an int32 scalar and the state → the output (e.g. logits
	// [B, V]) and the new state. Optional: only Generate needs it.
	Step func(scope *model.Scope, token, pos *Node, state []*Node) (*Node, []*Node)
	// NewState returns the zero decoding state for a batch; its capacity must cover every position Generate
	// decodes. Required with Step.
	NewState func(batch int) []*tensors.Tensor
	// Attach attaches a probe hook to a graph while it is built (layers/hook.Attach).
	Attach func(g *Graph, f func(name string, x *Node) *Node) (detach func())
}

// Cache holds the activations one run cached.
type Cache struct {
	Names  []string                   // the cached probe names, in the order the model emitted them
	Acts   map[string]*tensors.Tensor // activation by name, after any patch of that probe
	Output *tensors.Tensor            // the model's output; with StopAfter the stop probe's activation
}

// Float64 returns the activation of probe name as float64 values (row-major) and its dimensions. It returns an
// error naming the cached probes when name is not among them, or when the dtype is not numeric.
func (c *Cache) Float64(name string) (values []float64, dims []int, err error) {
	t, ok := c.Acts[name]
	if !ok {
		return nil, nil, errors.Errorf("probe: %q is not in the cache (%s)", name, nearNames(name, c.Names))
	}
	values, err = host.Floats(t)
	if err != nil {
		return nil, nil, errors.WithMessagef(err, "probe: cached %q", name)
	}
	return values, slices.Clone(t.Shape().Dimensions), nil
}

// Option configures a Runner.
type Option func(*options)

type timeAxisRule struct {
	pattern string
	axis    int
}

type options struct {
	stopAfter string
	timeAxes  []timeAxisRule // later rules take precedence
}

// StopAfter makes Run stop building the model at probe name: the rest of the model is neither built nor run, the
// Cache's Output is that probe's activation and only probes emitted before it are cached. Generate ignores it.
func StopAfter(name string) Option { return func(o *options) { o.stopAfter = name } }

// TimeAxis sets the time (position) axis of the probes matching pattern (path.Match, as in Match) to axis:
// Patch.Positions index it and Generate concatenates the steps' activations along it. The default is axis 1
// ([B, T, …]), and axis 2 for names ending in ".pattern" (attention weights [B, H, T, S]). Later options take
// precedence. It panics on a malformed pattern or a negative axis.
func TimeAxis(pattern string, axis int) Option {
	if _, err := path.Match(pattern, ""); err != nil || axis < 0 {
		panic(errors.Errorf("probe.TimeAxis(%q, %d): want a valid path.Match pattern and axis ≥ 0", pattern, axis))
	}
	return func(o *options) { o.timeAxes = append(o.timeAxes, timeAxisRule{pattern, axis}) }
}

// DefaultTimeAxis is the time axis of probes no TimeAxis rule matches.
const DefaultTimeAxis = 1

// timeAxis returns the time axis of probe name.
func (o *options) timeAxis(name string) int {
	for i := len(o.timeAxes) - 1; i >= 0; i-- {
		if ok, _ := path.Match(o.timeAxes[i].pattern, name); ok {
			return o.timeAxes[i].axis
		}
	}
	return DefaultTimeAxis
}

// Runner runs a model with its probe points cached and patched. It builds one graph per input shape and patch
// layout (names, Add, value shapes, whether Positions is set) on first use and reuses the compiled executable
// afterwards; patch values and positions are graph parameters, so changing them does not rebuild. A Runner is
// safe for concurrent use.
type Runner struct {
	m    Model
	keep Filter
	o    options

	mu     sync.Mutex
	execs  map[string]*entry // by build key
	builds int               // graphs built so far
}

// entry is one compiled graph and what its build recorded.
type entry struct {
	exec  *model.Exec
	built bool     // the graph function ran
	all   []string // every probe name emitted, in order
	kept  []string // the cached ones, in output order
}

// NewRunner returns a Runner of m caching the probes keep accepts (nil: none). Nothing is built until the first
// call. It returns an error when m lacks Backend, Store, Forward or Attach, or has only one of Step and NewState.
func NewRunner(m Model, keep Filter, opts ...Option) (*Runner, error) {
	switch {
	case m.Backend == nil || m.Store == nil || m.Forward == nil || m.Attach == nil:
		return nil, errors.New("probe.NewRunner: Model needs Backend, Store, Forward and Attach")
	case (m.Step == nil) != (m.NewState == nil):
		return nil, errors.New("probe.NewRunner: Model.Step and Model.NewState go together")
	}
	r := &Runner{m: m, keep: keep, execs: map[string]*entry{}}
	r.o.timeAxes = []timeAxisRule{{"*.pattern", 2}}
	for _, opt := range opts {
		opt(&r.o)
	}
	return r, nil
}

// errStop is the panic value that unwinds graph building at the StopAfter probe.
var errStop = errors.New("probe: stop")

// recorder is the hook of one graph build.
type recorder struct {
	keep    Filter
	stop    string
	in      []*Node
	patches map[string]patchSpec

	seen     []string
	seenSet  map[string]bool
	kept     []string
	nodes    []*Node
	stopNode *Node
}

func (rec *recorder) hook(name string, x *Node) *Node {
	if rec.seenSet[name] {
		panic(errors.Errorf("probe: the model emitted %q twice in one graph; probe names must be unique", name))
	}
	rec.seenSet[name] = true
	rec.seen = append(rec.seen, name)
	if p, ok := rec.patches[name]; ok {
		var mask *Node
		if p.mask >= 0 {
			mask = rec.in[p.mask]
		}
		x = applyPatch(name, x, rec.in[p.value], mask, p.add, p.timeAxs)
	}
	if rec.keep != nil && rec.keep(name) {
		rec.kept = append(rec.kept, name)
		rec.nodes = append(rec.nodes, x)
	}
	if name == rec.stop {
		rec.stopNode = x
		panic(errStop)
	}
	return x
}

// graphBuild builds one graph: it attaches the recorder, runs model (which may panic with errStop), and checks
// that every patch was applied and the filter kept something. It returns the model's output (or the stop node).
func (r *Runner) graphBuild(rec *recorder, g *Graph, model func() *Node) (out *Node) {
	r.mu.Lock()
	r.builds++
	r.mu.Unlock()
	rec.seenSet = map[string]bool{}
	detach := r.m.Attach(g, rec.hook)
	out = func() (out *Node) {
		defer detach()
		defer func() {
			if p := recover(); p != nil {
				if p != errStop { // the sentinel itself, never wrapped
					panic(p)
				}
				out = rec.stopNode
			}
		}()
		return model()
	}()
	if rec.stop != "" && rec.stopNode == nil {
		panic(errors.Errorf("probe: StopAfter %q: no such probe (%s)", rec.stop, nearNames(rec.stop, rec.seen)))
	}
	for _, name := range slices.Sorted(maps.Keys(rec.patches)) {
		if !rec.seenSet[name] {
			where := "no such probe"
			if rec.stopNode != nil {
				where = fmt.Sprintf("not reached before StopAfter %q", rec.stop)
			}
			panic(errors.Errorf("probe: patch %q: %s (%s)", name, where, nearNames(name, rec.seen)))
		}
	}
	if rec.keep != nil && len(rec.kept) == 0 {
		panic(errors.Errorf("probe: the filter matches none of the %d probes the model emitted (%s)", len(rec.seen),
			strings.Join(head(rec.seen, 8), ", ")))
	}
	return out
}

// withGuard appends a scalar created after every other node of the graph to the outputs (callers drop it). The
// pure-Go backend sizes its execution buffers by the largest output node index, so a graph whose outputs were all
// created early (a patch replacing the output, StopAfter) fails at run time with "index out of range" when it has
// parameters created later (the model's variables): the guard makes the last node an output.
func withGuard(outs []*Node) []*Node {
	return append(outs, Const(outs[0].Graph(), int8(0)))
}

// entryFor returns the entry of key, creating it with build (a model.Exec graph function) when missing.
func (r *Runner) entryFor(key string, build func(e *entry) func(scope *model.Scope, in []*Node) []*Node) (*entry, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.execs[key]; ok {
		return e, nil
	}
	e := &entry{}
	exec, err := model.NewExec(r.m.Backend, r.m.Store, build(e))
	if err != nil {
		return nil, errors.Wrap(err, "probe: creating the executable")
	}
	e.exec = exec
	r.execs[key] = e
	return e, nil
}

// forget drops a failed entry, so that a later call rebuilds it.
func (r *Runner) forget(key string) {
	r.mu.Lock()
	delete(r.execs, key)
	r.mu.Unlock()
}

// checkTokens reports whether tokens is an int32 [B, T] tensor with B, T ≥ 1.
func checkTokens(tokens *tensors.Tensor) error {
	if tokens == nil {
		return errors.New("probe: nil tokens")
	}
	if s := tokens.Shape(); s.Rank() != 2 || s.DType != dtypes.Int32 || s.Dim(0) < 1 || s.Dim(1) < 1 {
		return errors.Errorf("probe: tokens shape %s, want Int32 [B, T] with B, T ≥ 1", s)
	}
	return nil
}

// Run runs the model's Forward on tokens (int32 [B, T]) with the patches applied and returns the cached probes and
// the output. It returns an error, before running anything, for a malformed patch (no name or value, a duplicate,
// a position outside [0, T)), and from the graph build for a patch of an unknown probe (listing the nearest
// names), a value of the wrong shape or dtype, an observe-only probe (layers/hook), or a filter that matches no
// probe.
func (r *Runner) Run(tokens *tensors.Tensor, patches ...Patch) (*Cache, error) {
	if err := checkTokens(tokens); err != nil {
		return nil, err
	}
	T := tokens.Shape().Dim(1)
	specs, pkey, pargs, err := patchInputs(patches, &r.o, 1, func(p Patch, _ int) (any, error) {
		if p.Positions == nil {
			return nil, nil
		}
		m := make([]bool, T)
		for _, pos := range p.Positions {
			if pos < 0 || pos >= T {
				return nil, errors.Errorf("probe: patch %q: position %d outside [0, %d)", p.Name, pos, T)
			}
			m[pos] = true
		}
		return tensors.FromValue(m), nil
	})
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("run %s%s", tokens.Shape(), pkey)
	e, err := r.entryFor(key, func(e *entry) func(scope *model.Scope, in []*Node) []*Node {
		return func(scope *model.Scope, in []*Node) []*Node {
			rec := &recorder{keep: r.keep, stop: r.o.stopAfter, in: in, patches: specs}
			out := r.graphBuild(rec, in[0].Graph(), func() *Node { return r.m.Forward(scope, in[0]) })
			e.all, e.kept, e.built = rec.seen, rec.kept, true
			return withGuard(append([]*Node{out}, rec.nodes...))
		}
	})
	if err != nil {
		return nil, err
	}
	outs, err := e.exec.Exec(append([]any{tokens}, pargs...)...)
	if err != nil {
		r.forget(key)
		return nil, errors.WithMessage(err, "probe.Run")
	}
	c := &Cache{Names: slices.Clone(e.kept), Acts: map[string]*tensors.Tensor{}, Output: outs[0]}
	for i, name := range e.kept {
		c.Acts[name] = outs[1+i]
	}
	return c, nil
}

// Names returns every probe name the model emits on tokens' shape, in emission order, ignoring the filter and
// StopAfter. The graph is built (and compiled) but not run.
func (r *Runner) Names(tokens *tensors.Tensor) ([]string, error) {
	if err := checkTokens(tokens); err != nil {
		return nil, err
	}
	key := fmt.Sprintf("names %s", tokens.Shape())
	e, err := r.entryFor(key, func(e *entry) func(scope *model.Scope, in []*Node) []*Node {
		return func(scope *model.Scope, in []*Node) []*Node {
			rec := &recorder{in: in}
			out := r.graphBuild(rec, in[0].Graph(), func() *Node { return r.m.Forward(scope, in[0]) })
			e.all, e.built = rec.seen, true
			return withGuard([]*Node{out})
		}
	})
	if err != nil {
		return nil, err
	}
	if !e.built {
		if _, err := e.exec.Compile(tokens.Shape()); err != nil {
			r.forget(key)
			return nil, errors.WithMessage(err, "probe.Names")
		}
	}
	return slices.Clone(e.all), nil
}
