package attribution

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/protolab/protolab/models/prism"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/stats"
)

// Interval is an estimate with its 95% confidence interval [Lo, Hi].
type Interval struct {
	Mean float64 `json:"mean"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
}

// Summary is one method over the attributed models.
type Summary struct {
	Name   string `json:"name"`
	Source string `json:"source"` // the corpus of the models (ModelResult.Source)
	Models int    `json:"models"`
	// LDS is the mean over models of each model's LDS, with the 95% interval of a two-stage bootstrap (models, then
	// queries and retrained subsets within each); LDSSE is the standard error over models. LDSVsEKFAC is the LDS
	// minus EK-FAC's (backbone), paired over the same models, queries and subsets.
	LDS        *Interval `json:"lds,omitempty"`
	LDSSE      float64   `json:"lds_se,omitempty"`
	LDSVsEKFAC *Interval `json:"lds_vs_ekfac,omitempty"`
	// Overlap and OverlapEKFAC are Overlap@k with the reference and with EK-FAC: the mean over models, the interval
	// of the two-stage bootstrap (models, then queries) and the standard error over models.
	Overlap      []OverlapStat `json:"overlap,omitempty"`
	OverlapEKFAC []OverlapStat `json:"overlap_ekfac,omitempty"`
	// SpeedUp and SpeedUpCPU are the mean over models of MethodResult.SpeedUp and SpeedUpCPU, with their standard
	// errors over models (0 with one model).
	SpeedUp      float64 `json:"speed_up,omitempty"`
	SpeedUpSE    float64 `json:"speed_up_se,omitempty"`
	SpeedUpCPU   float64 `json:"speed_up_cpu,omitempty"`
	SpeedUpCPUSE float64 `json:"speed_up_cpu_se,omitempty"`
	// LatencyMs is the median over models of the median latency; LatencyQ1Ms and LatencyQ3Ms the smallest first
	// and the largest third quartile over models.
	LatencyMs   float64 `json:"latency_ms"`
	LatencyQ1Ms float64 `json:"latency_q1_ms"`
	LatencyQ3Ms float64 `json:"latency_q3_ms"`
	// Bytes is the mean memory over models.
	Bytes int64 `json:"bytes"`
}

// The summary over attributed models (doc.go, "Uncertainty"). Every interval is a percentile interval from a
// two-stage bootstrap: each resample draws the models with replacement (when there are several), then, within each
// drawn model, its queries (and, for the LDS, its retrained subsets) with replacement, and averages the drawn
// models' values. It thus carries the spread between trained models as well as the sampling of queries and
// subsets. The standard errors over models are reported beside it.

// ldsData is what the LDS of one attributed model is computed from.
type ldsData struct {
	loss [][]float64            // [M][Q]: the completion loss of query q under the model retrained on subset m
	pred map[string][][]float64 // [method][Q][M]: Σ_{s∈subset m} score(q, s)
}

// summarise returns one Summary per method of the first model, over all models (of one corpus: the first's).
func summarise(models []ModelResult, s Settings) []Summary {
	if len(models) == 0 {
		return nil
	}
	var names []string
	for _, m := range models[0].Methods {
		names = append(names, m.Name)
	}
	var lds, vsEKFAC map[string]Interval
	var data []*ldsData
	for i := range models {
		if models[i].lds != nil {
			data = append(data, models[i].lds)
		}
	}
	if len(data) == len(models) {
		lds, vsEKFAC = ldsIntervals(data, names, prism.MethodEKFAC, s.Bootstrap, s.Seed)
	}
	var out []Summary
	for mi, name := range names {
		sm := Summary{Name: name, Source: models[0].Source, Models: len(models)}
		var speed, speedCPU, lat, q1, q3, ldsPer []float64
		var bytes int64
		for i := range models {
			mr := models[i].Method(name)
			if mr == nil {
				continue
			}
			bytes += mr.Bytes
			if mr.SpeedUp > 0 {
				speed = append(speed, mr.SpeedUp)
			}
			if mr.SpeedUpCPU > 0 {
				speedCPU = append(speedCPU, mr.SpeedUpCPU)
			}
			if mr.Latency.Repeats > 0 {
				lat, q1, q3 = append(lat, mr.Latency.Median), append(q1, mr.Latency.Q1), append(q3, mr.Latency.Q3)
			}
			if mr.LDS != nil {
				ldsPer = append(ldsPer, mr.LDS.Mean)
			}
		}
		sm.Bytes = bytes / int64(len(models))
		sm.SpeedUp, sm.SpeedUpSE = stats.MeanSEOrZero(speed)
		sm.SpeedUpCPU, sm.SpeedUpCPUSE = stats.MeanSEOrZero(speedCPU)
		if len(lat) > 0 {
			sm.LatencyMs, sm.LatencyQ1Ms, sm.LatencyQ3Ms = stats.Median(lat), slices.Min(q1), slices.Max(q3)
		}
		if iv, ok := lds[name]; ok && len(ldsPer) == len(models) {
			sm.LDS = &iv
			_, sm.LDSSE = stats.MeanSEOrZero(ldsPer)
		}
		if iv, ok := vsEKFAC[name]; ok && name != prism.MethodEKFAC {
			sm.LDSVsEKFAC = &iv
		}
		sm.Overlap = overlapSummary(models, name, s, func(m *ModelResult) [][]float64 { return m.overlapPQ[name] },
			uint64(2*mi))
		sm.OverlapEKFAC = overlapSummary(models, name, s, func(m *ModelResult) [][]float64 { return m.ekfacPQ[name] },
			uint64(2*mi+1))
		out = append(out, sm)
	}
	return out
}

// overlapSummary returns Overlap@k over models for every k: the mean, the two-stage bootstrap interval and the
// standard error over models; nil when a model lacks the per-query values.
func overlapSummary(models []ModelResult, name string, s Settings, perQuery func(*ModelResult) [][]float64,
	tag uint64) []OverlapStat {
	var out []OverlapStat
	for ki, k := range s.OverlapK {
		v := make([][]float64, len(models))
		perModel := make([]float64, len(models))
		for i := range models {
			pq := perQuery(&models[i])
			if ki >= len(pq) {
				return nil
			}
			v[i], perModel[i] = pq[ki], stats.Mean(pq[ki])
			k = min(k, models[i].NumSeqs)
		}
		iv := twoStageMean(v, s.Bootstrap, s.Seed+1000*tag+uint64(ki))
		_, se := stats.MeanSEOrZero(perModel)
		out = append(out, OverlapStat{K: k, Mean: iv.Mean, Lo: iv.Lo, Hi: iv.Hi, SE: se})
	}
	return out
}

// twoStageMean returns the mean over models of the mean of each model's values v[m] and its 95% two-stage bootstrap
// interval (models, then values within each) from reps resamples.
func twoStageMean(v [][]float64, reps int, seed uint64) Interval {
	perModel := make([]float64, len(v))
	for i := range v {
		perModel[i] = stats.Mean(v[i])
	}
	iv := Interval{Mean: stats.Mean(perModel)}
	iv.Lo, iv.Hi = iv.Mean, iv.Mean
	if reps < 2 {
		return iv
	}
	rng := rand.New(rand.NewPCG(seed, 0x0b007))
	means := make([]float64, reps)
	for r := range means {
		total := 0.0
		for range v {
			vm := v[drawModel(rng, len(v))]
			s := 0.0
			for range vm {
				s += vm[rng.IntN(len(vm))]
			}
			total += s / float64(len(vm))
		}
		means[r] = total / float64(len(v))
	}
	iv.Lo, iv.Hi = percentiles(means)
	return iv
}

// drawModel draws a model index: uniformly when there are several, 0 for one.
func drawModel(rng *rand.Rand, n int) int {
	if n == 1 {
		return 0
	}
	return rng.IntN(n)
}

// percentiles returns the 2.5% and 97.5% percentiles of x (reordered).
func percentiles(x []float64) (lo, hi float64) {
	var finite []float64
	for _, v := range x {
		if !math.IsNaN(v) {
			finite = append(finite, v)
		}
	}
	if len(finite) == 0 {
		return math.NaN(), math.NaN()
	}
	slices.Sort(finite)
	at := func(q float64) float64 { return finite[int(math.Floor(q*float64(len(finite)-1)))] }
	return at(0.025), at(0.975)
}

// ldsOf returns the mean over the queries qs of the Spearman correlation, over the subsets ms, between the
// predicted sums pred[q][m] and the negated losses −loss[m][q] (queries and subsets may repeat; NaNs are skipped).
func ldsOf(pred, loss [][]float64, qs, ms []int) float64 {
	x, y := make([]float64, len(ms)), make([]float64, len(ms))
	var rho []float64
	for _, q := range qs {
		for i, m := range ms {
			x[i], y[i] = pred[q][m], -loss[m][q]
		}
		rho = append(rho, stats.Spearman(x, y))
	}
	return meanFinite(rho)
}

// ldsIntervals returns, for each method with predictions in every model, its LDS averaged over the models with the
// two-stage bootstrap interval (models, then queries and subsets within each), and with base != "" the same for the
// paired difference LDS(method) − LDS(base), both computed on the same resamples.
func ldsIntervals(models []*ldsData, methods []string, base string, reps int,
	seed uint64) (lds, diff map[string]Interval) {
	var names []string
	for _, name := range methods {
		ok := true
		for _, d := range models {
			ok = ok && d.pred[name] != nil
		}
		if ok {
			names = append(names, name)
		}
	}
	hasBase := base != "" && slices.Contains(names, base)
	all := func(n int) []int {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	point := map[string]float64{}
	for _, name := range names {
		s := 0.0
		for _, d := range models {
			s += ldsOf(d.pred[name], d.loss, all(len(d.pred[name])), all(len(d.loss)))
		}
		point[name] = s / float64(len(models))
	}
	samples := map[string][]float64{}
	diffs := map[string][]float64{}
	rng := run.RNG(seed, "prism/attribution/lds/bootstrap")
	for r := 0; r < reps && reps >= 2; r++ {
		vals := map[string]float64{}
		for range models {
			d := models[drawModel(rng, len(models))]
			Q, M := len(d.loss[0]), len(d.loss)
			qs, ms := make([]int, Q), make([]int, M)
			for i := range qs {
				qs[i] = rng.IntN(Q)
			}
			for i := range ms {
				ms[i] = rng.IntN(M)
			}
			for _, name := range names {
				vals[name] += ldsOf(d.pred[name], d.loss, qs, ms) / float64(len(models))
			}
		}
		for _, name := range names {
			samples[name] = append(samples[name], vals[name])
			if hasBase {
				diffs[name] = append(diffs[name], vals[name]-vals[base])
			}
		}
	}
	lds, diff = map[string]Interval{}, map[string]Interval{}
	for _, name := range names {
		iv := Interval{Mean: point[name], Lo: point[name], Hi: point[name]}
		if len(samples[name]) > 0 {
			iv.Lo, iv.Hi = percentiles(samples[name])
		}
		lds[name] = iv
		if hasBase {
			d := Interval{Mean: point[name] - point[base], Lo: point[name] - point[base], Hi: point[name] - point[base]}
			if len(diffs[name]) > 0 {
				d.Lo, d.Hi = percentiles(diffs[name])
			}
			diff[name] = d
		}
	}
	return lds, diff
}
