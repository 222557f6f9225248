package protot

import (
	"fmt"
	"math"
	"testing"

	"github.com/protolab/protolab/workbench/wbtest"
)

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
