package decoder

import (
	"strings"
	"testing"

	"github.com/protolab/protolab/layers/deltanet"
	"github.com/protolab/protolab/layers/mamba"
)

// NewMixer fills the recurrent mixers' zero init stds from the decoder, σ and σ/√(2L), keeps set ones, and reports
// a layer configuration error with the mixer's name and the block.
func TestRecurrentMixer_FillsInitAndValidates(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Width, cfg.NumLayers, cfg.InitStd = 128, 8, 0.02
	check := func(t *testing.T, initStd, outputInitStd float64, wantOutput float64) {
		t.Helper()
		if initStd != 0.02 || outputInitStd != wantOutput {
			t.Fatalf("init_std=%g, output_init_std=%g, want 0.02 and %g", initStd, outputInitStd, wantOutput)
		}
	}
	t.Run(MixerDeltaNet, func(t *testing.T) {
		c := cfg
		c.Mixer, c.DeltaNet = MixerDeltaNet, deltanet.DefaultConfig()
		mx, err := NewMixer(c, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := mx.(recurrentMixer[deltanet.Config]).cfg
		check(t, got.InitStd, got.OutputInitStd, 0.02/4) // σ/√16
		c.DeltaNet.OutputInitStd = 0.5
		mx, _ = NewMixer(c, 0)
		got = mx.(recurrentMixer[deltanet.Config]).cfg
		check(t, got.InitStd, got.OutputInitStd, 0.5)
		c.DeltaNet.NumHeads = 3
		if _, err := NewMixer(c, 5); err == nil || !strings.HasPrefix(err.Error(), "decoder: deltanet (layer 5): ") {
			t.Fatalf("NewMixer with num_heads=3 at width 128: error %v, want one starting \"decoder: deltanet (layer 5): \"", err)
		}
	})
	t.Run(MixerMamba, func(t *testing.T) {
		c := cfg
		c.Mixer, c.Mamba = MixerMamba, mamba.DefaultConfig()
		mx, err := NewMixer(c, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := mx.(recurrentMixer[mamba.Config]).cfg
		check(t, got.InitStd, got.OutputInitStd, 0.02/4)
		c.Mamba.StateSize = 0
		if _, err := NewMixer(c, 5); err == nil || !strings.HasPrefix(err.Error(), "decoder: mamba (layer 5): ") {
			t.Fatalf("NewMixer with state_size=0: error %v, want one starting \"decoder: mamba (layer 5): \"", err)
		}
	})
}

// With DropFFN a block is h + mix(RMSNorm(h)) only: no "ffn" or "ffn_norm" variables, and NumParams drops
// L·(D + 3·D·F) parameters.
func TestDropFFN_RemovesTheFFNSubBlock(t *testing.T) {
	cfg := mixerSpecs()[MixerMamba].cases[0].cfg
	with := cfg.NumParams()
	cfg.DropFFN = true
	D, F := cfg.Width, cfg.FFNWidth()
	if got, want := cfg.NumParams(), with-cfg.NumLayers*(D+3*D*F); got != want {
		t.Fatalf("NumParams with drop_ffn = %d, want %d", got, want)
	}
	checkStepMatchesLogits(t, cfg, 220, 5) // also checks the created variables hold NumParams values
}
