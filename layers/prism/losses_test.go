package prism

import (
	"fmt"
	"math"
	"testing"

	. "github.com/gomlx/gomlx/core/graph"

	"github.com/protolab/protolab/workbench/wbtest"
)

// lossVariant is one configuration of the loss tests, with the case changes it needs.
type lossVariant struct {
	name string
	cfg  Config
	mask bool // pad tokens 3 and 7
}

func lossVariants() []lossVariant {
	def := testConfig()
	alt := testConfig()
	alt.Dist, alt.RecNorm, alt.R1Nearest, alt.ActivationScale = DistSqL2, false, 2, ScaleNorm
	alt.ClusterGrad, alt.Residual = ClusterGradBoth, ResidualStopGrad
	alt.RecWeight, alt.R1Weight, alt.R2Weight = 0.7, 0.3, 1.3
	masked := testConfig()
	masked.R1Nearest, masked.Residual = 3, ResidualStopGrad
	both := testConfig()
	both.ClusterGrad = ClusterGradBoth
	zero := testConfig()
	zero.RecWeight, zero.R2Weight = 0, 0
	return []lossVariant{
		{"default", def, false},
		{"sqL2/no-rec-norm/m=2/norm/both/stopgrad", alt, false},
		{"masked/m=3/stopgrad", masked, true},
		{"both", both, false},
		{"rec and R2 weights 0", zero, false},
	}
}

func (v lossVariant) newCase(seed uint64) refCase {
	c := newCase(seed)
	if v.mask {
		c.mask = make([]bool, tB*tT)
		for i := range c.mask {
			c.mask[i] = i != 3 && i != 7
		}
	}
	return c
}

func TestLosses_MatchesReference(t *testing.T) {
	for _, v := range lossVariants() {
		c := v.newCase(10)
		want, got := referencePrism(c, v.cfg), c.run(t, v.cfg)
		for _, term := range []struct {
			name string
			want float64
		}{{"ce", want.ce}, {"rec", want.rec}, {"r1", want.r1}, {"r2", want.r2}, {"total", want.total}} {
			wbtest.RequireClose(t, v.name+" "+term.name, []float64{term.want}, got[term.name], tolParity)
		}
	}
}

// TestLosses_PadsChangeNothing: changing a pad token's target and hidden state leaves every term unchanged.
func TestLosses_PadsChangeNothing(t *testing.T) {
	v := lossVariants()[2]
	c := v.newCase(11)
	base := c.run(t, v.cfg)
	c.targets[3] = (c.targets[3] + 1) % tV
	for d := range tD {
		c.h[7*tD+d] *= -2
	}
	moved := c.run(t, v.cfg)
	for _, name := range []string{"ce", "rec", "r1", "r2", "total"} {
		wbtest.RequireClose(t, "pad changed: "+name, base[name], moved[name], tolParity)
	}
}

// surrogate returns the scalar whose true derivative the analytic gradient of Losses(...).Total should equal with
// respect to one input: the stop-gradients of cfg become constants. "split" drops R1 from the derivative in h and R2
// from the one in the bank (their other arguments are stopped); "stopgrad" freezes ẑ inside the logits' residual
// at the input inZhat0 (the base point's reconstruction).
func surrogate(c refCase, cfg Config, wrt int) func(nodes []*Node) *Node {
	return func(nodes []*Node) *Node {
		sc := cfg
		if cfg.ClusterGrad == ClusterGradSplit {
			switch wrt {
			case inH:
				sc.R1Weight = 0
			case inBank:
				sc.R2Weight = 0
			}
		}
		sc.Residual = ResidualAutodiff
		d := c.decompose(nodes, sc)
		if cfg.Residual == ResidualStopGrad {
			d.Logits = Einsum("btd,vd->btv", Add(Sub(nodes[inH], nodes[inZhat0]), d.Reconstruction), nodes[inW])
		}
		return Losses(d, nodes[inTargets], maskNode(nodes)).Total
	}
}

func TestLosses_Gradients(t *testing.T) {
	for _, v := range lossVariants() {
		c := v.newCase(12)
		requireSelectionGap(t, c, v.cfg, 1e-3)
		zhat0 := c.run(t, v.cfg)["recon"]
		in := c.inputs(zhat0)
		loss := func(nodes []*Node) *Node {
			return Losses(c.decompose(nodes, v.cfg), nodes[inTargets], maskNode(nodes)).Total
		}
		for i, name := range map[int]string{inH: "h", inBank: "bank", inW: "W"} {
			gradCheck(t, v.name, in, loss, surrogate(c, v.cfg, i), map[int]string{i: name})
		}
	}
}

func TestDecompose_Gradients(t *testing.T) {
	for name, cfg := range headVariants() {
		c := newCase(13)
		requireSelectionGap(t, c, cfg, 1e-3)
		zhat0 := c.run(t, cfg)["recon"]
		rng := wbtest.RNG(130)
		cots := [][]float64{wbtest.Normal(rng, tB*tT*tV, 1), wbtest.Normal(rng, tB*tT*tD, 1),
			wbtest.Normal(rng, tB*tT*tK, 1), wbtest.Normal(rng, tB*tT*tD, 1)}
		project := func(nodes []*Node, d Decomposition, logits *Node) *Node {
			g := nodes[0].Graph()
			out := ReduceAllSum(Mul(logits, Const(g, wbtest.Tensor64(cots[0], tB, tT, tV))))
			out = Add(out, ReduceAllSum(Mul(d.Reconstruction, Const(g, wbtest.Tensor64(cots[1], tB, tT, tD)))))
			out = Add(out, ReduceAllSum(Mul(d.Codes, Const(g, wbtest.Tensor64(cots[2], tB, tT, tK)))))
			return Add(out, ReduceAllSum(Mul(d.Residual, Const(g, wbtest.Tensor64(cots[3], tB, tT, tD)))))
		}
		loss := func(nodes []*Node) *Node {
			d := Decompose(nodes[inH], nodes[inBank], nodes[inW], cfg)
			return project(nodes, d, d.Logits)
		}
		fdLoss := func(nodes []*Node) *Node {
			sc := cfg
			sc.Residual = ResidualAutodiff
			d := Decompose(nodes[inH], nodes[inBank], nodes[inW], sc)
			logits := d.Logits
			if cfg.Residual == ResidualStopGrad {
				logits = Einsum("btd,vd->btv", Add(Sub(nodes[inH], nodes[inZhat0]), d.Reconstruction), nodes[inW])
			}
			return project(nodes, d, logits)
		}
		gradCheck(t, name, c.inputs(zhat0), loss, fdLoss, map[int]string{inH: "h", inBank: "bank", inW: "W"})
	}
}

// termGrads returns, for cfg, the forward values of the four terms and the logits, and the gradients of each term
// with respect to h, bank and W: grads[term][input].
func termGrads(t *testing.T, c refCase, cfg Config) (values [][]float64, grads [4][3][]float64) {
	t.Helper()
	outs := MustExecOnceN(wbtest.Backend(t), func(nodes []*Node) []*Node {
		d := c.decompose(nodes, cfg)
		l := Losses(d, nodes[inTargets], maskNode(nodes))
		res := []*Node{l.CE, l.Rec, l.R1, l.R2, d.Logits}
		for _, term := range []*Node{l.CE, l.Rec, l.R1, l.R2} {
			res = append(res, Gradient(term, nodes[inH], nodes[inBank], nodes[inW])...)
		}
		return res
	}, c.inputs(nil)...)
	for i := range 5 {
		values = append(values, wbtest.Flat64(outs[i]))
	}
	for term := range 4 {
		for in := range 3 {
			grads[term][in] = wbtest.Flat64(outs[5+3*term+in])
		}
	}
	return values, grads
}

func maxAbs(x []float64) float64 {
	m := 0.0
	for _, v := range x {
		m = math.Max(m, math.Abs(v))
	}
	return m
}

func requireEqual(t *testing.T, label string, want, got []float64) {
	t.Helper()
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("%s[%d]: %.17g vs %.17g, want bit-identical", label, i, got[i], want[i])
		}
	}
}

// TestResidualVariants_DifferWhereSpecSays checks spec §2.2: the variants have identical forward values; under
// "autodiff" ∂L_CE/∂P = 0 exactly and ∂L_CE/∂z is the dense model's Wᵀ(π − e_y)/N; under "stopgrad" L_CE reaches
// P and adds a cosine path to z; ∂L_CE/∂W and every gradient of L_REC, L_R1 and L_R2 are the same in both.
func TestResidualVariants_DifferWhereSpecSays(t *testing.T) {
	c := newCase(14)
	cfgA := testConfig()
	cfgB := cfgA
	cfgB.Residual = ResidualStopGrad
	valA, gA := termGrads(t, c, cfgA)
	valB, gB := termGrads(t, c, cfgB)
	for i, name := range []string{"CE", "REC", "R1", "R2", "logits"} {
		requireEqual(t, "forward "+name, valA[i], valB[i])
	}
	terms := []string{"CE", "REC", "R1", "R2"}
	inputs := []string{"h", "bank", "W"}
	for term := range 4 {
		for in := range 3 {
			if term == 0 && in != 2 {
				continue // CE's h and bank gradients differ by design, checked below
			}
			requireEqual(t, fmt.Sprintf("∂%s/∂%s", terms[term], inputs[in]), gA[term][in], gB[term][in])
		}
	}
	if m := maxAbs(gA[0][1]); m != 0 {
		t.Fatalf("autodiff: ∂L_CE/∂P has max |g| = %g, want exactly 0", m)
	}
	if m := maxAbs(gB[0][1]); m < 1e-3 {
		t.Fatalf("stopgrad: ∂L_CE/∂P has max |g| = %g, want a gradient", m)
	}
	// The dense model's gradient: ∂L_CE/∂z_t = Wᵀ(softmax(l_t) − e_{y_t})/N.
	logits := valA[4]
	dense := make([]float64, tB*tT*tD)
	for tok := range tB * tT {
		l := logits[tok*tV : (tok+1)*tV]
		mx := math.Inf(-1)
		for _, x := range l {
			mx = math.Max(mx, x)
		}
		se := 0.0
		for _, x := range l {
			se += math.Exp(x - mx)
		}
		for v := range tV {
			pv := math.Exp(l[v]-mx) / se
			if v == c.targets[tok] {
				pv--
			}
			for d := range tD {
				dense[tok*tD+d] += pv * c.W[v*tD+d] / float64(tB*tT)
			}
		}
	}
	wbtest.RequireClose(t, "autodiff ∂L_CE/∂z vs dense", dense, gA[0][0], tolParity)
	diff := make([]float64, len(dense))
	for i := range dense {
		diff[i] = gB[0][0][i] - dense[i]
	}
	if m := maxAbs(diff); m < 1e-4 {
		t.Fatalf("stopgrad: ∂L_CE/∂z equals the dense gradient (max diff %g), want the extra cosine path", m)
	}
}

// TestClusterGrad_Routing checks spec §3: with "split", R1 moves only P and R2 only z (the other gradient is
// exactly 0); with "both", each moves both.
func TestClusterGrad_Routing(t *testing.T) {
	c := newCase(15)
	for _, routing := range []string{ClusterGradSplit, ClusterGradBoth} {
		for _, dist := range []string{DistCos, DistSqL2} {
			cfg := testConfig()
			cfg.ClusterGrad, cfg.Dist = routing, dist
			_, g := termGrads(t, c, cfg)
			r1h, r1p, r2h, r2p := maxAbs(g[2][0]), maxAbs(g[2][1]), maxAbs(g[3][0]), maxAbs(g[3][1])
			if r1p == 0 || r2h == 0 || maxAbs(g[2][2]) != 0 || maxAbs(g[3][2]) != 0 {
				t.Fatalf("%s/%s: |∂R1/∂P|=%g, |∂R2/∂z|=%g, want > 0; ∂R1/∂W, ∂R2/∂W want 0", routing, dist, r1p, r2h)
			}
			split := routing == ClusterGradSplit
			if split != (r1h == 0) || split != (r2p == 0) {
				t.Fatalf("%s/%s: |∂R1/∂z|=%g, |∂R2/∂P|=%g; want both 0 iff split", routing, dist, r1h, r2p)
			}
		}
	}
}
