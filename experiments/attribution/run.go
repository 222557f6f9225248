package attribution

import (
	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/models/influence"
	"github.com/protolab/protolab/workbench/run"
)

// Study is the name under which results are stored (run.Out/<Study>/) and the CLI runs the study.
const Study = "attribution"

// LoadOrRun returns the result stored for cfg under run.Out, or runs the study: it trains (or loads, from
// run.Out/models) the Settings.ModelSeeds PRISM models of cfg and runs AttributeModel with cfg.Attribution on each.
// The attribution cache of a model (NewAttributor) is kept in its run folder and shared with Attributor queries.
func LoadOrRun(cfg Config, opts ...run.Option) (*Result, error) {
	return run.LoadOrRun(Study, cfg, opts, runStudy)
}

// Run runs the study even when a result is stored (the models and their attribution caches are loaded when
// present).
func Run(cfg Config, opts ...run.Option) (*Result, error) {
	return run.Recompute(Study, cfg, opts, runStudy)
}

// Notebook returns what a notebook shows of the study at the preset named by $PROTOLAB_PRESET: at "small", the stored
// protocol run (Small) when there is one, else the quick run (Quick, computed or loaded); at the other presets,
// LoadOrRun of that preset.
func Notebook(opts ...run.Option) (*Result, error) {
	return run.Notebook(Study, Preset, Small, Quick, opts, runStudy)
}

// modelConfig returns the config of the i-th attributed model: cfg's with the seed cfg.Seed + i.
func modelConfig(cfg Config, i int) lm.Config {
	c := cfg.Config
	c.Seed += uint64(i)
	return c
}

func runStudy(cfg Config, prov *run.Provenance, o run.Options) (*Result, error) {
	prov.Seed = cfg.Seed
	res := &Result{Config: cfg.Attribution}
	for i := 0; i < cfg.Attribution.ModelSeeds; i++ {
		m, err := lm.LoadOrTrain(modelConfig(cfg, i), run.With(o))
		if err != nil {
			return nil, err
		}
		mr, err := AttributeModel(m, cfg.Attribution, run.With(o))
		if err != nil {
			return nil, err
		}
		res.Models = append(res.Models, *mr)
	}
	res.Summary = summarise(res.Models, cfg.Attribution)
	first := res.Models[0]
	res.Cost = []CostModel{
		costModel("this run", shapeOf(cfg, first.NumSeqs, first.Conditions.CGIterations)),
		costModel("paper", shapeOf(Paper(), Paper().Attribution.TrainSeqs, first.Conditions.CGIterations)),
	}
	res.Provenance = prov
	return res, nil
}

// AttributeModel runs the attribution study s on one trained PRISM model: every method of Methods on the validation
// queries, their latencies and memory, Overlap@k and Spearman against the reference, conditioning, and
// (LDSSubsets > 0) the LDS from retrained models. Its scores stay available through ModelResult.Scores.
func AttributeModel(m *lm.Model, s Settings, opts ...run.Option) (*ModelResult, error) {
	o := run.NewOptions(opts...)
	at, err := NewAttributor(m, s)
	if err != nil {
		return nil, err
	}
	qs, err := at.validationQueries()
	if err != nil {
		return nil, err
	}
	res := &ModelResult{Seed: m.Config.Seed, Run: m.Config.Name(), NumSeqs: len(at.Corpus), NumTokens: at.NumTokens,
		NumQueries: len(qs), K: at.pc.NumPrototypes, D: at.mc.Width, TopK: at.pc.TopK, Timings: at.Timings,
		scores: map[string][][]float64{}}
	if m.Result != nil {
		res.ValPerplexity = m.Result.Val.Perplexity
	}
	o.Logf(Study, "model seed %d: %d corpus sequences (%d tokens), %d queries, cache %s", res.Seed, res.NumSeqs,
		res.NumTokens, len(qs), map[bool]string{true: "loaded", false: "built"}[at.Cached])
	if err := at.runCached(res, qs); err != nil {
		return nil, err
	}
	p := res.Method(MethodPrism)
	o.Logf(Study, "cached method %.3g ms per query, %.3g MB", p.Latency.Median, float64(p.Bytes)/1e6)
	if err := o.Err(); err != nil {
		return nil, err
	}
	if err := at.runReference(res, qs); err != nil {
		return nil, err
	}
	solve := "direct solve"
	if at.Curvature.Direct == nil {
		solve = "CG"
	}
	o.Logf(Study, "reference %.3g ms per query (%s)", res.Method(MethodReference).Latency.Median, solve)
	budget := p.Bytes
	if s.wantBlocks() {
		if err := o.Err(); err != nil {
			return nil, err
		}
		if err := at.runBlockEKFAC(res, qs, budget); err != nil {
			return nil, err
		}
		ek := res.Method(MethodEKFAC)
		o.Logf(Study, "EK-FAC (backbone, %d layers, %d parameters) %.3g ms per query at %.3g MB (%d of %d training "+
			"gradients stored)", len(res.Layers), at.ekfac.f.NumParams(), ek.Latency.Median, float64(ek.Bytes)/1e6,
			ek.StoredSeqs, res.NumSeqs)
	}
	if s.wantBank() {
		if err := o.Err(); err != nil {
			return nil, err
		}
		if err := at.runBankEKFAC(res, qs, budget); err != nil {
			return nil, err
		}
	}
	res.Conditions = conditioning(at)
	if err := at.countCG(&res.Conditions, qs); err != nil {
		return nil, err
	}
	if s.LDSSubsets > 0 {
		if err := at.lds(res, qs, o); err != nil {
			return nil, err
		}
	}
	compare(res, s)
	return res, nil
}

// add records a method's result and its scores.
func (r *ModelResult) add(mr MethodResult, scores [][]float64) {
	r.Methods = append(r.Methods, mr)
	r.scores[mr.Name] = scores
}

// runCached scores the queries with every cached method: a warm-up query (graph compilation), then every query
// timed.
func (a *Attributor) runCached(res *ModelResult, qs []queryRow) error {
	prismFit := a.Stats.FitSeconds + a.Stats.IndexSeconds
	for _, name := range cachedMethods {
		if _, err := a.cachedQuery(qs[0], name); err != nil {
			return err
		}
		scores := make([][]float64, len(qs))
		var tm timer
		for i, q := range qs {
			w := startWatch()
			var err error
			if scores[i], err = a.cachedQuery(q, name); err != nil {
				return err
			}
			tm.add(w.stop())
		}
		fit := prismFit
		if name == MethodExactCE || name == MethodPrismFullC {
			fit += a.Timings["prism_factor"]
		}
		res.add(MethodResult{Name: name, FitSeconds: fit, Bytes: a.cachedBytes(name), Latency: latencyOf(tm.wall, tm.cpu),
			AllQueriesSeconds: sum(tm.wall)}, scores)
	}
	return nil
}

// runReference fits the reference and scores the queries with it, each timed.
func (a *Attributor) runReference(res *ModelResult, qs []queryRow) error {
	if err := a.fitReference(); err != nil {
		return err
	}
	if _, err := a.referenceQuery(qs[0]); err != nil {
		return err
	}
	scores := make([][]float64, len(qs))
	var tm timer
	for i, q := range qs {
		w := startWatch()
		var err error
		if scores[i], err = a.referenceQuery(q); err != nil {
			return err
		}
		tm.add(w.stop())
	}
	res.add(MethodResult{Name: MethodReference, FitSeconds: a.Timings["reference_fit"] + a.Timings["prism_factor"],
		Bytes: a.ref.bytes + a.Curvature.Bytes(), Latency: latencyOf(tm.wall, tm.cpu), AllQueriesSeconds: sum(tm.wall)},
		scores)
	return nil
}

// runBlockEKFAC fits EK-FAC on the backbone's linear layers, scores the queries with it and with the gradient dot
// product in one batched pass, and times Settings.TimedQueries queries end to end at the memory budget of the
// default cached method.
func (a *Attributor) runBlockEKFAC(res *ModelResult, qs []queryRow, budget int64) error {
	if err := a.fitBlockEKFAC(); err != nil {
		return err
	}
	res.Layers = a.ekfac.layers
	t := &a.ekfac.timing
	t.Stored = storedWithin(budget-a.ekfac.f.Bytes(), t.GradBytes, len(a.Corpus))
	if _, _, err := a.blockQueryGradients(qs[0]); err != nil { // warm-up: compiles the query graph
		return err
	}
	ek, gd, _, err := a.blockScores(qs)
	if err != nil {
		return err
	}
	t.MatchedSec, t.MatchedCPU = nil, nil
	for i := 0; i < min(a.Settings.TimedQueries, len(qs)); i++ {
		if _, err := a.timeMatchedBlockQuery(qs[i]); err != nil {
			return err
		}
	}
	fit := a.Timings["ekfac_covariance"] + a.Timings["ekfac_eigen"] + a.Timings["ekfac_lambda"]
	all := sum(t.QuerySec) + t.PassSec
	res.add(MethodResult{Name: MethodEKFAC, FitSeconds: fit, Latency: latencyOf(t.MatchedSec, t.MatchedCPU),
		AllQueriesSeconds: all, Bytes: a.ekfac.f.Bytes() + int64(t.Stored)*t.GradBytes, StoredSeqs: t.Stored}, ek)
	res.add(MethodResult{Name: MethodGradDot, AllQueriesSeconds: all}, gd)
	return nil
}

// storedWithin returns how many training gradients of gradBytes each fit in free bytes, at most n.
func storedWithin(free, gradBytes int64, n int) int {
	if free <= 0 || gradBytes <= 0 {
		return 0
	}
	return int(min(free/gradBytes, int64(n)))
}

// runBankEKFAC fits EK-FAC on the bank P alone, scores the queries with it, and times Settings.TimedQueries queries
// end to end at the memory budget of the default cached method.
func (a *Attributor) runBankEKFAC(res *ModelResult, qs []queryRow, budget int64) error {
	if err := a.fitBankEKFAC(); err != nil {
		return err
	}
	a.storeBankGradients(budget - a.bank.f.Bytes())
	if _, err := a.bankQuery(qs[0]); err != nil {
		return err
	}
	bk, err := a.bankScores(qs)
	if err != nil {
		return err
	}
	t := &a.bank.timing
	t.MatchedSec, t.MatchedCPU = nil, nil
	for i := 0; i < min(a.Settings.TimedQueries, len(qs)); i++ {
		if _, err := a.timeMatchedBankQuery(qs[i]); err != nil {
			return err
		}
	}
	fit := a.Stats.FitSeconds + a.Stats.IndexSeconds + a.Timings["ekfac_bank_covariance"] +
		a.Timings["ekfac_bank_eigen"] + a.Timings["ekfac_bank_lambda"]
	// The batched pass read the training gradients' columns from the PRISM cache; a forward pass over the corpus
	// (the cache's fitting pass) is added as their cost.
	res.add(MethodResult{Name: MethodEKFACBank, FitSeconds: fit, Latency: latencyOf(t.MatchedSec, t.MatchedCPU),
		AllQueriesSeconds: sum(t.QuerySec) + t.PassSec + a.Stats.FitSeconds, Bytes: a.bank.f.Bytes() + a.bank.storedBytes,
		StoredSeqs: t.Stored}, bk)
	return nil
}

// countCG solves the full curvature by CG (whatever solver the methods use) for the routed gradients of the first
// Settings.TimedQueries queries and records the mean number of iterations: the cost model's estimate for banks above
// direct_max_k.
func (a *Attributor) countCG(c *Conditioning, qs []queryRow) error {
	cg, err := influence.NewCoUsage(a.Curvature.H, a.Blocks, 0, a.Settings.CGTol, a.Settings.CGMaxIter)
	if err != nil {
		return errors.WithMessage(err, "attribution: counting CG iterations")
	}
	for i := 0; i < min(a.Settings.TimedQueries, len(qs)); i++ {
		cols, g, err := a.routeColumns(qs[i])
		if err != nil {
			return err
		}
		if _, _, err := cg.SolveColumns(cols, g); err != nil {
			c.CGUnconverged++
		}
	}
	n := 0
	for _, it := range cg.Iters {
		n += it
	}
	if len(cg.Iters) > 0 {
		c.CGIterations = float64(n) / float64(len(cg.Iters))
	}
	return nil
}
