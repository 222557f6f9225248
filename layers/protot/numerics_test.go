package protot

import (
	"fmt"
	"math"
	"testing"

	"github.com/protolab/protolab/workbench/wbtest"
)

func TestMix_ReferenceNumericsMatchesFloat32Emulation(t *testing.T) {
	for layer := 0; layer < 3; layer++ {
		for _, form := range []string{FormDense, FormChunked} {
			cfg := testConfig(tR, tDv, tK)
			cfg.Numerics, cfg.Form, cfg.ChunkSize = NumericsReference, form, 3
			f := newFixture(uint64(100+layer), cfg, layer, tB, tT, tD)
			f.pad = make([]float64, tB*tT)
			f.pad[tT+6] = 1
			want := referenceMix(f.x, f.pad, f.L, NumericsReference).named()
			requireAll(t, fmt.Sprintf("layer %d %s", layer, form), want, f.runMix(t, cfg), allNames, tolF32)
		}
	}
}

// attenuationCase is one row of the table in docs/spec/protot.md §4.5: M_ref/M_exact with constant routing π = 1/32
// and a constant value, computed there by emulating float32.
type attenuationCase struct {
	beta      float64
	halfBelow int             // first position with ratio < 0.5; 0 for "none" within T = 2048
	at        map[int]float64 // ratio at a position, as the table rounds it (1.0 or 0)
}

var attenuationTable = []attenuationCase{
	{0.5, 61, map[int]float64{256: 0, 512: 0, 2047: 0}},
	{0.7, 117, map[int]float64{256: 0, 512: 0, 2047: 0}},
	{0.8, 186, map[int]float64{256: 0, 512: 0, 2047: 0}},
	{0.9, 393, map[int]float64{256: 1, 512: 0, 2047: 0}},
	{0.95, 806, map[int]float64{256: 1, 512: 1, 2047: 0}},
	{0.99, 0, map[int]float64{256: 1, 512: 1, 2047: 1}},
}

// TestMix_ReferenceNumericsAttenuation reproduces the attenuation table of docs/spec/protot.md §4.5 at T = 2048: R = 32
// prototypes with zero logits give π = 1/32 exactly, one value channel equals 1 at every token (so M_exact = 1),
// and prototype k has the table's k-th β. The reference numerics must match the float32 emulation at every
// position, cross 0.5 within 2% of the table's position, and round to the table's values.
func TestMix_ReferenceNumericsAttenuation(t *testing.T) {
	const T, R, D = 2048, 32, 2
	cfg := testConfig(R, 1, tK)
	cfg.Numerics, cfg.Form = NumericsReference, FormChunked
	f := newFixture(110, cfg, 2, 1, T, D)
	f.L.P = make([]float64, R*D) // zero logits: uniform routing
	f.L.WV = []float64{1, 0}
	f.L.WU = []float64{1, 1}
	for i := range f.x {
		f.x[i] = float64(1 - i%2) // x_t = (1, 0) → v_t = 1
	}
	for k := range f.L.gamma {
		f.L.gamma[k] = math.Log(9) // β = 0.9 beyond the table's rows
		if k < len(attenuationTable) {
			b := attenuationTable[k].beta
			f.L.gamma[k] = math.Log(b / (1 - b))
		}
	}
	got := f.runMix(t, cfg)
	want := referenceMix(f.x, nil, f.L, NumericsReference)
	wbtest.RequireClose(t, "M vs float32 emulation", want.M, got[ProbeM], tolF32)
	exact := cfg
	exact.Numerics = NumericsExact
	for pos, m := range f.runMix(t, exact)[ProbeM][R:] { // t ≥ 1: M_exact = 1
		if !wbtest.Close(1, m, tolParity) {
			t.Fatalf("exact M at flat index %d = %.15g, want 1", R+pos, m)
		}
	}
	for k, row := range attenuationTable {
		ratio := func(pos int) float64 { return got[ProbeM][pos*R+k] }
		first := 0
		for pos := 1; pos < T; pos++ {
			if ratio(pos) < 0.5 {
				first = pos
				break
			}
		}
		if (row.halfBelow == 0) != (first == 0) ||
			math.Abs(float64(first-row.halfBelow)) > 0.02*float64(row.halfBelow) {
			t.Errorf("β=%g: ratio first below 0.5 at position %d, table says ~%d (0 = none)", row.beta, first, row.halfBelow)
		}
		for pos, w := range row.at {
			if math.Abs(ratio(pos)-w) > 0.05 {
				t.Errorf("β=%g: ratio at t=%d is %.4f, table says %.1f", row.beta, pos, ratio(pos), w)
			}
		}
	}
}
