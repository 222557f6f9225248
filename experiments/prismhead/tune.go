package prismhead

import (
	"slices"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/run"
)

// tune chooses each kind's learning rate on the tuning seed and cfg's data.source (its validation split): the dense
// model, then the configured PRISM model, each searched over cfg.Tune.LRs (searchRate).
func tune(cfg Config, o run.Options) (*Tuning, error) {
	t := &Tuning{Seed: cfg.Tune.Seed, LRs: slices.Clone(cfg.Tune.LRs)}
	base := cfg.Config
	base.Seed = cfg.Tune.Seed
	for _, k := range []struct {
		name string
		cfg  lm.Config
		lr   *float64
		loss *[]float64
	}{{"dense", base.Dense(), &t.DenseLR, &t.DenseLoss}, {"PRISM", base, &t.PrismLR, &t.PrismLoss}} {
		var err error
		*k.lr, *k.loss, err = searchRate(t.LRs, func(lr float64) (float64, error) {
			if err := o.Err(); err != nil {
				return 0, err
			}
			c := k.cfg
			c.Train.LR = lr
			m, err := lm.LoadOrTrain(c, run.With(o))
			if err != nil {
				return 0, errors.WithMessagef(err, "tuning at lr %g", lr)
			}
			return m.Result.Val.Loss, nil
		})
		if err != nil {
			return nil, errors.WithMessagef(err, "tuning the %s model", k.name)
		}
	}
	o.Logf(Study, "tuned on seed %d, %s corpus: dense lr %g, PRISM lr %g", t.Seed, cfg.Data.Source, t.DenseLR,
		t.PrismLR)
	return t, nil
}

// searchRate trains at every rate of lrs with train (fit.SearchLR) and returns the rate of the lowest final
// validation loss (ties to the earlier rate) and each rate's loss, −1 for a run that diverged (a fit.DivergedError or
// a loss that is not finite), which never wins. A diverged run is a trial, not an error; any other error stops the
// search.
func searchRate(lrs []float64, train func(lr float64) (float64, error)) (float64, []float64, error) {
	trials, best, err := fit.SearchLR(lrs, train)
	if err != nil {
		return 0, nil, err
	}
	losses := make([]float64, len(trials))
	for i, tr := range trials {
		losses[i] = tr.Loss
		if tr.Diverged {
			losses[i] = -1
		}
	}
	return lrs[best], losses, nil
}
