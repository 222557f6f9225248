package prismhead

import (
	"math"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/run"
)

// Config configures the study. Start from a preset (Tiny, Small, Paper); change fields or apply run.Override.
type Config struct {
	// Config is the PRISM model analysed (seed, data, model, head "prism", prism, train, eval_batches; JSON keys at
	// the top level); its dense baseline is Config.Dense(): the same backbone, data and token budget.
	lm.Config
	// Curvature configures the Hessian study and the clustering-weight sweep (curvature.go, run.go).
	Curvature CurvatureConfig `json:"curvature"`
}

// CurvatureConfig configures the Hessian study of docs/spec/prism.md §5 (curvature.go) and the sweep of §3, §8.
type CurvatureConfig struct {
	// Batches is the number of validation batches whose tokens the objective sums over; > 0.
	Batches int `json:"batches"`
	// Prototypes is M: the exact Hessian is the principal submatrix of the M most used prototypes (M·D columns,
	// each one double-backprop Hessian-vector product); in [1, K].
	Prototypes int `json:"prototypes"`
	// Sweep lists the clustering weights λ_1 = λ_2 of the conditioning sweep; one PRISM run each; each ≥ 0.
	Sweep []float64 `json:"sweep"`
}

// Tiny is seconds on one CPU core (lm.PrismTiny): the unit tests and the notebook smoke run use it. The curvature
// study reads one batch and M = 4 prototypes; the sweep trains two models.
func Tiny() Config {
	return Config{Config: lm.PrismTiny(),
		Curvature: CurvatureConfig{Batches: 1, Prototypes: 4, Sweep: []float64{0.01, 1}}}
}

// Small is a few minutes on a 2-core CPU with the pure-Go backend (lm.PrismSmall): the Hessian on M = 12 prototypes
// over two validation batches, and the sweep λ_1 = λ_2 ∈ {0.01, 0.1, 1} of spec §3.
func Small() Config {
	return Config{Config: lm.PrismSmall(),
		Curvature: CurvatureConfig{Batches: 2, Prototypes: 12, Sweep: []float64{0.01, 0.1, 1}}}
}

// Paper is spec §12's small-scale plan (lm.PrismPaper), with the Hessian on M = 16 prototypes over four batches.
// Meant for a GPU with XLA.
func Paper() Config {
	return Config{Config: lm.PrismPaper(),
		Curvature: CurvatureConfig{Batches: 4, Prototypes: 16, Sweep: []float64{0.01, 0.1, 1}}}
}

// Preset returns the named preset: "tiny", "small" (also "") or "paper".
func Preset(name string) (Config, error) { return run.SelectPreset(name, Tiny, Small, Paper) }

// FromEnv returns the preset named by $PROTOLAB_PRESET (default "small"), as notebooks and `make run` select it.
func FromEnv() (Config, error) { return Preset(run.PresetName()) }

// Validate reports the first problem of the configuration, naming its key.
func (c Config) Validate() error {
	if err := c.Config.Validate(); err != nil {
		return err
	}
	if c.Head != lm.HeadPrism {
		return errors.Errorf("head=%q, want %q (the study compares a PRISM model with its dense baseline)", c.Head,
			lm.HeadPrism)
	}
	return errors.WithMessage(c.Curvature.validate(c.Prism.NumPrototypes), "curvature")
}

func (c CurvatureConfig) validate(K int) error {
	switch {
	case c.Batches <= 0:
		return errors.Errorf("batches=%d, want > 0", c.Batches)
	case c.Prototypes < 1 || c.Prototypes > K:
		return errors.Errorf("prototypes=%d, want in [1, prism.num_prototypes=%d]", c.Prototypes, K)
	}
	for i, w := range c.Sweep {
		if !(w >= 0) || math.IsInf(w, 0) {
			return errors.Errorf("sweep[%d]=%g, want a finite value ≥ 0", i, w)
		}
	}
	return nil
}
