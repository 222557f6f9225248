package attention

import (
	"math"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/workbench/wbtest"
)

func TestMixer_VariablesAndShapes(t *testing.T) {
	const B, T, D = 2, 5, 12
	cfg := Config{NumHeads: 6, NumKVHeads: 2, RoPEBase: 10_000, InitStd: 0.02, OutputInitStd: 0.001}
	vars := model.NewStore()
	vars.SetParam(model.ParamInitialSeed, int64(70))
	out := model.MustCallOnce(wbtest.Backend(t), vars, func(scope *model.Scope, x *Node) *Node {
		return Mixer(scope.At("block"), cfg, x)
	}, tensors.FromShape(shapes.Make(dtypes.Float64, B, T, D)))
	if got := out.Shape(); !got.Equal(shapes.Make(dtypes.Float64, B, T, D)) {
		t.Fatalf("Mixer output shape %s, want [%d %d %d]", got, B, T, D)
	}
	want := map[string][]int{"q": {D, 12}, "k": {D, 4}, "v": {D, 4}, "o": {12, D}}
	got := map[string]bool{}
	for v := range vars.IterVariables() {
		if !v.Trainable {
			continue
		}
		dims, ok := want[v.Name()]
		if !ok || v.Scope() != "/block/attention" {
			t.Fatalf("unexpected variable %s", v.Path())
		}
		if !v.Shape().Equal(shapes.Make(dtypes.Float64, dims...)) {
			t.Errorf("variable %s shape %s, want %v", v.Path(), v.Shape(), dims)
		}
		got[v.Name()] = true
		// The initialisation honours InitStd and OutputInitStd: sample std within a factor 2 (48–144 values).
		std := 0.02
		if v.Name() == "o" {
			std = 0.001
		}
		vals := wbtest.Flat64(v.MustValue())
		ss := 0.0
		for _, x := range vals {
			ss += x * x
		}
		if rms := math.Sqrt(ss / float64(len(vals))); rms < std/2 || rms > 2*std {
			t.Errorf("variable %s: initial rms %g, want ≈ %g", v.Path(), rms, std)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("variables %v, want %v", got, want)
	}
	if n := cfg.NumParams(D); n != D*12+2*D*4+12*D {
		t.Fatalf("NumParams=%d, want %d", n, D*12+2*D*4+12*D)
	}
}

func TestConfig_Validate(t *testing.T) {
	good := DefaultConfig()
	if err := good.Validate(128); err != nil {
		t.Fatalf("DefaultConfig().Validate(128): %v", err)
	}
	cases := []struct {
		name  string
		edit  func(c *Config)
		width int
		want  string
	}{
		{"width", func(c *Config) {}, 0, "width=0"},
		{"heads", func(c *Config) { c.NumHeads = 0 }, 128, "num_heads=0"},
		{"negative kv heads", func(c *Config) { c.NumKVHeads = -1 }, 128, "num_kv_heads=-1"},
		{"kv heads divide", func(c *Config) { c.NumKVHeads = 3 }, 128, "num_kv_heads=3 does not divide num_heads=4"},
		{"heads divide width", func(c *Config) { c.NumHeads = 5 }, 128, "num_heads=5 does not divide width=128"},
		{"negative head dim", func(c *Config) { c.HeadDim = -2 }, 128, "head_dim=-2"},
		{"odd head dim", func(c *Config) { c.HeadDim = 7 }, 128, "must be even"},
		{"odd derived head dim", func(c *Config) {}, 12, "must be even"},
		{"rope base", func(c *Config) { c.RoPEBase = 0 }, 128, "rope_base=0"},
		{"init std", func(c *Config) { c.InitStd = -1 }, 128, "init_std=-1"},
		{"output init std", func(c *Config) { c.OutputInitStd = -1 }, 128, "output_init_std=-1"},
	}
	for _, c := range cases {
		cfg := DefaultConfig()
		c.edit(&cfg)
		err := cfg.Validate(c.width)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Validate(%d) = %v, want an error containing %q", c.name, c.width, err, c.want)
		}
	}
	// Derived head width: H need not divide D when head_dim is given.
	if err := (Config{NumHeads: 5, HeadDim: 8, RoPEBase: 10}).Validate(12); err != nil {
		t.Errorf("explicit head_dim: %v", err)
	}
}
