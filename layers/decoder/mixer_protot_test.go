package decoder

import (
	"testing"

	"github.com/protolab/protolab/layers/protot"
)

// protoTTinyConfig is a 3-layer float64 decoder with ProtoT mixers: R = 3, kernel 3, chunks of 2 (several at T = 5).
func protoTTinyConfig() Config {
	cfg := DefaultConfig()
	cfg.VocabSize, cfg.Width, cfg.NumLayers, cfg.MaxLen = 11, 12, 3, 8
	cfg.DType, cfg.NormEpsilon = "float64", 1e-5
	cfg.Mixer = MixerProtoT
	cfg.ProtoT.NumPrototypes, cfg.ProtoT.ConvKernel = 3, 3
	cfg.ProtoT.Form, cfg.ProtoT.ChunkSize = protot.FormChunked, 2
	return cfg
}

// TestProtoTDecoder_StepMatchesLogits runs a 3-layer decoder with ProtoT mixers (layer 0: shared routing and the
// convolution; layer 1: the convolution; layer 2: neither) on random weights: Step token by token equals Logits,
// and the created variables hold NumParams values.
func TestProtoTDecoder_StepMatchesLogits(t *testing.T) {
	cfg := protoTTinyConfig()
	if n := len(StateShapes(cfg, testB, 0)); n != 2+2+1 { // memory per layer, conv buffers in layers 0 and 1
		t.Fatalf("%d state tensors, want 5", n)
	}
	checkStepMatchesLogits(t, cfg, 5, testT)
}
