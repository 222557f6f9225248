package fit

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/wbtest"
)

// requireErrorHas fails unless err is non-nil and its message contains every part.
func requireErrorHas(t *testing.T, label string, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want one containing %q", label, parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %q does not contain %q", label, err, p)
		}
	}
}

func TestDevices_ConfigKeyAndEncoding(t *testing.T) {
	cfg := DefaultConfig()
	if err := run.Override(&cfg, "devices=4"); err != nil || cfg.Devices != 4 {
		t.Fatalf("override devices=4: cfg.Devices=%d, err=%v", cfg.Devices, err)
	}
	encode := func(c Config) string {
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("%+v", err)
		}
		return string(b)
	}
	one := DefaultConfig()
	zero := encode(one)
	if strings.Contains(zero, "devices") {
		t.Errorf("the default config's JSON mentions devices (it would change every cache key): %s", zero)
	}
	one.Devices = 1
	if got := encode(one); got != zero {
		t.Errorf("devices=1 encodes as %s, want the default's %s (one device either way)", got, zero)
	}
	if got := encode(cfg); !strings.Contains(got, `"devices":4`) {
		t.Errorf("devices=4 encodes as %s, want it recorded", got)
	}
	if diff := diffKeys(cfg, DefaultConfig()); len(diff) != 0 {
		t.Errorf("a checkpoint written on 4 devices must resume on 1 (and back); diffKeys = %v", diff)
	}
	var back Config
	if err := json.Unmarshal([]byte(encode(cfg)), &back); err != nil || back.Devices != 4 {
		t.Errorf("round trip: devices=%d, err=%v", back.Devices, err)
	}
}

// TestDevices_GoBackendRefusesSeveral: the pure-Go backend has one device, so devices=2 fails before anything is read
// or written, naming the key, the backend, $GOMLX_BACKEND and both fixes.
func TestDevices_GoBackendRefusesSeveral(t *testing.T) {
	backend := wbtest.Backend(t)
	if n := backend.NumDevices(); n != 1 {
		t.Fatalf("the pure-Go backend reports %d devices, want 1", n)
	}
	t.Setenv("GOMLX_BACKEND", wbtest.BackendConfig)
	cfg := testConfig()
	cfg.Devices = 2
	dir := filepath.Join(t.TempDir(), "ckpt")
	src := &crashingBatches{Batches: mustSlice(t, mlpBatches(1, 2)), after: 1 << 30}
	hist, err := Train(backend, run.NewStore(1), mlpLoss, src, nil, cfg, CheckpointDir(dir), Progress(nil))
	requireErrorHas(t, "Train", err, "train.devices=2", fmt.Sprintf("backend %q", backend.Name()), `GOMLX_BACKEND="go:parallelism=-1"`,
		"1 device(s)", "XLA", "at least 2 devices", "set train.devices=1")
	if hist != nil || src.calls != 0 {
		t.Errorf("history %v, %d batches read: want a failure before training", hist, src.calls)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the checkpoint folder was created (%v): want a failure before any work", err)
	}
	for _, n := range []int{0, 1} {
		if err := checkDevices(n, backend); err != nil {
			t.Errorf("checkDevices(%d) on one device: %v", n, err)
		}
	}
}

func TestDevices_ErrorNamesTheBackendAndTheFix(t *testing.T) {
	requireErrorHas(t, "4 of 2", devicesError(4, "xla", "xla:cuda", 2), "train.devices=4", `backend "xla"`,
		`GOMLX_BACKEND="xla:cuda"`, "has 2 device(s);", "at least 4 devices", "CUDA_VISIBLE_DEVICES",
		"PROTOLAB_XLA_OPTIONS", "set train.devices=1")
	requireErrorHas(t, "unset", devicesError(2, "go", "", 1), "GOMLX_BACKEND=unset", "pure-Go backend")
	for _, c := range [][2]int{{2, 2}, {2, 8}, {1, 1}} {
		if err := devicesError(c[0], "xla", "xla:cuda", c[1]); err != nil {
			t.Errorf("%d devices of %d: %v", c[0], c[1], err)
		}
	}
}

func TestDevices_BatchMustSplitEvenly(t *testing.T) {
	if _, err := newSharding(1); err == nil {
		t.Errorf("newSharding(1) accepted one device")
	}
	s, err := newSharding(3)
	if err != nil {
		t.Fatalf("%+v", err)
	}
	if got := s.mesh.NumDevices(); got != 3 {
		t.Errorf("mesh of %d devices, want 3", got)
	}
	good := []*tensors.Tensor{tensors.FromShape(shapes.Make(dtypes.Float64, 6, 4)),
		tensors.FromShape(shapes.Make(dtypes.Int32, 3))}
	if err := s.checkBatch(good, "training batch"); err != nil {
		t.Errorf("B=6 and B=3 over 3 devices: %v", err)
	}
	odd := []*tensors.Tensor{good[0], tensors.FromShape(shapes.Make(dtypes.Int32, 5, 2))}
	requireErrorHas(t, "B=5", s.checkBatch(odd, "training batch"), "training batch tensor 1", "[5, 2]", "B=5",
		"not divisible by train.devices=3", "multiple of 3", "train.devices=1")
	if _, err := s.split(odd, "training batch"); err == nil {
		t.Errorf("split accepted B=5 over 3 devices")
	}
	scalar := []*tensors.Tensor{tensors.FromScalar(1.0)}
	requireErrorHas(t, "scalar", s.checkBatch(scalar, "validation batch"), "validation batch tensor 0 is a scalar",
		"train.devices=1")
}

// TestDevices_PeekChecksBothStreamsAndRewinds: a batch size that does not split is reported before the first step,
// for the training and for the validation data, and the data positions are left where they were.
func TestDevices_PeekChecksBothStreamsAndRewinds(t *testing.T) {
	s, err := newSharding(2)
	if err != nil {
		t.Fatalf("%+v", err)
	}
	rows := func(b int) [][]*tensors.Tensor {
		return [][]*tensors.Tensor{{tensors.FromShape(shapes.Make(dtypes.Float64, b, 3))},
			{tensors.FromShape(shapes.Make(dtypes.Float64, b, 3))}}
	}
	train, val := mustSlice(t, rows(4)), mustSlice(t, rows(3))
	if _, err := train.Next(); err != nil { // not at the start: the peek must come back here
		t.Fatal(err)
	}
	before, _ := train.State()
	tr := &trainer{train: train, shard: s}
	if err := tr.peekBatches(); err != nil {
		t.Fatalf("no validation data, B=4 on 2 devices: %+v", err)
	}
	if after, _ := train.State(); string(after) != string(before) {
		t.Errorf("training data moved from %s to %s", before, after)
	}
	tr.val = val
	requireErrorHas(t, "val B=3", tr.peekBatches(), "validation batch tensor 0", "B=3")
	tr.train = mustSlice(t, rows(5))
	requireErrorHas(t, "train B=5", tr.peekBatches(), "training batch tensor 0", "B=5")
	tr.shard = nil
	if err := tr.peekBatches(); err != nil {
		t.Errorf("one device checks nothing: %v", err)
	}
}

// TestDevices_ShardAndMergeRoundTrip: shard i of every batch tensor holds rows [i·B/N, (i+1)·B/N) of axis 0, the
// other axes whole, and merging the shards gives the tensor back, for several shapes, dtypes and N.
func TestDevices_ShardAndMergeRoundTrip(t *testing.T) {
	cases := []struct {
		n    int
		dims []int
		dt   dtypes.DType
	}{
		{2, []int{6}, dtypes.Float64},
		{3, []int{6, 5}, dtypes.Int32},
		{2, []int{4, 3, 2}, dtypes.Float32},
		{4, []int{4, 1}, dtypes.Float64},
		{3, []int{9, 2, 1, 3}, dtypes.Int64},
	}
	for _, c := range cases {
		s, err := newSharding(c.n)
		if err != nil {
			t.Fatalf("%+v", err)
		}
		size := 1
		for _, d := range c.dims {
			size *= d
		}
		flat := make([]float64, size)
		for i := range flat {
			flat[i] = float64(2*i + i%3) // integers, exact in every dtype
		}
		orig := tensors.FromShape(shapes.Make(c.dt, c.dims...))
		orig.MustMutableFlatData(func(data any) { fillFrom(data, flat) })
		parts, err := s.split([]*tensors.Tensor{orig}, "training batch")
		if err != nil {
			t.Fatalf("%v over %d: %+v", c.dims, c.n, err)
		}
		d := parts[0]
		rowSize, rows := size/c.dims[0], c.dims[0]/c.n
		wantShard := append([]int{rows}, c.dims[1:]...)
		for i, sh := range d.Shards() {
			if !reflect.DeepEqual(sh.Shape().Dimensions, wantShard) || sh.DType() != c.dt {
				t.Fatalf("%v over %d: shard %d has shape %s, want %v %s", c.dims, c.n, i, sh.Shape(), wantShard, c.dt)
			}
			want := flat[i*rows*rowSize : (i+1)*rows*rowSize]
			if got := wbtest.Flat64(sh); !reflect.DeepEqual(got, want) {
				t.Errorf("%v over %d: shard %d = %v, want rows %d..%d = %v", c.dims, c.n, i, got, i*rows,
					(i+1)*rows-1, want)
			}
		}
		merged, err := d.Merge()
		if err != nil {
			t.Fatalf("%+v", err)
		}
		if !merged.Shape().Equal(orig.Shape()) || !reflect.DeepEqual(wbtest.Flat64(merged), flat) {
			t.Errorf("%v over %d: merge gave %s %v, want %s %v", c.dims, c.n, merged.Shape(), wbtest.Flat64(merged),
				orig.Shape(), flat)
		}
		finalizeAll(parts)
	}
}

func fillFrom(data any, flat []float64) {
	switch d := data.(type) {
	case []float64:
		copy(d, flat)
	case []float32:
		for i, v := range flat {
			d[i] = float32(v)
		}
	case []int32:
		for i, v := range flat {
			d[i] = int32(v)
		}
	case []int64:
		for i, v := range flat {
			d[i] = int64(v)
		}
	}
}

func TestDevices_FirstDeviceOutputs(t *testing.T) {
	s, err := newSharding(3)
	if err != nil {
		t.Fatalf("%+v", err)
	}
	outs := make([]*tensors.Tensor, 6) // 3 devices × (loss, gradient norm)
	for i := range outs {
		outs[i] = tensors.FromScalar(float64(i))
	}
	got, err := s.firstDevice(outs)
	if err != nil || len(got) != 2 || tensors.ToScalar[float64](got[0]) != 0 || tensors.ToScalar[float64](got[1]) != 1 {
		t.Fatalf("firstDevice = %v, %v; want device 0's two outputs", got, err)
	}
	for i, o := range outs[2:] {
		if o.Ok() {
			t.Errorf("output %d of another device was not freed", i+2)
		}
	}
	if _, err := s.firstDevice(outs[:5]); err == nil {
		t.Errorf("5 outputs over 3 devices accepted")
	}
}

// TestDevices_OneDeviceIsTodaysPath: devices=1 trains exactly like the default (0): same graph, same numbers.
func TestDevices_OneDeviceIsTodaysPath(t *testing.T) {
	cfg := testConfig()
	cfg.Steps, cfg.EvalEvery = 4, 2
	var hists [2]*History
	for i, n := range []int{0, 1} {
		cfg.Devices = n
		h, err := Train(wbtest.Backend(t), run.NewStore(1), mlpLoss, mustSlice(t, mlpBatches(1, 3)),
			mustSlice(t, mlpBatches(2, 2)), cfg, Progress(nil))
		if err != nil {
			t.Fatalf("devices=%d: %+v", n, err)
		}
		hists[i] = h
	}
	for i := range hists[0].Steps {
		a, b := hists[0].Steps[i], hists[1].Steps[i]
		if a.Loss != b.Loss || a.GradNorm != b.GradNorm {
			t.Errorf("step %d: devices=0 gave loss %v, norm %v; devices=1 gave %v, %v", a.Step, a.Loss, a.GradNorm,
				b.Loss, b.GradNorm)
		}
	}
}

// maskedLoss is a token model with a padding mask, whose mean runs over the unmasked tokens only, so that the shards
// of one batch can hold different numbers of counted tokens: x [B, T, F] float64, y [B, T], mask [B, T] of 0/1.
//
//	pred = tanh(x·W1 + b1)·w2              W1 [F, 5] "/masked/w1", b1 [5], w2 [5]
//	loss = Σ mask·(pred − y)² / Σ mask
func maskedLoss(scope *model.Scope, inputs []*Node) *Node {
	x, y, mask := inputs[0], inputs[1], inputs[2]
	g := x.Graph()
	c := scope.At("masked")
	w1 := c.VariableWithShape("w1", shapes.Make(dtypes.Float64, x.Shape().Dimensions[2], 5)).NodeValue(g)
	b1 := c.VariableWithValue("b1", []float64{0.1, -0.2, 0.3, 0, 0.05}).NodeValue(g)
	w2 := c.VariableWithValue("w2", []float64{0.7, -0.4, 0.9, 0.2, -0.6}).NodeValue(g)
	h := Tanh(Add(Einsum("btf,fh->bth", x, w1), Reshape(b1, 1, 1, 5))) // [B, T, 5]
	pred := Einsum("bth,h->bt", h, w2)                                 // [B, T]
	sq := Mul(Square(Sub(pred, y)), mask)                              // [B, T]
	return Div(ReduceAllSum(sq), ReduceAllSum(mask))
}

// lossAndGrads evaluates loss and its gradient with respect to every trainable variable on one device, by path.
func lossAndGrads(t *testing.T, exec *model.Exec, paths *[]string, batch []*tensors.Tensor) (float64,
	map[string][]float64) {
	t.Helper()
	args := make([]any, len(batch))
	for i, b := range batch {
		args[i] = b
	}
	outs, err := exec.Exec(args...)
	if err != nil {
		t.Fatalf("%+v", err)
	}
	grads := map[string][]float64{}
	for i, p := range *paths {
		grads[p] = wbtest.Flat64(outs[1+i])
	}
	return tensors.ToScalar[float64](outs[0]), grads
}

func gradExec(t *testing.T, loss LossFn) (*model.Exec, *[]string) {
	paths := new([]string)
	exec, err := model.NewExec(wbtest.Backend(t), run.NewStore(7), func(scope *model.Scope,
		inputs []*Node) []*Node {
		l := loss(scope, inputs)
		g := l.Graph()
		var values []*Node
		*paths = nil
		for v := range scope.IterVariables() {
			if v.Trainable && v.DType().IsFloat() && v.InUseByGraph(g) {
				*paths = append(*paths, v.Path())
				values = append(values, v.NodeValue(g))
			}
		}
		return append([]*Node{l}, Gradient(l, values...)...)
	})
	if err != nil {
		t.Fatalf("%+v", err)
	}
	return exec, paths
}

// combineShards is the reference weighting of per-shard mean losses and gradients into the whole batch's, as the
// sharded step computes them (doc.go, "Several devices"): shard i enters with weight c_i/Σc, c_i being the number of
// terms its mean runs over (examples, or unmasked tokens). A shard with c_i = 0 has an undefined mean (0/0) and adds
// nothing. An unweighted mean over shards is right only when every c_i is equal.
func combineShards(losses []float64, grads []map[string][]float64, counts []float64) (float64,
	map[string][]float64) {
	total := 0.0
	for _, c := range counts {
		total += c
	}
	loss, out := 0.0, map[string][]float64{}
	for i, c := range counts {
		if c == 0 {
			continue
		}
		w := c / total
		loss += w * losses[i]
		for p, g := range grads[i] {
			if out[p] == nil {
				out[p] = make([]float64, len(g))
			}
			for j, v := range g {
				out[p][j] += w * v
			}
		}
	}
	return loss, out
}

// TestDevices_ShardedLossAndGradientsEqualFullBatch is the oracle of data parallelism: a batch is cut into N shards
// by the same host-side split the multi-device step uses, each shard's loss and gradients come from the one-device
// graph, and their count-weighted combination (combineShards) equals the full batch's loss and gradients to 1e-12,
// with unequal token counts per shard (a padding mask), a shard with no counted token, and a per-example mean.
func TestDevices_ShardedLossAndGradientsEqualFullBatch(t *testing.T) {
	const B, T, F = 6, 4, 3
	rng := wbtest.RNG(5)
	x := wbtest.Tensor64(wbtest.Normal(rng, B*T*F, 1), B, T, F)
	y := wbtest.Tensor64(wbtest.Normal(rng, B*T, 1), B, T)
	masks := map[string][]float64{ // rows 2 by 2: the shards of N = 3
		"unequal counts (8, 2, 5)": {1, 1, 1, 1, 1, 1, 1, 1 /**/, 1, 0, 0, 0, 0, 1, 0, 0 /**/, 1, 1, 1, 0, 1, 1, 0, 0},
		"an empty shard (4, 0, 7)": {1, 1, 0, 0, 1, 1, 0, 0 /**/, 0, 0, 0, 0, 0, 0, 0, 0 /**/, 1, 1, 1, 1, 1, 1, 1, 0},
	}
	maskedExec, maskedPaths := gradExec(t, maskedLoss)
	for name, m := range masks {
		batch := []*tensors.Tensor{x, y, wbtest.Tensor64(m, B, T)}
		for _, n := range []int{2, 3} {
			checkShardedEqualsFull(t, name, n, maskedExec, maskedPaths, batch, func(shard []*tensors.Tensor) float64 {
				sum := 0.0
				for _, v := range wbtest.Flat64(shard[2]) {
					sum += v
				}
				return sum
			}, name == "unequal counts (8, 2, 5)" && n == 3)
		}
	}
	// Per-example mean (fit's test MLP): every shard counts B/N examples, so the weights are equal.
	mlpExec, mlpPaths := gradExec(t, mlpLoss)
	labels := make([]int32, B)
	for i := range labels {
		labels[i] = int32(rng.IntN(testC))
	}
	batch := []*tensors.Tensor{wbtest.Tensor64(wbtest.Normal(rng, B*testF, 1), B, testF),
		tensors.FromFlatDataAndDimensions(labels, B, 1)}
	checkShardedEqualsFull(t, "per-example mean", 3, mlpExec, mlpPaths, batch, func(shard []*tensors.Tensor) float64 {
		return float64(shard[0].Shape().Dimensions[0])
	}, false)
}

// checkShardedEqualsFull splits batch over n devices, combines the shards' losses and gradients with combineShards
// and the counts count gives, and compares them with the full batch's. With unequalMatters it also checks that the
// unweighted mean over shards differs, so that the data really exercise the weights.
func checkShardedEqualsFull(t *testing.T, name string, n int, exec *model.Exec, paths *[]string,
	batch []*tensors.Tensor, count func([]*tensors.Tensor) float64, unequalMatters bool) {
	t.Helper()
	s, err := newSharding(n)
	if err != nil {
		t.Fatalf("%+v", err)
	}
	parts, err := s.split(batch, "training batch")
	if err != nil {
		t.Fatalf("%s: %+v", name, err)
	}
	defer finalizeAll(parts)
	var losses, counts []float64
	var grads []map[string][]float64
	for i := 0; i < n; i++ {
		shard := make([]*tensors.Tensor, len(parts))
		for j, p := range parts {
			shard[j] = p.Shards()[i]
		}
		l, g := lossAndGrads(t, exec, paths, shard)
		losses, grads, counts = append(losses, l), append(grads, g), append(counts, count(shard))
	}
	gotLoss, gotGrads := combineShards(losses, grads, counts)
	wantLoss, wantGrads := lossAndGrads(t, exec, paths, batch)
	label := fmt.Sprintf("%s, N=%d", name, n)
	wbtest.RequireClose(t, label+": loss", []float64{wantLoss}, []float64{gotLoss}, 1e-12)
	if len(wantGrads) == 0 || len(gotGrads) != len(wantGrads) {
		t.Fatalf("%s: %d combined gradients, want %d", label, len(gotGrads), len(wantGrads))
	}
	for p, want := range wantGrads {
		wbtest.RequireClose(t, label+": d loss/d "+p, want, gotGrads[p], 1e-12)
	}
	if unequalMatters {
		plain := 0.0
		for _, l := range losses {
			plain += l / float64(n)
		}
		if math.Abs(plain-wantLoss) < 1e-3 {
			t.Errorf("%s: the unweighted mean over shards %v is as close to the full loss %v as the weighted one; "+
				"the data do not test the weights", label, plain, wantLoss)
		}
	}
}

// TestDevices_SeveralDevicesMatchOne runs only where the backend chosen by $GOMLX_BACKEND has two or more devices
// (an XLA build on a multi-GPU host; scripts/device_check.sh): training on N devices gives the one-device run's
// losses, gradient norms and weights (float64, so the different order of sums shows only far below 1e-9), and its
// checkpoint resumes on one device.
func TestDevices_SeveralDevicesMatchOne(t *testing.T) {
	backend, err := run.Backend()
	if err != nil {
		t.Skipf("no backend: %v", err)
	}
	n := min(backend.NumDevices(), 4)
	if n < 2 {
		t.Skipf("backend %q has %d device(s); this test needs an XLA backend with 2 or more", backend.Name(),
			backend.NumDevices())
	}
	batches := func(seed uint64, k int) [][]*tensors.Tensor { // B = 2N
		rng := wbtest.RNG(seed)
		out := make([][]*tensors.Tensor, k)
		for i := range out {
			labels := make([]int32, 2*n)
			for j := range labels {
				labels[j] = int32(rng.IntN(testC))
			}
			out[i] = []*tensors.Tensor{wbtest.Tensor64(wbtest.Normal(rng, 2*n*testF, 1), 2*n, testF),
				tensors.FromFlatDataAndDimensions(labels, 2*n, 1)}
		}
		return out
	}
	cfg := testConfig()
	trainOn := func(devices int, dir string) (*History, map[string][]float64) {
		cfg.Devices = devices
		vars := run.NewStore(1)
		h, err := Train(backend, vars, mlpLoss, mustSlice(t, batches(1, 3)), mustSlice(t, batches(2, 2)), cfg,
			Progress(nil), CheckpointDir(dir))
		if err != nil {
			t.Fatalf("devices=%d: %+v", devices, err)
		}
		return h, snapshot(vars)
	}
	h1, w1 := trainOn(1, t.TempDir())
	dirN := t.TempDir()
	hN, wN := trainOn(n, dirN)
	for i := range h1.Steps {
		wbtest.RequireClose(t, "loss and gradient norm", []float64{h1.Steps[i].Loss, h1.Steps[i].GradNorm},
			[]float64{hN.Steps[i].Loss, hN.Steps[i].GradNorm}, 1e-9)
	}
	for i := range h1.Evals {
		wbtest.RequireClose(t, "validation loss", []float64{h1.Evals[i].Loss}, []float64{hN.Evals[i].Loss}, 1e-9)
	}
	for _, p := range sortedKeys(w1) {
		wbtest.RequireClose(t, p, w1[p], wN[p], 1e-9)
	}
	// The N-device checkpoint is an ordinary one: one device loads it.
	vars := run.NewStore(1)
	if _, err := LoadLatest(dirN, vars); err != nil {
		t.Fatalf("loading the %d-device checkpoint: %+v", n, err)
	}
	loaded := snapshot(vars)
	for _, p := range sortedKeys(wN) {
		wbtest.RequireClose(t, "checkpoint "+p, wN[p], loaded[p], 0)
	}
}
