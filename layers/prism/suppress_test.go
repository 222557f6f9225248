package prism

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"

	"github.com/protolab/protolab/workbench/wbtest"
)

// runSuppressed evaluates the case's head and returns its logits, SuppressedLogits in both modes and
// SuppressedActive for the set omega [K] (1 = suppressed).
func runSuppressed(t *testing.T, c refCase, cfg Config, omega []float64) (logits, zero, mask, active []float64) {
	t.Helper()
	out := wbtest.ExecFlat(t, func(in []*Node) []*Node {
		d := Decompose(in[0], in[1], in[2], cfg)
		return []*Node{d.Logits, SuppressedLogits(d, in[3], SuppressZero), SuppressedLogits(d, in[3], SuppressMask),
			SuppressedActive(d, in[3])}
	}, wbtest.Tensor64(c.h, c.B, c.T, c.D), wbtest.Tensor64(c.bank, c.K, c.D), wbtest.Tensor64(c.W, c.V, c.D),
		wbtest.Tensor64(omega, c.K))
	return out[0], out[1], out[2], out[3]
}

// setOf returns Ω as the float mask SuppressedLogits takes and as bools.
func setOf(K int, members ...int) ([]float64, []bool) {
	f, b := make([]float64, K), make([]bool, K)
	for _, i := range members {
		f[i], b[i] = 1, true
	}
	return f, b
}

// Both modes match the plain-loop reference (doc.go, equations 14–16) for sets inside and across the selections,
// and the suppression changes the logits.
func TestSuppressedLogits_MatchesReference(t *testing.T) {
	for seed, members := range [][]int{{1}, {0, 3}, {2, 4, 6}} {
		for name, cfg := range headVariants() {
			c := newCase(uint64(20 + seed))
			omega, set := setOf(tK, members...)
			label := fmt.Sprintf("%s Ω=%v", name, members)
			logits, zero, mask, active := runSuppressed(t, c, cfg, omega)
			wbtest.RequireClose(t, label+" zero", referenceSuppressed(c, cfg, set, SuppressZero), zero, tolParity)
			wbtest.RequireClose(t, label+" mask", referenceSuppressed(c, cfg, set, SuppressMask), mask, tolParity)
			wbtest.RequireClose(t, label+" active", referenceSuppressedActive(c, cfg, set), active, 0)
			if wbtest.MaxAbsDiff(logits, zero) < 1e-3 || wbtest.MaxAbsDiff(logits, mask) < 1e-3 {
				t.Fatalf("%s: suppression left the logits unchanged: the check cannot fail", label)
			}
		}
	}
}

// With Ω = ∅ both modes return the head's logits bit for bit (the added term is W·0), and no token is active.
func TestSuppressedLogits_EmptySetIsIdentity(t *testing.T) {
	for name, cfg := range headVariants() {
		c := newCase(30)
		logits, zero, mask, active := runSuppressed(t, c, cfg, make([]float64, tK))
		wbtest.RequireClose(t, name+" zero", logits, zero, 0)
		wbtest.RequireClose(t, name+" mask", logits, mask, 0)
		wbtest.RequireClose(t, name+" active", make([]float64, tB*tT), active, 0)
	}
}

// A hand case: z = (1, 0), W = I (V = D = 2), prototypes p_0 = (1, 0), p_1 = (1, 1), p_2 = (2, 1), k = 2. The
// cosines are a_0 = 1/(1+ε), a_1 = 1/(√2+ε), a_2 = 2/(√5+ε); K_t = {0, 2}, l = (1, 0). Suppressing Ω = {0}: "zero"
// gives l − a_0·p_0 = (1 − a_0, 0); "mask" selects {2, 1}, so l + (a_2 p_2 + a_1 p_1) − (a_0 p_0 + a_2 p_2) =
// (1 + a_1 − a_0, a_1). Ω = {1}, not selected, changes nothing in either mode and is never active.
func TestSuppressedLogits_HandCase(t *testing.T) {
	cfg := DefaultConfig()
	cfg.NumPrototypes, cfg.TopK = 3, 2
	c := refCase{B: 1, T: 1, D: 2, K: 3, V: 2, h: []float64{1, 0}, bank: []float64{1, 0, 1, 1, 2, 1},
		W: []float64{1, 0, 0, 1}, targets: []int{0}}
	a0, a1 := 1/(1+Eps), 1/(math.Sqrt2+Eps)
	omega, _ := setOf(3, 0)
	logits, zero, mask, active := runSuppressed(t, c, cfg, omega)
	wbtest.RequireClose(t, "logits", []float64{1, 0}, logits, tolParity)
	wbtest.RequireClose(t, "zero, Ω={0}", []float64{1 - a0, 0}, zero, tolParity)
	wbtest.RequireClose(t, "mask, Ω={0}", []float64{1 + a1 - a0, a1}, mask, tolParity)
	wbtest.RequireClose(t, "active, Ω={0}", []float64{1}, active, 0)
	omega, _ = setOf(3, 1)
	logits, zero, mask, active = runSuppressed(t, c, cfg, omega)
	wbtest.RequireClose(t, "zero, Ω={1}", logits, zero, 0)
	wbtest.RequireClose(t, "mask, Ω={1}", logits, mask, tolParity)
	wbtest.RequireClose(t, "active, Ω={1}", []float64{0}, active, 0)
}

// SuppressedLogits and SuppressedActive panic on a nil omega, one of the wrong size or dtype, and an unknown mode,
// naming the function.
func TestSuppressedLogits_Panics(t *testing.T) {
	g := NewGraph(wbtest.Backend(t), "panics")
	defer g.Finalize()
	cfg := testConfig()
	d := Decompose(Parameter(g, "h", shapes.Make(dtypes.Float64, tB, tT, tD)),
		Parameter(g, "bank", shapes.Make(dtypes.Float64, tK, tD)), Parameter(g, "W", shapes.Make(dtypes.Float64, tV, tD)), cfg)
	omega := Parameter(g, "omega", shapes.Make(dtypes.Float64, tK))
	requirePanic := func(label, want string, f func()) {
		t.Helper()
		defer func() {
			t.Helper()
			r := recover()
			if r == nil || !strings.Contains(fmt.Sprint(r), want) {
				t.Errorf("%s: recovered %v, want a panic containing %q", label, r, want)
			}
		}()
		f()
	}
	for _, bad := range []struct {
		label string
		omega *Node
	}{
		{"nil", nil},
		{"[K+1]", Parameter(g, "long", shapes.Make(dtypes.Float64, tK+1))},
		{"float32", Parameter(g, "f32", shapes.Make(dtypes.Float32, tK))},
		{"[1, K]", Parameter(g, "row", shapes.Make(dtypes.Float64, 1, tK))},
	} {
		requirePanic("SuppressedLogits omega "+bad.label, "prism.SuppressedLogits: omega",
			func() { SuppressedLogits(d, bad.omega, SuppressZero) })
		requirePanic("SuppressedActive omega "+bad.label, "prism.SuppressedActive: omega",
			func() { SuppressedActive(d, bad.omega) })
	}
	requirePanic("mode", `prism.SuppressedLogits: mode="soft"`, func() { SuppressedLogits(d, omega, "soft") })
}
