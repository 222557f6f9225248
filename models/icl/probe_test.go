package icl

import (
	"math"
	"testing"

	"github.com/protolab/protolab/workbench/run"
)

func TestFitLogistic_SeparatesAndChances(t *testing.T) {
	rng := run.RNG(1, "probe")
	var x [][]float64
	var y, noise []bool
	for i := 0; i < 400; i++ {
		v := []float64{rng.NormFloat64(), rng.NormFloat64()}
		x = append(x, v)
		y = append(y, 2*v[0]-v[1] > 0.3)
		noise = append(noise, rng.IntN(2) == 1)
	}
	if acc := accuracy(fitLogistic(x[:200], y[:200]), x[200:], y[200:]); acc < 0.97 {
		t.Errorf("separable labels: accuracy %.3f, want ≥ 0.97", acc)
	}
	if acc := accuracy(fitLogistic(x[:200], noise[:200]), x[200:], noise[200:]); math.Abs(acc-0.5) > 0.12 {
		t.Errorf("random labels: accuracy %.3f, want ≈ 0.5", acc)
	}
}
