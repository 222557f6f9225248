package prism

import (
	"testing"

	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"

	"github.com/protolab/protolab/workbench/wbtest"
)

// objectiveVariants are the configurations of the bank-objective tests: the defaults (cosine distance, m = 1), and
// squared L2 with the plain L_REC, m = 2, the norm activation scale and other weights. Residual and ClusterGrad
// are set to "autodiff" and "split" on purpose: BankObjective must override them.
func objectiveVariants() map[string]Config {
	def := testConfig()
	alt := testConfig()
	alt.Dist, alt.RecNorm, alt.R1Nearest, alt.ActivationScale = DistSqL2, false, 2, ScaleNorm
	alt.RecWeight, alt.R1Weight, alt.R2Weight = 0.7, 0.3, 1.3
	return map[string]Config{"default": def, "sqL2/no-rec-norm/m=2/norm": alt}
}

// objectiveConsts returns the case's z, W and targets as constants of g.
func objectiveConsts(g *Graph, c refCase) (z, W, targets *Node) {
	tg := make([]int32, len(c.targets))
	for i, v := range c.targets {
		tg[i] = int32(v)
	}
	return ConstTensor(g, wbtest.Tensor64(c.h, c.B, c.T, c.D)), ConstTensor(g, wbtest.Tensor64(c.W, c.V, c.D)),
		ConstTensor(g, tensors.FromFlatDataAndDimensions(tg, c.B, c.T))
}

// BankObjective equals the plain-loop L(P) (doc.go, equation 17) with the head's residual (r0 nil) and with a given
// r0, for which the logits W(r0 + ẑ) differ from W z.
func TestBankObjective_MatchesReference(t *testing.T) {
	for name, cfg := range objectiveVariants() {
		c := newCase(40)
		r0 := wbtest.Normal(wbtest.RNG(41), tB*tT*tD, 0.5)
		out := wbtest.ExecFlat(t, func(in []*Node) []*Node {
			z, W, targets := objectiveConsts(in[0].Graph(), c)
			head, _ := BankObjective(z, in[0], W, targets, nil, cfg)
			given, _ := BankObjective(z, in[0], W, targets, in[1], cfg)
			return []*Node{head, given}
		}, wbtest.Tensor64(c.bank, tK, tD), wbtest.Tensor64(r0, tB, tT, tD))
		wbtest.RequireClose(t, name+" r0 nil", []float64{referenceBankObjective(c, cfg, nil)}, out[0], tolParity)
		wbtest.RequireClose(t, name+" r0 given", []float64{referenceBankObjective(c, cfg, r0)}, out[1], tolParity)
	}
}

// The gradient in the bank of L with r0 = z − ẑ(P_0) matches central finite differences (wbtest.CheckGradients),
// and at P_0 it equals the gradient of the r0 = nil form, whose value does not move with P through the logits.
func TestBankObjective_GradientsMatchFiniteDifferences(t *testing.T) {
	for name, cfg := range objectiveVariants() {
		c := newCase(12)
		requireSelectionGap(t, c, cfg, 1e-3)
		r0 := referencePrism(c, cfg).resid
		loss := func(r0Given bool) func(in []*Node) *Node {
			return func(in []*Node) *Node {
				z, W, targets := objectiveConsts(in[0].Graph(), c)
				var r *Node
				if r0Given {
					r = ConstTensor(in[0].Graph(), wbtest.Tensor64(r0, tB, tT, tD))
				}
				L, _ := BankObjective(z, in[0], W, targets, r, cfg)
				return L
			}
		}
		bank := wbtest.Tensor64(c.bank, tK, tD)
		wbtest.CheckGradients(t, []string{name + " bank"}, [][]float64{c.bank}, [][]int{{tK, tD}}, loss(true))
		grads := wbtest.ExecFlat(t, func(in []*Node) []*Node {
			return []*Node{Gradient(loss(false)(in), in[0])[0], Gradient(loss(true)(in), in[0])[0]}
		}, bank)
		wbtest.RequireClose(t, name+" ∂L/∂P: r0 nil vs r0 = z − ẑ(P_0)", grads[1], grads[0], tolParity)
	}
}
