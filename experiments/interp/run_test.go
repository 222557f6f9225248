package interp

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/models/pair"
	"github.com/protolab/protolab/workbench/data/brown"
	"github.com/protolab/protolab/workbench/data/wordnet"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/naming"
	"github.com/protolab/protolab/workbench/plot"
	"github.com/protolab/protolab/workbench/run"
)

// TestRun_Tiny runs the whole study at Tiny scale with two training seeds and checks the result's shape and
// invariants, the cache of trained models and of the result, the claims, and that every figure builder renders it.
func TestRun_Tiny(t *testing.T) {
	cfg := Tiny()
	cfg.Seeds = 2
	out := t.TempDir()
	res, err := Runs.Run(cfg, run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	stored, err := filepath.Glob(filepath.Join(out, Study, "result-*.json"))
	require.NoError(t, err)
	require.Len(t, stored, 1)
	require.Len(t, res.Corpora, 1)
	c := res.Corpora[0]
	require.Equal(t, lmdata.SourceSynthetic, c.Source)
	require.Contains(t, c.EvalText, "fresh documents")

	// Seeds: the second seed trains its own pair and is analysed alike.
	require.Equal(t, []uint64{cfg.Seed, cfg.Seed + 1}, res.Seeds)
	require.Len(t, res.Replicates, 1)
	require.Equal(t, cfg.Seed+1, res.Replicates[0].Seed)
	runs := res.Runs(lmdata.SourceSynthetic)
	require.Len(t, runs, 2)
	require.Equal(t, []uint64{cfg.Seed, cfg.Seed + 1}, []uint64{runs[0].Seed, runs[1].Seed})
	require.NotEqual(t, runs[0].Models[0].Val.Perplexity, runs[1].Models[0].Val.Perplexity, "another seed, another model")
	require.Len(t, runs[1].Kinds, len(c.Kinds))
	require.NotNil(t, runs[1].Intervene)
	require.Equal(t, cfg.Departures(), res.Departures)

	// Claims: every one is listed and valid; two seeds are too few for any, and the Brown rows have no Brown run.
	claims := Claims(res)
	require.Len(t, claims, len(Claims(nil)))
	for i, cl := range claims {
		require.NoError(t, cl.Validate(), cl.ID)
		if i < 5 {
			require.Contains(t, cl.Untestable, "2 training seed", cl.ID)
		} else {
			require.Contains(t, cl.Untestable, "on the brown corpus", cl.Claim)
		}
	}
	require.Equal(t, 2, PooledKindStats(res, c.Source, pair.KindProtoPi).Seeds)
	require.Equal(t, 2*len(c.Prototypes), PooledKindStats(res, c.Source, pair.KindProtoPi).Units)

	// Equal-size models: the baseline's FFN makes up the difference in non-embedding parameters.
	require.Len(t, c.Models, 2)
	require.Equal(t, decoder.MixerProtoT, c.Models[0].Mixer)
	require.Equal(t, decoder.MixerAttention, c.Models[1].Mixer)
	tol := 3 * cfg.Model.Width * cfg.Model.NumLayers / 2 // half an FFN unit per block
	require.LessOrEqual(t, abs(c.Models[0].NonEmbeddingParams-c.Models[1].NonEmbeddingParams), tol)
	for _, m := range c.Models {
		require.False(t, m.Cached)
		require.Less(t, m.Val.Perplexity, float64(cfg.Data.Tokenizer.VocabSize), "training lowers perplexity")
	}

	// Units: every kind, L·R prototypes (by π and ρ), L·H heads, R SAE features per layer and rule, at most F per
	// layer unselected.
	L, R, H := cfg.Model.NumLayers, cfg.Model.ProtoT.NumPrototypes, cfg.Model.Attention.NumHeads
	want := map[string]int{pair.KindProtoPi: L * R, pair.KindProtoRho: L * R, pair.KindHeads: L * H,
		pair.KindNull: cfg.Eval.NullUnits}
	require.Len(t, c.SAE, L)
	for _, k := range c.Kinds {
		switch n, ok := want[k.Kind]; {
		case ok:
			require.Equal(t, n, k.Units, k.Kind)
		case k.Kind == pair.KindSAEAll:
			require.LessOrEqual(t, k.Units, L*c.SAE[0].Features)
			require.Positive(t, k.Units)
		default:
			require.Contains(t, []string{pair.KindSAEVariance, pair.KindSAEFrequency}, k.Kind)
			require.LessOrEqual(t, k.Units, L*R)
			require.Positive(t, k.Units)
		}
		for _, m := range []naming.MeanSD{k.Disentanglement, k.Coverage} {
			require.True(t, m.Mean >= 0 && m.Mean <= 1, "%s: %+v", k.Kind, m)
		}
	}
	require.Len(t, c.Kinds, len(pair.Kinds()))
	for _, s := range c.SAE {
		require.Equal(t, cfg.SAE.TrainSequences*cfg.Data.SeqLen, s.TrainTokens, "trained on training tokens")
	}
	require.Len(t, c.Coverage, len(c.LabelNames)-1, "every label but none")
	require.Contains(t, c.LabelNames, naming.NoneLabel)
	require.Equal(t, len(c.LabelNames), len(c.LabelCounts))

	// Dashboards: one per prototype; mass shares of a layer sum to 1 (π rows are softmaxes).
	require.Len(t, c.Prototypes, L*R)
	for l := range L {
		sum := 0.0
		for _, p := range c.Prototypes[l*R : (l+1)*R] {
			require.Equal(t, l, p.Layer)
			sum += p.MassShare
			require.Len(t, p.MassByPos, cfg.Data.SeqLen)
			require.True(t, p.Beta > 0 && p.Beta < 1)
			require.InEpsilon(t, pair.HalfLife(p.Beta), p.HalfLife, 1e-9)
			require.LessOrEqual(t, len(p.TopWrite), cfg.Eval.DashboardTokens)
		}
		require.InDelta(t, 1, sum, 1e-4)
	}

	// Interventions: one compiled executable for every sweep; full matrices; the ΔPPL of a write mask agrees
	// between the sweep and the best prototype's summary.
	iv := c.Intervene
	require.NotNil(t, iv)
	require.Equal(t, 1, iv.Builds, "masks and prototypes are variables: one graph serves the sweep")
	require.Len(t, iv.Sweeps, 3)
	require.Len(t, iv.Prototypes, L*R)
	for _, sw := range iv.Sweeps {
		moved := 0
		for _, x := range sw.PPL {
			if x != 0 {
				moved++
			}
		}
		require.Positive(t, moved, "%s: interventions change the model", sw.Kind)
		require.Len(t, sw.Prob, L*R)
		require.Len(t, sw.PPL, L*R)
		for _, row := range sw.Prob {
			require.Len(t, row, len(iv.Targets))
		}
	}
	for _, sw := range iv.Sweeps {
		require.Len(t, sw.CalProb, L*R)
		require.Len(t, sw.CalPPL, L*R)
		require.Len(t, sw.ClassLoss, L*R)
	}
	// Loss by class: every concept of the targets has a class, naming.ClassOther comes last and every position is in a
	// class (a token with values of two concepts is in both); pair.ClassSelectivity picks, per concept, the mask whose
	// loss on it exceeds its loss elsewhere most.
	require.Equal(t, naming.ClassOther, iv.Classes[len(iv.Classes)-1])
	require.Len(t, iv.ClassShare, len(iv.Classes))
	for _, target := range iv.Targets {
		require.Contains(t, iv.Classes, naming.ConceptOf(target))
	}
	total := 0.0
	for _, s := range iv.ClassShare {
		total += s
	}
	require.GreaterOrEqual(t, total, 1-1e-12, "every position is in a class")
	for _, row := range iv.Sweeps[0].ClassLoss {
		require.Len(t, row, len(iv.Classes))
	}
	sel := pair.ClassSelectivity(iv)
	require.Len(t, sel, len(iv.Classes)-1)
	for c, s := range sel {
		require.Equal(t, iv.Classes[c], s.Class)
		p := indexOf(iv.Prototypes, s.Prototype)
		require.Equal(t, iv.Sweeps[0].ClassLoss[p][c], s.Loss)
		require.Equal(t, pair.OutsideLoss(iv.ClassShare[c], s.Loss, s.PPL), s.Outside)
		for q, row := range iv.Sweeps[0].ClassLoss {
			excess := row[c] - pair.OutsideLoss(iv.ClassShare[c], row[c], iv.Sweeps[0].PPL[q])
			require.LessOrEqual(t, excess, s.Loss-s.Outside, "the largest excess loss")
		}
	}
	require.Positive(t, iv.CalTokens)
	require.Positive(t, iv.Tokens)
	for j, e := range iv.Effects {
		require.Equal(t, iv.Targets[j], e.Target)
		require.GreaterOrEqual(t, e.Occurrences, cfg.Intervene.MinOccurrences)
		require.GreaterOrEqual(t, e.CalOccurrences, cfg.Intervene.MinOccurrences)
		require.InDelta(t, float64(e.Occurrences)/float64(iv.Tokens), e.Share, 1e-12)
		require.Equal(t, pair.ProbFloor(e.Share, cfg.Intervene.MaxPPLChange), e.Floor)
		best := indexOf(iv.Prototypes, e.Best)
		require.GreaterOrEqual(t, best, 0)
		for i := range iv.Kinds {
			require.Equal(t, iv.Sweeps[i].Prob[best][j], e.BestProb[i], "Best is reported on the held-out split")
			require.Equal(t, iv.Sweeps[i].PPL[best], e.BestPPL[i])
		}
		for p := range iv.Prototypes {
			require.GreaterOrEqual(t, iv.Sweeps[0].CalProb[p][j], iv.Sweeps[0].CalProb[best][j],
				"Best has the lowest calibration write ΔProb")
		}
		if sel := indexOf(iv.Prototypes, e.Selective); sel >= 0 {
			require.Equal(t, iv.Sweeps[0].Prob[sel][j], e.SelectiveProb)
			require.Equal(t, iv.Sweeps[0].CalProb[sel][j], e.SelectiveCalProb)
			require.Less(t, math.Abs(iv.Sweeps[0].CalPPL[sel]), cfg.Intervene.MaxPPLChange)
		}
	}

	require.NotEmpty(t, res.Checks)
	require.Positive(t, res.WallSeconds)

	// Every figure builder renders the result.
	for _, ch := range []plot.Chart{ModelsTable(res), DashboardTable(res, c.Source, 1),
		ContextsTable(res, c.Source, 0, 1, true),
		RoutingMassHeatmap(res, c.Source, 0), PrototypeBars(res, c.Source), MetricBars(res, c.Source),
		ThemesBars(res, c.Source), MetricsTable(res, c.Source), CoverageTable(res, c.Source),
		InterventionHeatmap(res, c.Source, InterveneWrite), InterventionTable(res, c.Source),
		ClassLossHeatmap(res, c.Source), SelectivityTable(res, c.Source), ChecksTable(res),
		DisentanglementTable(res, c.Source), ClaimsTable(res)} {
		s := ch.RenderSnippet()
		require.NotEmpty(t, s.Element)
	}
	require.Len(t, DashboardTable(res, c.Source, 1).Rows, R)
	require.Len(t, InterventionTable(res, c.Source).Rows, len(iv.Targets))
	require.Len(t, ClaimsTable(res).Rows, len(claims))
	require.Len(t, DisentanglementTable(res, c.Source).Rows, len(c.Kinds))
	require.True(t, strings.Contains(ChecksTable(res).String(), "graph builds"))

	// The same config loads both models from the cache and gives the same numbers; LoadOrRun reads the result.
	again, err := Runs.Run(cfg, run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	for i, m := range again.Corpora[0].Models {
		require.True(t, m.Cached)
		require.Equal(t, c.Models[i].Val.Perplexity, m.Val.Perplexity)
	}
	require.True(t, again.Replicates[0].Corpora[0].Models[0].Cached)
	require.Equal(t, c.Kinds, again.Corpora[0].Kinds)
	require.Equal(t, res.Replicates[0].Corpora[0].Kinds, again.Replicates[0].Corpora[0].Kinds)
	loaded, err := Runs.LoadOrRun(cfg, run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	require.Equal(t, again.Checks, loaded.Checks)

	// At the tiny preset a notebook runs (or loads) the Tiny preset itself: one seed, its models already trained.
	t.Setenv(run.PresetEnv, "tiny")
	nb, err := Runs.Notebook(run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	require.Equal(t, []uint64{cfg.Seed}, nb.Seeds)
	require.True(t, nb.Corpora[0].Models[0].Cached)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func indexOf(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}

// TestConfig_PresetsValidate checks every preset, that each trains the models of the pair preset of its name (so
// that experiments/robustness, built on the same presets, shares them), and the errors of bad settings.
func TestConfig_PresetsValidate(t *testing.T) {
	pairs := map[string]pair.Config{"tiny": pair.Tiny(), "small": pair.SmallV2(), "paper": pair.Paper()}
	for _, name := range []string{"tiny", "small", "paper"} {
		c, err := Preset(name)
		require.NoError(t, err)
		require.NoError(t, c.Validate(), name)
		require.Equal(t, pairs[name], c.Config, name)
	}
	// Quick is protocol v1's Small with one training seed and WordNet optional. The protocol (v2) trains
	// pair.SmallV2 with enough seeds on each corpus for a claim, five on the synthetic corpus and three on WordNet and
	// Brown, needs every corpus, and evaluates on fresh documents of a generator seed that is neither the training
	// corpus's nor the held-back one, on Brown the test split (odd), the held-back seed reading the held-out split.
	q, s := Quick(), Small()
	require.NoError(t, q.Validate())
	require.Equal(t, pair.Small(), q.Config)
	require.Equal(t, 5, s.Seeds)
	require.Len(t, s.Corpora, 3)
	for i, want := range []struct {
		source string
		seeds  int
	}{{lmdata.SourceSynthetic, 5}, {lmdata.SourceWordNet, 3}, {lmdata.SourceBrown, 3}} {
		require.Equal(t, want.source, s.Corpora[i].Source)
		require.Equal(t, want.seeds, s.Corpora[i].seeds(s.Seeds))
		require.GreaterOrEqual(t, s.Corpora[i].seeds(s.Seeds), MinClaimSeeds)
		require.False(t, s.Corpora[i].Optional, "the protocol must not store a result without %s", want.source)
	}
	require.Equal(t, naming.LabelsLexical, s.Corpora[2].Labels, "Brown's words are labelled as WordNet's glosses")
	require.Equal(t, brown.Test, lm.EvalSplitOf(s.Eval.DataSeed))
	require.Equal(t, brown.Heldout, lm.EvalSplitOf(HeldBackEvalSeed))
	require.True(t, q.Corpora[1].Optional)
	require.Len(t, q.Corpora, 2, "Quick leaves the Brown corpus out")
	q.Seeds, q.Config, q.Corpora, q.Eval.BrownDocs = s.Seeds, s.Config, s.Corpora, s.Eval.BrownDocs
	require.Equal(t, s, q, "Small is Quick with protocol v2's pair, seeds and corpora")
	for _, c := range []Config{Tiny(), Quick(), Small(), Paper()} {
		require.NotZero(t, c.Eval.DataSeed)
		require.NotEqual(t, c.Data.Synthetic.Seed, c.Eval.DataSeed)
		require.NotEqual(t, uint64(HeldBackEvalSeed), c.Eval.DataSeed)
	}
	c := Tiny()
	c.Seeds = 0
	require.ErrorContains(t, c.Validate(), "seeds=0")
	c = Tiny()
	c.Eval.Docs = 0
	require.ErrorContains(t, c.Validate(), "eval.docs")
	c.Eval.DataSeed = 0
	require.NoError(t, c.Validate(), "no fresh documents: evaluation on the validation split")
	c = Tiny()
	c.SAE.TrainSequences = 0
	require.ErrorContains(t, c.Validate(), "sae.train_sequences")
	c = Tiny()
	c.Eval.SelectSequences = 0
	require.ErrorContains(t, c.Validate(), "eval.select_sequences")
	c = Tiny()
	require.NoError(t, run.Override(&c, "intervene.sweeps=[\"read\"]"))
	require.ErrorContains(t, c.Validate(), "intervene.sweeps")
	c = Tiny()
	c.Corpora[0].Labels = naming.LabelsInForce
	require.ErrorContains(t, c.Validate(), "interventions need")
	c.Corpora[0].Labels, c.Corpora[0].Concepts = naming.LabelsLexical, []string{"supersense"}
	require.NoError(t, c.Validate(), "lexical labels name the target words")
	c = Tiny()
	require.NoError(t, run.Override(&c, "model.protot.decay_init_max=0.995"))
	require.Equal(t, 0.995, c.Model.ProtoT.DecayInitMax)
	require.NoError(t, c.Validate())
	c = Tiny()
	c.Intervene.HeldOut = 0
	require.ErrorContains(t, c.Validate(), "held_out")
	c = Tiny()
	c.Corpora[0].Seeds = c.Seeds + 1
	require.ErrorContains(t, c.Validate(), "corpora[0].seeds=2")
	c = Tiny()
	c.Corpora = append(c.Corpora, Brown())
	require.ErrorContains(t, c.Validate(), "eval.brown_docs=0")
	c.Eval.BrownDocs = 28
	require.NoError(t, c.Validate())
	c = Tiny()
	require.Error(t, run.Override(&c, "eval.no_such_key=1"))
	_, err := Preset("huge")
	require.Error(t, err)
}

// A configuration that requires WordNet (the Small protocol) fails before any model trains when the database is
// missing, naming the variable to set; an optional corpus would be skipped with a note instead.
func TestRun_RequiredWordNetMissingFailsFirst(t *testing.T) {
	t.Setenv(wordnet.EnvDir, t.TempDir())
	cfg := Tiny()
	cfg.Corpora = []CorpusConfig{Synthetic(), WordNet()}
	cfg.Corpora[1].Optional = false
	require.NoError(t, cfg.Validate())
	out := t.TempDir()
	_, err := Runs.Run(cfg, run.Out(out))
	require.ErrorContains(t, err, "corpus wordnet is required")
	require.ErrorContains(t, err, wordnet.EnvDir)
	entries, err := os.ReadDir(out)
	require.NoError(t, err)
	require.Empty(t, entries, "nothing trained or stored")
}
