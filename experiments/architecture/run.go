package architecture

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/stats"
)

// Study is the name under which results are stored (run.Out/<Study>/) and the CLI runs the study.
const Study = "architecture"

// Values of Comparison.LRMode.
const (
	LRTuned  = "tuned"  // each mixer at the learning rate the search chose for it (Config.LRGrid)
	LRShared = "shared" // every mixer at train.lr (docs/spec/protot.md §3's recipe)
)

// Score is one point of the study (a mixer on a corpus at a width and a number of steps, under an init policy and
// a learning rate), over the seeds.
type Score struct {
	Mixer  string  `json:"mixer"`
	Source string  `json:"source"`
	Init   string  `json:"init"`
	LR     float64 `json:"lr"`
	Width  int     `json:"width"`
	Steps  int     `json:"steps"`
	Tokens int     `json:"tokens"` // training tokens, steps·B·T
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
	e.Loss, e.LossSE = meanSE(losses)
	e.Perplexity, e.PerplexitySE = meanSE(e.Perplexities)
	return e
}

// meanSE is stats.MeanSE with the standard error 0 (JSON-encodable) for fewer than two values.
func meanSE(x []float64) (float64, float64) {
	m, se := stats.MeanSE(x)
	if len(x) < 2 {
		se = 0
	}
	return m, se
}

// Models returns the per-seed models of the point: those in memory, else opened from their run folders.
func (s *Score) Models() ([]*lm.Model, error) {
	if len(s.Runs) > 0 {
		return s.Runs, nil
	}
	if len(s.Dirs) == 0 {
		return nil, errors.Errorf("architecture: %s d%d s%d has no models in memory and no run folders", s.Mixer,
			s.Width, s.Steps)
	}
	for _, dir := range s.Dirs {
		m, err := lm.Open(dir)
		if err != nil {
			return nil, err
		}
		s.Runs = append(s.Runs, m)
	}
	return s.Runs, nil
}

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

// model returns the model of p with seed, trained or loaded; diverged reports a run stopped by a non-finite loss
// (workbench/fit), which is not an error here.
func (tr *trainer) model(p Point, seed uint64) (m *lm.Model, match lm.ParamMatch, diverged bool, err error) {
	mc, match, err := tr.cfg.ModelAt(p, seed)
	if err != nil {
		return nil, match, false, err
	}
	key := mc.Hash()
	if m, ok := tr.models[key]; ok {
		return m, match, false, nil
	}
	m, err = lm.LoadOrTrain(mc, run.With(tr.o))
	if err != nil {
		if strings.Contains(err.Error(), "not finite") && tr.o.Err() == nil {
			tr.o.Logf(Study, "%s (lr %g, init %s) diverged: %v", mc.Name(), p.LR, p.Init, err)
			return nil, match, true, nil
		}
		return nil, match, false, err
	}
	tr.models[key] = m
	return m, match, false, nil
}

// score trains (or loads) one point for every seed and aggregates it: the validation split, the validation curve
// and, with test (the comparisons; not the sweep), the test corpora.
func (tr *trainer) score(p Point, test bool) (Score, error) {
	c := tr.cfg
	s := Score{Mixer: p.Mixer, Source: p.Source, Init: p.Init, LR: p.LR, Width: p.Width, Steps: p.Steps,
		Tokens: p.Steps * c.Data.BatchSize * c.Data.SeqLen}
	var losses, ppls, tests, hold []float64
	testTokens, holdTokens := 0, 0
	trained := 0
	var curves [][]CurvePoint
	for _, seed := range c.Seeds {
		m, match, diverged, err := tr.model(p, seed)
		if err != nil {
			return s, err
		}
		s.Match = match
		if diverged {
			s.Diverged++
			continue
		}
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
		if !test || p.Source != lmdata.SourceSynthetic {
			continue
		}
		r, err := TestPerplexity(m, c.Test.Seed, c.Test.NumDocs, c.Test.Batches)
		if err != nil {
			return s, err
		}
		tests, testTokens = append(tests, r.Loss), r.Tokens
		if c.Test.HoldoutSeed != 0 {
			r, err := TestPerplexity(m, c.Test.HoldoutSeed, c.Test.NumDocs, c.Test.Batches)
			if err != nil {
				return s, err
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
	s.Loss, s.LossSE = meanSE(losses)
	s.Perplexity, s.PerplexitySE = meanSE(ppls)
	if len(tests) > 0 {
		s.Test = newEval(tests, testTokens)
	}
	if len(hold) > 0 {
		s.Holdout = newEval(hold, holdTokens)
	}
	s.Curve = meanCurve(curves)
	return s, nil
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
			m, se := meanSE(ls)
			out = append(out, CurvePoint{Tokens: p.Tokens, Loss: m, LossSE: se})
		}
	}
	return out
}

// Comparison is the equal-parameter comparison of the mixers on one corpus, under one init policy and one way of
// setting the learning rate.
type Comparison struct {
	Source string  `json:"source"`
	Init   string  `json:"init"`
	LRMode string  `json:"lr_mode"` // LRTuned or LRShared
	Width  int     `json:"width"`
	Steps  int     `json:"steps"`
	Scores []Score `json:"scores"` // one per mixer, in Config.Mixers order
	// Ranking is the order of the mixers by mean validation loss (lowest first) at every evaluation all of them
	// share, against training tokens.
	Ranking []RankPoint `json:"ranking,omitempty"`
	// Settled reports whether the ranking stopped moving: it is the same at every evaluation of the last half of
	// training (tokens ≥ half the final count) as at the end.
	Settled bool `json:"settled"`
}

// RankPoint is the mixers' order by mean validation loss after a number of training tokens.
type RankPoint struct {
	Tokens int      `json:"tokens"`
	Order  []string `json:"order"`
}

// Score returns the comparison's score of mixer, or nil.
func (c *Comparison) Score(mixer string) *Score {
	for i := range c.Scores {
		if c.Scores[i].Mixer == mixer {
			return &c.Scores[i]
		}
	}
	return nil
}

// Rank fills Ranking and Settled from the scores' curves.
func (c *Comparison) Rank() {
	c.Ranking, c.Settled = nil, false
	if len(c.Scores) == 0 {
		return
	}
	for _, p := range c.Scores[0].Curve {
		loss := map[string]float64{}
		for _, s := range c.Scores {
			if i := slices.IndexFunc(s.Curve, func(q CurvePoint) bool { return q.Tokens == p.Tokens }); i >= 0 {
				loss[s.Mixer] = s.Curve[i].Loss
			}
		}
		if len(loss) != len(c.Scores) {
			continue
		}
		var order []string
		for _, s := range c.Scores {
			order = append(order, s.Mixer)
		}
		slices.SortStableFunc(order, func(a, b string) int {
			switch {
			case loss[a] < loss[b]:
				return -1
			case loss[a] > loss[b]:
				return 1
			}
			return 0
		})
		c.Ranking = append(c.Ranking, RankPoint{Tokens: p.Tokens, Order: order})
	}
	if len(c.Ranking) == 0 {
		return
	}
	last := c.Ranking[len(c.Ranking)-1]
	c.Settled = true
	for _, r := range c.Ranking {
		if 2*r.Tokens >= last.Tokens && !slices.Equal(r.Order, last.Order) {
			c.Settled = false
		}
	}
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

// RunCompare trains (or loads) every mixer at model.width for train.steps on source, one run per seed, with the
// non-embedding parameters matched (match_params), under the primary init at train.lr (no search), and returns
// their validation and test perplexities.
func RunCompare(cfg Config, source string, opts ...run.Option) (*Comparison, error) {
	o := run.NewOptions(opts...)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return newTrainer(cfg, o).compare(source, cfg.primaryInit(), nil)
}

// String formats the comparison as a text table: parameters, learning rate, the validation perplexity and, when
// measured, the test and held-back perplexities (mean ± s.e. over seeds), then the ranking's settling.
func (c *Comparison) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, width %d, %d steps, init %s, lr %s\n", c.Source, c.Width, c.Steps, c.Init, c.LRMode)
	fmt.Fprintf(&b, "%-10s %10s %12s %8s %8s %16s %16s %16s %9s\n", "mixer", "params", "non-embed", "ffn", "lr",
		"val ppl", "test ppl", "holdout ppl", "train s")
	pm := func(m, se float64, n int) string {
		if n > 1 {
			return fmt.Sprintf("%.3f±%.3f", m, se)
		}
		return fmt.Sprintf("%.3f", m)
	}
	for _, s := range c.Scores {
		if s.Seeds == 0 {
			fmt.Fprintf(&b, "%-10s diverged at lr %g in every seed\n", s.Mixer, s.LR)
			continue
		}
		test, hold := "-", "-"
		if s.Test != nil {
			test = pm(s.Test.Perplexity, s.Test.PerplexitySE, s.Seeds)
		}
		if s.Holdout != nil {
			hold = pm(s.Holdout.Perplexity, s.Holdout.PerplexitySE, s.Seeds)
		}
		fmt.Fprintf(&b, "%-10s %10d %12d %8d %8g %16s %16s %16s %9.1f", s.Mixer, s.Params, s.Match.Achieved,
			s.Match.FFNWidth, s.LR, pm(s.Perplexity, s.PerplexitySE, s.Seeds), test, hold, s.TrainSeconds)
		if s.Diverged > 0 {
			fmt.Fprintf(&b, "  (%d seed(s) diverged)", s.Diverged)
		}
		b.WriteString("\n")
	}
	if n := len(c.Ranking); n > 0 {
		fmt.Fprintf(&b, "ranking by validation loss at %d tokens: %s; settled over the last half of training: %v\n",
			c.Ranking[n-1].Tokens, strings.Join(c.Ranking[n-1].Order, " < "), c.Settled)
	}
	return b.String()
}

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
				if s.Seeds > 0 && (sw.Scores[sw.Best].Seeds == 0 || s.Loss < sw.Scores[sw.Best].Loss) {
					sw.Best = len(sw.Scores) - 1
				}
			}
		}
	}
	return sw, nil
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
	var out []*lm.Model
	for _, mixer := range s.Mixers() {
		i := slices.IndexFunc(s.Scores, func(x Score) bool {
			return x.Mixer == mixer && x.Width == s.Widths[len(s.Widths)-1] && x.Steps == s.Steps[len(s.Steps)-1]
		})
		if i < 0 || s.Scores[i].Seeds == 0 {
			continue
		}
		ms, err := s.Scores[i].Models()
		if err != nil {
			return nil, err
		}
		out = append(out, ms[0])
	}
	return out, nil
}

// BestModel returns the first seed's model of the point with the lowest mean validation loss.
func (s *Sweep) BestModel() (*lm.Model, error) {
	ms, err := s.Scores[s.Best].Models()
	if err != nil {
		return nil, err
	}
	return ms[0], nil
}

// Result is what the study measured.
type Result struct {
	Provenance *run.Provenance `json:"provenance"`
	// Tuning is the learning-rate search, one entry per (init, mixer); empty without lr_grid.
	Tuning []Tuning `json:"tuning,omitempty"`
	// Compare holds the comparisons: for each corpus, one per init policy (the primary first) at the searched
	// learning rates (LRTuned; LRShared without a search), then, with shared_lr, the primary init at train.lr on
	// data.source (LRShared).
	Compare    []*Comparison   `json:"compare"`
	Skipped    []string        `json:"skipped,omitempty"` // corpora left out, with the reason
	Sweep      *Sweep          `json:"sweep,omitempty"`   // nil when the preset has no sweep
	Generation *Generation     `json:"generation"`
	Classify   *ClassifyReport `json:"classify"`
}

// LoadOrRun returns the result stored for cfg under run.Out, or runs the study.
func LoadOrRun(cfg Config, opts ...run.Option) (*Result, error) {
	return run.LoadOrRun(Study, cfg, opts, runStudy)
}

// Run runs the whole study even when a result is stored. Every model is stored under run.Out/models, so a second
// Run loads instead of training.
func Run(cfg Config, opts ...run.Option) (*Result, error) {
	return run.Recompute(Study, cfg, opts, runStudy)
}

// Notebook returns what notebook 10 shows at the preset $PROTOLAB_PRESET names (run.PresetName): at the Small
// preset run.Showcase's choice, the stored protocol run (`protolab run architecture --preset small`) when there is
// one, else the Quick run (loaded, or run: minutes); at another preset, LoadOrRun of that preset.
func Notebook(opts ...run.Option) (*Result, error) {
	return run.Notebook(Study, Preset, Small, Quick, opts, runStudy)
}

// runStudy runs the study: the learning-rate search on data.source (with lr_grid), the comparisons on every corpus
// of cfg.Corpora under every init (WordNet is skipped, with the reason recorded, when its database is missing), the
// shared-rate comparison (shared_lr), the sweep, then generation and classification with each mixer's first-seed
// model of the primary comparison.
func runStudy(cfg Config, prov *run.Provenance, o run.Options) (*Result, error) {
	prov.Seed = cfg.Seeds[0]
	res := &Result{Provenance: prov}
	tr := newTrainer(cfg, o)
	lrs := map[string]map[string]float64{} // init → mixer → learning rate; empty without a search
	if len(cfg.LRGrid) > 0 {
		if err := prov.Time("tune", func() (err error) {
			res.Tuning, err = tr.tune()
			return err
		}); err != nil {
			return nil, err
		}
		for _, t := range res.Tuning {
			if lrs[t.Init] == nil {
				lrs[t.Init] = map[string]float64{}
			}
			lrs[t.Init][t.Mixer] = t.Chosen
		}
	}
	for _, src := range cfg.Corpora {
		if src == lmdata.SourceWordNet {
			if ok, why := WordNetAvailable(); !ok {
				res.Skipped = append(res.Skipped, src+": "+why)
				continue
			}
		}
		for _, init := range cfg.Inits {
			if err := prov.Time("compare", func() error {
				c, err := tr.compare(src, init, lrs[init])
				res.Compare = append(res.Compare, c)
				return err
			}); err != nil {
				return nil, err
			}
		}
	}
	if cfg.SharedLR {
		if err := prov.Time("compare", func() error {
			c, err := tr.compare(cfg.Data.Source, cfg.primaryInit(), nil)
			res.Compare = append(res.Compare, c)
			return err
		}); err != nil {
			return nil, err
		}
	}
	if len(cfg.Sweep.Widths) > 0 {
		if err := prov.Time("sweep", func() (err error) {
			res.Sweep, err = tr.sweep()
			return err
		}); err != nil {
			return nil, err
		}
	}
	tops, err := res.TopModels()
	if err != nil {
		return nil, err
	}
	if len(tops) == 0 {
		return res, nil // every run of the primary comparison diverged
	}
	judge, err := res.BestModel()
	if err != nil {
		return nil, err
	}
	if err := prov.Time("generate", func() (err error) {
		res.Generation, err = generate(cfg.Generate, judge, tops)
		return err
	}); err != nil {
		return nil, err
	}
	err = prov.Time("classify", func() (err error) {
		res.Classify, err = RunClassify(cfg, tops, run.With(o))
		return err
	})
	return res, err
}

// Comparison returns the first comparison on corpus source (the primary init's), or nil when the study skipped or
// left out that corpus.
func (r *Result) Comparison(source string) *Comparison {
	for _, c := range r.Compare {
		if c.Source == source {
			return c
		}
	}
	return nil
}

// Find returns the comparison on source under init with the given learning-rate mode, or nil.
func (r *Result) Find(source, init, lrMode string) *Comparison {
	for _, c := range r.Compare {
		if c.Source == source && c.Init == init && c.LRMode == lrMode {
			return c
		}
	}
	return nil
}

// primaryComparison is the first comparison of the result: the primary init on the first corpus.
func (r *Result) primaryComparison() *Comparison {
	if len(r.Compare) == 0 {
		return nil
	}
	return r.Compare[0]
}

// TopModels returns, for each mixer, the first seed's model of the primary comparison (the models generation and
// classification use), opened from their run folders when the result was loaded.
func (r *Result) TopModels() ([]*lm.Model, error) {
	c := r.primaryComparison()
	if c == nil {
		return nil, nil
	}
	var out []*lm.Model
	for i := range c.Scores {
		if c.Scores[i].Seeds == 0 {
			continue
		}
		ms, err := c.Scores[i].Models()
		if err != nil {
			return nil, err
		}
		out = append(out, ms[0])
	}
	return out, nil
}

// BestModel returns the first seed's model of the primary comparison's point with the lowest mean validation loss:
// the judge of the generation measures.
func (r *Result) BestModel() (*lm.Model, error) {
	c := r.primaryComparison()
	best := -1
	for i, s := range c.Scores {
		if s.Seeds > 0 && (best < 0 || s.Loss < c.Scores[best].Loss) {
			best = i
		}
	}
	if best < 0 {
		return nil, errors.New("architecture: every run of the primary comparison diverged")
	}
	ms, err := c.Scores[best].Models()
	if err != nil {
		return nil, err
	}
	return ms[0], nil
}

// String is the study's report: the learning-rate search, each comparison, the best point of the sweep, and the
// skipped corpora.
func (r *Result) String() string {
	var b strings.Builder
	for _, t := range r.Tuning {
		b.WriteString(t.String())
	}
	if len(r.Tuning) > 0 {
		b.WriteString("\n")
	}
	for _, c := range r.Compare {
		b.WriteString(c.String())
		b.WriteString("\n")
	}
	if r.Sweep != nil && len(r.Sweep.Scores) > 0 {
		s := r.Sweep.Scores[r.Sweep.Best]
		fmt.Fprintf(&b, "sweep: best %s at width %d, %d steps: validation perplexity %.3f\n", s.Mixer, s.Width,
			s.Steps, s.Perplexity)
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(&b, "skipped %s\n", s)
	}
	return b.String()
}
