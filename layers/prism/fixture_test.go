package prism

import (
	"math"
	"sort"
	"testing"

	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"

	"github.com/protolab/protolab/workbench/wbtest"
)

const (
	tolParity = 1e-10 // float64 parity with the reference (docs/STYLE.md §11.1)
	tolF32    = 1e-5  // float32 parity
	tolGrad   = 1e-6  // analytic vs finite-difference gradients (docs/STYLE.md §11.2)
)

// Test sizes: awkward on purpose (docs/STYLE.md §11.1).
const tB, tT, tD, tK, tk, tV = 2, 5, 6, 7, 3, 11

// testConfig is DefaultConfig at the test sizes.
func testConfig() Config {
	cfg := DefaultConfig()
	cfg.NumPrototypes, cfg.TopK = tK, tk
	return cfg
}

// newCase draws a seeded case: h ~ N(0, 1), bank ~ N(0, 0.7²), W ~ N(0, 0.5²), random targets, no masks.
func newCase(seed uint64) refCase {
	rng := wbtest.RNG(seed)
	c := refCase{B: tB, T: tT, D: tD, K: tK, V: tV}
	c.h = wbtest.Normal(rng, tB*tT*tD, 1)
	c.bank = wbtest.Normal(rng, tK*tD, 0.7)
	c.W = wbtest.Normal(rng, tV*tD, 0.5)
	c.targets = make([]int, tB*tT)
	for i := range c.targets {
		c.targets[i] = rng.IntN(tV)
	}
	return c
}

// Input positions of caseInputs.
const (
	inH = iota
	inBank
	inW
	inTargets
	inZhat0 // a frozen reconstruction for the "stopgrad" surrogates (zeros unless set)
	inMask  // present only when the case has a mask
)

// caseInputs returns the case's tensors in the in* order; zhat0 may be nil (zeros).
func (c refCase) inputs(zhat0 []float64) []any {
	targets := make([]int32, len(c.targets))
	for i, v := range c.targets {
		targets[i] = int32(v)
	}
	if zhat0 == nil {
		zhat0 = make([]float64, c.B*c.T*c.D)
	}
	in := []any{
		wbtest.Tensor64(c.h, c.B, c.T, c.D),
		wbtest.Tensor64(c.bank, c.K, c.D),
		wbtest.Tensor64(c.W, c.V, c.D),
		tensors.FromFlatDataAndDimensions(targets, c.B, c.T),
		wbtest.Tensor64(zhat0, c.B, c.T, c.D),
	}
	if c.mask != nil {
		in = append(in, tensors.FromFlatDataAndDimensions(c.mask, c.B, c.T))
	}
	return in
}

// maskNode returns the mask input or nil.
func maskNode(nodes []*Node) *Node {
	if len(nodes) > inMask {
		return nodes[inMask]
	}
	return nil
}

// decomposeNodes runs DecomposeMasked when allowed is set, else Decompose.
func (c refCase) decompose(nodes []*Node, cfg Config) Decomposition {
	if c.allowed != nil {
		allowed := Const(nodes[0].Graph(), c.allowed)
		return DecomposeMasked(nodes[inH], nodes[inBank], nodes[inW], allowed, cfg)
	}
	return Decompose(nodes[inH], nodes[inBank], nodes[inW], cfg)
}

// graphOut is a graph evaluation of the head and the losses, flat float64 (indices as floats).
type graphOut map[string][]float64

var outNames = []string{"scores", "indices", "acts", "codes", "recon", "resid", "logits", "selected",
	"ce", "rec", "r1", "r2", "total"}

// run evaluates Decompose and Losses on the case.
func (c refCase) run(t testing.TB, cfg Config) graphOut {
	t.Helper()
	outs := MustExecOnceN(wbtest.Backend(t), func(nodes []*Node) []*Node {
		d := c.decompose(nodes, cfg)
		l := Losses(d, nodes[inTargets], maskNode(nodes))
		return []*Node{d.Scores, d.Indices, d.Activations, d.Codes, d.Reconstruction, d.Residual, d.Logits,
			d.Selected, l.CE, l.Rec, l.R1, l.R2, l.Total}
	}, c.inputs(nil)...)
	got := graphOut{}
	for i, name := range outNames {
		got[name] = asFloats(outs[i])
	}
	return got
}

// asFloats flattens a float, integer or bool tensor to float64.
func asFloats(t *tensors.Tensor) []float64 {
	var out []float64
	t.MustConstFlatData(func(flat any) {
		switch v := flat.(type) {
		case []float64:
			out = append(out, v...)
		case []float32:
			for _, x := range v {
				out = append(out, float64(x))
			}
		case []int32:
			for _, x := range v {
				out = append(out, float64(x))
			}
		case []bool:
			for _, x := range v {
				if x {
					out = append(out, 1)
				} else {
					out = append(out, 0)
				}
			}
		default:
			panic("asFloats: unexpected dtype " + t.DType().String())
		}
	})
	return out
}

func intsAsFloats(v []int) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// requireSelectionGap fails unless every token's k-th and (k+1)-th cosines, every cosine, and the runner-ups of
// the R1/R2 minima are at least gap apart from the decision boundaries, so finite differences do not cross them.
func requireSelectionGap(t *testing.T, c refCase, cfg Config, gap float64) {
	t.Helper()
	o := referencePrism(c, cfg)
	N, K := c.B*c.T, c.K
	for tok := range N {
		s := append([]float64(nil), o.scores[tok*K:(tok+1)*K]...)
		for _, v := range s {
			if math.Abs(v) < gap {
				t.Fatalf("token %d: a cosine %.3g is within %g of the ReLU kink; pick another seed", tok, v, gap)
			}
		}
		sort.Sort(sort.Reverse(sort.Float64Slice(s)))
		for j := 0; j+1 < K; j++ {
			if s[j]-s[j+1] < gap {
				t.Fatalf("token %d: cosines %d and %d differ by %.3g < %g; pick another seed", tok, j, j+1, s[j]-s[j+1], gap)
			}
		}
	}
}

// gradCheck compares Gradient(loss, inputs[i]) for each i in wrt with central finite differences of fdLoss (the
// function whose true derivative the analytic gradient should equal; often loss itself).
func gradCheck(t *testing.T, label string, inputs []any, loss, fdLoss func(nodes []*Node) *Node, wrt map[int]string) {
	t.Helper()
	backend := wbtest.Backend(t)
	order := make([]int, 0, len(wrt))
	for i := range wrt {
		order = append(order, i)
	}
	sort.Ints(order)
	grads := MustExecOnceN(backend, func(nodes []*Node) []*Node {
		l := loss(nodes)
		wrtNodes := make([]*Node, len(order))
		for j, i := range order {
			wrtNodes[j] = nodes[i]
		}
		return Gradient(l, wrtNodes...)
	}, inputs...)
	forward := MustNewExec(backend, fdLoss)
	for j, i := range order {
		base := inputs[i].(*tensors.Tensor)
		dims := base.Shape().Dimensions
		vals := wbtest.Flat64(base)
		f := func(x []float64) float64 {
			in := append([]any(nil), inputs...)
			in[i] = wbtest.Tensor64(x, dims...)
			return wbtest.Flat64(forward.MustExec(in...)[0])[0]
		}
		analytic := wbtest.Flat64(grads[j])
		wbtest.RequireGradient(t, label+" ∂/∂"+wrt[i], f, vals, analytic, tolGrad)
	}
}
