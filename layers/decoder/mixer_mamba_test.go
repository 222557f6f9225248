package decoder

import (
	"testing"

	"github.com/protolab/protolab/layers/mamba"
)

// checkStepMatchesLogits and recurrentTestConfig are in mixer_deltanet_test.go.

func TestMambaMixer_StepMatchesLogits(t *testing.T) {
	cfg := recurrentTestConfig()
	mc := mamba.DefaultConfig()
	mc.StateSize = 4 // d_in = 24, dt_rank = 1; chunk ⌈√7⌉ = 3: three chunks, the last padded
	cfg.Mixer, cfg.Mamba = MixerMamba, mc
	checkStepMatchesLogits(t, cfg, 210, 7)
}

func TestNewMambaMixer_FillsInitAndValidates(t *testing.T) {
	mx, err := newMambaMixer(mamba.DefaultConfig(), 128, 8, 0, 0.02)
	if err != nil {
		t.Fatal(err)
	}
	got := mx.(mambaMixer).cfg
	if got.InitStd != 0.02 || got.OutputInitStd != 0.02/4 {
		t.Fatalf("init_std=%g, output_init_std=%g, want 0.02 and 0.02/√16", got.InitStd, got.OutputInitStd)
	}
	bad := mamba.DefaultConfig()
	bad.StateSize = 0
	if _, err := newMambaMixer(bad, 128, 8, 5, 0.02); err == nil {
		t.Fatal("newMambaMixer accepted state_size=0")
	}
}

// With DropFFN a block is h + mix(RMSNorm(h)) only: no "ffn" or "ffn_norm" variables, and NumParams drops
// L·(D + 3·D·F) parameters.
func TestDropFFN_RemovesTheFFNSubBlock(t *testing.T) {
	cfg := recurrentTestConfig()
	cfg.Mixer, cfg.Mamba.StateSize = MixerMamba, 4
	with := cfg.NumParams()
	cfg.DropFFN = true
	D, F := cfg.Width, cfg.FFNWidth()
	if got, want := cfg.NumParams(), with-cfg.NumLayers*(D+3*D*F); got != want {
		t.Fatalf("NumParams with drop_ffn = %d, want %d", got, want)
	}
	checkStepMatchesLogits(t, cfg, 220, 5) // also checks the created variables hold NumParams values
}
