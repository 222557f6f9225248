package fit

import (
	"reflect"
	"strings"
	"testing"

	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/wbtest"
)

func TestConfig_Keys(t *testing.T) {
	want := []string{"beta1", "beta2", "checkpoint_every", "clip_norm", "devices", "eps", "eval_batches", "eval_every",
		"keep_checkpoints", "log_every", "lr", "min_lr_frac", "no_decay", "seed", "steps", "warmup_steps",
		"weight_decay"}
	if got := run.Keys(Config{}); !reflect.DeepEqual(got, want) {
		t.Errorf("keys = %v, want %v", got, want)
	}
	cfg := DefaultConfig()
	if err := run.Override(&cfg, `lr=0.01; no_decay=["norm"]; clip_norm=0`); err != nil {
		t.Fatalf("%+v", err)
	}
	if cfg.LR != 0.01 || !reflect.DeepEqual(cfg.NoDecay, []string{"norm"}) || cfg.ClipNorm != 0 {
		t.Errorf("override gave %+v", cfg)
	}
}

func TestConfig_Validate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("DefaultConfig: %+v", err)
	}
	cases := map[string]func(c *Config){
		"steps":            func(c *Config) { c.Steps = 0 },
		"lr":               func(c *Config) { c.LR = 0 },
		"min_lr_frac":      func(c *Config) { c.MinLRFrac = 1.5 },
		"warmup_steps":     func(c *Config) { c.WarmupSteps = c.Steps + 1 },
		"weight_decay":     func(c *Config) { c.WeightDecay = -1 },
		"beta1":            func(c *Config) { c.Beta1 = 1 },
		"beta2":            func(c *Config) { c.Beta2 = -0.1 },
		"eps":              func(c *Config) { c.Eps = 0 },
		"clip_norm":        func(c *Config) { c.ClipNorm = -1 },
		"eval_every":       func(c *Config) { c.EvalEvery = -1 },
		"eval_batches":     func(c *Config) { c.EvalBatches = 0 },
		"checkpoint_every": func(c *Config) { c.CheckpointEvery = -2 },
		"keep_checkpoints": func(c *Config) { c.KeepCheckpoints = 0 },
		"log_every":        func(c *Config) { c.LogEvery = 0 },
		"no_decay":         func(c *Config) { c.NoDecay = []string{"norm", ""} },
		"devices":          func(c *Config) { c.Devices = -1 },
	}
	for key, breakIt := range cases {
		cfg := DefaultConfig()
		breakIt(&cfg)
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: err = %v, want an error naming %s", key, err, key)
		}
		hist, err := Train(wbtest.Backend(t), run.NewStore(1), mlpLoss, mustSlice(t, mlpBatches(1, 1)), nil, cfg)
		if err == nil || hist != nil {
			t.Errorf("%s: Train accepted an invalid config", key)
		}
	}
}

func TestConfig_Decays(t *testing.T) {
	cfg := DefaultConfig()
	if len(cfg.NoDecay) != 0 {
		t.Fatalf("DefaultConfig exempts %q by name; the model names its own exemptions", cfg.NoDecay)
	}
	cfg.NoDecay = []string{"norm", "bias", "prototypes", "dt_proj", "a_log"} // a decoder's list
	cases := []struct {
		path string
		rank int
		want bool
	}{
		{"/block_00/ffn/up/dense/weights", 2, true},
		{"/embed/embeddings", 2, true},
		{"/block_00/attn/q/dense/weights", 3, true},
		{"/block_00/ffn/up/dense/biases", 1, false},
		{"/block_00/norm/rms_norm/scale", 1, false},
		{"/block_00/attn_norm/weights", 2, false}, // exempt by name ("_norm"), although rank 2
		{"/block_00/norm/weights", 2, false},
		{"/block_00/normalizer/weights", 2, true}, // whole elements only
		{"/block_00/protot/prototypes", 2, false},
		{"/block_00/ffn/gate/weights", 2, true}, // the SwiGLU gate projection is a weight matrix
		{"/block_00/protot/alpha_gate", 0, false},
		{"/block_00/mamba/dt_proj", 2, false}, // docs/spec/protot.md §2.5: Mamba's dt projection and A are not decayed
		{"/block_00/mamba/a_log", 2, false},
		{"/block_00/mamba/x_proj", 2, true},
		{"/head/temperature", 0, false},
		{"/lookup/weights", 2, true},
	}
	for _, c := range cases {
		if got := cfg.Decays(c.path, c.rank); got != c.want {
			t.Errorf("Decays(%s, rank %d) = %v, want %v", c.path, c.rank, got, c.want)
		}
	}
	cfg.NoDecay = nil
	if !cfg.Decays("/block_00/protot/prototypes", 2) || cfg.Decays("/x/scale", 1) {
		t.Errorf("with no NoDecay entries, only the rank rule must apply")
	}
}
