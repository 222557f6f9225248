package run

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCost_TrainingIsThreeForwardsPerToken(t *testing.T) {
	c := Training(1000, 7, 5)
	require.Equal(t, Cost{Runs: 1, TrainTokens: 1000, Params: 7, TrainFLOPs: 3 * 5 * 1000}, c)
	require.Equal(t, 250.0, Eval(50, 5).EvalFLOPs)
}

func TestCost_AddTimesNote(t *testing.T) {
	a := Training(10, 3, 1).Note("a")
	b := Training(20, 9, 2).Add(Eval(4, 2)).Note("b %d", 2)
	s := a.Add(b)
	require.Equal(t, 2, s.Runs)
	require.Equal(t, int64(30), s.TrainTokens)
	require.Equal(t, 9, s.Params, "Params is the largest model's")
	require.Equal(t, 3.0*10+3*2*20, s.TrainFLOPs)
	require.Equal(t, 8.0, s.EvalFLOPs)
	require.Equal(t, "a; b 2", s.Notes)
	r := s.Times(3)
	require.Equal(t, Cost{Runs: 6, TrainTokens: 90, Params: 9, TrainFLOPs: 3 * s.TrainFLOPs, EvalFLOPs: 24,
		Notes: "a; b 2"}, r)
	require.Equal(t, (r.TrainFLOPs+r.EvalFLOPs)/4, r.Seconds(4))
	require.Equal(t, "a", Cost{}.Note("").Note("a").Notes)
}

func TestSchedule_EvaluationsAsFitRunsThem(t *testing.T) {
	// fit validates every EvalEvery steps and after the last one (once when it is a multiple).
	for _, c := range []struct{ steps, every, want int }{{100, 0, 1}, {100, 50, 2}, {100, 30, 4}, {10, 20, 1}} {
		require.Equal(t, c.want, Schedule{Steps: c.steps, EvalEvery: c.every}.Evaluations(), "%+v", c)
	}
	s := Schedule{Steps: 40, Batch: 8, SeqLen: 32, EvalEvery: 20, EvalBatches: 2, EvalBatch: 4}
	got := s.Cost(11, 100)
	require.Equal(t, int64(40*8*32), got.TrainTokens)
	require.Equal(t, 3.0*100*40*8*32, got.TrainFLOPs)
	require.Equal(t, 100.0*2*2*4*32, got.EvalFLOPs)
	require.Equal(t, 11, got.Params)
}
