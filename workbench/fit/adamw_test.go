package fit

import (
	"fmt"
	"math"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/wbtest"
)

func TestAdamW_MatchesReference(t *testing.T) {
	cfg := DefaultConfig()
	cfg.WeightDecay = 0.3
	rng := wbtest.RNG(7)
	const n = 7 // awkward size
	w, g, m := randomFloat64s(rng, n), randomFloat64s(rng, n), randomFloat64s(rng, n)
	v := make([]float64, n)
	for i := range v {
		v[i] = math.Abs(rng.NormFloat64()) // a second moment is ≥ 0
	}
	const lr, step = 0.01, 3
	for _, decay := range []bool{true, false} {
		outs := MustExecOnceN(wbtest.Backend(t), func(w, g, m, v, lr, tt *Node) []*Node {
			a, b, c := AdamW(w, g, m, v, lr, tt, decay, cfg)
			return []*Node{a, b, c}
		}, wbtest.Tensor64(w, n), wbtest.Tensor64(g, n), wbtest.Tensor64(m, n), wbtest.Tensor64(v, n), lr, float64(step))
		w2, m2, v2 := referenceAdamW(cfg, w, g, m, v, lr, step, decay)
		wbtest.RequireClose(t, "w'", w2, wbtest.Flat64(outs[0]), 1e-12)
		wbtest.RequireClose(t, "m'", m2, wbtest.Flat64(outs[1]), 1e-12)
		wbtest.RequireClose(t, "v'", v2, wbtest.Flat64(outs[2]), 1e-12)
	}
}

func TestLearningRate_MatchesFormula(t *testing.T) {
	for _, c := range []struct{ steps, warmup int }{{20, 5}, {10, 0}, {7, 7}} {
		cfg := DefaultConfig()
		cfg.Steps, cfg.WarmupSteps, cfg.LR, cfg.MinLRFrac = c.steps, c.warmup, 0.02, 0.1
		var ss, want []float64
		for s := 0; s <= c.steps+3; s++ {
			ss = append(ss, float64(s))
			want = append(want, referenceLR(cfg, s))
		}
		out := MustExecOnce(wbtest.Backend(t), func(s *Node) *Node { return LearningRate(s, cfg) },
			wbtest.Tensor64(ss, len(ss)))
		wbtest.RequireClose(t, "lr", want, wbtest.Flat64(out), 1e-12)
	}
	// Anchors of the formula, independent of referenceLR: LR/W at s=0, LR at the end of warmup, the midpoint of the
	// cosine, LR_min at s=S and after.
	cfg := DefaultConfig()
	cfg.Steps, cfg.WarmupSteps, cfg.LR, cfg.MinLRFrac = 20, 4, 0.02, 0.1
	out := MustExecOnce(wbtest.Backend(t), func(s *Node) *Node { return LearningRate(s, cfg) },
		wbtest.Tensor64([]float64{0, 3, 4, 12, 20, 25}, 6))
	wbtest.RequireClose(t, "lr anchors", []float64{0.005, 0.02, 0.02, 0.011, 0.002, 0.002}, wbtest.Flat64(out), 1e-12)
}

func TestClipByGlobalNorm(t *testing.T) {
	rng := wbtest.RNG(3)
	a, b := randomFloat64s(rng, 6), randomFloat64s(rng, 5)
	norm, _ := referenceClip([][]float64{a, b}, 0)
	for _, c := range []float64{norm / 3, 2 * norm} {
		outs := MustExecOnceN(wbtest.Backend(t), func(x, y *Node) []*Node {
			clipped, n := ClipByGlobalNorm([]*Node{x, y}, c, dtypes.Float64)
			return []*Node{clipped[0], clipped[1], n, GlobalNorm(clipped, dtypes.Float64)}
		}, wbtest.Tensor64(a, 2, 3), wbtest.Tensor64(b, 5))
		_, factor := referenceClip([][]float64{a, b}, c)
		scaledA, scaledB := make([]float64, len(a)), make([]float64, len(b))
		for i := range a {
			scaledA[i] = a[i] * factor
		}
		for i := range b {
			scaledB[i] = b[i] * factor
		}
		wbtest.RequireClose(t, "clipped a", scaledA, wbtest.Flat64(outs[0]), 1e-12)
		wbtest.RequireClose(t, "clipped b", scaledB, wbtest.Flat64(outs[1]), 1e-12)
		wbtest.RequireClose(t, "norm before", []float64{norm}, wbtest.Flat64(outs[2]), 1e-12)
		wantAfter := math.Min(norm, c) // clipped to c when above, unchanged below
		wbtest.RequireClose(t, "norm after", []float64{wantAfter}, wbtest.Flat64(outs[3]), 1e-12)
	}
}

// TestTrain_StepsMatchReference runs Train for 4 steps and checks every update against referenceAdamW applied to
// the gradients at the weights Train had before the step, with the schedule and clipping of the references. The
// decay groups are asserted explicitly: the norm gain, biases and the prototypes are not decayed.
func TestTrain_StepsMatchReference(t *testing.T) {
	cfg := testConfig()
	cfg.Steps, cfg.WarmupSteps, cfg.EvalEvery, cfg.CheckpointEvery = 4, 2, 0, 0
	cfg.ClipNorm = 0.5 // below the gradient norms of this model, so clipping is active
	wantDecay := map[string]bool{
		"/hidden/dense/weights": true, "/hidden/dense/biases": false, "/norm/gain": false,
		"/mix/prototypes": false, "/out/dense/weights": true, "/out/dense/biases": false,
	}
	exempt := []string{"prototypes"} // the model's own exemption, passed with the NoDecay option
	decays := cfg
	decays.NoDecay = exempt // the rule Train applies with NoDecay(exempt...)
	batches := mlpBatches(1, 4)
	vars := run.NewStore(5)
	probe := newGradProbe(t, vars)

	type before struct {
		w, g map[string][]float64
		loss float64
	}
	var states []before
	record := func(batch int) {
		loss, g := probe.run(t, batches[batch]) // also initialises the variables on the first call
		w := snapshot(vars)
		states = append(states, before{w: w, g: g, loss: loss})
	}
	record(0)
	if got := len(probe.paths); got != len(wantDecay) {
		t.Fatalf("model has %d trainable variables %v, want %d", got, probe.paths, len(wantDecay))
	}
	for _, p := range probe.paths {
		want, ok := wantDecay[p]
		if !ok {
			t.Fatalf("unexpected variable %s", p)
		}
		rank := len(vars.GetVariable(p).Shape().Dimensions)
		if got := decays.Decays(p, rank); got != want {
			t.Errorf("Decays(%s) = %v, want %v", p, got, want)
		}
	}

	var metrics []Metrics
	hist, err := Train(wbtest.Backend(t), vars, mlpLoss, mustSlice(t, batches), nil, cfg, Progress(nil),
		NoDecay(exempt...),
		OnStep(func(step int, m Metrics) {
			metrics = append(metrics, m)
			if step < cfg.Steps {
				record(step)
			}
		}))
	if err != nil {
		t.Fatalf("%+v", err)
	}
	if len(hist.Steps) != cfg.Steps || len(metrics) != cfg.Steps {
		t.Fatalf("history has %d steps, callbacks %d; want %d", len(hist.Steps), len(metrics), cfg.Steps)
	}
	after := snapshot(vars)
	m := map[string][]float64{}
	v := map[string][]float64{}
	for _, p := range probe.paths {
		n := len(states[0].w[p])
		m[p], v[p] = make([]float64, n), make([]float64, n)
	}
	for s := 0; s < cfg.Steps; s++ {
		st := states[s]
		var grads [][]float64
		for _, p := range probe.paths {
			grads = append(grads, st.g[p])
		}
		norm, factor := referenceClip(grads, cfg.ClipNorm)
		lr := referenceLR(cfg, s)
		got := metrics[s]
		if got.Step != s+1 || !wbtest.Close(st.loss, got.Loss, 1e-12) || !wbtest.Close(norm, got.GradNorm, 1e-12) ||
			!wbtest.Close(lr, got.LR, 1e-12) {
			t.Errorf("step %d metrics = %+v; want loss %g, grad norm %g, lr %g", s+1, got, st.loss, norm, lr)
		}
		for _, p := range probe.paths {
			g := make([]float64, len(st.g[p]))
			for i, x := range st.g[p] {
				g[i] = x * factor
			}
			var w2 []float64
			w2, m[p], v[p] = referenceAdamW(cfg, st.w[p], g, m[p], v[p], lr, s+1, wantDecay[p])
			next := after
			if s+1 < cfg.Steps {
				next = states[s+1].w
			}
			wbtest.RequireClose(t, fmt.Sprintf("step %d %s", s+1, p), w2, next[p], 1e-12)
		}
	}
	for _, p := range probe.paths {
		wbtest.RequireClose(t, "m "+p, m[p], after[OptimizerScope+"/m"+p], 1e-12)
		wbtest.RequireClose(t, "v "+p, v[p], after[OptimizerScope+"/v"+p], 1e-12)
	}
	step := vars.GetVariable(model.JoinPath(OptimizerScope, StepVariable)).MustValue()
	if got := step.Value().(int64); got != int64(cfg.Steps) {
		t.Errorf("step counter = %d, want %d", got, cfg.Steps)
	}
}
