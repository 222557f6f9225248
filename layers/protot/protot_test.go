package protot

import (
	"fmt"
	"math"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"

	"github.com/protolab/protolab/workbench/wbtest"
)

const dtypeF64 = dtypes.Float64

// Awkward test sizes (docs/STYLE.md §11.1): B=2, T=7, D=6, R=3, D_v=4 (not D/2), K=5.
const tB, tT, tD, tR, tDv, tK = 2, 7, 6, 3, 4, 5

// forms lists the parallel forms the parity tests run: the dense Form A, and Form B with Q dividing T or not,
// Q = 1 (every token its own chunk) and Q > T.
func forms() map[string]Config {
	base := testConfig(tR, tDv, tK)
	out := map[string]Config{}
	dense := base
	dense.Form = FormDense
	out["dense"] = dense
	for _, q := range []int{1, 2, 3, 7, 9} {
		c := base
		c.Form, c.ChunkSize = FormChunked, q
		out[fmt.Sprintf("chunked Q=%d", q)] = c
	}
	return out
}

func TestMix_MatchesReference(t *testing.T) {
	for layer := 0; layer < 3; layer++ { // 0: shared routing + conv, 1: read query + conv, 2: neither
		for name, cfg := range forms() {
			f := newFixture(uint64(10+layer), cfg, layer, tB, tT, tD)
			// Right pads in row 1 and an interior pad at t=2 (the value is masked before the convolution).
			f.pad = make([]float64, tB*tT)
			f.pad[1*tT+2], f.pad[1*tT+5], f.pad[1*tT+6] = 1, 1, 1
			want := referenceMix(f.x, f.pad, f.L, NumericsExact).named()
			requireAll(t, fmt.Sprintf("layer %d %s", layer, name), want, f.runMix(t, cfg), allNames, tolParity)
		}
	}
}

// TestMix_Float32MatchesReference runs Mix and MixStep in float32 against the float64 reference (docs/STYLE.md §11.1:
// 1e−5), including a 300-token sequence with chunks of 16 where float32 rounding of the carried state would build
// up.
func TestMix_Float32MatchesReference(t *testing.T) {
	for layer := 0; layer < 3; layer++ {
		cfg := testConfig(tR, tDv, tK)
		cfg.Form, cfg.ChunkSize = FormChunked, 3
		f := newFixture(uint64(15+layer), cfg, layer, tB, tT, tD)
		f.float32 = true
		want := referenceMix(f.x, nil, f.L, NumericsExact).named()
		requireAll(t, fmt.Sprintf("float32 layer %d", layer), want, f.runMix(t, cfg), allNames, tolF32)
		requireAll(t, fmt.Sprintf("float32 step layer %d", layer), want, f.runSteps(t, cfg), allNames, tolF32)
	}
	cfg := testConfig(4, 2, tK)
	cfg.Form, cfg.ChunkSize = FormChunked, 16
	f := newFixture(18, cfg, 1, 1, 300, 4)
	f.L.gamma = []float64{-3, 0, 3, 6}
	f.float32 = true
	want := referenceMix(f.x, nil, f.L, NumericsExact).named()
	requireAll(t, "float32 T=300", want, f.runMix(t, cfg), allNames, tolF32)
	requireAll(t, "float32 step T=300", want, f.runSteps(t, cfg), allNames, tolF32)
}

func TestMix_MatchesReferenceWithMasks(t *testing.T) {
	cfg := testConfig(4, 0, 3) // D_v from the zero value: D/2 = 3; kernel 3
	for layer := 0; layer < 3; layer++ {
		f := newFixture(uint64(20+layer), cfg, layer, tB, tT, tD)
		f.L.writeMask = []float64{1, 0, 2, 1}   // prototype 1 masked on the write side
		f.L.readMask = []float64{1, 1, -0.5, 1} // prototype 2 masked on the read side
		want := referenceMix(f.x, nil, f.L, NumericsExact).named()
		got := f.runMix(t, cfg)
		requireAll(t, fmt.Sprintf("layer %d", layer), want, got, allNames, tolParity)
	}
}

func TestMix_FormsAgree(t *testing.T) {
	// Longer sequence: several chunks carry state, with β near 0 and 1 (γ = ±20) where any underflow would show.
	const T = 50
	for layer := 0; layer < 3; layer++ {
		var dense map[string][]float64
		for _, q := range []int{0, 1, 7, 16, 50, 64} {
			cfg := testConfig(tR, tDv, tK)
			cfg.Form, cfg.ChunkSize = FormChunked, max(q, 1)
			if q == 0 {
				cfg.Form = FormDense
			}
			f := newFixture(30, cfg, layer, 1, T, tD)
			f.L.gamma = []float64{-20, 0.3, 20}
			got := f.runMix(t, cfg)
			if dense == nil {
				dense = got
				continue
			}
			requireAll(t, fmt.Sprintf("layer %d Q=%d vs dense", layer, q), dense, got, allNames, tolParity)
		}
	}
}

func TestMixStep_MatchesMix(t *testing.T) {
	for _, numerics := range []string{NumericsExact, NumericsReference} {
		for layer := 0; layer < 3; layer++ {
			cfg := testConfig(tR, tDv, tK)
			cfg.Numerics, cfg.Form, cfg.ChunkSize = numerics, FormChunked, 3
			f := newFixture(uint64(40+layer), cfg, layer, tB, tT, tD)
			f.L.writeMask = []float64{1, 1, 0}
			f.L.readMask = []float64{0, 1, 1}
			tol := tolParity
			if numerics == NumericsReference {
				tol = tolF32
			}
			requireAll(t, fmt.Sprintf("%s layer %d", numerics, layer), f.runMix(t, cfg), f.runSteps(t, cfg),
				allNames, tol)
		}
	}
}

// TestMixStep_LongSequence compares the chunked and dense parallel forms with the recurrent step over T = 1000
// tokens, with β from 2e−9 to 1−2e−9: the clamp of the mass, underflowing decays and (in reference numerics) the
// saturated weights all occur. Exact numerics take about 2 s; the reference numerics run without -short (the
// attenuation test checks them at T = 2048 against the float32 emulation in -short).
func TestMixStep_LongSequence(t *testing.T) {
	const T = 1000
	numerics := []string{NumericsExact, NumericsReference}
	if testing.Short() {
		numerics = numerics[:1]
	}
	for _, numerics := range numerics {
		cfg := testConfig(4, 2, tK)
		cfg.Numerics, cfg.Form, cfg.ChunkSize = numerics, FormChunked, 64
		f := newFixture(50, cfg, 1, 1, T, 4)
		f.L.gamma = []float64{-20, -1, 3, 20}
		tol := tolParity
		if numerics == NumericsReference {
			tol = tolF32
		}
		par, steps := f.runMix(t, cfg), f.runSteps(t, cfg)
		requireAll(t, numerics, par, steps, allNames, tol)
		dense := cfg
		dense.Form = FormDense
		requireAll(t, numerics+" dense", par, f.runMix(t, dense), allNames, tol)
	}
}

func TestMix_Causal(t *testing.T) {
	for layer := 0; layer < 2; layer++ {
		for _, form := range []string{FormDense, FormChunked} {
			cfg := testConfig(tR, tDv, tK)
			cfg.Form, cfg.ChunkSize = form, 3
			f := newFixture(60, cfg, layer, tB, tT, tD)
			base := f.runMix(t, cfg)
			for pos := 0; pos < tT; pos++ {
				// Perturb every token ≥ pos.
				g := *f
				g.x = append([]float64(nil), f.x...)
				rng := wbtest.RNG(uint64(pos))
				for b := 0; b < tB; b++ {
					for s := pos; s < tT; s++ {
						for d := 0; d < tD; d++ {
							g.x[(b*tT+s)*tD+d] += rng.NormFloat64()
						}
					}
				}
				got := g.runMix(t, cfg)
				for b := 0; b < tB; b++ {
					// M at t ≤ pos (sums over positions < t ≤ pos) and y at t < pos must be bitwise unchanged.
					requireEqualPrefix(t, fmt.Sprintf("layer %d %s M, tokens ≥ %d perturbed", layer, form, pos),
						base[ProbeM], got[ProbeM], b, pos+1, tR*tDv)
					requireEqualPrefix(t, fmt.Sprintf("layer %d %s y, tokens ≥ %d perturbed", layer, form, pos),
						base[ProbeMixOut], got[ProbeMixOut], b, pos, tD)
				}
				if pos < tT-1 && wbtest.MaxAbsDiff(base[ProbeMixOut], got[ProbeMixOut]) == 0 {
					t.Fatalf("layer %d %s: perturbing tokens ≥ %d changed nothing; the test is vacuous", layer, form, pos)
				}
			}
		}
	}
}

// requireEqualPrefix checks that positions t < n of row b are identical in want and got ([B, T, per]).
func requireEqualPrefix(t *testing.T, label string, want, got []float64, b, n, per int) {
	t.Helper()
	for i := b * tT * per; i < (b*tT+min(n, tT))*per; i++ {
		if want[i] != got[i] {
			t.Fatalf("%s: row %d position %d changed: %g → %g", label, b, (i/per)%tT, want[i], got[i])
		}
	}
}

func TestMix_MassNormalisation(t *testing.T) {
	const T = 40
	cfg := testConfig(5, 3, tK)
	cfg.Form, cfg.ChunkSize = FormChunked, 8

	// 0 ≤ den ≤ 1 − β^t; with equal β, Σ_k den = 1 − β^t (Σ_k π = 1); M[0] = 0.
	for _, equal := range []bool{false, true} {
		f := newFixture(70, cfg, 1, 2, T, tD)
		if equal {
			f.L.gamma = []float64{0.7, 0.7, 0.7, 0.7, 0.7}
		}
		got := f.runMix(t, cfg)
		for b := 0; b < 2; b++ {
			for pos := 0; pos < T; pos++ {
				sum := 0.0
				for k := 0; k < 5; k++ {
					den := got[ProbeDen][(b*T+pos)*5+k]
					bound := 1 - math.Pow(sigmoid(f.L.gamma[k]), float64(pos))
					if den < 0 || den > bound+1e-12 {
						t.Fatalf("den[b=%d,t=%d,k=%d]=%g outside [0, 1−β^t=%g]", b, pos, k, den, bound)
					}
					sum += den
				}
				if want := 1 - math.Pow(sigmoid(0.7), float64(pos)); equal && !wbtest.Close(want, sum, tolParity) {
					t.Fatalf("Σ_k den[b=%d,t=%d]=%.15g, want 1−β^t=%.15g", b, pos, sum, want)
				}
			}
			for i := 0; i < 5*3; i++ {
				if m := got[ProbeM][b*T*15+i]; m != 0 {
					t.Fatalf("M[b=%d, t=0] entry %d = %g, want 0", b, i, m)
				}
			}
		}
	}

	// M is a weighted mean of past values: within their per-coordinate range wherever den > 1e−6, and equal to
	// the value when it is constant (layer 2 has no convolution, so equal tokens give equal values).
	for _, constant := range []bool{false, true} {
		layer := 1
		f := newFixture(71, cfg, layer, 2, T, tD)
		if constant {
			layer = 2
			f = newFixture(71, cfg, layer, 2, T, tD)
			for i := range f.x {
				f.x[i] = f.x[i%tD]
			}
		}
		got := f.runMix(t, cfg)
		for b := 0; b < 2; b++ {
			for pos := 1; pos < T; pos++ {
				for k := 0; k < 5; k++ {
					if got[ProbeDen][(b*T+pos)*5+k] <= 1e-6 {
						continue
					}
					for c := 0; c < 3; c++ {
						lo, hi := math.Inf(1), math.Inf(-1)
						for j := 0; j < pos; j++ {
							v := got[ProbeVConv][(b*T+j)*3+c]
							lo, hi = math.Min(lo, v), math.Max(hi, v)
						}
						m := got[ProbeM][((b*T+pos)*5+k)*3+c]
						tol := tolParity * (1 + math.Abs(m))
						if m < lo-tol || m > hi+tol {
							t.Fatalf("layer %d M[b=%d,t=%d,k=%d,c=%d]=%.15g outside the past values' range [%.15g, %.15g]",
								layer, b, pos, k, c, m, lo, hi)
						}
						if constant && !wbtest.Close(lo, m, tolParity) {
							t.Fatalf("constant value %.15g, M[b=%d,t=%d,k=%d,c=%d]=%.15g", lo, b, pos, k, c, m)
						}
					}
				}
			}
		}
	}
}

// TestMix_MaskedChannelContributesNothing masks one prototype and checks that its channel is exactly silent: zero
// routing weight, zero mass and memory, rows that sum to 1 over the rest, and an output that does not change when
// the channel's own decay γ_k changes.
func TestMix_MaskedChannelContributesNothing(t *testing.T) {
	const k = 1
	for layer := 0; layer < 2; layer++ {
		for _, side := range []string{"write", "read"} {
			cfg := testConfig(tR, tDv, tK)
			cfg.Form, cfg.ChunkSize = FormChunked, 3
			f := newFixture(80, cfg, layer, tB, tT, tD)
			plain := f.runMix(t, cfg)
			mask := []float64{1, 1, 1}
			mask[k] = 0
			if side == "write" {
				f.L.writeMask = mask
			} else {
				f.L.readMask = mask
			}
			got := f.runMix(t, cfg)
			label := fmt.Sprintf("layer %d %s mask", layer, side)
			for i := 0; i < tB*tT; i++ {
				piSum, rhoSum := 0.0, 0.0
				for j := 0; j < tR; j++ {
					piSum += got[ProbePi][i*tR+j]
					rhoSum += got[ProbeRho][i*tR+j]
				}
				if !wbtest.Close(1, piSum, tolParity) || !wbtest.Close(1, rhoSum, tolParity) {
					t.Fatalf("%s: row %d sums π=%.15g, ρ=%.15g, want 1", label, i, piSum, rhoSum)
				}
				if side == "write" && (got[ProbePi][i*tR+k] != 0 || got[ProbeDen][i*tR+k] != 0) {
					t.Fatalf("%s: π=%g, den=%g at row %d, want exactly 0", label, got[ProbePi][i*tR+k], got[ProbeDen][i*tR+k], i)
				}
				if (side == "read" || layer == 0) && got[ProbeRho][i*tR+k] != 0 {
					t.Fatalf("%s: ρ=%g at row %d, want exactly 0", label, got[ProbeRho][i*tR+k], i)
				}
			}
			if side == "read" {
				// The write side is untouched by a read mask, in layer 0 too.
				wbtest.RequireClose(t, label+" π", plain[ProbePi], got[ProbePi], 0)
			}
			// Changing γ_k changes nothing downstream of a masked channel.
			f.L.gamma = append([]float64(nil), f.L.gamma...)
			f.L.gamma[k] += 2
			again := f.runMix(t, cfg)
			wbtest.RequireClose(t, label+" y after changing γ_k", got[ProbeMixOut], again[ProbeMixOut], 0)
			if wbtest.MaxAbsDiff(plain[ProbeMixOut], got[ProbeMixOut]) == 0 {
				t.Fatalf("%s: the mask changed nothing", label)
			}
		}
	}
}

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

// TestMix_PadsChangeNothing perturbs the inputs at pad positions (a left pad and an interior pad, which the value
// convolution would carry forward if v were not masked first): num and den are unchanged everywhere and y at
// every non-pad position, exactly.
func TestMix_PadsChangeNothing(t *testing.T) {
	for layer := 0; layer < 3; layer++ {
		cfg := testConfig(tR, tDv, tK)
		cfg.Form, cfg.ChunkSize = FormChunked, 3
		f := newFixture(uint64(120+layer), cfg, layer, tB, tT, tD)
		f.pad = make([]float64, tB*tT)
		pads := []int{tT + 0, tT + 2, 6} // row 1: left and interior pads; row 0: a right pad
		for _, i := range pads {
			f.pad[i] = 1
		}
		base := f.runMix(t, cfg)
		g := *f
		g.x = append([]float64(nil), f.x...)
		rng := wbtest.RNG(121)
		for _, i := range pads {
			for d := 0; d < tD; d++ {
				g.x[i*tD+d] += 3 * rng.NormFloat64()
			}
		}
		got := g.runMix(t, cfg)
		for _, name := range []string{ProbeNum, ProbeDen, ProbeM} {
			wbtest.RequireClose(t, fmt.Sprintf("layer %d %s", layer, name), base[name], got[name], 0)
		}
		for i := 0; i < tB*tT; i++ {
			if f.pad[i] == 1 {
				continue
			}
			wbtest.RequireClose(t, fmt.Sprintf("layer %d y at non-pad row %d", layer, i),
				base[ProbeMixOut][i*tD:(i+1)*tD], got[ProbeMixOut][i*tD:(i+1)*tD], 0)
		}
	}
}
