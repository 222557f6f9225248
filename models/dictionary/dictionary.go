// Package dictionary trains sparse autoencoders (layers/sae) on a model's activations — the feature dictionaries
// that interpretability studies compare with prototypes and heads, and that steering uses as a controller basis.
// Train fits one to a set of activation rows; Encode gives the codes of any rows (the rows it was trained on or
// held-out ones) with their reconstruction statistics.
package dictionary

import (
	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/sae"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/run"
)

// Config configures one dictionary.
type Config struct {
	// Model is the SAE (layers/sae); its width and initialisation seed are set by Train.
	Model sae.Config `json:"model"`
	// Train is the optimizer and schedule; train.steps mini-batches are drawn.
	Train fit.Config `json:"train"`
	// BatchSize is the number of activation rows per step (fewer when there are fewer rows); > 0.
	BatchSize int `json:"batch_size"`
}

// Validate reports the first problem of the configuration for width D, naming its key.
func (c Config) Validate(D int) error {
	m := c.Model
	m.Width = D
	if err := m.Validate(); err != nil {
		return errors.WithMessage(err, "model")
	}
	if c.BatchSize <= 0 {
		return errors.Errorf("batch_size=%d, want > 0", c.BatchSize)
	}
	return errors.WithMessage(c.Train.Validate(), "train")
}

// Dictionary is a trained SAE of width D with F features.
type Dictionary struct {
	D, F    int
	model   sae.Config
	vars    *model.Store
	backend compute.Backend
}

// Stats describe a dictionary on a set of rows.
type Stats struct {
	Features int     `json:"features"` // dictionary size F
	L0       float64 `json:"l0"`       // mean number of active features per row
	FVU      float64 `json:"fvu"`      // fraction of variance unexplained by the reconstruction
	Lambda   float64 `json:"lambda"`   // the L1 weight reached (adapted towards model.target_l0)
	Dead     int     `json:"dead"`     // features that fire on none of the rows
}

// Train fits a dictionary to the rows of acts (row-major [N, D]) with workbench/fit: train.steps mini-batches of
// batch_size rows, drawn by reshuffling the rows every epoch with run.RNG(seed, stream); the weights are seeded with
// seed. It never sees anything but the rows.
func Train(backend compute.Backend, acts []float64, N, D int, c Config, seed uint64, stream string) (*Dictionary,
	error) {
	if len(acts) < N*D || N <= 0 {
		return nil, errors.Errorf("dictionary.Train: %d values for %d rows of width %d", len(acts), N, D)
	}
	if err := c.Validate(D); err != nil {
		return nil, errors.WithMessage(err, "dictionary")
	}
	mc := c.Model
	mc.Width = D
	mc.InitSeed = int64(seed)
	B := min(c.BatchSize, N)
	rng := run.RNG(seed, stream)
	var batches [][]*tensors.Tensor
	for epoch := 0; len(batches) < c.Train.Steps && epoch < 1000; epoch++ {
		perm := rng.Perm(N)
		for from := 0; from+B <= N && len(batches) < c.Train.Steps; from += B {
			x := make([]float32, B*D)
			for i, n := range perm[from : from+B] {
				for d := range D {
					x[i*D+d] = float32(acts[n*D+d])
				}
			}
			batches = append(batches, []*tensors.Tensor{tensors.FromFlatDataAndDimensions(x, B, D)})
		}
	}
	src, err := fit.NewSliceBatches(batches)
	if err != nil {
		return nil, err
	}
	vars := run.NewStore(seed)
	tc := c.Train
	tc.Seed = seed
	if _, err := fit.Train(backend, vars, sae.LossFn(mc), src, nil, tc, fit.Progress(nil)); err != nil {
		return nil, errors.WithMessage(err, "dictionary: training the SAE")
	}
	return &Dictionary{D: D, F: mc.NumFeatures(), model: mc, vars: vars, backend: backend}, nil
}

// Encode returns the codes of the rows of acts (row-major [N, D] → [N, F]) and the dictionary's statistics on them.
func (d *Dictionary) Encode(acts []float64, N int) ([]float64, Stats, error) {
	if len(acts) < N*d.D || N <= 0 {
		return nil, Stats{}, errors.Errorf("dictionary.Encode: %d values for %d rows of width %d", len(acts), N, d.D)
	}
	all := make([]float32, N*d.D)
	for i, x := range acts[:N*d.D] {
		all[i] = float32(x)
	}
	mc := d.model
	exec, err := model.NewExec(d.backend, d.vars, func(scope *model.Scope, x *graph.Node) []*graph.Node {
		t := sae.Loss(scope, mc, x)
		return []*graph.Node{graph.ConvertDType(t.Features, dtypes.Float64), t.L0, t.FVU, t.Lambda}
	})
	if err != nil {
		return nil, Stats{}, errors.Wrap(err, "dictionary: codes")
	}
	out, err := exec.Exec(tensors.FromFlatDataAndDimensions(all, N, d.D))
	if err != nil {
		return nil, Stats{}, errors.Wrap(err, "dictionary: codes")
	}
	codes := tensors.MustCopyFlatData[float64](out[0])
	F := d.F
	st := Stats{Features: F, L0: float64(tensors.ToScalar[float32](out[1])),
		FVU: float64(tensors.ToScalar[float32](out[2])), Lambda: float64(tensors.ToScalar[float32](out[3]))}
	for f := range F {
		fires := false
		for n := 0; n < N && !fires; n++ {
			fires = codes[n*F+f] > 0
		}
		if !fires {
			st.Dead++
		}
	}
	return codes, st, nil
}
