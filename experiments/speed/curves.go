package speed

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/protolab/protolab/workbench/report"
	"github.com/protolab/protolab/workbench/stats"
)

// The measured curves the claims judge (one mixer's configurations against the context, each with its timed
// repetitions), their log-log slopes and the bootstrap over the repetitions that gives every claim its interval.
// stats.MeanCI bootstraps the mean of one sample; these statistics (a slope of medians, a ratio of medians) resample
// several curves at once, so the bootstrap is the study's own.

// fewReps returns why the configurations cannot back a claim (one with fewer than MinReps repetitions), or "".
func fewReps(what string, curves ...[]point) string {
	for _, c := range curves {
		for _, p := range c {
			if len(p.reps) < MinReps {
				return fmt.Sprintf("%s: needs ≥ %d timed repetitions per configuration (spec §7.2 times 10); this "+
					"run timed %d", what, MinReps, len(p.reps))
			}
		}
	}
	return ""
}

// point is one measured configuration of a curve: its context and its timed repetitions (tokens/s of each
// training step, or ms of each decoding step).
type point struct {
	x    float64
	reps []float64
}

// throughputCurve returns the configurations of mixer that ran, in context order, with each step's tokens/s.
func throughputCurve(r *Result, mixer string) []point {
	var out []point
	for _, row := range r.Throughput {
		if row.Mixer != mixer || row.Skipped != "" || len(row.StepSeconds) == 0 {
			continue
		}
		reps := make([]float64, len(row.StepSeconds))
		for i, s := range row.StepSeconds {
			reps[i] = float64(row.Batch*row.T) / s
		}
		out = append(out, point{float64(row.T), reps})
	}
	return out
}

// decodeCurve returns the decoding configurations of mixer, in context order, with each step's milliseconds.
func decodeCurve(r *Result, mixer string) []point {
	var out []point
	for _, row := range r.Decode {
		if row.Mixer == mixer && len(row.StepMs) > 0 {
			out = append(out, point{float64(row.Context), row.StepMs})
		}
	}
	return out
}

// LogSlope returns the least-squares slope of ln y against ln x: Σ(u−ū)(v−v̄) / Σ(u−ū)², u = ln x, v = ln y. NaN with
// fewer than two distinct x.
func LogSlope(x, y []float64) float64 {
	u, v := make([]float64, len(x)), make([]float64, len(y))
	for i := range x {
		u[i], v[i] = math.Log(x[i]), math.Log(y[i])
	}
	mu, mv := stats.Mean(u), stats.Mean(v)
	num, den := 0.0, 0.0
	for i := range u {
		num += (u[i] - mu) * (v[i] - mv)
		den += (u[i] - mu) * (u[i] - mu)
	}
	if den == 0 {
		return math.NaN()
	}
	return num / den
}

// medianSlope is LogSlope of the curve's medians.
func medianSlope(c []point) float64 {
	x, y := make([]float64, len(c)), make([]float64, len(c))
	for i, p := range c {
		x[i], y[i] = p.x, stats.Median(p.reps)
	}
	return LogSlope(x, y)
}

// resample returns a bootstrap copy of the curve: each configuration's repetitions drawn with replacement.
func resample(c []point, rng *rand.Rand) []point {
	out := make([]point, len(c))
	for i, p := range c {
		reps := make([]float64, len(p.reps))
		for j := range reps {
			reps[j] = p.reps[rng.IntN(len(p.reps))]
		}
		out[i] = point{p.x, reps}
	}
	return out
}

// bootstrap returns stat of the curves and its 95% percentile interval over ScalingReps resamples of every curve's
// repetitions (a fixed seed, so the interval is reproducible). With one repetition per configuration the interval
// is the value itself.
func bootstrap(curves [][]point, stat func([][]point) float64) report.Estimate {
	v := stat(curves)
	rng := rand.New(rand.NewPCG(15, 0x5ca1e))
	draws := make([]float64, 0, ScalingReps)
	for range ScalingReps {
		rs := make([][]point, len(curves))
		for i, c := range curves {
			rs[i] = resample(c, rng)
		}
		if d := stat(rs); !math.IsNaN(d) {
			draws = append(draws, d)
		}
	}
	e := report.Estimate{Value: v, Seeds: 1}
	if len(draws) > 1 {
		e.Lo, e.Hi = stats.Quantile(draws, 0.025), stats.Quantile(draws, 0.975)
	}
	return e
}
