package attribution

import (
	"fmt"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/run"
)

// Study is the name under which results are stored (run.Out/<Study>/) and the CLI runs the study.
const Study = "attribution"

// LoadOrRun returns the result stored for cfg under run.Out, or runs the study: it trains (or loads, from
// run.Out/models) the PRISM model of cfg and runs AttributeModel with cfg.Attribution on it. The attribution cache
// of the model (NewAttributor) is kept in its run folder and shared with Attributor queries.
func LoadOrRun(cfg Config, opts ...run.Option) (*Result, error) {
	return run.LoadOrRun(Study, cfg, opts, compute)
}

// Run runs the study even when a result is stored (the model and its attribution cache are loaded when present).
func Run(cfg Config, opts ...run.Option) (*Result, error) {
	return run.Recompute(Study, cfg, opts, compute)
}

func compute(cfg Config, prov *run.Provenance, o run.Options) (*Result, error) {
	prov.Seed = cfg.Seed
	m, err := lm.LoadOrTrain(cfg.Config, run.With(o))
	if err != nil {
		return nil, err
	}
	res, err := AttributeModel(m, cfg.Attribution, run.With(o))
	if err != nil {
		return nil, err
	}
	res.Provenance = prov
	return res, nil
}

// AttributeModel runs the attribution study s on a trained PRISM model: every method of Methods on the validation
// queries, their timings and memory, Overlap@k and Spearman against the reference, conditioning, and (LDSSubsets > 0)
// the LDS. The result's Provenance is nil (LoadOrRun sets it); its scores stay available through Result.Scores.
func AttributeModel(m *lm.Model, s Settings, opts ...run.Option) (*Result, error) {
	o := run.NewOptions(opts...)
	at, err := NewAttributor(m, s)
	if err != nil {
		return nil, err
	}
	qs := at.validationQueries()
	res := &Result{Config: s, Run: m.Config.Name(), NumSeqs: len(at.Corpus), NumTokens: at.NumTokens,
		NumQueries: len(qs), K: at.pc.NumPrototypes, D: at.mc.Width, TopK: at.pc.TopK, Timings: at.Timings,
		scores: map[string][][]float64{}}
	o.Logf(Study, "%d corpus sequences (%d tokens), %d queries, cache %s", res.NumSeqs, res.NumTokens, len(qs),
		map[bool]string{true: "loaded", false: "built"}[at.Cached])
	if err := at.runCached(res, qs); err != nil {
		return nil, err
	}
	o.Logf(Study, "cached method %.3g ms per query, cache %.3g MB", res.Method(MethodPrism).QueryMs,
		float64(res.Method(MethodPrism).Bytes)/1e6)
	if err := o.Err(); err != nil {
		return nil, err
	}
	refIters, err := at.runReference(res, qs)
	if err != nil {
		return nil, err
	}
	solve := fmt.Sprintf("%.1f CG iterations", refIters)
	if at.Curvature.Direct != nil {
		solve = "direct solve"
	}
	o.Logf(Study, "reference %.3g ms per query (%s)", res.Method(MethodReference).QueryMs, solve)
	budget := res.Method(MethodPrism).Bytes
	if s.wantBlocks() {
		if err := o.Err(); err != nil {
			return nil, err
		}
		if err := at.runBlockEKFAC(res, qs, budget); err != nil {
			return nil, err
		}
		o.Logf(Study, "EK-FAC (backbone, %d layers, %d parameters) %.3g ms per query recomputing, %.3g ms at matched "+
			"memory", len(res.Layers), at.ekfac.f.NumParams(), res.Method(MethodEKFAC).QueryMs,
			res.Method(MethodEKFAC).MatchedQueryMs)
	}
	if s.wantBank() {
		if err := o.Err(); err != nil {
			return nil, err
		}
		if err := at.runBankEKFAC(res, qs, budget); err != nil {
			return nil, err
		}
	}
	compare(res)
	res.Conditions = conditioning(at)
	res.Conditions.CGIterations = refIters
	if s.LDSSubsets > 0 {
		if err := at.lds(res, qs, o); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// add records a method's result and its scores.
func (r *Result) add(mr MethodResult, scores [][]float64) {
	r.Methods = append(r.Methods, mr)
	r.scores[mr.Name] = scores
}

// runCached scores the queries with every cached method: a warm-up query (graph compilation), then every query
// timed.
func (a *Attributor) runCached(res *Result, qs []queryRow) error {
	prismFit := a.Stats.FitSeconds + a.Stats.IndexSeconds
	for _, name := range cachedMethods {
		if _, err := a.cachedQuery(qs[0], name); err != nil {
			return err
		}
		scores := make([][]float64, len(qs))
		var tm queryTimes
		for i, q := range qs {
			w := startWatch()
			var err error
			if scores[i], err = a.cachedQuery(q, name); err != nil {
				return err
			}
			tm.add(w.stop())
		}
		fit := prismFit
		if name == MethodPrism || name == MethodPrismFullC {
			fit += a.Timings["prism_factor"]
		}
		res.add(tm.result(MethodResult{Name: name, FitSeconds: fit, Bytes: a.cachedBytes(name)}), scores)
	}
	return nil
}

// runReference fits the reference and scores the queries with it and its cross-entropy ablation; it returns the
// mean CG iterations of a query (0 for direct solves).
func (a *Attributor) runReference(res *Result, qs []queryRow) (float64, error) {
	if err := a.fitReference(); err != nil {
		return 0, err
	}
	if _, _, err := a.referenceQuery(qs[0]); err != nil {
		return 0, err
	}
	a.Curvature.Iters = nil
	refScores, refCE := make([][]float64, len(qs)), make([][]float64, len(qs))
	var tm queryTimes
	for i, q := range qs {
		w := startWatch()
		var err error
		if refScores[i], refCE[i], err = a.referenceQuery(q); err != nil {
			return 0, err
		}
		tm.add(w.stop())
	}
	refFit := a.Timings["reference_fit"] + a.Timings["prism_factor"]
	refBytes := a.ref.bytes + a.Curvature.Bytes()
	res.add(tm.result(MethodResult{Name: MethodReference, FitSeconds: refFit, Bytes: refBytes}), refScores)
	// The ablation shares the reference's solve; its time and memory are the reference's.
	res.add(tm.result(MethodResult{Name: MethodReferenceCE, FitSeconds: refFit, Bytes: refBytes}), refCE)
	return meanInts(a.Curvature.Iters), nil
}

// runBlockEKFAC fits EK-FAC on the backbone's linear layers and scores the queries with it and the gradient dot
// product, timing Settings.TimedQueries queries end to end; budget is the memory of the cached method.
func (a *Attributor) runBlockEKFAC(res *Result, qs []queryRow, budget int64) error {
	if err := a.fitBlockEKFAC(); err != nil {
		return err
	}
	res.Layers = a.ekfac.layers
	if _, _, err := a.blockQueryGradients(qs[0]); err != nil {
		return err
	}
	ek, gd, t, err := a.blockScores(qs)
	if err != nil {
		return err
	}
	for i := 0; i < min(a.Settings.TimedQueries, len(qs)); i++ {
		if _, err := a.timeBlockQuery(qs[i]); err != nil {
			return err
		}
	}
	fit := a.Timings["ekfac_covariance"] + a.Timings["ekfac_eigen"] + a.Timings["ekfac_lambda"]
	res.add(ekfacResult(MethodEKFAC, fit, a.ekfac.f.Bytes(), t, len(a.Corpus), budget, 0), ek)
	res.add(ekfacResult(MethodGradDot, 0, 0, t, len(a.Corpus), budget, 0), gd)
	return nil
}

// runBankEKFAC fits EK-FAC on the bank P alone and scores the queries with it, timing Settings.TimedQueries queries
// end to end.
func (a *Attributor) runBankEKFAC(res *Result, qs []queryRow, budget int64) error {
	if err := a.fitBankEKFAC(); err != nil {
		return err
	}
	if _, err := a.bankQuery(qs[0]); err != nil {
		return err
	}
	bk, err := a.bankScores(qs)
	if err != nil {
		return err
	}
	for i := 0; i < min(a.Settings.TimedQueries, len(qs)); i++ {
		if _, err := a.timeBankQuery(qs[i]); err != nil {
			return err
		}
	}
	fit := a.Stats.FitSeconds + a.Stats.IndexSeconds + a.Timings["ekfac_bank_covariance"] +
		a.Timings["ekfac_bank_eigen"] + a.Timings["ekfac_bank_lambda"]
	res.add(ekfacResult(MethodEKFACBank, fit, a.bank.f.Bytes(), &a.bank.timing, len(a.Corpus), budget,
		a.Stats.FitSeconds), bk)
	return nil
}
