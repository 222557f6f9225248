package prism

import (
	"math"
	"testing"

	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"

	"github.com/protolab/protolab/workbench/wbtest"
)

// coverageBatch runs CoverageStats(Cosines(z, bank), mask) and RecRatio-free inputs: z [1, T, 2].
func coverageBatch(t *testing.T, z []float64, mask []bool, bank []float64) (protoMax, tokenMax *tensors.Tensor) {
	t.Helper()
	T, K := len(z)/2, len(bank)/2
	outs := MustExecOnceN(wbtest.Backend(t), func(zn, bn, mn *Node) []*Node {
		pm, tm := CoverageStats(Cosines(zn, bn), mn)
		return []*Node{pm, tm}
	}, wbtest.Tensor64(z, 1, T, 2), wbtest.Tensor64(bank, K, 2), tensors.FromFlatDataAndDimensions(mask, 1, T))
	return outs[0], outs[1]
}

// TestCoverage_HandExample: bank p0 = (1, 0), p1 = (0, 1), p2 = (−1, 0); tokens (1, 0), (1, 1) in batch 1 and
// (0, 2), (3, −3) in batch 2 with the last a pad. Max cosines over the three real tokens: p0 1, p1 1, p2 0, so
// R̄1 = 2/3 and 2 of 3 prototypes exceed τ = 0.9; per token 1, 1/√2, 1, so R2 = (2 + 1/√2)/3 and 2 of 3 tokens
// exceed τ. Cosines carry the ε = 1e−6 of the denominator, hence the 1e−5 tolerance.
func TestCoverage_HandExample(t *testing.T) {
	bank := []float64{1, 0, 0, 1, -1, 0}
	cov := NewCoverage(3, 0.9)
	pm, tm := coverageBatch(t, []float64{1, 0, 1, 1}, []bool{true, true}, bank)
	if err := cov.Add(pm, tm, wbtest.Tensor64([]float64{0.5, 0.25}, 1, 2), nil); err != nil {
		t.Fatal(err)
	}
	pm, tm = coverageBatch(t, []float64{0, 2, 3, -3}, []bool{true, false}, bank)
	if err := cov.Add(pm, tm, nil, tensors.FromFlatDataAndDimensions([]bool{true, false}, 1, 2)); err != nil {
		t.Fatal(err)
	}
	m, err := cov.Metrics()
	if err != nil {
		t.Fatal(err)
	}
	got := []float64{m.R1Bar, m.R2, m.R1Frac, m.R2Frac, m.RecRatio, float64(m.Tokens), float64(m.RecTokens), m.Threshold}
	want := []float64{2.0 / 3, (2 + 1/math.Sqrt2) / 3, 2.0 / 3, 2.0 / 3, 0.375, 3, 2, 0.9}
	wbtest.RequireClose(t, "coverage metrics [R̄1 R2 R1frac R2frac rec tokens recTokens τ]", want, got, 1e-5)
}

func TestCoverage_Errors(t *testing.T) {
	cov := NewCoverage(3, 0.9)
	if _, err := cov.Metrics(); err == nil {
		t.Fatal("Metrics with no tokens: want an error")
	}
	pm := wbtest.Tensor64([]float64{1, 2}, 2)
	tm := wbtest.Tensor64([]float64{1, 2}, 1, 2)
	if err := cov.Add(pm, tm, nil, nil); err == nil {
		t.Fatal("protoMax of 2 values for K=3: want an error")
	}
	pm = wbtest.Tensor64([]float64{1, 2, 3}, 3)
	if err := cov.Add(pm, tm, wbtest.Tensor64([]float64{1}, 1), nil); err == nil {
		t.Fatal("recRatio of the wrong size: want an error")
	}
	if err := cov.Add(pm, tm, nil, tensors.FromFlatDataAndDimensions([]bool{true}, 1)); err == nil {
		t.Fatal("mask of the wrong size: want an error")
	}
	if err := cov.Add(pm, tensors.FromFlatDataAndDimensions([]int32{1, 2}, 2), nil, nil); err == nil {
		t.Fatal("integer tokenMax: want an error")
	}
	if _, err := cov.Metrics(); err == nil {
		t.Fatal("failed Adds must add nothing: want the no-tokens error")
	}
}
