package lm

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/run"
)

func TestRun_TinyTrainsEvaluatesSavesAndReopens(t *testing.T) {
	cfg := Tiny()
	cfg.Out = t.TempDir()
	res, err := Run(cfg, Progress(nil))
	require.NoError(t, err)

	evals := res.History.Evals
	require.GreaterOrEqual(t, len(evals), 2)
	require.Less(t, evals[len(evals)-1].Loss, evals[0].Loss, "validation loss must fall during training")
	require.Less(t, res.Val.Perplexity, float64(res.Tokens.Vocab)/2, "trained model beats a uniform guess by 2x")
	require.Len(t, res.Samples, cfg.NumSamples)
	final := res.Provenance.Config.(*Config)
	require.Equal(t, res.Tokens.Vocab, final.Model.VocabSize)
	require.Equal(t, final.Model.NumParams(), res.NumParams)
	for _, f := range []string{ConfigFile, TokenizerFile, WeightsFile, ResultFile} {
		require.FileExists(t, filepath.Join(cfg.Out, f))
	}
	require.Equal(t, "v0.26.0", res.Provenance.GomlxVer)

	// Reopening the folder gives the same model: same validation perplexity on the same batches.
	m, err := Open(cfg.Out)
	require.NoError(t, err)
	require.Equal(t, res.Val.Loss, mustPerplexity(t, m, cfg).Loss)
	texts, _, err := m.Generate([]string{"the"}, cfg.Sample)
	require.NoError(t, err)
	require.Len(t, texts, 1)
}

func TestRun_BadConfigErrors(t *testing.T) {
	for _, tc := range []struct{ set, mention string }{
		{"model.num_layer=3", `unknown key "model.num_layer"`},
		{"model.width=0", "width"},
		{"model.attention.num_heads=3", "num_heads"},
		{"train.steps=-1", "steps"},
		{"data.seq_len=0", "seq_len"},
		{"data.tokenizer.vocab_size=100000", "larger than the data supports"},
	} {
		cfg := Tiny()
		err := run.Override(&cfg, tc.set)
		if err == nil {
			_, err = Run(cfg, Progress(nil))
		}
		require.Error(t, err, tc.set)
		require.Contains(t, err.Error(), tc.mention, tc.set)
	}
}

func TestOpen_Errors(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "missing"))
	require.ErrorContains(t, err, ConfigFile)

	cfg := Tiny()
	cfg.Out = t.TempDir()
	cfg.Train.Steps, cfg.Train.WarmupSteps = 2, 1
	cfg.NumSamples = 0
	_, err = Run(cfg, Progress(nil))
	require.NoError(t, err)
	w := filepath.Join(cfg.Out, WeightsFile)
	require.NoError(t, os.WriteFile(w, []byte("not safetensors"), 0o644))
	_, err = Open(cfg.Out)
	require.ErrorContains(t, err, WeightsFile)
}

func TestFigures_OptionJSON(t *testing.T) {
	h := &fit.History{
		Steps: []fit.Metrics{{Step: 1, Loss: 5}, {Step: 2, Loss: 4}, {Step: 3, Loss: 3.5}},
		Evals: []fit.EvalMetrics{{Step: 2, Loss: 4.2, Perplexity: math.Exp(4.2)}, {Step: 3, Loss: 3.9, Perplexity: math.Exp(3.9)}},
	}
	opt := LossCurves(h).RenderSnippet().Option
	require.Contains(t, opt, `"name":"train loss"`)
	require.Contains(t, opt, `"name":"validation loss"`)
	require.Contains(t, opt, `"type":"log"`)
	require.Contains(t, opt, "Baseline LM: loss")
	require.Contains(t, PerplexityCurve(h).RenderSnippet().Option, `"name":"validation perplexity"`)
}
