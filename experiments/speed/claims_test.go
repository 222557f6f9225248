package speed

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/report"
)

func TestLogSlope_PowerLaws(t *testing.T) {
	x := []float64{256, 1024, 4096}
	for _, s := range []float64{-1, -0.5, 0, 0.3} {
		y := make([]float64, len(x))
		for i, v := range x {
			y[i] = 5 * math.Pow(v, s)
		}
		require.InDelta(t, s, LogSlope(x, y), 1e-12)
	}
	require.True(t, math.IsNaN(LogSlope([]float64{4, 4}, []float64{1, 2})))
}

// claimsSample is a hand-built result whose verdicts are known: at B·T = 1024 attention's steps take 1 s at T = 256
// and 4 s at T = 1024 (slope −1), ProtoT's 2.5 s at both (flat, 2.5× slower than attention at T = 256); decoding,
// attention's steps take 1 ms at context 256 and 4 ms at 1024 (slope 1), ProtoT's 2 ms at both (flat, faster from
// 1024), DeltaNet's 0.5 ms and Mamba's 3 ms (DeltaNet fastest). Each configuration has five repetitions spread by
// ±1%, so every interval is narrow.
func claimsSample() *Result {
	reps := func(v float64) []float64 { return []float64{v * 0.99, v * 0.995, v, v * 1.005, v * 1.01} }
	thr := func(mixer string, T int, sec float64) ThroughputRow {
		return ThroughputRow{Mixer: mixer, T: T, Batch: 1024 / T, StepSeconds: reps(sec)}
	}
	dec := func(mixer string, n int, ms float64) DecodeRow {
		return DecodeRow{Mixer: mixer, Context: n, StepMs: reps(ms), MsPerToken: ms}
	}
	return &Result{Mode: ModeBoth,
		Throughput: []ThroughputRow{thr("attention", 256, 1), thr("attention", 1024, 4), thr("protot", 256, 2.5),
			thr("protot", 1024, 2.5), {Mixer: "protot", T: 4096, Skipped: "memory"}},
		Decode: []DecodeRow{dec("attention", 256, 1), dec("attention", 1024, 4), dec("protot", 256, 2),
			dec("protot", 1024, 2), dec("deltanet", 256, 0.5), dec("deltanet", 1024, 0.5), dec("mamba", 256, 3),
			dec("mamba", 1024, 3)}}
}

func TestClaims_HandBuiltVerdicts(t *testing.T) {
	empty := Claims(nil)
	require.Len(t, empty, 8)
	for _, c := range empty {
		require.NoError(t, c.Validate(), c.Claim)
		require.Equal(t, report.Estimate{}, c.Ours, c.Claim)
		require.NotEmpty(t, c.Claim)
	}
	got := Claims(claimsSample())
	require.Len(t, got, len(empty))
	for i, c := range got {
		require.NoError(t, c.Validate(), c.Claim)
		require.Equal(t, empty[i].ID, c.ID)
		require.Equal(t, empty[i].Claim, c.Claim)
	}
	paper := func(v float64) report.Paper { return report.Paper{Value: v, HasValue: true} }
	verdict := func(i int, p report.Paper) string { v, _ := report.Verdict(got[i], p); return v }

	require.InDelta(t, 2.5, got[0].Ours.Value, 1e-12) // 2.5 s / 1 s at T = 256
	require.Less(t, got[0].Ours.Lo, 2.5)
	require.Greater(t, got[0].Ours.Hi, 2.5)
	require.Equal(t, report.Reproduced, verdict(0, paper(2)))      // at least 2×
	require.Equal(t, report.Reproduced, verdict(1, paper(3)))      // at most 3×
	require.Equal(t, report.NotReproduced, verdict(1, paper(2.2))) // a paper bound of 2.2 would not hold

	require.InDelta(t, 0, got[2].Ours.Value, 1e-12) // ProtoT's tokens/s: flat
	require.True(t, got[2].Rule.Holds)
	require.InDelta(t, -1, got[3].Ours.Value, 1e-12) // attention's: 4× the time for 4× the context
	require.True(t, got[3].Rule.Holds)
	require.InDelta(t, 0, got[4].Ours.Value, 1e-12) // ProtoT's decode: flat
	require.True(t, got[4].Rule.Holds)
	require.InDelta(t, 1, got[5].Ours.Value, 1e-12) // attention's decode grows
	require.True(t, got[5].Rule.Holds)
	require.InDelta(t, 0.25, got[6].Ours.Value, 1e-12) // at 1024: DeltaNet 0.5 ms, the next fastest ProtoT's 2 ms
	require.True(t, got[6].Rule.Holds)
	// ProtoT is faster from context 1024 (2 ms < 4 ms) but not at 256: crossover 1.024k tokens, far from 32k.
	require.Equal(t, 1.024, got[7].Ours.Value)
	require.Empty(t, got[7].Untestable)
	require.Equal(t, report.NotReproduced, verdict(7, paper(32)))
	require.Equal(t, report.Reproduced, verdict(7, paper(1.5)))

	// The opposite shapes: ProtoT's throughput falling and attention's decode flat break their rules; a crossover
	// beyond the contexts is untestable.
	r := claimsSample()
	r.Throughput[3].StepSeconds = []float64{10, 10, 10, 10, 10}
	r.Decode[1].StepMs = []float64{1, 1, 1, 1, 1}
	got = Claims(r)
	require.False(t, got[2].Rule.Holds)
	require.False(t, got[5].Rule.Holds)
	require.Contains(t, got[7].Untestable, "beyond this preset's contexts")
	require.Equal(t, report.NotTestable, verdict(7, paper(32)))

	// One timed step per configuration (Quick's training) backs no throughput claim; the decode rows stand.
	r = claimsSample()
	for i := range r.Throughput {
		if r.Throughput[i].Skipped == "" {
			r.Throughput[i].StepSeconds = r.Throughput[i].StepSeconds[:1]
		}
	}
	got = Claims(r)
	for _, i := range []int{0, 1, 2, 3} {
		require.Contains(t, got[i].Untestable, "needs ≥ 5 timed repetitions", got[i].Claim)
	}
	for _, i := range []int{4, 5, 6, 7} {
		require.Empty(t, got[i].Untestable, got[i].Claim)
	}
}
