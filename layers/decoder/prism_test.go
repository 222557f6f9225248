package decoder

import (
	"math"
	"testing"

	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/workbench/wbtest"
)

// prismTinyConfig is a PRISM head for the tiny decoders: K = 7, k = 3.
func prismTinyConfig() prism.Config {
	pc := prism.DefaultConfig()
	pc.NumPrototypes, pc.TopK = 7, 3
	pc.InitStd = 0.5
	return pc
}

// TestPrismLoss_MatchesDense runs both tiny decoders (tied and untied) with random weights: under the default
// "autodiff" residual the PRISM logits equal Logits' and L_CE equals NextTokenLoss; Total is the weighted sum of the
// terms; the variables are the dense model's plus "/prism/prototypes" [K, D]; every gradient is finite and the bank
// gets one (from L_REC and L_R1).
func TestPrismLoss_MatchesDense(t *testing.T) {
	pc := prismTinyConfig()
	for _, name := range configNames() {
		cfg := tinyConfigs()[name]
		vars := model.NewStore()
		vars.SetParam(model.ParamInitialSeed, int64(5))
		batch := tensors.FromValue(randomTokens(3, testB, testT+1, cfg.VocabSize))
		var bankGrad *Node
		outs := model.MustExecOnceN(wbtest.Backend(t), vars, func(scope *model.Scope, batch *Node) []*Node {
			total, terms := PrismLoss(scope, cfg, pc, batch)
			inputs := Slice(batch, AxisRange(), AxisRange(0, testT))
			prismLogits := PrismLogits(scope, cfg, pc, inputs)
			dense := Logits(scope, cfg, inputs)
			denseLoss := NextTokenLoss(scope, cfg, batch)
			grads := scope.BuildTrainableVariablesGradientsGraph(total)
			bank := prism.BankVariable(scope).NodeValue(batch.Graph())
			bankGrad = Gradient(total, bank)[0]
			return append([]*Node{total, terms.CE, terms.Rec, terms.R1, terms.R2, prismLogits, dense, denseLoss, bankGrad}, grads...)
		}, batch)
		v := func(i int) float64 { return wbtest.Flat64(outs[i])[0] }
		wbtest.RequireClose(t, name+" logits", wbtest.Flat64(outs[6]), wbtest.Flat64(outs[5]), 1e-12)
		wbtest.RequireClose(t, name+" CE vs NextTokenLoss", []float64{v(7)}, []float64{v(1)}, 1e-12)
		want := v(1) + pc.RecWeight*v(2) + pc.R1Weight*v(3) + pc.R2Weight*v(4)
		wbtest.RequireClose(t, name+" total", []float64{want}, []float64{v(0)}, 1e-12)
		for i, out := range outs[9:] {
			for _, g := range wbtest.Flat64(out) {
				if math.IsNaN(g) || math.IsInf(g, 0) {
					t.Fatalf("%s: gradient %d is not finite", name, i)
				}
			}
		}
		if m := maxAbsFlat(wbtest.Flat64(outs[8])); m == 0 {
			t.Fatalf("%s: the bank has no gradient", name)
		}
		n := 0
		for v := range vars.IterVariables() {
			if v.Trainable {
				n += v.Shape().Size()
			}
		}
		if n != PrismNumParams(cfg, pc) {
			t.Fatalf("%s: %d trainable values, PrismNumParams says %d", name, n, PrismNumParams(cfg, pc))
		}
		bank := prism.BankVariable(vars.RootScope())
		if bank == nil || bank.Scope() != "/prism" || bank.Shape().Dim(0) != pc.NumPrototypes || bank.Shape().Dim(1) != cfg.Width {
			t.Fatalf("%s: bank variable %v, want /prism/prototypes [%d, %d]", name, bank, pc.NumPrototypes, cfg.Width)
		}
	}
}

func maxAbsFlat(x []float64) float64 {
	m := 0.0
	for _, v := range x {
		m = math.Max(m, math.Abs(v))
	}
	return m
}

func TestPrismFLOPsPerToken(t *testing.T) {
	cfg, pc := tinyConfigs()[configNames()[0]], prismTinyConfig()
	D, V, K, k := float64(cfg.Width), float64(cfg.VocabSize), float64(pc.NumPrototypes), float64(pc.TopK)
	want := FLOPsPerToken(cfg, testT) + 2*D*K + 4*k*D
	if got := PrismFLOPsPerToken(cfg, pc, testT); math.Abs(got-want) > 1e-9*want {
		t.Fatalf("PrismFLOPsPerToken = %g, want %g (dense + 2DK + 4kD, V=%g)", got, want, V)
	}
}
