package architecture

import (
	"slices"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/run"
)

// Sweep is the scaling grid on one corpus.
type Sweep struct {
	Source string  `json:"source"`
	Widths []int   `json:"widths"`
	Steps  []int   `json:"steps"`
	Scores []Score `json:"scores"` // mixer-major, then width, then steps
	Best   int     `json:"best"`   // index in Scores of the lowest mean validation loss
}

// RunSweep trains (or loads) every mixer at every sweep width and step count on data.source under the primary init
// at train.lr, one run per seed. Points equal to RunCompare's (same width and steps) are the same runs, so they are
// trained once.
func RunSweep(cfg Config, opts ...run.Option) (*Sweep, error) {
	o := run.NewOptions(opts...)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return newTrainer(cfg, o).sweep()
}

// Find returns the score of (mixer, width, steps) and whether it is in the sweep.
func (s *Sweep) Find(mixer string, width, steps int) (Score, bool) {
	i := slices.IndexFunc(s.Scores, func(x Score) bool {
		return x.Mixer == mixer && x.Width == width && x.Steps == steps
	})
	if i < 0 {
		return Score{}, false
	}
	return s.Scores[i], true
}

// Mixers returns the mixers of the sweep in order.
func (s *Sweep) Mixers() []string {
	var out []string
	for _, x := range s.Scores {
		if !slices.Contains(out, x.Mixer) {
			out = append(out, x.Mixer)
		}
	}
	return out
}

// TopModels returns, for each mixer, the first seed's model at the largest width and step count (opened from their
// run folders when the sweep was loaded).
func (s *Sweep) TopModels() ([]*lm.Model, error) {
	var top []*Score
	for _, mixer := range s.Mixers() {
		i := slices.IndexFunc(s.Scores, func(x Score) bool {
			return x.Mixer == mixer && x.Width == s.Widths[len(s.Widths)-1] && x.Steps == s.Steps[len(s.Steps)-1]
		})
		if i >= 0 {
			top = append(top, &s.Scores[i])
		}
	}
	return firstModels(top)
}

// BestModel returns the first seed's model of the point with the lowest mean validation loss.
func (s *Sweep) BestModel() (*lm.Model, error) { return s.Scores[s.Best].firstModel() }
