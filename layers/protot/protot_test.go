package protot

import (
	"fmt"
	"testing"

	"github.com/gomlx/compute/dtypes"
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
