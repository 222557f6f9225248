package fit

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"

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
