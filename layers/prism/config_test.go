package prism

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/workbench/wbtest"
)

func TestDefaultConfig_Spec(t *testing.T) {
	cfg := DefaultConfig()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	// docs/spec/prism.md §12 and §3.
	if cfg.NumPrototypes != 4096 || cfg.TopK != 16 || cfg.RecWeight != 0.1 || cfg.R1Weight != 0.1 || cfg.R2Weight != 0.1 ||
		!cfg.RecNorm || cfg.R1Nearest != 1 || cfg.Dist != DistCos || cfg.ClusterGrad != ClusterGradSplit ||
		cfg.Residual != ResidualAutodiff || cfg.ActivationScale != ScaleCos || cfg.CoverageThreshold != 0.9 {
		t.Fatalf("DefaultConfig %+v differs from docs/spec/prism.md §3, §12", cfg)
	}
	if got := cfg.NumParams(1600); got != 4096*1600 {
		t.Fatalf("NumParams(1600) = %d, want K·D", got)
	}
	if got, want := cfg.FLOPsPerToken(128, 2048), 2.0*128*4096+4*16*128+2*128*2048; got != want {
		t.Fatalf("FLOPsPerToken = %g, want %g", got, want)
	}
	// JSON keys are the override keys.
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"num_prototypes", "top_k", "activation_scale", "residual", "rec_weight", "r1_weight",
		"r2_weight", "rec_norm", "r1_nearest", "dist", "cluster_grad", "init_std", "coverage_threshold"} {
		if !strings.Contains(string(raw), `"`+key+`"`) {
			t.Fatalf("JSON %s lacks key %q", raw, key)
		}
	}
}

func TestConfig_Validate(t *testing.T) {
	for key, mutate := range map[string]func(c *Config){
		"num_prototypes":     func(c *Config) { c.NumPrototypes = 0 },
		"top_k":              func(c *Config) { c.TopK = 0 },
		"top_k=":             func(c *Config) { c.NumPrototypes, c.TopK = 4, 5 },
		"top_k=65":           func(c *Config) { c.TopK = MaxTopK + 1 },
		"activation_scale":   func(c *Config) { c.ActivationScale = "unit" },
		"residual":           func(c *Config) { c.Residual = "none" },
		"rec_weight":         func(c *Config) { c.RecWeight = -1 },
		"r1_weight":          func(c *Config) { c.R1Weight = math.Inf(1) },
		"r2_weight":          func(c *Config) { c.R2Weight = math.NaN() },
		"r1_nearest":         func(c *Config) { c.R1Nearest = 0 },
		"dist":               func(c *Config) { c.Dist = "l1" },
		"cluster_grad":       func(c *Config) { c.ClusterGrad = "none" },
		"init_std":           func(c *Config) { c.InitStd = 0 },
		"coverage_threshold": func(c *Config) { c.CoverageThreshold = 1.5 },
	} {
		cfg := DefaultConfig()
		mutate(&cfg)
		err := cfg.Validate()
		name := strings.Split(key, "=")[0]
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Fatalf("%s: Validate() = %v, want an error naming %q", key, err, name)
		}
	}
}

// TestHead_Variables checks the bank's path, shape, dtype and initial scale, reuse by a second graph, and that
// BankVariable finds it.
func TestHead_Variables(t *testing.T) {
	cfg := DefaultConfig()
	cfg.NumPrototypes, cfg.TopK = 300, 4
	vars := model.NewStore()
	vars.SetParam(model.ParamInitialSeed, int64(3))
	if BankVariable(vars.RootScope()) != nil {
		t.Fatal("BankVariable before Head: want nil")
	}
	h := wbtest.Tensor64(wbtest.Normal(wbtest.RNG(1), 2*3*8, 1), 2, 3, 8)
	W := wbtest.Tensor64(wbtest.Normal(wbtest.RNG(2), 5*8, 1), 5, 8)
	run := func() []float64 {
		out := model.MustCallOnce(wbtest.Backend(t), vars, func(scope *model.Scope, h, W *Node) *Node {
			return Head(scope, cfg, h, W).Logits
		}, h, W)
		return wbtest.Flat64(out)
	}
	first := run()
	v := BankVariable(vars.RootScope())
	if v == nil || v.Scope() != "/"+Scope || v.Name() != VarPrototypes || !v.Shape().Equal(shapes.Make(dtypes.Float64, 300, 8)) || !v.Trainable {
		t.Fatalf("bank variable %v, want trainable /%s/%s [300, 8] float64", v, Scope, VarPrototypes)
	}
	vals := wbtest.Flat64(v.MustValue())
	ss := 0.0
	for _, x := range vals {
		ss += x * x
	}
	// The sample standard deviation of 2400 N(0, 0.02²) draws is within 10% of 0.02 with overwhelming probability.
	if std := math.Sqrt(ss / float64(len(vals))); math.Abs(std-cfg.InitStd) > 0.1*cfg.InitStd {
		t.Fatalf("initial bank std %g, want ≈ %g", std, cfg.InitStd)
	}
	wbtest.RequireClose(t, "reused bank", first, run(), 0)
}
