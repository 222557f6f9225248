// Package hook lets a caller observe, and optionally replace, named intermediates of a model while its graph is
// built: the probe points of layers/decoder and its mixers. It is the low-level half of workbench/probe, which
// turns the observed nodes into cached tensors and patches.
//
// A layer calls Emit at each probe point with a name relative to its context scope; the full name is the scope
// path with "/" replaced by "." plus the short name, e.g. "block_02.protot.pi" for Emit(scope.At("block_02").At("protot"),
// "pi", x). When a Func is attached to the node's graph, Emit calls it and returns its result, so a hook can patch
// the model (replace or add to an activation); without one, Emit returns its input unchanged and costs a map lookup
// at graph-building time only.
//
// Hooks are attached per graph (not per context), so graphs built concurrently with different hooks do not
// interfere.
package hook

import (
	"strings"
	"sync"

	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"
)

// Func is called at every probe point of a graph it is attached to, with the probe's full name and node. It
// returns the node the model continues with: x itself to observe only, or a node of the same shape and dtype to
// patch. Probe points documented as "observe only" ignore the result. It is an alias, so packages that cannot
// import layers (workbench/probe) can name the same type.
type Func = func(name string, x *Node) *Node

var (
	mu    sync.RWMutex
	hooks = map[*Graph]Func{}
)

// Attach makes f the hook of graph g until the returned detach function is called (call it once the graph is
// built). Attaching a second hook to the same graph panics: compose the functions instead.
func Attach(g *Graph, f Func) (detach func()) {
	if f == nil {
		panic(errors.New("hook.Attach: nil Func"))
	}
	mu.Lock()
	defer mu.Unlock()
	if _, ok := hooks[g]; ok {
		panic(errors.Errorf("hook.Attach: graph %q already has a hook", g.Name()))
	}
	hooks[g] = f
	var once sync.Once
	return func() {
		once.Do(func() {
			mu.Lock()
			delete(hooks, g)
			mu.Unlock()
		})
	}
}

// Active reports whether a hook is attached to g. Layers use it to skip work (transposes into a probe layout)
// that only a hook needs.
func Active(g *Graph) bool {
	mu.RLock()
	defer mu.RUnlock()
	_, ok := hooks[g]
	return ok
}

// Name returns the full probe name of short name `name` emitted under scope's scope: "block_02.protot" + "." +
// "pi". The root scope adds no prefix.
func Name(scope *model.Scope, name string) string {
	prefix := strings.Trim(strings.ReplaceAll(scope.Scope(), model.ScopeSeparator, "."), ".")
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// Emit reports x as probe `name` (relative to scope's scope) to the hook attached to x's graph and returns the
// hook's result, or x when no hook is attached. It panics when the hook returns a node of another shape.
func Emit(scope *model.Scope, name string, x *Node) *Node {
	mu.RLock()
	f, ok := hooks[x.Graph()]
	mu.RUnlock()
	if !ok {
		return x
	}
	full := Name(scope, name)
	y := f(full, x)
	if y == nil {
		return x
	}
	if !y.Shape().Equal(x.Shape()) {
		panic(errors.Errorf("hook: probe %q: the hook returned shape %s, want %s", full, y.Shape(), x.Shape()))
	}
	return y
}

// Observe reports x as probe `name` to the hook, for internal intermediates whose replacement the layer does not
// support (observe only). A nil x reports nothing. It panics when the hook returns a node other than x (a patch),
// since the replacement could not take effect: a silent no-op patch would look like a null result.
func Observe(scope *model.Scope, name string, x *Node) {
	if x == nil {
		return
	}
	if y := Emit(scope, name, x); y != x {
		panic(errors.Errorf("hook: probe %q is observe-only: it cannot be patched (patch a patchable probe such as "+
			"the mixer's mix_out instead)", Name(scope, name)))
	}
}
