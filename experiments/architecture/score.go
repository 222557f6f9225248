package architecture

import (
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/stats"
)

// Score is one point of the study (a mixer on a corpus at a width and a number of steps, under an init policy and
// a learning rate), over the seeds.
type Score struct {
	Point      // its fields at the top level of the JSON
	Tokens int `json:"tokens"` // training tokens, steps·B·T
	// Params is the total trainable parameter count; Match reports the non-embedding count and its target.
	Params int           `json:"params"`
	Match  lm.ParamMatch `json:"match"`
	// Loss and Perplexity are the means over seeds of the final loss (nats/token) and perplexity on the validation
	// split (documents carved from the training corpus, which the learning-rate search reads); the SE fields are
	// their standard errors, sd/√n (0 with one seed).
	Loss         float64 `json:"loss"`
	LossSE       float64 `json:"loss_se"`
	Perplexity   float64 `json:"perplexity"`
	PerplexitySE float64 `json:"perplexity_se"`
	// Test is the perplexity on the test corpus (Config.Test.Seed), which no choice reads; Holdout on the held-back
	// corpus (Config.Test.HoldoutSeed). Both nil when not measured (a sweep point, another source than the synthetic
	// corpus, or no holdout seed).
	Test    *Eval `json:"test,omitempty"`
	Holdout *Eval `json:"holdout,omitempty"`
	// Curve is the validation loss against training tokens, at every evaluation of the runs (train.eval_every and
	// the end; train.eval_batches batches), mean ± s.e. over the seeds.
	Curve []CurvePoint `json:"curve,omitempty"`
	// Seeds is the number of seeds whose run finished; Diverged counts those stopped by a non-finite loss (not in
	// the means).
	Seeds        int      `json:"seeds"`
	Diverged     int      `json:"diverged,omitempty"`
	TrainSeconds float64  `json:"train_seconds"` // mean training wall time per seed, as each run recorded it
	Dirs         []string `json:"dirs,omitempty"`
	// Runs are the per-seed models, in Config.Seeds order, when this process trained or loaded them (not in a
	// stored result: Models opens them from Dirs).
	Runs []*lm.Model `json:"-"`
}

// Eval is a perplexity over the seeds of a point: the per-seed values, in Config.Seeds order, and their mean ± s.e.
type Eval struct {
	Losses       []float64 `json:"losses"`       // per seed, nats/token
	Perplexities []float64 `json:"perplexities"` // per seed, exp(loss)
	Loss         float64   `json:"loss"`
	LossSE       float64   `json:"loss_se"`
	Perplexity   float64   `json:"perplexity"`
	PerplexitySE float64   `json:"perplexity_se"`
	Tokens       int       `json:"tokens"` // predicted tokens per seed
}

// CurvePoint is the validation loss after a number of training tokens, mean ± s.e. over seeds.
type CurvePoint struct {
	Tokens int     `json:"tokens"`
	Loss   float64 `json:"loss"`
	LossSE float64 `json:"loss_se"`
}

// newEval aggregates per-seed losses.
func newEval(losses []float64, tokens int) *Eval {
	e := &Eval{Losses: losses, Tokens: tokens}
	for _, l := range losses {
		e.Perplexities = append(e.Perplexities, math.Exp(l))
	}
	e.Loss, e.LossSE = stats.MeanSEOrZero(losses)
	e.Perplexity, e.PerplexitySE = stats.MeanSEOrZero(e.Perplexities)
	return e
}

// Models returns the per-seed models of the point: those in memory, else opened from their run folders. A stored
// result records the folders its run trained (Dirs, absolute paths on that machine); a folder that is not there (a
// shipped result: results/ carries no weights) is looked for by its name under this machine's run root
// (run.OutRoot()/models), where `protolab run architecture` with the same settings trains it.
func (s *Score) Models() ([]*lm.Model, error) {
	if len(s.Runs) > 0 {
		return s.Runs, nil
	}
	if len(s.Dirs) == 0 {
		return nil, errors.Errorf("architecture: %s d%d s%d has no models in memory and no run folders", s.Mixer,
			s.Width, s.Steps)
	}
	var ms []*lm.Model
	for _, dir := range s.Dirs {
		local, err := localRunDir(dir)
		if err != nil {
			return nil, err
		}
		m, err := lm.Open(local)
		if err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	s.Runs = ms
	return s.Runs, nil
}

// localRunDir returns the run folder dir when it exists, else the folder of the same name under this machine's
// run root, or an error naming both and how to train the model.
func localRunDir(dir string) (string, error) {
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return dir, nil
	}
	local := filepath.Join(run.OutRoot(), lm.ModelsDir, filepath.Base(dir))
	if st, err := os.Stat(local); err == nil && st.IsDir() {
		return local, nil
	}
	return "", errors.Errorf("architecture: model %s is not on this machine: neither %s (where the result's run "+
		"trained it) nor %s exists. Results ship without weights; run the study with the same settings "+
		"(`protolab run %s --preset <preset>`, with $PROTOLAB_OUT as here) to train them", filepath.Base(dir), dir,
		local, Study)
}

// curveOf returns a run's validation losses against the tokens trained when each was taken.
func curveOf(res *lm.Result, tokensPerStep int) []CurvePoint {
	if res.History == nil {
		return nil
	}
	var out []CurvePoint
	for _, e := range res.History.Evals {
		out = append(out, CurvePoint{Tokens: e.Step * tokensPerStep, Loss: e.Loss})
	}
	return out
}

// meanCurve averages the seeds' curves at the token counts every seed has.
func meanCurve(curves [][]CurvePoint) []CurvePoint {
	if len(curves) == 0 {
		return nil
	}
	var out []CurvePoint
	for _, p := range curves[0] {
		var ls []float64
		for _, c := range curves {
			if i := slices.IndexFunc(c, func(q CurvePoint) bool { return q.Tokens == p.Tokens }); i >= 0 {
				ls = append(ls, c[i].Loss)
			}
		}
		if len(ls) == len(curves) {
			m, se := stats.MeanSEOrZero(ls)
			out = append(out, CurvePoint{Tokens: p.Tokens, Loss: m, LossSE: se})
		}
	}
	return out
}

// firstModel returns the first seed's model of the point.
func (s *Score) firstModel() (*lm.Model, error) {
	ms, err := s.Models()
	if err != nil {
		return nil, err
	}
	return ms[0], nil
}

// firstModels returns the first seed's model of every score with a finished run, in order.
func firstModels(scores []*Score) ([]*lm.Model, error) {
	var out []*lm.Model
	for _, s := range scores {
		if s.Seeds == 0 {
			continue
		}
		m, err := s.firstModel()
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// lowest returns the index of the score of lowest mean validation loss among those with a finished run (the first
// of equal ones), or -1 when every run diverged.
func lowest(scores []Score) int {
	best := -1
	for i, s := range scores {
		if s.Seeds > 0 && (best < 0 || s.Loss < scores[best].Loss) {
			best = i
		}
	}
	return best
}
