package hook

import (
	"strings"
	"sync"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/workbench/wbtest"
)

// requirePanic fails unless fn panics with a message containing want.
func requirePanic(t *testing.T, want string, fn func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Fatalf("no panic, want one containing %q", want)
		}
		msg := ""
		if err, ok := r.(error); ok {
			msg = err.Error()
		} else if s, ok := r.(string); ok {
			msg = s
		}
		if !strings.Contains(msg, want) {
			t.Fatalf("panic %q, want it to contain %q", msg, want)
		}
	}()
	fn()
}

func TestName_DotsTheScopePath(t *testing.T) {
	vars := model.NewStore()
	for _, c := range []struct {
		scope      *model.Scope
		short, out string
	}{
		{vars.RootScope(), "logits", "logits"},
		{vars.RootScope().At("block_02"), "resid_post", "block_02.resid_post"},
		{vars.RootScope().At("block_02").At("protot"), "pi", "block_02.protot.pi"},
		{vars.RootScope().At("block_10").At("attention"), "z", "block_10.attention.z"},
	} {
		if got := Name(c.scope, c.short); got != c.out {
			t.Errorf("Name(%q, %q) = %q, want %q", c.scope.Scope(), c.short, got, c.out)
		}
	}
}

func newGraph(t *testing.T) (*Graph, *Node) {
	g := NewGraph(wbtest.Backend(t), t.Name())
	return g, Parameter(g, "x", shapes.Make(dtypes.Float64, 2, 3))
}

func TestEmit_WithoutHookReturnsItsInput(t *testing.T) {
	g, x := newGraph(t)
	if Active(g) {
		t.Fatal("Active on a graph with no hook")
	}
	if y := Emit(model.NewStore().RootScope(), "a", x); y != x {
		t.Fatal("Emit without a hook returned another node")
	}
}

func TestEmit_CallsTheHookWithFullNamesAndPatches(t *testing.T) {
	g, x := newGraph(t)
	var seen []string
	doubled := MulScalar(x, 2)
	detach := Attach(g, func(name string, n *Node) *Node {
		seen = append(seen, name)
		if name == "block_01.b" {
			return doubled
		}
		return n
	})
	scope := model.NewStore().RootScope().At("block_01")
	if !Active(g) {
		t.Fatal("Active false after Attach")
	}
	if y := Emit(scope, "a", x); y != x {
		t.Fatal("an observing hook changed the node")
	}
	if y := Emit(scope, "b", x); y != doubled {
		t.Fatal("Emit did not return the hook's replacement")
	}
	Observe(scope, "c", x)
	Observe(scope, "nil", nil) // reports nothing
	detach()
	detach() // idempotent
	if Active(g) {
		t.Fatal("Active after detach")
	}
	Emit(scope, "d", x) // not reported any more
	want := []string{"block_01.a", "block_01.b", "block_01.c"}
	if strings.Join(seen, ",") != strings.Join(want, ",") {
		t.Fatalf("hook saw %v, want %v", seen, want)
	}
}

func TestEmit_PanicsOnShapeChange(t *testing.T) {
	g, x := newGraph(t)
	defer Attach(g, func(string, *Node) *Node { return ReduceSum(x, 1) })()
	requirePanic(t, `probe "p"`, func() { Emit(model.NewStore().RootScope(), "p", x) })
}

func TestObserve_PanicsWhenPatched(t *testing.T) {
	g, x := newGraph(t)
	defer Attach(g, func(string, *Node) *Node { return Neg(x) })()
	requirePanic(t, `"block_00.protot.pi" is observe-only`, func() { Observe(model.NewStore().RootScope().At("block_00").At("protot"), "pi", x) })
}

func TestAttach_OneHookPerGraph(t *testing.T) {
	g, _ := newGraph(t)
	defer Attach(g, func(_ string, n *Node) *Node { return n })()
	requirePanic(t, "already has a hook", func() { Attach(g, func(_ string, n *Node) *Node { return n }) })
	requirePanic(t, "nil Func", func() { Attach(g, nil) })
}

// Hooks are per graph: graphs built concurrently see only their own hook.
func TestAttach_GraphsAreIndependent(t *testing.T) {
	const n = 8
	var wg sync.WaitGroup
	got := make([][]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g, x := newGraph(t)
			var seen []string
			detach := Attach(g, func(name string, node *Node) *Node {
				seen = append(seen, name)
				return node
			})
			defer detach()
			for j := 0; j <= i; j++ {
				Emit(model.NewStore().RootScope().At("block_%02d", i), "p", x)
			}
			got[i] = seen
		}()
	}
	wg.Wait()
	for i, seen := range got {
		if len(seen) != i+1 {
			t.Fatalf("graph %d saw %d probes, want %d", i, len(seen), i+1)
		}
		for _, name := range seen {
			if want := model.NewStore().RootScope().At("block_%02d", i); name != Name(want, "p") {
				t.Fatalf("graph %d saw %q", i, name)
			}
		}
	}
}
