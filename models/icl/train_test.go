package icl

import (
	"math"
	"testing"

	"github.com/protolab/protolab/layers/linattn"
	"github.com/protolab/protolab/theory/meanfield"
	"github.com/protolab/protolab/theory/prior"
	"github.com/protolab/protolab/workbench/stats"
)

// TestTrain_ModelCReachesLMMSE: a trained model C is the best linear readout of M linear keys, whose MSE on real
// tokens is LMMSE with the per-node noise τ_n² (spec §4.4, meanfield.LMMSETokens, computed without this package).
// Tolerance: 4 standard errors of the test MSE plus 3% of the value for the optimisation left after Adam on batches
// of 32 noisy contexts (the allowance of experiments/fvec's TestRun_TinyModelCMatchesLMMSE).
func TestTrain_ModelCReachesLMMSE(t *testing.T) {
	d := Data{Tokens: 16, LabelNoise: 0.1, Batch: 32}
	m := linattn.Config{Kind: linattn.KindC, Measurements: 2, Activation: linattn.ReLU, InitScale: 1}
	tree := prior.Tree{Depth: 3, Alpha: 0.6}
	model, _ := trainOnTree(t, m, d, 600, Generate(tree, 64, d.Tokens, d.LabelNoise, 2, "val"))
	out, err := model.Evaluate(Generate(tree, 2000, d.Tokens, d.LabelNoise, 3, "test"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	mse, se := stats.MeanSE(out.SE)
	want := meanfield.LMMSETokens(tree, 2, d.LabelNoise, d.Tokens)
	if tol := 4*se + 0.03*want; math.Abs(mse-want) > tol {
		t.Errorf("C at M=2: MSE %.4f ± %.4f, LMMSE with per-node noise %.4f (|diff| > %.4f)", mse, se, want, tol)
	}
	if n := len(model.History.Evals); n < 1 || model.History.Evals[n-1].Step != 600 {
		t.Errorf("validation points %v, want one at the last step", model.History.Evals)
	}
}
