package baseline

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/wbtest"
)

func TestLoadOrRun_TinyTrainsSamplesAndStores(t *testing.T) {
	cfg := Tiny()
	out := t.TempDir()
	res, err := Runs.LoadOrRun(cfg, run.Out(out), run.Progress(nil))
	require.NoError(t, err)

	evals := res.Model.History.Evals
	require.GreaterOrEqual(t, len(evals), 2)
	require.Less(t, evals[len(evals)-1].Loss, evals[0].Loss, "validation loss must fall during training")
	require.Less(t, res.Model.Val.Perplexity, float64(res.Model.Tokens.Vocab)/2, "trained model beats a uniform guess by 2x")
	require.Len(t, res.Samples, cfg.NumSamples)
	require.Equal(t, res.Model.Tokens.Vocab, res.Model.Config.Model.VocabSize)
	require.Equal(t, lm.RunDir(out, cfg.Config), res.Dir)
	require.Equal(t, wbtest.GoModVersion(t, "github.com/gomlx/gomlx"), res.Provenance.GomlxVer)
	stored, err := filepath.Glob(filepath.Join(out, Study, "result-*.json"))
	require.NoError(t, err)
	require.Len(t, stored, 1)

	again, err := Runs.LoadOrRun(cfg, run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	require.Equal(t, res.Samples, again.Samples)
	require.Equal(t, res.Model.Val, again.Model.Val)

	// Reopening the model folder gives the same model: the same samples from the same prompts and seed.
	m, err := lm.Open(res.Dir)
	require.NoError(t, err)
	samples, _, err := Samples(m, cfg)
	require.NoError(t, err)
	require.Equal(t, res.Samples, samples)
}

func TestLoadOrRun_BadConfigErrors(t *testing.T) {
	for _, tc := range []struct{ set, mention string }{
		{"model.num_layer=3", `unknown key "model.num_layer"`},
		{"model.width=0", "width"},
		{"model.attention.num_heads=3", "num_heads"},
		{"train.steps=-1", "steps"},
		{"data.seq_len=0", "seq_len"},
		{"prompt_words=0", "prompt_words"},
		{"data.tokenizer.vocab_size=100000", "larger than the data supports"},
	} {
		cfg := Tiny()
		err := run.Override(&cfg, tc.set)
		if err == nil {
			_, err = Runs.LoadOrRun(cfg, run.Progress(nil))
		}
		require.Error(t, err, tc.set)
		require.Contains(t, err.Error(), tc.mention, tc.set)
	}
	for _, name := range []string{"tiny", "small", "paper"} {
		cfg, err := Preset(name)
		require.NoError(t, err)
		require.NoError(t, cfg.Validate(), name)
	}
}

func TestPrompts_LeadingWords(t *testing.T) {
	got := Prompts([]string{"the queen rules the land", "", "a b"}, 3, 2)
	require.Equal(t, []string{"the queen", "a b"}, got)
	require.Equal(t, []string{"the queen"}, Prompts([]string{"the queen rules", "a b"}, 1, 2))
}

func TestFigures_OptionJSON(t *testing.T) {
	h := &fit.History{
		Steps: []fit.Metrics{{Step: 1, Loss: 5}, {Step: 2, Loss: 4}, {Step: 3, Loss: 3.5}},
		Evals: []fit.EvalMetrics{{Step: 2, Loss: 4.2, Perplexity: math.Exp(4.2)}, {Step: 3, Loss: 3.9, Perplexity: math.Exp(3.9)}},
	}
	opt := LossCurves(h).RenderSnippet().Option
	require.Contains(t, opt, `"name":"train loss"`)
	require.Contains(t, opt, `"name":"validation loss"`)
	// A loss from 5 to 3.5 spans less than plot.MinLogSpan: a linear axis zoomed on the data, not a log axis
	// labelled only at 1 and 10.
	require.NotContains(t, opt, `"type":"log"`)
	require.Contains(t, opt, `"scale":true`)
	require.Contains(t, opt, "Baseline LM: loss")
	require.Contains(t, PerplexityCurve(h).RenderSnippet().Option, `"name":"validation perplexity"`)
	figs := Figures(&Result{Model: &lm.Result{History: h}})
	require.Len(t, figs, 2)
	require.Equal(t, "quickstart_loss", figs[0].Name)
	require.Equal(t, LossCurves(h).RenderSnippet().Option, figs[0].Chart.RenderSnippet().Option)
	require.Equal(t, "quickstart_perplexity", figs[1].Name)
	require.Equal(t, PerplexityCurve(h).RenderSnippet().Option, figs[1].Chart.RenderSnippet().Option)
}
