package architecture

import (
	"fmt"
	"strings"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/fit"
)

// Tuning is the learning-rate search of one mixer under one init policy on one corpus (fit.SearchLR): one run per
// grid value with the tuning seed, judged by its final loss on the corpus's validation split.
type Tuning struct {
	Source string    `json:"source"`
	Init   string    `json:"init"`
	Mixer  string    `json:"mixer"`
	Seed   uint64    `json:"seed"`
	LRs    []float64 `json:"lrs"`
	// Losses are the final validation losses (nats/token, eval_batches batches), per grid value; 0 where the run
	// diverged (Diverged).
	Losses   []float64 `json:"losses"`
	Diverged []bool    `json:"diverged"`
	Chosen   float64   `json:"chosen"` // the grid value of the lowest validation loss (ties: the earlier value)
	// AtEdge reports a choice at the grid's smallest or largest value (fit.AtEdge): the best rate may lie outside
	// the grid.
	AtEdge bool `json:"at_edge"`
}

// String formats the search as one line.
func (t Tuning) String() string {
	var parts []string
	for i, lr := range t.LRs {
		if t.Diverged[i] {
			parts = append(parts, fmt.Sprintf("%g: diverged", lr))
		} else {
			parts = append(parts, fmt.Sprintf("%g: %.4f", lr, t.Losses[i]))
		}
	}
	edge := ""
	if t.AtEdge {
		edge = " (at the grid's edge)"
	}
	return fmt.Sprintf("lr search %-9s %-9s init %-7s seed %d: %s → %g%s\n", t.Mixer, t.Source, t.Init, t.Seed,
		strings.Join(parts, ", "), t.Chosen, edge)
}

// tune runs the learning-rate search of every (init, mixer) on source with the tuning seed: fit.SearchLR over
// lr_grid, each trial judged by its run's final validation loss.
func (tr *trainer) tune(source string) ([]Tuning, error) {
	c := tr.cfg
	seed := c.tuneSeed()
	var out []Tuning
	for _, init := range c.Inits {
		for _, mixer := range c.Mixers {
			trials, best, err := fit.SearchLR(c.LRGrid, func(lr float64) (float64, error) {
				m, _, err := tr.model(Point{Mixer: mixer, Source: source, Init: init, LR: lr,
					Width: c.Model.Width, Steps: c.Train.Steps}, seed)
				if err != nil {
					return 0, err
				}
				return m.Result.Val.Loss, nil
			})
			if err != nil {
				return nil, errors.WithMessagef(err, "architecture: the learning-rate search of %s under init %s on %s",
					mixer, init, source)
			}
			t := Tuning{Source: source, Init: init, Mixer: mixer, Seed: seed, Chosen: trials[best].LR}
			for _, trial := range trials {
				loss := trial.Loss
				if trial.Diverged {
					loss = 0 // JSON has no NaN
				}
				t.LRs, t.Losses = append(t.LRs, trial.LR), append(t.Losses, loss)
				t.Diverged = append(t.Diverged, trial.Diverged)
			}
			t.AtEdge = fit.AtEdge(t.LRs, t.Chosen)
			tr.o.Logf(Study, "%s", strings.TrimSpace(t.String()))
			out = append(out, t)
		}
	}
	return out, nil
}
