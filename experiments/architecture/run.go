package architecture

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/classify"
	"github.com/protolab/protolab/models/generation"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/data/wordnet"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
)

// Study is the name under which results are stored (run.Out/<Study>/) and the CLI runs the study.
const Study = "architecture"

// Values of Comparison.LRMode.
const (
	LRTuned  = "tuned"  // each mixer at the learning rate the search chose for it (Config.LRGrid)
	LRShared = "shared" // every mixer at train.lr (docs/spec/protot.md §3's recipe)
)

// Result is what the study measured.
type Result struct {
	Provenance *run.Provenance `json:"provenance"`
	// Tuning is the learning-rate search, one entry per (init, mixer); empty without lr_grid.
	Tuning []Tuning `json:"tuning,omitempty"`
	// Compare holds the comparisons: for each corpus, one per init policy (the primary first) at the searched
	// learning rates (LRTuned; LRShared without a search), then, with shared_lr, the primary init at train.lr on
	// data.source (LRShared).
	Compare    []*Comparison      `json:"compare"`
	Skipped    []string           `json:"skipped,omitempty"` // corpora left out, with the reason
	Sweep      *Sweep             `json:"sweep,omitempty"`   // nil when the preset has no sweep
	Generation *generation.Result `json:"generation"`
	Classify   *classify.Report   `json:"classify"`
}

// Runs is the study's entry points (run.Entry): Runs.LoadOrRun(cfg) returns the result stored for cfg under
// run.Out or runs the study; Runs.Run(cfg) runs it even when a result is stored (the models it trains are loaded
// from run.Out/models when trained before); Runs.Notebook() and Runs.NotebookConfig() are what a notebook shows
// and starts its settings from at $PROTOLAB_PRESET.
var Runs = run.Entry[Config, *Result]{Study: Study, Preset: Preset, Small: Small, Quick: Quick, Compute: runStudy}

// runStudy runs the study: on every corpus of cfg.Corpora (WordNet is skipped, with the reason recorded, when its
// database is missing) the learning-rate search (with lr_grid), the comparison under every init and the shared-rate
// comparison (shared_lr); then the sweep, and generation and classification with each mixer's first-seed model of
// the primary comparison (the first corpus's, primary init).
func runStudy(cfg Config, prov *run.Provenance, o run.Options) (*Result, error) {
	prov.Seed = cfg.Seeds[0]
	res := &Result{Provenance: prov}
	tr := newTrainer(cfg, o)
	for _, src := range cfg.Corpora {
		if src == lmdata.SourceWordNet {
			if ok, why := WordNetAvailable(); !ok {
				res.Skipped = append(res.Skipped, src+": "+why)
				continue
			}
		}
		if err := tr.corpus(src, res, prov); err != nil {
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
		res.Generation, err = generation.Measure(cfg.Generate, judge, tops)
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

// corpus runs the search (with lr_grid), the comparison under every init and the shared-rate comparison on source,
// appending them to res.
func (tr *trainer) corpus(source string, res *Result, prov *run.Provenance) error {
	cfg := tr.cfg
	lrs := map[string]map[string]float64{} // init → mixer → learning rate; empty without a search
	if len(cfg.LRGrid) > 0 {
		if err := prov.Time("tune", func() error {
			ts, err := tr.tune(source)
			res.Tuning = append(res.Tuning, ts...)
			for _, t := range ts {
				if lrs[t.Init] == nil {
					lrs[t.Init] = map[string]float64{}
				}
				lrs[t.Init][t.Mixer] = t.Chosen
			}
			return err
		}); err != nil {
			return err
		}
	}
	for _, init := range cfg.Inits {
		if err := prov.Time("compare", func() error {
			c, err := tr.compare(source, init, lrs[init])
			res.Compare = append(res.Compare, c)
			return err
		}); err != nil {
			return err
		}
	}
	if !cfg.SharedLR {
		return nil
	}
	return prov.Time("compare", func() error {
		c, err := tr.compare(source, cfg.primaryInit(), nil)
		res.Compare = append(res.Compare, c)
		return err
	})
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
	scores := make([]*Score, len(c.Scores))
	for i := range c.Scores {
		scores[i] = &c.Scores[i]
	}
	return firstModels(scores)
}

// BestModel returns the first seed's model of the primary comparison's point with the lowest mean validation loss:
// the judge of the generation measures.
func (r *Result) BestModel() (*lm.Model, error) {
	c := r.primaryComparison()
	best := lowest(c.Scores)
	if best < 0 {
		return nil, errors.New("architecture: every run of the primary comparison diverged")
	}
	return c.Scores[best].firstModel()
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

// RunGeneration samples from each mixer's top sweep model (largest width and steps, first seed) and measures the
// samples under the best model of the sweep (generation.Measure with cfg.Generate). The models are opened from
// their run folders when sw was loaded from a stored result.
func RunGeneration(cfg Config, sw *Sweep) (*generation.Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	tops, err := sw.TopModels()
	if err != nil {
		return nil, err
	}
	if len(tops) == 0 {
		return nil, errors.New("architecture.RunGeneration: the sweep has no runs")
	}
	best, err := sw.BestModel()
	if err != nil {
		return nil, err
	}
	return generation.Measure(cfg.Generate, best, tops)
}

// RunClassify fine-tunes each of the given language models (e.g. Sweep.TopModels) on each synthetic task of
// cfg.Classify (classify.FineTuneAll): sentences of a corpus generated with classify.synthetic (documents unseen in
// pretraining when its seed differs from data.synthetic.seed), split by document with the first seed.
func RunClassify(cfg Config, models []*lm.Model, opts ...run.Option) (*classify.Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	corpus, err := data.Synthetic(cfg.Classify.Synthetic)
	if err != nil {
		return nil, err
	}
	tasks, err := classify.SentenceTasks(corpus, cfg.Classify.Tasks, cfg.Classify.TestFraction, cfg.Seeds[0])
	if err != nil {
		return nil, err
	}
	return classify.FineTuneAll(models, tasks, cfg.Classify, opts...)
}

// WordNetAvailable reports whether the "wordnet" data source can be loaded and, if not, why. When neither
// $PROTOLAB_WORDNET nor the current folder's module finds the database, it also looks under $PROTOLAB_ROOT (the
// repository a notebook runs from) and, when found there, sets $PROTOLAB_WORDNET so the data source uses it.
func WordNetAvailable() (bool, string) {
	_, err := wordnet.Dir()
	if err == nil {
		return true, ""
	}
	if root := os.Getenv("PROTOLAB_ROOT"); root != "" && os.Getenv(wordnet.EnvDir) == "" {
		dir := filepath.Join(root, wordnet.DefaultSubdir)
		if _, statErr := os.Stat(filepath.Join(dir, "data.noun")); statErr == nil {
			if os.Setenv(wordnet.EnvDir, dir) == nil {
				return true, ""
			}
		}
	}
	return false, err.Error() + " (`make wordnet` installs it; `make run` and `make test` run it)"
}
