package robustness

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/models/pair"
	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/data/brown"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/plot"
	"github.com/protolab/protolab/workbench/run"
)

// TestRun_Tiny runs the study at Tiny scale: three typo kinds on the synthetic corpus, both models, the per-layer
// routing change for ProtoT; the result's invariants, the caches of models and result, and every figure builder.
func TestRun_Tiny(t *testing.T) {
	cfg := Tiny()
	out := t.TempDir()
	res, err := Runs.Run(cfg, run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	stored, err := filepath.Glob(filepath.Join(out, Study, "result-*.json"))
	require.NoError(t, err)
	require.Len(t, stored, 1)
	require.Len(t, res.Corpora, 1)
	c := res.Corpora[0]
	require.Equal(t, lmdata.SourceSynthetic, c.Source)
	require.Len(t, c.Models, 2)
	require.Equal(t, decoder.MixerProtoT, c.Models[0].Mixer)
	require.Equal(t, decoder.MixerAttention, c.Models[1].Mixer)

	require.Equal(t, cfg.Perturbations, c.Kinds)
	require.Len(t, c.Examples, len(c.Kinds))
	require.Len(t, c.Comparisons, 2)
	L := cfg.Model.NumLayers
	for _, m := range c.Comparisons {
		require.Len(t, m.ByKind, len(c.Kinds))
		for _, s := range m.ByKind {
			require.Positive(t, s.Pairs)
			require.LessOrEqual(t, s.Pairs, cfg.Prompts)
			require.True(t, s.JS.Mean >= 0 && s.JS.Mean <= math.Ln2)
			require.True(t, s.Overlap.Mean >= 0 && s.Overlap.Mean <= 1)
			require.True(t, s.Spearman.Mean >= -1 && s.Spearman.Mean <= 1)
			require.True(t, s.Top1.Mean >= 0 && s.Top1.Mean <= 1)
			if m.Mixer == decoder.MixerProtoT {
				require.Len(t, s.RoutingJS, L)
				require.Len(t, s.RoutingJSRead, L)
				require.InDelta(t, s.RoutingJS[0].Mean, s.RoutingJSRead[0].Mean, 1e-12, "layer 0 reads with π")
			} else {
				require.Empty(t, s.RoutingJS)
			}
		}
	}
	require.Same(t, &c.Comparisons[1].ByKind[2], c.Stats(decoder.MixerAttention, c.Kinds[2]))
	require.Nil(t, c.Stats(decoder.MixerAttention, data.PerturbSynonym))
	for _, p := range c.Examples {
		require.NotEqual(t, p.Original, p.Perturbed)
		require.Contains(t, p.Original, p.Word)
	}
	require.Positive(t, res.WallSeconds)

	for _, ch := range []plot.Chart{MetricBars(res, c.Source, MetricJS), MetricBars(res, c.Source, MetricTop1),
		RoutingChangeBars(res, c.Source), StatsTable(res, c.Source), ModelsTable(res), MetricBars(res, "none", MetricJS)} {
		require.NotEmpty(t, ch.RenderSnippet().Element)
	}
	require.Len(t, StatsTable(res, c.Source).Rows, 2*len(c.Kinds))
	require.True(t, strings.Contains(res.String(), "Robustness (synthetic)"))

	// The same config loads both models from run.Out/models and gives the same numbers; LoadOrRun reads the result.
	again, err := Runs.Run(cfg, run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	for i, m := range again.Corpora[0].Models {
		require.True(t, m.Cached)
		require.Equal(t, c.Models[i].Val.Perplexity, m.Val.Perplexity)
	}
	require.Equal(t, c.Comparisons, again.Corpora[0].Comparisons)
	loaded, err := Runs.LoadOrRun(cfg, run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	require.Equal(t, again.Corpora[0].Comparisons, loaded.Corpora[0].Comparisons)
}

// TestConfig_PresetsValidate checks every preset, that each trains the models of the pair preset of its name (the
// models experiments/interp trains with the preset of the same name), and the errors of bad settings.
func TestConfig_PresetsValidate(t *testing.T) {
	pairs := map[string]pair.Config{"tiny": pair.Tiny(), "small": pair.SmallV2(), "paper": pair.Paper()}
	for _, name := range []string{"tiny", "small", "paper"} {
		c, err := Preset(name)
		require.NoError(t, err)
		require.NoError(t, c.Validate(), name)
		require.Equal(t, pairs[name], c.Config, name)
	}
	// Quick is protocol v1's Small, what a notebook computes without a stored run; the protocol (v2) adds the Brown
	// corpus, whose prompts come from its test split (an odd seed), requires every corpus, and fits its prompts in
	// the context.
	q, s := Quick(), Small()
	require.NoError(t, q.Validate())
	require.Equal(t, pair.Small(), q.Config)
	require.Equal(t, []CorpusConfig{Synthetic(), WordNet()}, q.Corpora)
	require.Equal(t, 24, q.MaxTokens)
	require.Len(t, s.Corpora, 3)
	require.Equal(t, lmdata.SourceBrown, s.Corpora[2].Source)
	require.True(t, s.Corpora[2].Synonyms)
	for _, cc := range s.Corpora {
		require.False(t, cc.Optional, cc.Source)
	}
	require.Equal(t, brown.Test, lm.EvalSplitOf(s.EvalSeed))
	require.Equal(t, brown.Heldout, lm.EvalSplitOf(HeldBackEvalSeed))
	require.LessOrEqual(t, s.MaxTokens, s.Data.SeqLen)
	c := Tiny()
	c.Corpora = append(c.Corpora, Brown())
	c.EvalSeed = 1001
	require.ErrorContains(t, c.Validate(), "brown_docs=0")
	c = Tiny()
	require.NoError(t, run.Override(&c, `perturbations=["synonym"]`))
	require.ErrorContains(t, c.Validate(), "perturbations[0]")
	c = Tiny()
	require.NoError(t, run.Override(&c, "max_tokens=3"))
	require.ErrorContains(t, c.Validate(), "max_tokens")
	c = Tiny()
	require.NoError(t, run.Override(&c, "model.mixer=attention"))
	require.ErrorContains(t, c.Validate(), "model.mixer")
	c = Tiny()
	c.Corpora = []CorpusConfig{WordNet()}
	require.ErrorContains(t, c.Validate(), "optional")
	c = Tiny()
	require.Error(t, run.Override(&c, "robust.prompts=1"))
	_, err := Preset("huge")
	require.Error(t, err)
}
