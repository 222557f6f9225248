package linattn

import (
	"math/rand/v2"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"

	"github.com/protolab/protolab/workbench/wbtest"
)

// This file builds the test cases: each model's graph inputs (tokens and weights as named parameters), its graph
// function and its reference oracle.

// params is an ordered list of named graph inputs with their values and dimensions.
type params struct {
	names []string
	vals  [][]float64
	dims  [][]int
}

// add appends a parameter drawn from N(0, std²) and returns its index.
func (p *params) add(rng *rand.Rand, name string, std float64, dims ...int) int {
	n := 1
	for _, d := range dims {
		n *= d
	}
	p.names = append(p.names, name)
	p.vals = append(p.vals, wbtest.Normal(rng, n, std))
	p.dims = append(p.dims, dims)
	return len(p.names) - 1
}

// tensors returns the parameters as tensors of dtype (float64 or float32), with entry replace set to x.
func (p *params) tensors(dtype dtypes.DType, replace int, x []float64) []any {
	out := make([]any, len(p.vals))
	for i, v := range p.vals {
		if i == replace {
			v = x
		}
		if dtype == dtypes.Float32 {
			f := make([]float32, len(v))
			for j := range v {
				f[j] = float32(v[j])
			}
			out[i] = tensors.FromFlatDataAndDimensions(f, p.dims[i]...)
		} else {
			out[i] = wbtest.Tensor64(v, p.dims[i]...)
		}
	}
	return out
}

// rounded returns the parameter values rounded to float32, for the float32 parity tests.
func (p *params) rounded() *params {
	q := &params{names: p.names, dims: p.dims}
	for _, v := range p.vals {
		r := make([]float64, len(v))
		for i := range v {
			r[i] = float64(float32(v[i]))
		}
		q.vals = append(q.vals, r)
	}
	return q
}

// testCase is one test case: graph inputs, the graph function, and its reference.
type testCase struct {
	p     *params
	graph func(in []*Node, act string) Output
	ref   func(v [][]float64, act string) refOut
}

// tokens adds x [B, N, D] and y [B, N] as inputs 0 and 1.
func tokens(rng *rand.Rand) *params {
	p := &params{}
	p.add(rng, "x", 1, tB, tN, tD)
	p.add(rng, "y", 1, tB, tN)
	return p
}

// addMLP adds an MLP's weights (eq. 2) and returns the index of its first one.
func addMLP(p *params, rng *rand.Rand, prefix string, in, h, out int) int {
	i := p.add(rng, prefix+"/w_1", 0.8, in, h)
	p.add(rng, prefix+"/b_1", 0.3, h)
	p.add(rng, prefix+"/w_2", 0.8, h, out)
	p.add(rng, prefix+"/b_2", 0.3, out)
	return i
}

func refMLPFrom(v [][]float64, i, in, h, out int) refMLPW {
	return refMLPW{in: in, h: h, out: out, w1: v[i], b1: v[i+1], w2: v[i+2], b2: v[i+3]}
}

func mlpFrom(in []*Node, i int) MLPWeights {
	return MLPWeights{W1: in[i], B1: in[i+1], W2: in[i+2], B2: in[i+3]}
}

// addPatch adds donor keys [B, N, M] and a [B, M] mask (entries 0, 1 and one fractional), returning their indices.
func addPatch(p *params, rng *rand.Rand, M int) (keys, mask int) {
	keys = p.add(rng, "donor_keys", 1, tB, tN, M)
	mask = p.add(rng, "mask", 0, tB, M)
	for i := range p.vals[mask] {
		p.vals[mask][i] = float64(i % 2)
	}
	p.vals[mask][len(p.vals[mask])-1] = 0.3
	return keys, mask
}

// caseA is model A with tM layers; with patch, donor keys and a mask are inputs too.
func caseA(rng *rand.Rand, patch bool) testCase {
	p := tokens(rng)
	type idx struct{ wx, wp, b1, w2, b2 int }
	layers := make([]idx, tM)
	for l := 1; l <= tM; l++ {
		s := LayerScope(l)
		layers[l-1].wx = p.add(rng, s+"/w_x", 0.8, tD, tH)
		layers[l-1].wp = -1
		if l > 1 {
			layers[l-1].wp = p.add(rng, s+"/w_p", 2, l-1, tH)
		}
		layers[l-1].b1 = p.add(rng, s+"/b_1", 0.3, tH)
		layers[l-1].w2 = p.add(rng, s+"/w_2", 0.8, tH)
		layers[l-1].b2 = p.add(rng, s+"/b_2", 0.3)
	}
	ro := addMLP(p, rng, "readout", tM, tHo, tD)
	pk, pm := -1, -1
	if patch {
		pk, pm = addPatch(p, rng, tM)
	}
	return testCase{
		p: p,
		graph: func(in []*Node, act string) Output {
			ws := make([]KeyWeights, tM)
			for l, ix := range layers {
				ws[l] = KeyWeights{Wx: in[ix.wx], B1: in[ix.b1], W2: in[ix.w2], B2: in[ix.b2]}
				if ix.wp >= 0 {
					ws[l].Wp = in[ix.wp]
				}
			}
			var pt *Patch
			if patch {
				pt = &Patch{Keys: in[pk], Mask: in[pm]}
			}
			return ForwardA(in[0], in[1], ws, mlpFrom(in, ro), act, testKeyGain, testGain, pt)
		},
		ref: func(v [][]float64, act string) refOut {
			ws := make([]refMLPW, tM)
			for l, ix := range layers {
				// The reference MLP reads the concatenation [x; p]: stack w_x over w_p.
				w1 := append([]float64{}, v[ix.wx]...)
				if ix.wp >= 0 {
					w1 = append(w1, v[ix.wp]...)
				}
				ws[l] = refMLPW{in: tD + l, h: tH, out: 1, w1: w1, b1: v[ix.b1], w2: v[ix.w2], b2: v[ix.b2]}
			}
			var pt *refPatch
			if patch {
				pt = &refPatch{keys: v[pk], mask: v[pm]}
			}
			return refForwardA(v[0], v[1], tB, tN, tD, ws, refMLPFrom(v, ro, tM, tHo, tD), act, testKeyGain, testGain,
				pt)
		},
	}
}

// caseAPrime is model A′ with tM layers.
func caseAPrime(rng *rand.Rand, patch bool) testCase {
	p := tokens(rng)
	q1 := p.add(rng, LayerScope(1)+"/q", 0.8, tD)
	queries := make([]int, tM-1)
	for l := 2; l <= tM; l++ {
		queries[l-2] = addMLP(p, rng, LayerScope(l), l-1, tH, tD)
	}
	ro := addMLP(p, rng, "readout", tM, tHo, tD)
	pk, pm := -1, -1
	if patch {
		pk, pm = addPatch(p, rng, tM)
	}
	return testCase{
		p: p,
		graph: func(in []*Node, act string) Output {
			qs := make([]MLPWeights, tM-1)
			for i, ix := range queries {
				qs[i] = mlpFrom(in, ix)
			}
			var pt *Patch
			if patch {
				pt = &Patch{Keys: in[pk], Mask: in[pm]}
			}
			return ForwardAPrime(in[0], in[1], in[q1], qs, mlpFrom(in, ro), act, testGain, pt)
		},
		ref: func(v [][]float64, act string) refOut {
			qs := make([]refMLPW, tM-1)
			for i, ix := range queries {
				qs[i] = refMLPFrom(v, ix, i+1, tH, tD)
			}
			var pt *refPatch
			if patch {
				pt = &refPatch{keys: v[pk], mask: v[pm]}
			}
			return refForwardAPrime(v[0], v[1], tB, tN, tD, v[q1], qs, refMLPFrom(v, ro, tM, tHo, tD), act, testGain, pt)
		},
	}
}

// caseB is model B with tM heads.
func caseB(rng *rand.Rand, patch bool) testCase {
	p := tokens(rng)
	w1 := p.add(rng, "heads/w_1", 0.8, tM, tD, tH)
	b1 := p.add(rng, "heads/b_1", 0.3, tM, tH)
	w2 := p.add(rng, "heads/w_2", 0.8, tM, tH)
	b2 := p.add(rng, "heads/b_2", 0.3, tM)
	ro := addMLP(p, rng, "readout", tM, tHo, tD)
	pk, pm := -1, -1
	if patch {
		pk, pm = addPatch(p, rng, tM)
	}
	return testCase{
		p: p,
		graph: func(in []*Node, act string) Output {
			var pt *Patch
			if patch {
				pt = &Patch{Keys: in[pk], Mask: in[pm]}
			}
			return ForwardB(in[0], in[1], HeadWeights{W1: in[w1], B1: in[b1], W2: in[w2], B2: in[b2]},
				mlpFrom(in, ro), act, testGain, pt)
		},
		ref: func(v [][]float64, act string) refOut {
			heads := make([]refMLPW, tM)
			for h := range heads {
				// Head h's first layer is w_1[h] [D, H]; its output layer is w_2[h] [H] with bias b_2[h].
				heads[h] = refMLPW{in: tD, h: tH, out: 1, w1: v[w1][h*tD*tH : (h+1)*tD*tH],
					b1: v[b1][h*tH : (h+1)*tH], w2: v[w2][h*tH : (h+1)*tH], b2: v[b2][h : h+1]}
			}
			var pt *refPatch
			if patch {
				pt = &refPatch{keys: v[pk], mask: v[pm]}
			}
			return refForwardB(v[0], v[1], tB, tN, tD, heads, refMLPFrom(v, ro, tM, tHo, tD), act, testGain, pt)
		},
	}
}

// caseC is model C with tM channels.
func caseC(rng *rand.Rand, patch bool) testCase {
	p := tokens(rng)
	wk := p.add(rng, "key/w", 0.8, tM, tD)
	wo := p.add(rng, "readout/w", 0.8, tD, tM)
	pk, pm := -1, -1
	if patch {
		pk, pm = addPatch(p, rng, tM)
	}
	return testCase{
		p: p,
		graph: func(in []*Node, _ string) Output {
			var pt *Patch
			if patch {
				pt = &Patch{Keys: in[pk], Mask: in[pm]}
			}
			return ForwardC(in[0], in[1], in[wk], in[wo], pt)
		},
		ref: func(v [][]float64, _ string) refOut {
			var pt *refPatch
			if patch {
				pt = &refPatch{keys: v[pk], mask: v[pm]}
			}
			return refForwardC(v[0], v[1], tB, tN, tD, tM, v[wk], v[wo], pt)
		},
	}
}

var cases = []struct {
	name string
	make func(*rand.Rand, bool) testCase
}{{"A", caseA}, {"A′", caseAPrime}, {"B", caseB}, {"C", caseC}}
