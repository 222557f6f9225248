package protot

import (
	"fmt"
	"math"
	"testing"

	. "github.com/gomlx/gomlx/core/graph"

	"github.com/protolab/protolab/workbench/wbtest"
)

// gradField evaluates, for each float input of the fixture but pad and the masks, the analytic gradient of
// ⟨y, c⟩ and compares it with central finite differences.
func checkGradients(t *testing.T, f *fixture, cfg Config, tol float64) {
	t.Helper()
	fields := f.fields()
	rng := wbtest.RNG(99)
	L := f.L
	cot := wbtest.Normal(rng, L.B*L.T*L.D, 1)
	cotT := wbtest.Tensor64(cot, L.B, L.T, L.D)
	var diff []int // indices of the differentiated fields
	for i, fl := range fields {
		if fl.name != "pad" && fl.name != VarWriteMask && fl.name != VarReadMask {
			diff = append(diff, i)
		}
	}
	grads := MustExecOnceN(wbtest.Backend(t), func(nodes []*Node) []*Node {
		x, pad, p := f.unpack(nodes[:len(fields)])
		y, _ := Mix(x, pad, p, f.layer, cfg)
		loss := ReduceAllSum(Mul(y, nodes[len(fields)]))
		wrt := make([]*Node, len(diff))
		for j, i := range diff {
			wrt[j] = nodes[i]
		}
		return Gradient(loss, wrt...)
	}, append(f.inputs(), cotT)...)
	forward := MustNewExec(wbtest.Backend(t), func(nodes []*Node) *Node {
		x, pad, p := f.unpack(nodes)
		y, _ := Mix(x, pad, p, f.layer, cfg)
		return y
	})
	for j, i := range diff {
		fl := fields[i]
		analytic := wbtest.Flat64(grads[j])
		for _, g := range analytic {
			if math.IsNaN(g) || math.IsInf(g, 0) {
				t.Fatalf("layer %d: gradient of %s is not finite: %v", f.layer, fl.name, analytic)
			}
		}
		loss := func(vals []float64) float64 {
			in := f.inputs()
			in[i] = wbtest.Tensor64(vals, fl.dims...)
			y := wbtest.Flat64(forward.MustExec(in...)[0])
			s := 0.0
			for n := range y {
				s += y[n] * cot[n]
			}
			return s
		}
		wbtest.RequireGradient(t, fmt.Sprintf("layer %d ∂/∂%s", f.layer, fl.name), loss, fl.vals, analytic, tol)
	}
}

func TestMix_Gradients(t *testing.T) {
	for layer := 0; layer < 3; layer++ {
		cfg := testConfig(tR, tDv, tK)
		cfg.Form, cfg.ChunkSize = FormChunked, 3 // padding, intra-chunk and carried paths
		f := newFixture(uint64(90+layer), cfg, layer, tB, tT, tD)
		f.pad = make([]float64, tB*tT)
		f.pad[tT+6] = 1
		if layer == 1 {
			f.L.readMask = []float64{1, 0, 1}
		}
		checkGradients(t, f, cfg, tolGrad)
	}
	// β near 0 and 1 (γ = ±20): gradients stay finite through the masked exponentials, dense form.
	cfg := testConfig(tR, tDv, tK)
	cfg.Form = FormDense
	f := newFixture(95, cfg, 1, tB, tT, tD)
	f.L.gamma = []float64{-20, 0.5, 20}
	checkGradients(t, f, cfg, tolGrad)
}

func TestMix_ReferenceNumericsGradientsFinite(t *testing.T) {
	cfg := testConfig(tR, tDv, tK)
	cfg.Numerics, cfg.Form, cfg.ChunkSize = NumericsReference, FormChunked, 3
	f := newFixture(96, cfg, 1, tB, tT, tD)
	f.L.gamma = []float64{-20, 0.5, 20}
	grads := MustExecOnceN(wbtest.Backend(t), func(nodes []*Node) []*Node {
		x, pad, p := f.unpack(nodes)
		y, _ := Mix(x, pad, p, f.layer, cfg)
		return Gradient(ReduceAllSum(Square(y)), x, p.DecayLogit, p.Value, p.Prototypes)
	}, f.inputs()...)
	for i, g := range grads {
		for _, v := range wbtest.Flat64(g) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("gradient %d not finite: %v", i, wbtest.Flat64(g))
			}
		}
	}
}
