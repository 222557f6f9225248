package decoder

import (
	"fmt"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/protolab/protolab/layers/deltanet"
	"github.com/protolab/protolab/workbench/wbtest"
)

// checkStepMatchesLogits builds cfg's variables, randomizes them, and checks that decoding T tokens one by one with
// Step gives Logits' values at every position (tolerance 1e-10), and that the variables hold cfg.NumParams() values.
func checkStepMatchesLogits(t *testing.T, cfg Config, seed uint64, T int) {
	t.Helper()
	ctx := context.New()
	ctx.SetParam(context.ParamInitialSeed, int64(seed))
	backend := wbtest.Backend(t)
	full := context.MustNewExec(backend, ctx, func(ctx *context.Context, tokens *Node) *Node {
		return Logits(ctx, cfg, tokens)
	})
	tokens := randomTokens(seed, testB, T, cfg.VocabSize)
	full.MustExec(tensors.FromValue(tokens))
	randomizeVariables(t, ctx, seed+1)
	want := wbtest.Flat64(full.MustExec(tensors.FromValue(tokens))[0])

	total := 0
	for v := range ctx.IterVariables() {
		if v.Trainable {
			total += v.Shape().Size()
		}
	}
	if count := cfg.NumParams(); count != total {
		t.Fatalf("parameter count %d, the variables hold %d values", count, total)
	}

	step := context.MustNewExec(backend, ctx.Reuse(), func(ctx *context.Context, in []*Node) []*Node {
		logits, state := Step(ctx, cfg, in[0], in[1], in[2:])
		return append([]*Node{logits}, state...)
	})
	state := NewState(cfg, testB, cfg.MaxLen)
	V := cfg.VocabSize
	for pos := 0; pos < T; pos++ {
		col := make([][]int32, testB)
		for b := range col {
			col[b] = []int32{tokens[b][pos]}
		}
		args := []any{tensors.FromValue(col), int32(pos)}
		for _, s := range state {
			args = append(args, s)
		}
		outs := step.MustExec(args...)
		state = outs[1:]
		wantPos := make([]float64, 0, testB*V)
		for b := 0; b < testB; b++ {
			wantPos = append(wantPos, want[(b*T+pos)*V:(b*T+pos+1)*V]...)
		}
		wbtest.RequireClose(t, fmt.Sprintf("step logits at position %d", pos), wantPos, wbtest.Flat64(outs[0]), tolParity)
	}
}

// recurrentTestConfig is the decoder of the recurrent-mixer tests: V = 11, D = 12, L = 2, F = 20, tied, float64.
func recurrentTestConfig() Config {
	cfg := DefaultConfig()
	cfg.VocabSize, cfg.Width, cfg.NumLayers, cfg.MaxLen, cfg.FFNHidden = 11, 12, 2, 8, 20
	cfg.DType, cfg.NormEpsilon = "float64", 1e-5
	return cfg
}

func TestDeltaNetMixer_StepMatchesLogits(t *testing.T) {
	cfg := recurrentTestConfig()
	mc := deltanet.DefaultConfig()
	mc.NumHeads, mc.ChunkSize = 3, 4 // d = 4; T = 7 gives two chunks, the last padded
	cfg.Mixer, cfg.DeltaNet = MixerDeltaNet, mc
	checkStepMatchesLogits(t, cfg, 200, 7)
}

func TestNewDeltaNetMixer_FillsInitAndValidates(t *testing.T) {
	mx, err := newDeltaNetMixer(deltanet.DefaultConfig(), 128, 8, 0, 0.02)
	if err != nil {
		t.Fatal(err)
	}
	got := mx.(deltaNetMixer).cfg
	if got.InitStd != 0.02 || got.OutputInitStd != 0.02/4 {
		t.Fatalf("init_std=%g, output_init_std=%g, want 0.02 and 0.02/√16", got.InitStd, got.OutputInitStd)
	}
	bad := deltanet.DefaultConfig()
	bad.NumHeads = 3
	if _, err := newDeltaNetMixer(bad, 128, 8, 5, 0.02); err == nil {
		t.Fatal("newDeltaNetMixer accepted num_heads=3 at width 128")
	}
}
