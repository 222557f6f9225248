package prism

import (
	"fmt"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"

	"github.com/protolab/protolab/workbench/wbtest"
)

// headVariants are the configurations the head tests run: both activation scales and both residual variants.
func headVariants() map[string]Config {
	out := map[string]Config{}
	for _, scale := range []string{ScaleCos, ScaleNorm} {
		for _, res := range []string{ResidualAutodiff, ResidualStopGrad} {
			cfg := testConfig()
			cfg.ActivationScale, cfg.Residual = scale, res
			out[scale+"/"+res] = cfg
		}
	}
	return out
}

func requireHeadMatches(t *testing.T, label string, want refOut, got graphOut, tol float64) {
	t.Helper()
	wbtest.RequireClose(t, label+" scores", want.scores, got["scores"], tol)
	wbtest.RequireClose(t, label+" indices", intsAsFloats(want.indices), got["indices"], 0)
	wbtest.RequireClose(t, label+" activations", want.acts, got["acts"], tol)
	wbtest.RequireClose(t, label+" codes", want.codes, got["codes"], tol)
	wbtest.RequireClose(t, label+" reconstruction", want.recon, got["recon"], tol)
	wbtest.RequireClose(t, label+" residual", want.resid, got["resid"], tol)
	wbtest.RequireClose(t, label+" logits", want.logits, got["logits"], tol)
}

func TestDecompose_MatchesReference(t *testing.T) {
	for name, cfg := range headVariants() {
		c := newCase(1)
		requireHeadMatches(t, name, referencePrism(c, cfg), c.run(t, cfg), tolParity)
	}
}

func TestDecomposeMasked_MatchesReference(t *testing.T) {
	for _, allowed := range [][]bool{
		{true, false, true, true, false, true, false},   // 4 allowed ≥ k
		{false, false, true, false, false, true, false}, // 2 allowed < k: the third slot is disallowed, a = 0
	} {
		c := newCase(2)
		c.allowed = allowed
		cfg := testConfig()
		want, got := referencePrism(c, cfg), c.run(t, cfg)
		requireHeadMatches(t, fmt.Sprint(allowed), want, got, tolParity)
		for i, idx := range got["indices"] {
			if !allowed[int(idx)] && got["acts"][i] != 0 {
				t.Fatalf("allowed=%v: disallowed prototype %d has activation %g", allowed, int(idx), got["acts"][i])
			}
		}
	}
}

func TestDecomposeAndLosses_Float32MatchReference(t *testing.T) {
	c := newCase(3)
	cfg := testConfig()
	want := referencePrism(c, cfg)
	in := c.inputs(nil)
	for i := range 3 {
		in[i] = tensors.FromFlatDataAndDimensions(f32(wbtest.Flat64(in[i].(*tensors.Tensor))), in[i].(*tensors.Tensor).Shape().Dimensions...)
	}
	outs := MustExecOnceN(wbtest.Backend(t), func(nodes []*Node) []*Node {
		d := Decompose(nodes[inH], nodes[inBank], nodes[inW], cfg)
		l := Losses(d, nodes[inTargets], nil)
		return []*Node{d.Scores, d.Indices, d.Activations, d.Reconstruction, d.Logits,
			Stack([]*Node{l.CE, l.Rec, l.R1, l.R2, l.Total}, 0)}
	}, in...)
	wbtest.RequireClose(t, "float32 scores", want.scores, asFloats(outs[0]), tolF32)
	wbtest.RequireClose(t, "float32 indices", intsAsFloats(want.indices), asFloats(outs[1]), 0)
	wbtest.RequireClose(t, "float32 activations", want.acts, asFloats(outs[2]), tolF32)
	wbtest.RequireClose(t, "float32 reconstruction", want.recon, asFloats(outs[3]), tolF32)
	wbtest.RequireClose(t, "float32 logits", want.logits, asFloats(outs[4]), tolF32)
	wbtest.RequireClose(t, "float32 losses [CE REC R1 R2 total]", []float64{want.ce, want.rec, want.r1, want.r2, want.total},
		asFloats(outs[5]), tolF32)
}

func f32(x []float64) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}

// TestDecompose_SlicesSumToLogit checks exact additivity (spec §2.1): for the gold token, Σ_j a_{t,i_j}(W p_{i_j})_y
// + (W r_t)_y = l_t[y]; at chosen positions the full slices sum to the logit rows; each slice equals a·Signatures[i];
// both residual variants.
func TestDecompose_SlicesSumToLogit(t *testing.T) {
	positions := []int32{0, 4, 7, 9}
	for name, cfg := range headVariants() {
		c := newCase(4)
		outs := MustExecOnceN(wbtest.Backend(t), func(nodes []*Node) []*Node {
			d := Decompose(nodes[inH], nodes[inBank], nodes[inW], cfg)
			proto, resid := d.TokenSlices(nodes[inTargets])
			pProto, pResid := d.PositionSlices(Const(nodes[0].Graph(), positions))
			return []*Node{d.Logits, proto, resid, pProto, pResid, Signatures(nodes[inBank], nodes[inW]), d.Indices,
				d.Activations}
		}, c.inputs(nil)...)
		logits, proto, resid := asFloats(outs[0]), asFloats(outs[1]), asFloats(outs[2])
		pProto, pResid, sig := asFloats(outs[3]), asFloats(outs[4]), asFloats(outs[5])
		idx, acts := asFloats(outs[6]), asFloats(outs[7])
		for tok := range tB * tT {
			sum := resid[tok]
			for j := range tk {
				sum += proto[tok*tk+j]
			}
			want := logits[tok*tV+c.targets[tok]]
			if !wbtest.Close(want, sum, tolParity) {
				t.Fatalf("%s token %d: slices sum to %.17g, logit %.17g", name, tok, sum, want)
			}
		}
		for n, pos := range positions {
			rowSum := make([]float64, tV)
			for v := range tV {
				rowSum[v] = pResid[n*tV+v]
				for j := range tk {
					s := pProto[(n*tk+j)*tV+v]
					rowSum[v] += s
					i := int(idx[int(pos)*tk+j])
					if want := acts[int(pos)*tk+j] * sig[i*tV+v]; !wbtest.Close(want, s, tolParity) {
						t.Fatalf("%s position %d slot %d vocab %d: slice %.17g, a·signature %.17g", name, pos, j, v, s, want)
					}
				}
			}
			wbtest.RequireClose(t, fmt.Sprintf("%s position %d slices summed", name, pos), logits[int(pos)*tV:int(pos+1)*tV],
				rowSum, tolParity)
		}
	}
}

// TestTopK_SelectsExactlyK checks, on random tokens and on constructed ties, that every token has exactly k distinct
// indices, Selected marks exactly them, Codes is non-zero only there, and ties go to the lower index.
func TestTopK_SelectsExactlyK(t *testing.T) {
	c := newCase(5)
	// Ties: prototype 4 duplicates 1 (a scaled copy would not tie exactly: ε in the cosine favours the longer one).
	copy(c.bank[4*tD:5*tD], c.bank[1*tD:2*tD])
	// Token 0 points along prototype 1 (= 4): both tie at the top, 1 must come first.
	copy(c.h[0:tD], c.bank[tD:2*tD])
	// Token 2 is zero: every cosine is 0, so the selection is 0, 1, …, k−1 and every activation is 0.
	for d := range tD {
		c.h[2*tD+d] = 0
	}
	cfg := testConfig()
	for _, k := range []int{1, tk, tK} {
		cfg.TopK = k
		outs := MustExecOnceN(wbtest.Backend(t), func(nodes []*Node) []*Node {
			d := Decompose(nodes[inH], nodes[inBank], nodes[inW], cfg)
			return []*Node{d.Indices, d.Selected, d.Codes, d.Activations}
		}, c.inputs(nil)...)
		idx, sel, codes, acts := asFloats(outs[0]), asFloats(outs[1]), asFloats(outs[2]), asFloats(outs[3])
		want := referencePrism(c, cfg)
		wbtest.RequireClose(t, fmt.Sprintf("k=%d indices", k), intsAsFloats(want.indices), idx, 0)
		for tok := range tB * tT {
			seen := map[int]bool{}
			nonZero := 0
			for j := range k {
				i := int(idx[tok*k+j])
				if seen[i] {
					t.Fatalf("k=%d token %d: index %d selected twice: %v", k, tok, i, idx[tok*k:(tok+1)*k])
				}
				seen[i] = true
				if acts[tok*k+j] != 0 {
					nonZero++
				}
			}
			nSel, nCodes := 0, 0
			for i := range tK {
				if sel[tok*tK+i] == 1 {
					nSel++
					if !seen[i] {
						t.Fatalf("k=%d token %d: Selected marks %d, not in the indices", k, tok, i)
					}
				}
				if codes[tok*tK+i] != 0 {
					nCodes++
					if !seen[i] {
						t.Fatalf("k=%d token %d: code %d non-zero but not selected", k, tok, i)
					}
				}
			}
			if len(seen) != k || nSel != k || nCodes != nonZero || nCodes > k {
				t.Fatalf("k=%d token %d: %d distinct indices, %d selected, %d non-zero codes (%d activations); want k, k, ≤ k",
					k, tok, len(seen), nSel, nCodes, nonZero)
			}
		}
		if k >= 2 {
			if idx[0] != 1 || idx[1] != 4 {
				t.Fatalf("k=%d: tied prototypes 1 and 4 selected as %v, want 1 then 4", k, idx[0:2])
			}
			for j := range k {
				if idx[2*k+j] != float64(j) || acts[2*k+j] != 0 {
					t.Fatalf("k=%d: zero token selected %v with activations %v, want 0…k−1 and zeros", k,
						idx[2*k:3*k], acts[2*k:3*k])
				}
			}
		}
	}
}

// TestTopK_GradientMatchesDenseMask checks the two-pass top-k against the dense-mask reference of spec §12: all K
// cosines with gradients, multiplied by the selection mask. The gradients of a random projection of ẑ, the codes
// and the logits agree, and the bank rows no token selected get exactly zero gradient.
func TestTopK_GradientMatchesDenseMask(t *testing.T) {
	c := newCase(6)
	// Tokens lie in a cone around a unit vector u and prototype 6 is −u, so no token selects it.
	u := wbtest.Normal(wbtest.RNG(61), tD, 1)
	un := norm(u)
	for d := range tD {
		u[d] /= un
		c.bank[6*tD+d] = -u[d]
	}
	for tok := range tB * tT {
		for d := range tD {
			c.h[tok*tD+d] += 3 * u[d]
		}
	}
	for name, cfg := range headVariants() {
		cfg.Residual = ResidualStopGrad // so the logits carry bank gradients too
		rng := wbtest.RNG(60)
		cz := wbtest.Normal(rng, tB*tT*tD, 1)
		cc := wbtest.Normal(rng, tB*tT*tK, 1)
		cl := wbtest.Normal(rng, tB*tT*tV, 1)
		project := func(g *Graph, zhat, codes, logits *Node) *Node {
			return Add(Add(ReduceAllSum(Mul(zhat, Const(g, wbtest.Tensor64(cz, tB, tT, tD)))),
				ReduceAllSum(Mul(codes, Const(g, wbtest.Tensor64(cc, tB, tT, tK))))),
				ReduceAllSum(Mul(logits, Const(g, wbtest.Tensor64(cl, tB, tT, tV)))))
		}
		outs := MustExecOnceN(wbtest.Backend(t), func(nodes []*Node) []*Node {
			g, h, bank, W := nodes[0].Graph(), nodes[inH], nodes[inBank], nodes[inW]
			d := Decompose(h, bank, W, cfg)
			twoPass := project(g, d.Reconstruction, d.Codes, d.Logits)
			// Dense-mask reference: a = mask ⊙ ReLU(cos) over all K, with gradients.
			cos := Cosines(h, bank)
			a := MaxScalar(cos, 0.0)
			if cfg.ActivationScale == ScaleNorm {
				a = Mul(a, Div(InsertAxes(norms(h), -1), Reshape(AddScalar(norms(bank), Eps), 1, 1, tK)))
			}
			a = Mul(a, ConvertDType(StopGradient(d.Selected), dtypes.Float64))
			zhat := Einsum("btk,kd->btd", a, bank)
			logits := Einsum("btd,vd->btv", Add(Sub(h, StopGradient(zhat)), zhat), W)
			dense := project(g, zhat, a, logits)
			gTwo := Gradient(twoPass, h, bank, W)
			gDense := Gradient(dense, h, bank, W)
			return append(append(append(gTwo, gDense...), twoPass, dense), d.Selected)
		}, c.inputs(nil)...)
		for i, v := range []string{"h", "bank", "W"} {
			wbtest.RequireClose(t, name+" ∂/∂"+v+" two-pass vs dense mask", wbtest.Flat64(outs[3+i]), wbtest.Flat64(outs[i]), 1e-12)
		}
		wbtest.RequireClose(t, name+" value", wbtest.Flat64(outs[7]), wbtest.Flat64(outs[6]), 1e-12)
		sel := asFloats(outs[8])
		gBank := wbtest.Flat64(outs[1])
		unused, sixUsed := 0, false
		for i := range tK {
			used := false
			for tok := range tB * tT {
				used = used || sel[tok*tK+i] == 1
			}
			if used {
				sixUsed = sixUsed || i == 6
				continue
			}
			unused++
			for d := range tD {
				if gBank[i*tD+d] != 0 {
					t.Fatalf("%s: prototype %d is never selected but has gradient %g", name, i, gBank[i*tD+d])
				}
			}
		}
		if sixUsed || unused == 0 {
			t.Fatalf("%s: the construction failed: prototype 6 selected or every prototype used (%d unused)", name, unused)
		}
	}
}
