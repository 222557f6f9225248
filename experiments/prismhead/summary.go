package prismhead

import (
	"fmt"
	"math"
	"slices"
	"strings"

	mprism "github.com/protolab/protolab/models/prism"
	"github.com/protolab/protolab/workbench/report"
	"github.com/protolab/protolab/workbench/stats"
)

// Stat is a mean over training seeds with its standard error.
type Stat struct {
	Mean float64 `json:"mean"`
	SE   float64 `json:"se"` // √(s²/n) with the n − 1 sample variance; 0 with fewer than two values
	N    int     `json:"n"`  // seeds with a finite value (the others are left out)
}

// statOf returns the Stat of the finite values of xs (zero when there are none).
func statOf(xs []float64) Stat {
	var v []float64
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			v = append(v, x)
		}
	}
	s := Stat{N: len(v)}
	if len(v) == 0 {
		return s
	}
	s.Mean = stats.Mean(v)
	if len(v) > 1 {
		_, s.SE = stats.MeanSE(v)
	}
	return s
}

// Estimate returns the stat scaled by scale (e.g. 100 for percent) as a scorecard estimate.
func (s Stat) Estimate(scale float64, unit string) report.Estimate {
	return report.Estimate{Value: scale * s.Mean, SE: math.Abs(scale) * s.SE, Seeds: s.N, Unit: unit}
}

// String formats "mean ± s.e.".
func (s Stat) String() string {
	if s.N == 0 {
		return "—"
	}
	return fmt.Sprintf("%.4g ± %.2g", s.Mean, s.SE)
}

// SweepSummary is one clustering weight of the sweep over seeds (doc.go, equations 4–8).
type SweepSummary struct {
	Weight        float64 `json:"weight"` // λ_1 = λ_2
	RelPerplexity Stat    `json:"rel_perplexity"`
	RelLoss       Stat    `json:"rel_loss"`
	R1Bar         Stat    `json:"r1_bar"`
	R2            Stat    `json:"r2"`
	// OffDiagonalMass is spec §5's coupling metric: Σ_{i≠j}|C_ij| / Σ_ij |C_ij| of C over the whole bank.
	OffDiagonalMass Stat `json:"off_diagonal_mass"`
	// BlockMass is the share of ‖H‖_F² on the diagonal blocks of the exact Hessian on J; BlockMassCERec that of
	// H_CE+REC (without the clustering terms, which are block-diagonal by construction).
	BlockMass      Stat `json:"block_mass"`
	BlockMassCERec Stat `json:"block_mass_ce_rec"`
	// BlockMassStructured and BlockMassStructuredCos are the block shares of mprism.ApproxStructured and
	// ApproxStructuredCos.
	BlockMassStructured    Stat `json:"block_mass_structured"`
	BlockMassStructuredCos Stat `json:"block_mass_structured_cos"`
	// LogCond, LogCondCERec and LogCondStructuredCos are log10 κ(A + λ_fix I) of the exact Hessian, of H_CE+REC and of
	// mprism.ApproxStructuredCos on J; LogBlockCond is log10 of the median over j of κ(H_jj + λ_fix I) of the exact
	// Hessian's diagonal blocks. λ_fix is the seed's Replicate.FixedDamping; a seed where the damped matrix is not
	// positive definite is left out (N counts the others).
	LogCond              Stat `json:"log_cond"`
	LogCondCERec         Stat `json:"log_cond_ce_rec"`
	LogCondStructuredCos Stat `json:"log_cond_structured_cos"`
	LogBlockCond         Stat `json:"log_block_cond"`
	// LogCondSpecDamping is log10 κ of the exact Hessian at each model's own spec §5 damping (which grows with the
	// weight; kept for comparison with the fixed damping).
	LogCondSpecDamping Stat `json:"log_cond_spec_damping"`
}

// Summary is the study over seeds.
type Summary struct {
	Seeds int `json:"seeds"`
	// RelLoss, RelPerplexity, R1Bar and R2 are the configured PRISM model's, against the dense model of its seed.
	RelLoss       Stat `json:"rel_loss"`
	RelPerplexity Stat `json:"rel_perplexity"`
	R1Bar         Stat `json:"r1_bar"`
	R2            Stat `json:"r2"`
	// Sweep summarises each weight of the sweep, in the sweep's order.
	Sweep []SweepSummary `json:"sweep"`
	// OffDiagonalTrend is, per seed, C's off-diagonal mass over the whole bank at the sweep's largest weight minus
	// that at its smallest (negative: C closer to diagonal with more clustering).
	OffDiagonalTrend Stat `json:"off_diagonal_trend"`
	// BlockCondTrend is, per seed, LogBlockCond at the largest weight minus that at the smallest (negative: better
	// conditioned blocks with more clustering), at the seed's fixed damping.
	BlockCondTrend Stat `json:"block_cond_trend"`
	// CERecBlockMassTrend is, per seed, the block share of H_CE+REC at the largest weight minus that at the smallest.
	CERecBlockMassTrend Stat `json:"ce_rec_block_mass_trend"`
}

// Summarize computes the summary over the replicates. Sweep points are matched by weight; the trends compare the
// smallest and the largest weight that every replicate has.
func Summarize(reps []Replicate) Summary {
	s := Summary{Seeds: len(reps)}
	collect := func(f func(Replicate) float64) Stat {
		xs := make([]float64, len(reps))
		for i, r := range reps {
			xs[i] = f(r)
		}
		return statOf(xs)
	}
	s.RelLoss = collect(func(r Replicate) float64 { return r.Quality.RelLoss })
	s.RelPerplexity = collect(func(r Replicate) float64 { return r.Quality.RelPerplexity })
	s.R1Bar = collect(func(r Replicate) float64 { return r.Quality.Coverage.R1Bar })
	s.R2 = collect(func(r Replicate) float64 { return r.Quality.Coverage.R2 })
	weights := commonWeights(reps)
	for _, w := range weights {
		at := func(f func(Replicate, SweepPoint) float64) Stat {
			return collect(func(r Replicate) float64 { return f(r, pointAt(r, w)) })
		}
		approx := func(p SweepPoint, name string) mprism.CurvatureScore {
			a, ok := p.Curvature.Approximation(name)
			if !ok {
				return mprism.CurvatureScore{MinEig: math.NaN(), MaxEig: math.NaN(), BlockMass: math.NaN()}
			}
			return a
		}
		s.Sweep = append(s.Sweep, SweepSummary{Weight: w,
			RelPerplexity:   at(func(_ Replicate, p SweepPoint) float64 { return p.RelPerplexity }),
			RelLoss:         at(func(_ Replicate, p SweepPoint) float64 { return p.RelLoss }),
			R1Bar:           at(func(_ Replicate, p SweepPoint) float64 { return p.Coverage.R1Bar }),
			R2:              at(func(_ Replicate, p SweepPoint) float64 { return p.Coverage.R2 }),
			OffDiagonalMass: at(func(_ Replicate, p SweepPoint) float64 { return p.Curvature.OffDiagonalMass }),
			BlockMass:       at(func(_ Replicate, p SweepPoint) float64 { return p.Curvature.Exact.BlockMass }),
			BlockMassCERec:  at(func(_ Replicate, p SweepPoint) float64 { return p.Curvature.CERec.BlockMass }),
			BlockMassStructured: at(func(_ Replicate, p SweepPoint) float64 {
				return approx(p, mprism.ApproxStructured).BlockMass
			}),
			BlockMassStructuredCos: at(func(_ Replicate, p SweepPoint) float64 {
				return approx(p, mprism.ApproxStructuredCos).BlockMass
			}),
			LogCond: at(func(r Replicate, p SweepPoint) float64 {
				return math.Log10(p.Curvature.Exact.CondAt(r.FixedDamping))
			}),
			LogCondCERec: at(func(r Replicate, p SweepPoint) float64 {
				return math.Log10(p.Curvature.CERec.CondAt(r.FixedDamping))
			}),
			LogCondStructuredCos: at(func(r Replicate, p SweepPoint) float64 {
				return math.Log10(approx(p, mprism.ApproxStructuredCos).CondAt(r.FixedDamping))
			}),
			LogBlockCond: at(func(r Replicate, p SweepPoint) float64 {
				return math.Log10(p.Curvature.Exact.BlockCondMedianAt(r.FixedDamping))
			}),
			LogCondSpecDamping: at(func(_ Replicate, p SweepPoint) float64 {
				return math.Log10(p.Curvature.Exact.CondAt(p.Curvature.Damping))
			}),
		})
	}
	if len(weights) >= 2 {
		lo, hi := slices.Min(weights), slices.Max(weights)
		trend := func(f func(Replicate, SweepPoint) float64) Stat {
			return collect(func(r Replicate) float64 { return f(r, pointAt(r, hi)) - f(r, pointAt(r, lo)) })
		}
		s.OffDiagonalTrend = trend(func(_ Replicate, p SweepPoint) float64 { return p.Curvature.OffDiagonalMass })
		s.BlockCondTrend = trend(func(r Replicate, p SweepPoint) float64 {
			return math.Log10(p.Curvature.Exact.BlockCondMedianAt(r.FixedDamping))
		})
		s.CERecBlockMassTrend = trend(func(_ Replicate, p SweepPoint) float64 { return p.Curvature.CERec.BlockMass })
	}
	return s
}

// commonWeights returns the sweep weights of the first replicate that every replicate has, in its order.
func commonWeights(reps []Replicate) []float64 {
	if len(reps) == 0 {
		return nil
	}
	var out []float64
	for _, p := range reps[0].Sweep {
		all := true
		for _, r := range reps[1:] {
			if !slices.ContainsFunc(r.Sweep, func(q SweepPoint) bool { return q.Weight == p.Weight }) {
				all = false
				break
			}
		}
		if all {
			out = append(out, p.Weight)
		}
	}
	return out
}

// pointAt returns r's sweep point of weight w (callers pass a weight of commonWeights).
func pointAt(r Replicate, w float64) SweepPoint {
	i := slices.IndexFunc(r.Sweep, func(p SweepPoint) bool { return p.Weight == w })
	return r.Sweep[i]
}

// String is the summary as tables.
func (s Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "over %d seeds (mean ± s.e.): PRISM vs dense loss %s%%, perplexity %s%%; R̄1 %s, R2 %s\n",
		s.Seeds, scaled(s.RelLoss, 100), scaled(s.RelPerplexity, 100), s.R1Bar, s.R2)
	if len(s.Sweep) == 0 {
		return b.String()
	}
	fmt.Fprintf(&b, "clustering-weight sweep (λ1 = λ2; κ at each seed's fixed damping):\n%8s %16s %16s %16s %16s "+
		"%16s %16s %16s\n", "weight", "Δloss %", "offdiag C", "blockmass H", "blockmass CE+REC", "log10 κ H",
		"log10 κ CE+REC", "log10 κ̃ H_jj")
	for _, p := range s.Sweep {
		fmt.Fprintf(&b, "%8g %16s %16s %16s %16s %16s %16s %16s\n", p.Weight, scaled(p.RelLoss, 100),
			p.OffDiagonalMass, p.BlockMass, p.BlockMassCERec, p.LogCond, p.LogCondCERec, p.LogBlockCond)
	}
	fmt.Fprintf(&b, "largest − smallest weight: offdiag C %s, log10 κ̃ H_jj %s, blockmass CE+REC %s\n",
		s.OffDiagonalTrend, s.BlockCondTrend, s.CERecBlockMassTrend)
	return b.String()
}

func scaled(s Stat, k float64) string {
	s.Mean, s.SE = k*s.Mean, k*s.SE
	return s.String()
}
