package speed

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/workbench/report"
	"github.com/protolab/protolab/workbench/stats"
)

// Scaling rules (fixed with the claims, before any result was read). A log-log slope s of a time or a rate against
// the context means a factor 2^s per doubling of T.
const (
	// FlatSlope bounds a flat curve: the 95% interval of the slope must lie in [−FlatSlope, FlatSlope], a change
	// of at most 7% per doubling of the context, small beside a cost that grows in proportion to T (slope ±1).
	FlatSlope = 0.1
	// ScalingReps is the number of bootstrap resamples of the timed repetitions behind each interval.
	ScalingReps = 2000
	// CrossoverTol is the relative tolerance of the decode crossover row: the same context within ±50%, since the
	// crossover moves with the hardware and the backend far more than a perplexity does.
	CrossoverTol = 0.5
	// crossoverUnit converts a context to the unit of the paper's crossover (thousands of tokens).
	crossoverUnit = 1000.0
	// MinReps is the number of timed repetitions per configuration a claim needs (spec §7.2 times 10): with
	// fewer, the median and the bootstrap interval mean little (Quick times one training step).
	MinReps = 5
)

// configOf recovers the configuration a result was measured with from its provenance (a Config in memory, a JSON
// object once stored).
func configOf(r *Result) (Config, bool) {
	if r.Provenance == nil || r.Provenance.Config == nil {
		return Config{}, false
	}
	b, err := json.Marshal(r.Provenance.Config)
	if err != nil {
		return Config{}, false
	}
	var c Config
	if err := json.Unmarshal(b, &c); err != nil {
		return Config{}, false
	}
	return c, true
}

// method states how a row was measured: the decoder, the repetitions and the interval.
func method(r *Result, what string) string {
	m := what + "; median of the timed repetitions, 95% bootstrap interval over them"
	if c, ok := configOf(r); ok {
		reps, contexts := c.Steps, c.Contexts
		if what == "decode" {
			reps, contexts = c.DecodeTokens, c.decodeContexts()
		}
		m = fmt.Sprintf("%s: D=%d, L=%d, V=%d, %s, B·T=%d, contexts %v; %d warm-up steps then the median of %d "+
			"timed ones (spec §7.2), 95%% bootstrap interval over the timed steps; backend %s, %d CPUs (not the "+
			"paper's H100)", what, c.Width, c.NumLayers, c.Vocab, c.DType, c.TokenBudget, contexts, c.Warmup, reps,
			r.Machine.Backend, r.Machine.NumCPU)
	}
	return m
}

// slopeClaim is a holds-claim on the log-log slope of one mixer's curve: flat (interval inside ±FlatSlope), falling
// (interval below −FlatSlope) or growing (interval above FlatSlope).
func slopeClaim(id, claim, shape string, curve []point, r *Result, what, mixer string) report.Claim {
	c := report.Claim{ID: id, Claim: claim, Rule: report.Rule{Kind: report.RuleHolds}}
	switch shape {
	case "flat":
		c.Rule.Test = fmt.Sprintf("the 95%% interval of %s's log-log slope lies inside [−%g, %g]", mixer, FlatSlope,
			FlatSlope)
	case "falling":
		c.Rule.Test = fmt.Sprintf("the 95%% interval of %s's log-log slope lies below −%g", mixer, FlatSlope)
	case "growing":
		c.Rule.Test = fmt.Sprintf("the 95%% interval of %s's log-log slope lies above %g", mixer, FlatSlope)
	}
	if r == nil {
		return c
	}
	c.Method = method(r, what)
	if len(curve) < 2 {
		c.Ours.Value, c.Untestable = math.NaN(), fmt.Sprintf("%s: fewer than two contexts measured for %s", what, mixer)
		return c
	}
	if why := fewReps(what, curve); why != "" {
		c.Ours.Value, c.Untestable = math.NaN(), why
		return c
	}
	c.Ours = bootstrap([][]point{curve}, func(cs [][]point) float64 { return medianSlope(cs[0]) })
	c.Ours.Unit = "log-log slope"
	lo, hi := c.Ours.Lo, c.Ours.Hi
	if !(hi > lo) {
		lo, hi = c.Ours.Value, c.Ours.Value
	}
	switch shape {
	case "flat":
		c.Rule.Holds = lo >= -FlatSlope && hi <= FlatSlope
	case "falling":
		c.Rule.Holds = hi < -FlatSlope
	case "growing":
		c.Rule.Holds = lo > FlatSlope
	}
	return c
}

// Claims returns the scorecard rows of the throughput and decoding claims (docs/spec/protot.md §4.4, §7.2, §8) from
// a stored result: the training slowdown of ProtoT against attention at the shortest context (the paper's 2–3×),
// ProtoT's training tokens/s flat in T while attention's falls, ProtoT's decoding time per token flat in the
// context while attention's grows, DeltaNet fastest at the longest context, and the decode crossover. A row whose
// configurations were timed fewer than MinReps times is untestable. With r nil every row is returned with Ours
// empty. The rules are fixed here (FlatSlope, CrossoverTol, MinReps).
func Claims(r *Result) []report.Claim {
	att, pt := decoder.MixerAttention, decoder.MixerProtoT
	var tAtt, tPT, dAtt, dPT []point
	if r != nil {
		tAtt, tPT = throughputCurve(r, att), throughputCurve(r, pt)
		dAtt, dPT = decodeCurve(r, att), decodeCurve(r, pt)
	}
	out := slowdownClaims(r, tAtt, tPT)
	out = append(out,
		slopeClaim("", "ProtoT's training tokens/s is flat in the context T at fixed B·T (its prefix mean is linear "+
			"in T, §4.2)", "flat", tPT, r, "training throughput", pt),
		slopeClaim("", "attention's training tokens/s falls with the context T at fixed B·T (its scores are "+
			"quadratic in T)", "falling", tAtt, r, "training throughput", att),
		slopeClaim("protot_decode_constant", "ProtoT decodes in O(1) per token: time per token flat in the context "+
			"(Form D, §4.4)", "flat", dPT, r, "decode", pt),
		slopeClaim("", "attention's decoding time per token grows with the context (its KV cache)", "growing", dAtt,
			r, "decode", att),
		fastestClaim(r),
		crossoverClaim(r, dAtt, dPT))
	return out
}

// slowdownClaims are the two ends of the paper's "ProtoT trains 2–3× slower than LLaMA at equal width and depth":
// ours is attention's median tokens/s over ProtoT's at the shortest context both ran, with a bootstrap interval.
func slowdownClaims(r *Result, tAtt, tPT []point) []report.Claim {
	claims := []report.Claim{
		{ID: "protot_train_slowdown_v1_min", Claim: "ProtoT trains at least 2× slower than LLaMA at equal width " +
			"and depth (lower end of 2–3×)", Rule: report.Rule{Kind: report.RuleAtLeast,
			Test: "ours: attention's tokens/s over ProtoT's at the shortest common context"}},
		{ID: "protot_train_slowdown_v1_max", Claim: "ProtoT trains at most 3× slower than LLaMA at equal width " +
			"and depth (upper end of 2–3×)", Rule: report.Rule{Kind: report.RuleAtMost,
			Test: "ours: attention's tokens/s over ProtoT's at the shortest common context"}},
	}
	if r == nil {
		return claims
	}
	var a, p []point
	for _, x := range tAtt {
		if i := slices.IndexFunc(tPT, func(q point) bool { return q.x == x.x }); i >= 0 {
			a, p = []point{x}, []point{tPT[i]}
			break
		}
	}
	for i := range claims {
		c := &claims[i]
		c.Method = method(r, "training throughput")
		if a == nil {
			c.Ours.Value, c.Untestable = math.NaN(), "no context at which both attention and ProtoT trained"
			continue
		}
		if why := fewReps("training throughput", a, p); why != "" {
			c.Ours.Value, c.Untestable = math.NaN(), why
			continue
		}
		c.Ours = bootstrap([][]point{a, p}, func(cs [][]point) float64 {
			return stats.Median(cs[0][0].reps) / stats.Median(cs[1][0].reps)
		})
		c.Ours.Unit = fmt.Sprintf("× at T=%d", int(a[0].x))
	}
	return claims
}

// fastestClaim: DeltaNet decodes fastest at the longest context every mixer was measured at. Ours is DeltaNet's
// median ms/token over the fastest other mixer's; it holds when the 95% interval lies below 1.
func fastestClaim(r *Result) report.Claim {
	c := report.Claim{ID: "protot_decode_deltanet_fastest", Claim: "DeltaNet decodes fastest at long context",
		Rule: report.Rule{Kind: report.RuleHolds, Test: "the 95% interval of DeltaNet's ms/token over the fastest " +
			"other mixer's, at the longest context all were measured at, lies below 1"}}
	if r == nil {
		return c
	}
	c.Method = method(r, "decode")
	var mixers []string
	for _, row := range r.Decode {
		if !slices.Contains(mixers, row.Mixer) {
			mixers = append(mixers, row.Mixer)
		}
	}
	longest := -1
	for _, row := range r.Decode {
		if row.Context <= longest {
			continue
		}
		all := true
		for _, m := range mixers {
			all = all && slices.ContainsFunc(r.Decode, func(q DecodeRow) bool {
				return q.Mixer == m && q.Context == row.Context
			})
		}
		if all {
			longest = row.Context
		}
	}
	if !slices.Contains(mixers, decoder.MixerDeltaNet) || len(mixers) < 2 || longest < 0 {
		c.Ours.Value, c.Untestable = math.NaN(), "the decode rows lack DeltaNet or another mixer at a common context"
		return c
	}
	order := []string{decoder.MixerDeltaNet} // DeltaNet first, then the others
	for _, m := range mixers {
		if m != decoder.MixerDeltaNet {
			order = append(order, m)
		}
	}
	var curves [][]point // one configuration each, at the longest context
	for _, m := range order {
		for _, p := range decodeCurve(r, m) {
			if p.x == float64(longest) {
				curves = append(curves, []point{p})
			}
		}
	}
	if why := fewReps("decode", curves...); why != "" {
		c.Ours.Value, c.Untestable = math.NaN(), why
		return c
	}
	c.Ours = bootstrap(curves, func(cs [][]point) float64 {
		best := math.Inf(1)
		for _, o := range cs[1:] {
			best = min(best, stats.Median(o[0].reps))
		}
		return stats.Median(cs[0][0].reps) / best
	})
	c.Ours.Unit = fmt.Sprintf("× the fastest other mixer at context %d", longest)
	hi := c.Ours.Hi
	if !(c.Ours.Hi > c.Ours.Lo) {
		hi = c.Ours.Value
	}
	c.Rule.Holds = hi < 1
	return c
}

// crossoverClaim: the context (thousands of tokens) from which ProtoT's median decoding step is faster than
// attention's at every longer measured context. Untestable when ProtoT is slower at the longest context measured
// (the crossover lies beyond the preset's contexts); when ProtoT is faster from the shortest, ours is that context,
// an upper bound.
func crossoverClaim(r *Result, dAtt, dPT []point) report.Claim {
	c := report.Claim{ID: "protot_decode_crossover", Claim: "ProtoT's decoding overtakes LLaMA's (KV cache) at " +
		"long context", Rule: report.Rule{Kind: report.RuleWithin, Tol: CrossoverTol,
		Test: "ours: the shortest measured context (k tokens) from which ProtoT's median ms/token stays below " +
			"attention's"}}
	if r == nil {
		return c
	}
	c.Method = method(r, "decode")
	var xs []float64
	faster := map[float64]bool{}
	for _, a := range dAtt {
		for _, p := range dPT {
			if p.x == a.x {
				xs = append(xs, a.x)
				faster[a.x] = stats.Median(p.reps) < stats.Median(a.reps)
			}
		}
	}
	if len(xs) == 0 {
		c.Ours.Value, c.Untestable = math.NaN(), "no context at which both attention and ProtoT decoded"
		return c
	}
	if why := fewReps("decode", dAtt, dPT); why != "" {
		c.Ours.Value, c.Untestable = math.NaN(), why
		return c
	}
	slices.Sort(xs)
	if !faster[xs[len(xs)-1]] {
		c.Ours.Value = math.NaN()
		c.Untestable = fmt.Sprintf("ProtoT decodes slower than attention up to the longest context measured (%d "+
			"tokens): the crossover lies beyond this preset's contexts", int(xs[len(xs)-1]))
		return c
	}
	from := len(xs) - 1
	for from > 0 && faster[xs[from-1]] {
		from--
	}
	c.Ours = report.Estimate{Value: xs[from] / crossoverUnit, Seeds: 1, Unit: "k tokens"}
	if from == 0 {
		c.Ours.Unit = "k tokens or less (faster from the shortest context measured)"
	}
	return c
}
