package attribution

import (
	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/influence"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/models/prism"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
)

// Study is the name under which results are stored (run.Out/<Study>/) and the CLI runs the study.
const Study = "attribution"

// Runs is the study's entry points (run.Entry): Runs.LoadOrRun(cfg) returns the result stored for cfg under
// run.Out or runs the study; Runs.Run(cfg) runs it even when a result is stored (the models it trains are loaded
// from run.Out/models when trained before); Runs.Notebook() and Runs.NotebookConfig() are what a notebook shows
// and starts its settings from at $PROTOLAB_PRESET.
var Runs = run.Entry[Config, *Result]{Study: Study, Preset: Preset, Small: Small, Quick: Quick, Compute: runStudy}

// modelConfig returns the config of the i-th attributed model on the data source: cfg's with the seed cfg.Seed + i,
// data.source set to source, and on the Brown corpus data.read.max_docs set to attribution.brown_train_docs when it
// is > 0.
func modelConfig(cfg Config, source string, i int) lm.Config {
	c := cfg.Config
	c.Seed += uint64(i)
	c.Data.Source = source
	if source == lmdata.SourceBrown && cfg.Attribution.BrownTrainDocs > 0 {
		c.Data.Read.MaxDocs = cfg.Attribution.BrownTrainDocs
	}
	return c
}

// runStudy runs the study on every corpus of cfg.sources() in turn: it trains (or loads, from run.Out/models) the
// Settings.ModelSeeds PRISM models of the corpus, runs AttributeModel with cfg.Attribution on each and summarises
// them. The attribution cache of a model (prism.NewAttributor) is kept in its run folder and shared with the CLI's
// queries (`protolab attribute`).
func runStudy(cfg Config, prov *run.Provenance, o run.Options) (*Result, error) {
	prov.Seed = cfg.Seed
	res := &Result{Config: cfg.Attribution}
	for _, source := range cfg.sources() {
		var models []ModelResult
		if err := prov.Time(source, func() error {
			for i := 0; i < cfg.Attribution.ModelSeeds; i++ {
				m, err := lm.LoadOrTrain(modelConfig(cfg, source, i), run.With(o))
				if err != nil {
					return err
				}
				mr, err := AttributeModel(m, cfg.Attribution, run.With(o))
				if err != nil {
					return err
				}
				models = append(models, *mr)
			}
			return nil
		}); err != nil {
			return nil, err
		}
		res.Models = append(res.Models, models...)
		res.Summary = append(res.Summary, summarise(models, cfg.Attribution)...)
	}
	first := res.Models[0]
	res.Cost = []prism.CostModel{
		prism.NewCostModel("this run", shapeOf(cfg, first.NumSeqs, first.Conditions.CGIterations)),
		prism.NewCostModel("paper", shapeOf(Paper(), Paper().Attribution.TrainSeqs, first.Conditions.CGIterations)),
	}
	res.Provenance = prov
	return res, nil
}

// shapeOf returns the cost shape of cfg's model with a corpus of numSeqs sequences and cgIters CG iterations.
func shapeOf(cfg Config, numSeqs int, cgIters float64) prism.CostShape {
	a := cfg.Attribution
	return prism.NewCostShape(cfg.Config, a.AttributorConfig, a.PromptTokens, numSeqs, cgIters)
}

// AttributeModel runs the attribution study s on one trained PRISM model: every method of prism.Methods on the
// validation queries, their latencies and memory, Overlap@k and Spearman against the reference, conditioning, and
// (LDSSubsets > 0) the LDS from retrained models. Its scores stay available through ModelResult.Scores.
func AttributeModel(m *lm.Model, s Settings, opts ...run.Option) (*ModelResult, error) {
	o := run.NewOptions(opts...)
	if err := s.Validate(m.Config.Data.SeqLen); err != nil {
		return nil, errors.WithMessage(err, "attribution")
	}
	at, err := prism.NewAttributor(m, s.AttributorConfig)
	if err != nil {
		return nil, err
	}
	qs, err := at.ValidationQueries(s.QueryOffset, s.Queries, s.PromptTokens)
	if err != nil {
		return nil, err
	}
	pc := m.Config.Prism
	res := &ModelResult{Seed: m.Config.Seed, Source: m.Config.Data.Source, Run: m.Config.Name(),
		NumSeqs: len(at.Corpus), NumTokens: at.NumTokens, NumQueries: len(qs), K: pc.NumPrototypes,
		D: m.Config.Model.Width, TopK: pc.TopK, Timings: at.Timings, scores: map[string][][]float64{}}
	if m.Result != nil {
		res.ValPerplexity = m.Result.Val.Perplexity
	}
	o.Logf(Study, "%s model seed %d: %d corpus sequences (%d tokens), %d queries, cache %s", res.Source, res.Seed,
		res.NumSeqs, res.NumTokens, len(qs), map[bool]string{true: "loaded", false: "built"}[at.Cached])
	cached, err := at.RunCached(qs)
	if err != nil {
		return nil, err
	}
	res.add(cached...)
	p := res.Method(prism.MethodPrism)
	o.Logf(Study, "cached method %.3g ms per query, %.3g MB", p.Latency.Median, float64(p.Bytes)/1e6)
	if err := o.Err(); err != nil {
		return nil, err
	}
	ref, err := at.RunReference(qs)
	if err != nil {
		return nil, err
	}
	res.add(ref)
	solve := "direct solve"
	if at.Curvature.Direct == nil {
		solve = "CG"
	}
	o.Logf(Study, "reference %.3g ms per query (%s)", res.Method(prism.MethodReference).Latency.Median, solve)
	budget := p.Bytes
	if s.wantBlocks() {
		if err := o.Err(); err != nil {
			return nil, err
		}
		ek, gd, err := at.RunBlockEKFAC(qs, budget, s.TimedQueries)
		if err != nil {
			return nil, err
		}
		res.Layers = at.BlockLayers()
		res.add(ek, gd)
		e := res.Method(prism.MethodEKFAC)
		o.Logf(Study, "EK-FAC (backbone, %d layers) %.3g ms per query at %.3g MB (%d of %d training gradients "+
			"stored)", len(res.Layers), e.Latency.Median, float64(e.Bytes)/1e6, e.StoredSeqs, res.NumSeqs)
	}
	if s.wantBank() {
		if err := o.Err(); err != nil {
			return nil, err
		}
		bank, err := at.RunBankEKFAC(qs, budget, s.TimedQueries)
		if err != nil {
			return nil, err
		}
		res.add(bank)
	}
	if res.Conditions, err = at.Conditioning(qs, s.TimedQueries); err != nil {
		return nil, err
	}
	if s.LDSSubsets > 0 {
		r, err := at.Retrain(qs, s.LDSSubsets, s.LDSFraction, run.With(o))
		if err != nil {
			return nil, err
		}
		if err := lds(res, r, s); err != nil {
			return nil, err
		}
	}
	compare(res, s)
	return res, nil
}

// add records methods' results and their scores.
func (r *ModelResult) add(runs ...prism.MethodRun) {
	for _, mr := range runs {
		r.Methods = append(r.Methods, MethodResult{Name: mr.Name, FitSeconds: mr.FitSeconds,
			Latency: latencyOf(mr.Wall, mr.CPU), AllQueriesSeconds: mr.AllQueriesSeconds, Bytes: mr.Bytes,
			StoredSeqs: mr.StoredSeqs})
		r.scores[mr.Name] = mr.Scores
	}
}

// lds fills every method's LDS (doc.go) from the retrained subsets r, with its bootstrap interval over queries and
// subsets, and keeps the predictions for the summary over models.
func lds(res *ModelResult, r *prism.Retrained, s Settings) error {
	d := &ldsData{loss: r.Losses, pred: map[string][][]float64{}}
	var names []string
	for _, mr := range res.Methods {
		sc := res.scores[mr.Name]
		pred := make([][]float64, len(sc))
		for q := range sc {
			pred[q] = make([]float64, len(r.Subsets))
			for m, sub := range r.Subsets {
				for _, seq := range sub {
					pred[q][m] += sc[q][seq]
				}
			}
		}
		d.pred[mr.Name] = pred
		names = append(names, mr.Name)
	}
	res.lds, res.LDSModels = d, len(r.Subsets)
	intervals, _ := ldsIntervals([]*ldsData{d}, names, "", s.Bootstrap, s.Seed)
	for i := range res.Methods {
		mr := &res.Methods[i]
		mean, _, err := influence.LDS(res.scores[mr.Name], r.Subsets, r.Losses)
		if err != nil {
			return err
		}
		if iv, ok := intervals[mr.Name]; ok && finitePtr(mean) != nil {
			iv.Mean = mean
			mr.LDS = &iv
		}
	}
	return nil
}
