package architecture

import (
	"fmt"
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

// Score is one point of the study (a mixer on a corpus at a width and a number of steps), over the seeds.
type Score struct {
	Mixer  string `json:"mixer"`
	Source string `json:"source"`
	Width  int    `json:"width"`
	Steps  int    `json:"steps"`
	Tokens int    `json:"tokens"` // training tokens, steps·B·T
	// Params is the total trainable parameter count; Match reports the non-embedding count and its target.
	Params int           `json:"params"`
	Match  lm.ParamMatch `json:"match"`
	// Loss and Perplexity are the means over seeds of the final validation loss (nats/token) and perplexity;
	// the SE fields are their standard errors, sd/√n (0 with one seed).
	Loss         float64  `json:"loss"`
	LossSE       float64  `json:"loss_se"`
	Perplexity   float64  `json:"perplexity"`
	PerplexitySE float64  `json:"perplexity_se"`
	Seeds        int      `json:"seeds"`
	TrainSeconds float64  `json:"train_seconds"` // mean training wall time per seed, as each run recorded it
	Dirs         []string `json:"dirs,omitempty"`
	// Runs are the per-seed models, in Config.Seeds order, when this process trained or loaded them (not in a
	// stored result: Models opens them from Dirs).
	Runs []*lm.Model `json:"-"`
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

// score trains (or loads) one point for every seed and aggregates it.
func (c Config) score(mixer, source string, w, steps int, o run.Options) (Score, error) {
	s := Score{Mixer: mixer, Source: source, Width: w, Steps: steps, Tokens: steps * c.Data.BatchSize * c.Data.SeqLen,
		Seeds: len(c.Seeds)}
	var losses, ppls []float64
	trained := 0
	for _, seed := range c.Seeds {
		mc, match, err := c.ModelFor(mixer, source, w, steps, seed)
		if err != nil {
			return s, err
		}
		m, err := lm.LoadOrTrain(mc, run.With(o))
		if err != nil {
			return s, err
		}
		res := m.Result
		s.Runs = append(s.Runs, m)
		if m.Dir != "" {
			s.Dirs = append(s.Dirs, m.Dir)
		}
		s.Params, s.Match = res.NumParams, match
		losses = append(losses, res.Val.Loss)
		ppls = append(ppls, res.Val.Perplexity)
		if t := res.TrainSeconds(); t > 0 {
			s.TrainSeconds += t
			trained++
		}
	}
	if trained > 0 {
		s.TrainSeconds /= float64(trained)
	}
	s.Loss, s.LossSE = stats.MeanSE(losses)
	s.Perplexity, s.PerplexitySE = stats.MeanSE(ppls)
	if len(losses) < 2 { // one seed has no standard error; 0 keeps the result JSON-encodable
		s.LossSE, s.PerplexitySE = 0, 0
	}
	return s, nil
}

// Comparison is the equal-parameter comparison of the mixers on one corpus.
type Comparison struct {
	Source string  `json:"source"`
	Width  int     `json:"width"`
	Steps  int     `json:"steps"`
	Scores []Score `json:"scores"` // one per mixer, in Config.Mixers order
}

// RunCompare trains (or loads) every mixer at model.width for train.steps on source, one run per seed, with the
// non-embedding parameters matched (match_params), and returns their validation perplexities.
func RunCompare(cfg Config, source string, opts ...run.Option) (*Comparison, error) {
	o := run.NewOptions(opts...)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cmp := &Comparison{Source: source, Width: cfg.Model.Width, Steps: cfg.Train.Steps}
	for _, m := range cfg.Mixers {
		s, err := cfg.score(m, source, cfg.Model.Width, cfg.Train.Steps, o)
		if err != nil {
			return nil, err
		}
		cmp.Scores = append(cmp.Scores, s)
	}
	return cmp, nil
}

// String formats the comparison as a text table.
func (c *Comparison) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, width %d, %d steps\n", c.Source, c.Width, c.Steps)
	fmt.Fprintf(&b, "%-10s %10s %12s %8s %12s %9s\n", "mixer", "params", "non-embed", "ffn", "perplexity", "train s")
	for _, s := range c.Scores {
		ppl := fmt.Sprintf("%.3f", s.Perplexity)
		if s.Seeds > 1 {
			ppl += fmt.Sprintf("±%.3f", s.PerplexitySE)
		}
		fmt.Fprintf(&b, "%-10s %10d %12d %8d %12s %9.1f\n", s.Mixer, s.Params, s.Match.Achieved, s.Match.FFNWidth, ppl,
			s.TrainSeconds)
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

// RunSweep trains (or loads) every mixer at every sweep width and step count on data.source, one run per seed.
// Points equal to RunCompare's (same width and steps) are the same runs, so they are trained once.
func RunSweep(cfg Config, opts ...run.Option) (*Sweep, error) {
	o := run.NewOptions(opts...)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	sw := &Sweep{Source: cfg.Data.Source, Widths: cfg.Sweep.Widths, Steps: cfg.Sweep.Steps}
	for _, m := range cfg.Mixers {
		for _, w := range cfg.Sweep.Widths {
			for _, st := range cfg.Sweep.Steps {
				s, err := cfg.score(m, cfg.Data.Source, w, st, o)
				if err != nil {
					return nil, err
				}
				sw.Scores = append(sw.Scores, s)
				if s.Loss < sw.Scores[sw.Best].Loss {
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

// TopModels returns, for each mixer, the first seed's model at the largest width and step count: the models whose
// samples and fine-tuning the study compares (opened from their run folders when the sweep was loaded).
func (s *Sweep) TopModels() ([]*lm.Model, error) {
	var out []*lm.Model
	for _, mixer := range s.Mixers() {
		i := slices.IndexFunc(s.Scores, func(x Score) bool {
			return x.Mixer == mixer && x.Width == s.Widths[len(s.Widths)-1] && x.Steps == s.Steps[len(s.Steps)-1]
		})
		if i < 0 {
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
	Compare    []*Comparison   `json:"compare"`
	Skipped    []string        `json:"skipped,omitempty"` // corpora left out, with the reason
	Sweep      *Sweep          `json:"sweep"`
	Generation *Generation     `json:"generation"`
	Classify   *ClassifyReport `json:"classify"`
}

// LoadOrRun returns the result stored for cfg under run.Out, or runs the study.
func LoadOrRun(cfg Config, opts ...run.Option) (*Result, error) {
	return run.LoadOrRun(Study, cfg, opts, compute)
}

// Run runs the whole study even when a result is stored: the equal-parameter comparison on every corpus of
// cfg.Corpora (WordNet is skipped, with the reason recorded, when its database is missing), the sweep, generation
// and classification. Every model is stored under run.Out/models, so a second Run loads instead of training.
func Run(cfg Config, opts ...run.Option) (*Result, error) {
	return run.Recompute(Study, cfg, opts, compute)
}

func compute(cfg Config, prov *run.Provenance, o run.Options) (*Result, error) {
	prov.Seed = cfg.Seeds[0]
	res := &Result{Provenance: prov}
	for _, src := range cfg.Corpora {
		if src == lmdata.SourceWordNet {
			if ok, why := WordNetAvailable(); !ok {
				res.Skipped = append(res.Skipped, src+": "+why)
				continue
			}
		}
		var c *Comparison
		if err := prov.Time("compare", func() (err error) {
			c, err = RunCompare(cfg, src, run.With(o))
			return err
		}); err != nil {
			return nil, err
		}
		res.Compare = append(res.Compare, c)
	}
	if err := prov.Time("sweep", func() (err error) {
		res.Sweep, err = RunSweep(cfg, run.With(o))
		return err
	}); err != nil {
		return nil, err
	}
	if err := prov.Time("generate", func() (err error) {
		res.Generation, err = RunGeneration(cfg, res.Sweep)
		return err
	}); err != nil {
		return nil, err
	}
	err := prov.Time("classify", func() error {
		tops, err := res.Sweep.TopModels()
		if err != nil {
			return err
		}
		res.Classify, err = RunClassify(cfg, tops, run.With(o))
		return err
	})
	return res, err
}

// String is the study's report: each comparison, the best point of the sweep, and the skipped corpora.
func (r *Result) String() string {
	var b strings.Builder
	for _, c := range r.Compare {
		b.WriteString(c.String())
		b.WriteString("\n")
	}
	if r.Sweep != nil && len(r.Sweep.Scores) > 0 {
		s := r.Sweep.Scores[r.Sweep.Best]
		fmt.Fprintf(&b, "sweep: best %s at width %d, %d steps: perplexity %.3f\n", s.Mixer, s.Width, s.Steps,
			s.Perplexity)
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(&b, "skipped %s\n", s)
	}
	return b.String()
}

// Comparison returns the equal-parameter comparison on corpus source, or nil when the study skipped or left out
// that corpus.
func (r *Result) Comparison(source string) *Comparison {
	for _, c := range r.Compare {
		if c.Source == source {
			return c
		}
	}
	return nil
}
