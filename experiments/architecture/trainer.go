package architecture

import (
	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/stats"
)

// trainer trains (or loads) the models of one computation, keeping each in memory so that a point shared by the
// search, the comparisons and the sweep is trained once even without a run folder.
type trainer struct {
	cfg    Config
	o      run.Options
	models map[string]*lm.Model // by lm.Config.Hash
}

func newTrainer(cfg Config, o run.Options) *trainer {
	return &trainer{cfg: cfg, o: o, models: map[string]*lm.Model{}}
}

// model returns the model of p with seed, trained or loaded. A run stopped by a non-finite loss returns its
// fit.DivergedError (diverged reports it).
func (tr *trainer) model(p Point, seed uint64) (*lm.Model, lm.ParamMatch, error) {
	mc, match, err := tr.cfg.ModelAt(p, seed)
	if err != nil {
		return nil, match, err
	}
	key := mc.Hash()
	if m, ok := tr.models[key]; ok {
		return m, match, nil
	}
	m, err := lm.LoadOrTrain(mc, run.With(tr.o))
	if err != nil {
		if tr.diverged(err) {
			tr.o.Logf(Study, "%s (lr %g, init %s) diverged: %v", mc.Name(), p.LR, p.Init, err)
		}
		return nil, match, err
	}
	tr.models[key] = m
	return m, match, nil
}

// diverged reports whether err is a run stopped by a non-finite loss (fit.IsDiverged) rather than an interruption:
// such a seed is counted in Score.Diverged, and a search's trial is not chosen.
func (tr *trainer) diverged(err error) bool { return fit.IsDiverged(err) && tr.o.Err() == nil }

// score trains (or loads) one point for every seed and aggregates it: the validation split, the validation curve
// and, with test (the comparisons; not the sweep), the test corpora.
func (tr *trainer) score(p Point, test bool) (Score, error) {
	c := tr.cfg
	s := Score{Point: p, Tokens: p.Steps * c.Data.BatchSize * c.Data.SeqLen}
	var losses, ppls, tests, hold []float64
	testTokens, holdTokens := 0, 0
	trained := 0
	var curves [][]CurvePoint
	for _, seed := range c.Seeds {
		m, match, err := tr.model(p, seed)
		if tr.diverged(err) {
			s.Match = match
			s.Diverged++
			continue
		}
		if err != nil {
			return s, err
		}
		s.Match = match
		res := m.Result
		s.Runs = append(s.Runs, m)
		if m.Dir != "" {
			s.Dirs = append(s.Dirs, m.Dir)
		}
		s.Params = res.NumParams
		losses = append(losses, res.Val.Loss)
		ppls = append(ppls, res.Val.Perplexity)
		if t := res.TrainSeconds(); t > 0 {
			s.TrainSeconds += t
			trained++
		}
		curves = append(curves, curveOf(res, c.Data.BatchSize*c.Data.SeqLen))
		if !test || !hasTestData(p.Source) {
			continue
		}
		docs := c.Test.NumDocs
		if p.Source == lmdata.SourceBrown {
			docs = c.Test.BrownDocs
		}
		r, err := m.TestPerplexity(c.Test.Seed, docs, c.Test.Batches)
		if err != nil {
			return s, errors.WithMessage(err, "architecture: test corpus (test.seed, test.num_docs or test.brown_docs)")
		}
		tests, testTokens = append(tests, r.Loss), r.Tokens
		if c.Test.HoldoutSeed != 0 {
			r, err := m.TestPerplexity(c.Test.HoldoutSeed, docs, c.Test.Batches)
			if err != nil {
				return s, errors.WithMessage(err, "architecture: held-back test corpus (test.holdout_seed, "+
					"test.num_docs or test.brown_docs)")
			}
			hold, holdTokens = append(hold, r.Loss), r.Tokens
		}
	}
	s.Seeds = len(losses)
	if trained > 0 {
		s.TrainSeconds /= float64(trained)
	}
	if s.Seeds == 0 {
		return s, nil // every seed diverged: no numbers
	}
	s.Loss, s.LossSE = stats.MeanSEOrZero(losses)
	s.Perplexity, s.PerplexitySE = stats.MeanSEOrZero(ppls)
	if len(tests) > 0 {
		s.Test = newEval(tests, testTokens)
	}
	if len(hold) > 0 {
		s.Holdout = newEval(hold, holdTokens)
	}
	s.Curve = meanCurve(curves)
	return s, nil
}

// compare trains (or loads) every mixer at model.width for train.steps on source under init, at the learning rate
// lrs gives it (LRTuned) or at train.lr when lrs is nil (LRShared).
func (tr *trainer) compare(source, init string, lrs map[string]float64) (*Comparison, error) {
	c := tr.cfg
	cmp := &Comparison{Source: source, Init: init, LRMode: LRShared, Width: c.Model.Width, Steps: c.Train.Steps}
	if lrs != nil {
		cmp.LRMode = LRTuned
	}
	for _, m := range c.Mixers {
		lr := c.Train.LR
		if lrs != nil {
			lr = lrs[m]
		}
		s, err := tr.score(Point{Mixer: m, Source: source, Init: init, LR: lr, Width: c.Model.Width,
			Steps: c.Train.Steps}, true)
		if err != nil {
			return nil, err
		}
		cmp.Scores = append(cmp.Scores, s)
	}
	cmp.Rank()
	return cmp, nil
}

// sweep trains (or loads) every mixer at every sweep width and step count (RunSweep).
func (tr *trainer) sweep() (*Sweep, error) {
	cfg := tr.cfg
	sw := &Sweep{Source: cfg.Data.Source, Widths: cfg.Sweep.Widths, Steps: cfg.Sweep.Steps}
	for _, m := range cfg.Mixers {
		for _, w := range cfg.Sweep.Widths {
			for _, st := range cfg.Sweep.Steps {
				s, err := tr.score(Point{Mixer: m, Source: cfg.Data.Source, Init: cfg.primaryInit(), LR: cfg.Train.LR,
					Width: w, Steps: st}, false)
				if err != nil {
					return nil, err
				}
				sw.Scores = append(sw.Scores, s)
			}
		}
	}
	sw.Best = max(0, lowest(sw.Scores))
	return sw, nil
}

// hasTestData reports whether a corpus has evaluation documents apart from its training and validation splits
// (lm.Model.FreshCorpus): fresh synthetic documents, or the Brown corpus's test and held-out splits.
func hasTestData(source string) bool {
	return source == lmdata.SourceSynthetic || source == lmdata.SourceBrown
}
