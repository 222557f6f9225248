package fit

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/pkg/errors"
)

// Config configures a training run. Start from DefaultConfig; the equations that use each field are in doc.go.
type Config struct {
	Steps           int      `json:"steps"`            // S: optimizer updates in the whole run; > 0.
	LR              float64  `json:"lr"`               // peak learning rate, reached at the end of warmup; > 0.
	MinLRFrac       float64  `json:"min_lr_frac"`      // final learning rate (at step S) as a fraction of LR; [0, 1].
	WarmupSteps     int      `json:"warmup_steps"`     // W: linear warmup length; [0, S].
	WeightDecay     float64  `json:"weight_decay"`     // λ: decoupled decay of the decay group; ≥ 0.
	Beta1           float64  `json:"beta1"`            // β1: first-moment decay; [0, 1).
	Beta2           float64  `json:"beta2"`            // β2: second-moment decay; [0, 1).
	Eps             float64  `json:"eps"`              // ε in the AdamW denominator; > 0.
	ClipNorm        float64  `json:"clip_norm"`        // c: clip the global gradient norm to c; 0 = off; ≥ 0.
	EvalEvery       int      `json:"eval_every"`       // validate every N steps and at the end; 0 = only at the end.
	EvalBatches     int      `json:"eval_batches"`     // validation batches per evaluation (the same ones each time); > 0.
	CheckpointEvery int      `json:"checkpoint_every"` // checkpoint every N steps and at the end; 0 = only at the end.
	KeepCheckpoints int      `json:"keep_checkpoints"` // checkpoints kept on disk (the newest); ≥ 1.
	LogEvery        int      `json:"log_every"`        // record History and call OnStep every N steps; ≥ 1.
	NoDecay         []string `json:"no_decay"`         // more path elements exempt from decay (the model's come from NoDecay).
	Seed            uint64   `json:"seed"`             // the run's seed: pass it to run.NewStore; fit draws no random numbers.
	// N: devices of this host that every batch is split over along axis 0 (data parallelism, devices.go); 0 and 1
	// mean one device (today's path); N > 1 needs N ≤ the backend's devices and B divisible by N. ≥ 0. A value ≤ 1
	// is left out of the JSON, so one-device configs keep their encoding, cache keys and checkpoints.
	Devices int `json:"devices,omitempty"`
}

// DefaultConfig returns the defaults: a GPT-style AdamW recipe (β2 = 0.95, λ = 0.1, clip 1.0, cosine to 10%). It
// exempts no variable by name: the model being trained names its own exemptions (the NoDecay option).
func DefaultConfig() Config {
	return Config{
		Steps:           1000,
		LR:              3e-4,
		MinLRFrac:       0.1,
		WarmupSteps:     100,
		WeightDecay:     0.1,
		Beta1:           0.9,
		Beta2:           0.95,
		Eps:             1e-8,
		ClipNorm:        1.0,
		EvalEvery:       100,
		EvalBatches:     10,
		CheckpointEvery: 500,
		KeepCheckpoints: 2,
		LogEvery:        1,
		Seed:            1,
	}
}

// Validate returns an error naming the first field (by its JSON key) that is out of range.
func (c Config) Validate() error {
	switch {
	case c.Steps <= 0:
		return errors.Errorf("fit.Config: steps=%d, want > 0", c.Steps)
	case !(c.LR > 0):
		return errors.Errorf("fit.Config: lr=%g, want > 0", c.LR)
	case !(c.MinLRFrac >= 0 && c.MinLRFrac <= 1):
		return errors.Errorf("fit.Config: min_lr_frac=%g, want in [0, 1]", c.MinLRFrac)
	case c.WarmupSteps < 0 || c.WarmupSteps > c.Steps:
		return errors.Errorf("fit.Config: warmup_steps=%d, want in [0, steps=%d]", c.WarmupSteps, c.Steps)
	case !(c.WeightDecay >= 0):
		return errors.Errorf("fit.Config: weight_decay=%g, want ≥ 0", c.WeightDecay)
	case !(c.Beta1 >= 0 && c.Beta1 < 1):
		return errors.Errorf("fit.Config: beta1=%g, want in [0, 1)", c.Beta1)
	case !(c.Beta2 >= 0 && c.Beta2 < 1):
		return errors.Errorf("fit.Config: beta2=%g, want in [0, 1)", c.Beta2)
	case !(c.Eps > 0):
		return errors.Errorf("fit.Config: eps=%g, want > 0", c.Eps)
	case !(c.ClipNorm >= 0):
		return errors.Errorf("fit.Config: clip_norm=%g, want ≥ 0 (0 = off)", c.ClipNorm)
	case c.EvalEvery < 0:
		return errors.Errorf("fit.Config: eval_every=%d, want ≥ 0", c.EvalEvery)
	case c.EvalBatches <= 0:
		return errors.Errorf("fit.Config: eval_batches=%d, want > 0", c.EvalBatches)
	case c.CheckpointEvery < 0:
		return errors.Errorf("fit.Config: checkpoint_every=%d, want ≥ 0", c.CheckpointEvery)
	case c.KeepCheckpoints < 1:
		return errors.Errorf("fit.Config: keep_checkpoints=%d, want ≥ 1", c.KeepCheckpoints)
	case c.LogEvery < 1:
		return errors.Errorf("fit.Config: log_every=%d, want ≥ 1", c.LogEvery)
	case c.Devices < 0:
		return errors.Errorf("fit.Config: devices=%d, want ≥ 0 (0 and 1: one device; N > 1: split each batch "+
			"over N devices)", c.Devices)
	}
	for _, s := range c.NoDecay {
		if s == "" {
			return errors.New("fit.Config: no_decay has an empty substring (it would exempt every variable)")
		}
	}
	return nil
}

// Decays reports whether weight decay applies to a variable, given its gomlx path ("/block_00/norm/scale", i.e.
// scope + "/" + name) and rank: variables of rank ≤ 1 (biases, gains, scalar gates and temperatures) never decay,
// and neither does a variable with a path element equal to a NoDecay entry or ending in "_" + entry ("prototypes",
// "attn_norm" for "norm"). Whole elements are compared so that, e.g., the SwiGLU "gate" projection still decays.
func (c Config) Decays(path string, rank int) bool {
	if rank <= 1 {
		return false
	}
	for _, elem := range strings.Split(path, "/") {
		for _, s := range c.NoDecay {
			if elem == s || strings.HasSuffix(elem, "_"+s) {
				return false
			}
		}
	}
	return true
}

// MarshalJSON encodes c with devices = 1 written as 0, i.e. left out: one device either way, so both spellings give
// the same encoding (and cache key) as a config from before the field existed.
func (c Config) MarshalJSON() ([]byte, error) {
	type plain Config // without the method
	if c.Devices == 1 {
		c.Devices = 0
	}
	return json.Marshal(plain(c))
}

// resumeKeys are the Config keys that may differ between a checkpoint and the run resuming it: they change
// bookkeeping, not the trajectory (devices changes only the order of floating-point sums: a checkpoint written on
// N devices resumes on one, and the other way round).
var resumeKeys = map[string]bool{"checkpoint_every": true, "keep_checkpoints": true, "log_every": true,
	"devices": true}

// diffKeys lists the JSON keys whose values differ between a and b, ignoring resumeKeys, sorted.
func diffKeys(a, b Config) []string {
	toMap := func(c Config) map[string]json.RawMessage {
		raw, _ := json.Marshal(c)
		m := map[string]json.RawMessage{}
		_ = json.Unmarshal(raw, &m)
		return m
	}
	ma, mb := toMap(a), toMap(b)
	var out []string
	for k, va := range ma {
		if !resumeKeys[k] && string(va) != string(mb[k]) {
			out = append(out, k+": "+string(va)+" vs "+string(mb[k]))
		}
	}
	sort.Strings(out)
	return out
}
