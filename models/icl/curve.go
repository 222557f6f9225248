package icl

import (
	"math"
	"slices"

	"github.com/protolab/protolab/workbench/stats"
)

// Scores are the MSEs of one row of a sweep on one evaluation set against M, over seeds. Slices are indexed like M;
// PerSeed[i][s] is seed s at M[i].
type Scores struct {
	// MSE is the mean over seeds of E‖θ̂ − θ‖² on the evaluation set.
	MSE []float64 `json:"mse"`
	// StdErr combines the spread between seeds and the finite evaluation set: √(Var_s/S + se_eval²), where Var_s is
	// the sample variance of the per-seed MSEs (0 for one seed) and se_eval the standard error over contexts of the
	// seed-averaged per-context error.
	StdErr []float64 `json:"std_err"`
	// Best and Median are over seeds (spec §5 asks both: narrow deep models can stall).
	Best    []float64   `json:"best"`
	Median  []float64   `json:"median"`
	PerSeed [][]float64 `json:"per_seed"`
}

// Curve is one row of a sweep: a model kind (with a key gain, for an ablation row) trained at every M, one Chain
// per seed, scored on the test set (the embedded Scores: the reported numbers) and on the held-out test set.
type Curve struct {
	// Name is the row (Chain.Row): the kind, or the name of an ablation.
	Name string `json:"name"`
	Kind string `json:"kind"`
	// KeyGain is model.key_gain of the row (0: none, the common recipe).
	KeyGain float64 `json:"key_gain,omitempty"`
	M       []int   `json:"m"`
	Scores
	// HeldOut are the scores on the held-out test set (EvalSets.HeldOut), reported separately.
	HeldOut Scores `json:"held_out"`
	// ValMSE[i][s] is the final validation MSE of seed s at M[i], the only score choices are made on.
	ValMSE [][]float64 `json:"val_mse"`
	// Training[i][s] is the training record of seed s at M[i] (validation curve, plateau statistic).
	Training [][]Training `json:"training"`
	// TrainSeconds is the training wall time per point, summed over seeds.
	TrainSeconds []float64 `json:"train_seconds"`
}

// NewCurve turns the seeds' chains of one row (each over the Segments of M = ms) into its curve.
func NewCurve(name, kind string, keyGain float64, ms []int, chains []ChainResult) Curve {
	curve := Curve{Name: name, Kind: kind, KeyGain: keyGain, M: slices.Clone(ms)}
	for i := range ms {
		var test, held []Score
		var val []float64
		var tr []Training
		seconds := 0.0
		for _, ch := range chains {
			test, held = append(test, ch.Test[i]), append(held, ch.HeldOut[i])
			val = append(val, ch.Val[i])
			tr = append(tr, ch.Training[i])
			seconds += ch.Training[i].Seconds
		}
		curve.Scores.Add(test)
		curve.HeldOut.Add(held)
		curve.ValMSE = append(curve.ValMSE, val)
		curve.Training = append(curve.Training, tr)
		curve.TrainSeconds = append(curve.TrainSeconds, seconds)
	}
	return curve
}

// Add appends one point, the seeds' scores on one evaluation set (all over the same contexts), to the scores.
func (sc *Scores) Add(seeds []Score) {
	S := float64(len(seeds))
	per := make([]float64, len(seeds))
	mean := make([]float64, len(seeds[0].PerContext)) // seed-averaged per-context errors
	for k, e := range seeds {
		per[k] = e.MSE
		for j, v := range e.PerContext {
			mean[j] += v / S
		}
	}
	_, seEval := stats.MeanSE(mean)
	mse, seSeed := stats.MeanSE(per)
	if len(per) < 2 {
		seSeed = 0
	}
	sc.MSE = append(sc.MSE, mse)
	sc.StdErr = append(sc.StdErr, math.Sqrt(seSeed*seSeed+seEval*seEval))
	sc.Best = append(sc.Best, slices.Min(per))
	sc.Median = append(sc.Median, stats.Median(per))
	sc.PerSeed = append(sc.PerSeed, per)
}

// WorstPlateau returns the largest plateau improvement (Training.Improvement) of the curve over its points and seeds
// (+Inf when a model has no validation curve) and where it is.
func (c *Curve) WorstPlateau() (worst float64, m, seed int) {
	worst = math.Inf(-1)
	for i := range c.Training {
		for s, t := range c.Training[i] {
			v := t.Improvement
			if math.IsNaN(v) {
				v = math.Inf(1)
			}
			if v > worst {
				worst, m, seed = v, c.M[i], s
			}
		}
	}
	return worst, m, seed
}

// TheoryGap returns, over the points of c, the largest |MSE − want(M)| in units of the allowed distance
// 4·s.e. + allowance·want(M) (docs/STYLE.md §11.4), and the index of that point (−1 when no point was compared); a
// value ≤ 1 is within the allowance everywhere. Points where want is not defined (ok false) are skipped.
func (c *Curve) TheoryGap(want func(m int) (float64, bool), allowance float64) (worst float64, at int) {
	worst, at = math.Inf(-1), -1
	for i, m := range c.M {
		w, ok := want(m)
		if !ok {
			continue
		}
		if g := math.Abs(c.MSE[i]-w) / (4*c.StdErr[i] + allowance*w); g > worst {
			worst, at = g, i
		}
	}
	return worst, at
}
