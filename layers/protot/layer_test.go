package protot

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/workbench/wbtest"
)

// blockScope names a test layer's scope as the decoder does.
func blockScope(layer int) string { return fmt.Sprintf("block_%02d", layer) }

// mixerExec returns an executor of Mixer for layer on s, returning y and π.
func mixerExec(t *testing.T, s *model.Store, cfg Config, layer int) *model.Exec {
	return model.MustNewExec(wbtest.Backend(t), s, func(scope *model.Scope, x *Node) []*Node {
		y, tr := Mixer(scope.At("%s", blockScope(layer)), cfg, layer, x)
		return []*Node{y, tr.Pi, tr.Rho}
	})
}

// variableValues returns the variables of s as flat float64 values, by "scope/name".
func variableValues(t *testing.T, s *model.Store) (map[string][]float64, map[string]*model.Variable) {
	t.Helper()
	vals, vars := map[string][]float64{}, map[string]*model.Variable{}
	for v := range s.IterVariables() {
		if strings.HasPrefix(v.Name(), "#") { // the RNG state
			continue
		}
		tv, err := v.Value()
		if err != nil {
			t.Fatalf("%s: %+v", v.Path(), err)
		}
		vals[v.Path()] = flat(tv)
		vars[v.Path()] = v
	}
	return vals, vars
}

func TestMixer_VariablesAndInit(t *testing.T) {
	const D, R, Dv, K = 16, 5, 8, 5
	cfg := testConfig(R, 0, K) // D_v = D/2
	for layer := 0; layer < 3; layer++ {
		vars := model.NewStore()
		vars.SetParam(model.ParamInitialSeed, int64(3))
		x := wbtest.Tensor64(wbtest.Normal(wbtest.RNG(1), 2*3*D, 1), 2, 3, D)
		mixerExec(t, vars, cfg, layer).MustExec(x)
		vals, byPath := variableValues(t, vars)
		prefix := "/" + blockScope(layer) + "/" + Scope + "/"
		want := map[string][]int{
			VarPrototypes: {R, D}, VarValue: {Dv, D}, VarOutput: {D, Dv}, VarDecayLogit: {R}, VarWriteTemp: {},
			VarAlpha: {}, VarWriteMask: {R}, VarReadMask: {R},
		}
		if layer > 0 {
			want[VarReadQuery], want[VarReadTemp] = []int{D, D}, []int{}
		}
		if layer < 2 {
			want[VarConv] = []int{Dv, 1, K}
		}
		if len(byPath) != len(want) {
			t.Fatalf("layer %d: %d variables %v, want %d", layer, len(byPath), keys(byPath), len(want))
		}
		trainable := 0
		for name, dims := range want {
			v := byPath[prefix+name]
			if v == nil {
				t.Fatalf("layer %d: no variable %s%s; have %v", layer, prefix, name, keys(byPath))
			}
			if fmt.Sprint(v.Shape().Dimensions) != fmt.Sprint(dims) {
				t.Errorf("layer %d %s: shape %v, want %v", layer, name, v.Shape().Dimensions, dims)
			}
			isMask := name == VarWriteMask || name == VarReadMask
			if v.Trainable == isMask {
				t.Errorf("layer %d %s: trainable=%v", layer, name, v.Trainable)
			}
			if !isMask {
				trainable += v.Shape().Size()
			}
		}
		if n := cfg.NumParams(D, layer); n != trainable {
			t.Errorf("layer %d: NumParams=%d, variables hold %d", layer, n, trainable)
		}
		get := func(name string) []float64 { return vals[prefix+name] }
		// Prototypes: unit rows.
		for k := 0; k < R; k++ {
			n := 0.0
			for _, p := range get(VarPrototypes)[k*D : (k+1)*D] {
				n += p * p
			}
			if !wbtest.Close(1, math.Sqrt(n), 1e-12) {
				t.Errorf("layer %d prototype %d has norm %g, want 1", layer, k, math.Sqrt(n))
			}
		}
		// Uniform weights within ±1/√fan_in, and not all tiny.
		bounds := map[string]float64{VarValue: 1 / math.Sqrt(D), VarOutput: 1 / math.Sqrt(Dv), VarConv: 1 / math.Sqrt(K),
			VarReadQuery: 1 / math.Sqrt(D)}
		for name, b := range bounds {
			w := get(name)
			if w == nil {
				continue
			}
			hi := 0.0
			for _, x := range w {
				hi = math.Max(hi, math.Abs(x))
			}
			if hi > b || hi < 0.5*b {
				t.Errorf("layer %d %s: max |w| = %g, want in [b/2, b] with b = 1/√fan_in = %g", layer, name, hi, b)
			}
		}
		tauW := 1.0
		if layer == 0 {
			tauW = 3
		}
		consts := map[string]float64{VarDecayLogit: math.Log(9), VarWriteTemp: tauW, VarAlpha: 1, VarReadTemp: 1,
			VarWriteMask: 1, VarReadMask: 1}
		for name, c := range consts {
			for _, x := range get(name) {
				if !wbtest.Close(c, x, 1e-12) {
					t.Errorf("layer %d %s = %g, want %g", layer, name, x, c)
				}
			}
		}
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestStep_MatchesMixerWithMasks runs the layer functions with masks set through SetMasks: Step token by token
// equals Mixer, and the masks act on both.
func TestStep_MatchesMixerWithMasks(t *testing.T) {
	const D = 6
	for layer := 0; layer < 2; layer++ {
		cfg := testConfig(tR, 0, tK)
		vars := model.NewStore()
		vars.SetParam(model.ParamInitialSeed, int64(5))
		block := vars.RootScope().At("%s", blockScope(layer))
		if err := SetMasks(block, cfg, layer, []float64{1, 0, 1}, []float64{1, 1, 0}); err != nil {
			t.Fatalf("%+v", err)
		}
		x := wbtest.Normal(wbtest.RNG(2), tB*tT*D, 1)
		full := mixerExec(t, vars, cfg, layer).MustExec(wbtest.Tensor64(x, tB, tT, D))
		y, pi := wbtest.Flat64(full[0]), wbtest.Flat64(full[1])
		for i := 1; i < len(pi); i += tR {
			if pi[i] != 0 {
				t.Fatalf("layer %d: π of the write-masked prototype = %g", layer, pi[i])
			}
		}
		shapes := StateShapes(cfg, D, layer, tB, dtypeF64)
		step := model.MustNewExec(wbtest.Backend(t), vars, func(scope *model.Scope, in []*Node) []*Node {
			y, state, _ := Step(scope.At("%s", blockScope(layer)), cfg, layer, in[0], in[1], in[2:])
			return append([]*Node{y}, state...)
		})
		state := make([]any, len(shapes))
		for i, s := range shapes {
			state[i] = tensors.FromShape(s)
		}
		for pos := 0; pos < tT; pos++ {
			xt := make([]float64, tB*D)
			for b := 0; b < tB; b++ {
				copy(xt[b*D:(b+1)*D], x[(b*tT+pos)*D:(b*tT+pos+1)*D])
			}
			outs := step.MustExec(append([]any{wbtest.Tensor64(xt, tB, 1, D), int32(pos)}, state...)...)
			for i := range state {
				state[i] = outs[1+i]
			}
			got := wbtest.Flat64(outs[0])
			for b := 0; b < tB; b++ {
				wbtest.RequireClose(t, fmt.Sprintf("layer %d y[b=%d, t=%d]", layer, b, pos),
					y[(b*tT+pos)*D:(b*tT+pos+1)*D], got[b*D:(b+1)*D], tolParity)
			}
		}
	}
}

func TestSetMasks(t *testing.T) {
	const D, layer = 6, 1
	cfg := testConfig(tR, 0, tK)
	vars := model.NewStore()
	vars.SetParam(model.ParamInitialSeed, int64(6))
	exec := mixerExec(t, vars, cfg, layer)
	x := wbtest.Tensor64(wbtest.Normal(wbtest.RNG(3), tB*tT*D, 1), tB, tT, D)
	before := exec.MustExec(x)
	block := vars.RootScope().At("%s", blockScope(layer))
	if err := SetMasks(block, cfg, layer, []float64{1, 1, 0}, nil); err != nil {
		t.Fatalf("%+v", err)
	}
	masked := exec.MustExec(x) // same executor: the masks are variables, no new graph
	pi := wbtest.Flat64(masked[1])
	for i := 2; i < len(pi); i += tR {
		if pi[i] != 0 {
			t.Fatalf("π of the masked prototype = %g, want 0", pi[i])
		}
	}
	if wbtest.MaxAbsDiff(wbtest.Flat64(before[0]), wbtest.Flat64(masked[0])) == 0 {
		t.Fatal("setting a write mask did not change the output")
	}
	if err := ClearMasks(block, cfg, layer); err != nil {
		t.Fatalf("%+v", err)
	}
	wbtest.RequireClose(t, "y after ClearMasks", wbtest.Flat64(before[0]), wbtest.Flat64(exec.MustExec(x)[0]), 0)

	for name, c := range map[string]struct {
		layer       int
		write, read []float64
		wantErr     string
	}{
		"short":          {1, []float64{1, 1}, nil, "2 entries"},
		"all write":      {1, []float64{0, 0, -1}, nil, "masks all"},
		"all read":       {1, nil, []float64{0, 0, 0}, "masks all"},
		"NaN":            {1, []float64{1, math.NaN(), 1}, nil, "finite"},
		"shared: union":  {0, []float64{1, 0, 1}, []float64{0, 1, 0}, "together"},
		"split is legal": {1, []float64{1, 0, 1}, []float64{0, 1, 0}, ""},
	} {
		err := SetMasks(vars.RootScope().At("%s", blockScope(c.layer)), cfg, c.layer, c.write, c.read)
		if (err == nil) != (c.wantErr == "") || (err != nil && !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("%s: err = %v, want one containing %q", name, err, c.wantErr)
		}
	}
}

func TestReinitPrototype(t *testing.T) {
	const D, layer, k = 6, 2, 1
	cfg := testConfig(tR, 0, tK)
	vars := model.NewStore()
	vars.SetParam(model.ParamInitialSeed, int64(7))
	block := vars.RootScope().At("%s", blockScope(layer))
	if err := ReinitPrototype(block, k, 1); err == nil {
		t.Fatal("ReinitPrototype before the variables exist: want an error")
	}
	mixerExec(t, vars, cfg, layer).MustExec(wbtest.Tensor64(wbtest.Normal(wbtest.RNG(4), tB*tT*D, 1), tB, tT, D))
	read := func() []float64 {
		v, err := block.At(Scope).GetVariable(VarPrototypes).Value()
		if err != nil {
			t.Fatalf("%+v", err)
		}
		return wbtest.Flat64(v)
	}
	before := read()
	if err := ReinitPrototype(block, k, 11); err != nil {
		t.Fatalf("%+v", err)
	}
	after := read()
	norm := 0.0
	for i := 0; i < tR*D; i++ {
		if row := i / D; row != k && after[i] != before[i] {
			t.Fatalf("row %d changed", row)
		} else if row == k {
			norm += after[i] * after[i]
		}
	}
	if !wbtest.Close(1, math.Sqrt(norm), 1e-12) || wbtest.MaxAbsDiff(before[k*D:(k+1)*D], after[k*D:(k+1)*D]) == 0 {
		t.Fatalf("row %d: norm %g (want 1), before %v after %v", k, math.Sqrt(norm), before[k*D:(k+1)*D], after[k*D:(k+1)*D])
	}
	if err := ReinitPrototype(block, k, 12); err != nil {
		t.Fatalf("%+v", err)
	}
	other := read()
	if err := ReinitPrototype(block, k, 11); err != nil {
		t.Fatalf("%+v", err)
	}
	wbtest.RequireClose(t, "same seed, same row", after, read(), 0)
	if wbtest.MaxAbsDiff(after, other) == 0 {
		t.Fatal("different seeds gave the same row")
	}
	if err := ReinitPrototype(block, tR, 1); err == nil {
		t.Fatal("k = R: want an error")
	}
}

// TestDecayLogitInit_SpreadHandCase: decays 0.5 (half-life 1) to 2^(−1/4) (half-life 4) over R = 3 prototypes
// give half-lives 1, 2, 4, i.e. β = 2^(−1), 2^(−1/2), 2^(−1/4); without DecayInitMax every γ is logit(0.9) = ln 9.
// The mixer creates γ with these values.
func TestDecayLogitInit_SpreadHandCase(t *testing.T) {
	cfg := testConfig(3, 0, 5)
	for _, g := range cfg.DecayLogitInit() {
		if !wbtest.Close(math.Log(9), g, 1e-12) {
			t.Fatalf("default γ = %g, want ln 9", g)
		}
	}
	cfg.DecayInit, cfg.DecayInitMax = 0.5, math.Pow(2, -0.25)
	if err := cfg.Validate(16); err != nil {
		t.Fatalf("%+v", err)
	}
	got := cfg.DecayLogitInit()
	for k, b := range []float64{0.5, math.Pow(2, -0.5), math.Pow(2, -0.25)} {
		if want := math.Log(b / (1 - b)); !wbtest.Close(want, got[k], 1e-12) {
			t.Errorf("γ_%d = %g, want logit(%g) = %g", k, got[k], b, want)
		}
	}
	vars := model.NewStore()
	x := wbtest.Tensor64(wbtest.Normal(wbtest.RNG(1), 2*3*16, 1), 2, 3, 16)
	mixerExec(t, vars, cfg, 1).MustExec(x)
	vals, _ := variableValues(t, vars)
	gamma := vals["/"+blockScope(1)+"/"+Scope+"/"+VarDecayLogit]
	for k := range got {
		if !wbtest.Close(got[k], gamma[k], 1e-12) {
			t.Errorf("variable γ_%d = %g, want %g", k, gamma[k], got[k])
		}
	}
	if b, err := json.Marshal(DefaultConfig()); err != nil || strings.Contains(string(b), "decay_init_max") {
		t.Errorf("DefaultConfig JSON %s (err %v): decay_init_max 0 must be omitted (cache keys unchanged)", b, err)
	}
	one := cfg
	one.NumPrototypes = 1
	if g := one.DecayLogitInit(); !wbtest.Close(0, g[0], 1e-12) {
		t.Errorf("R = 1: γ = %g, want logit(0.5) = 0", g[0])
	}
}

func TestConfig_Validate(t *testing.T) {
	if err := DefaultConfig().Validate(256); err != nil {
		t.Fatalf("DefaultConfig: %+v", err)
	}
	for key, mutate := range map[string]func(c *Config){
		"num_prototypes":         func(c *Config) { c.NumPrototypes = 0 },
		"value_width":            func(c *Config) { c.ValueWidth = -1 },
		"decay_init":             func(c *Config) { c.DecayInit = 1 },
		"decay_init_max":         func(c *Config) { c.DecayInitMax = 0.8 }, // below decay_init = 0.9
		"write_temp_init":        func(c *Config) { c.WriteTempInit = 0 },
		"shared_write_temp_init": func(c *Config) { c.SharedWriteTempInit = math.Inf(1) },
		"read_temp_init":         func(c *Config) { c.ReadTempInit = math.NaN() },
		"alpha_init":             func(c *Config) { c.AlphaInit = math.NaN() },
		"shared_routing_layers":  func(c *Config) { c.SharedRoutingLayers = -1 },
		"conv_layers":            func(c *Config) { c.ConvLayers = -2 },
		"conv_kernel":            func(c *Config) { c.ConvKernel = 1 },
		"numerics":               func(c *Config) { c.Numerics = "Exact" },
		"form":                   func(c *Config) { c.Form = "scan" },
		"chunk_size":             func(c *Config) { c.ChunkSize = 0 },
		"dense_max_len":          func(c *Config) { c.DenseMaxLen = -1 },
	} {
		c := DefaultConfig()
		mutate(&c)
		if err := c.Validate(256); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: err = %v, want one naming %q", key, err, key)
		}
	}
	c := DefaultConfig()
	c.ValueWidth = 0
	if err := c.Validate(1); err == nil {
		t.Error("width 1 with value_width 0 gives D_v = 0: want an error")
	}
}

func TestConfig_ChunkLen(t *testing.T) {
	c := DefaultConfig() // auto, Q = 64, dense up to 64
	for _, tc := range []struct {
		form        string
		T, denseMax int
		want        int
	}{
		{FormAuto, 64, 64, 64}, {FormAuto, 65, 64, 64}, {FormAuto, 1000, 64, 64}, {FormAuto, 300, 512, 300},
		{FormDense, 1000, 0, 1000}, {FormChunked, 1000, 4096, 64}, {FormChunked, 50, 0, 50},
	} {
		c.Form, c.DenseMaxLen = tc.form, tc.denseMax
		if got := c.ChunkLen(tc.T); got != tc.want {
			t.Errorf("form %s, T=%d, dense_max_len=%d: ChunkLen=%d, want %d", tc.form, tc.T, tc.denseMax, got, tc.want)
		}
	}
}
