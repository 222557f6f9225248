package decoder

import (
	"strings"
	"testing"

	"github.com/protolab/protolab/layers/deltanet"
	"github.com/protolab/protolab/layers/mamba"
)

// NewMixer reports a recurrent layer's configuration error with the mixer's name and the block (the policy's
// init stds are TestProjectionStds_Policies').
func TestRecurrentMixer_Validates(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Width, cfg.NumLayers = 128, 8
	t.Run(MixerDeltaNet, func(t *testing.T) {
		c := cfg
		c.Mixer, c.DeltaNet = MixerDeltaNet, deltanet.DefaultConfig()
		if _, err := NewMixer(c, 0); err != nil {
			t.Fatal(err)
		}
		c.DeltaNet.NumHeads = 3
		if _, err := NewMixer(c, 5); err == nil || !strings.HasPrefix(err.Error(), "decoder: deltanet (layer 5): ") {
			t.Fatalf("NewMixer with num_heads=3 at width 128: error %v, want one starting \"decoder: deltanet (layer 5): \"", err)
		}
	})
	t.Run(MixerMamba, func(t *testing.T) {
		c := cfg
		c.Mixer, c.Mamba = MixerMamba, mamba.DefaultConfig()
		if _, err := NewMixer(c, 0); err != nil {
			t.Fatal(err)
		}
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
