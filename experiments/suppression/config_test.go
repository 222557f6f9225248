package suppression

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/data/brown"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
)

// v1Recipe is protocol v1's suppression model, the recipe of Quick and of Small's large bank: lm.PrismSmall trained
// 4800 updates at lr 1e-2 with K = 2048 = 64·D, k = 16, the bank seeded from 16 batches.
func v1Recipe() lm.Config {
	want := lm.PrismSmall()
	want.Train.Steps, want.Train.LR = 4800, 1e-2
	want.Prism.NumPrototypes, want.Prism.TopK, want.Prism.SeedBatches = 2048, 16, 16
	return want
}

// TestConfig_Presets: Small is protocol v2 (the v1 recipe's large bank at its own size, the spec-range bank of
// 16·D at lm.PrismSmallV2's shape with the recipe's k, lr and seeding, three seeds, on the synthetic and the Brown
// corpus; evaluation seeds no choice used, odd for the protocol and even for the held-back run); Quick is the
// recipe on one seed with the development evaluation; Tiny and Paper run on the other PRISM studies' models, Tiny and
// Quick without any key v2 added (their stored results keep their hashes). Every preset validates.
func TestConfig_Presets(t *testing.T) {
	q := Quick()
	want := v1Recipe()
	require.Equal(t, want, q.Config)
	require.Equal(t, []uint64{1}, q.Seeds)
	require.Zero(t, q.Suppress.TextSeed, "the development evaluation reads the validation split")
	s := Small()
	require.Equal(t, want, s.Config)
	require.Equal(t, []uint64{1, 2, 3}, s.Seeds)
	require.Equal(t, []string{lmdata.SourceSynthetic, lmdata.SourceBrown}, s.Corpora)
	spec := lm.PrismSmallV2()
	spec.Train.LR, spec.Prism.TopK, spec.Prism.SeedBatches = 1e-2, 16, 16
	require.Equal(t, spec, s.SpecRangeModel)
	require.Equal(t, 16*64, s.SpecRangeK, "K = 16·D at the v2 width")
	models := s.Models()
	require.Len(t, models, 12)
	for i, m := range models {
		src := s.Corpora[i/6]
		require.Equal(t, src, m.Config.Data.Source)
		require.Equal(t, s.Seeds[i%3], m.Config.Seed)
		w := want
		if i%6 >= 3 {
			require.Equal(t, ModelSpecRange, m.Label)
			w = spec
			w.Prism.NumPrototypes = 1024
			require.Equal(t, 500, m.Config.Train.Steps)
		} else {
			require.Equal(t, ModelRecipe, m.Label)
			require.Equal(t, 64*m.Config.Model.Width, m.Config.Prism.NumPrototypes, "K = 64·D")
		}
		w.Seed, w.Data.Source = m.Config.Seed, src
		require.Equal(t, w, m.Config)
	}
	st := s.Suppress
	for _, seed := range []uint64{st.PromptSeed, st.Sample.Seed, st.TextSeed} {
		require.NotContains(t, []uint64{q.Suppress.PromptSeed, q.Suppress.Sample.Seed, 4004, 5005, 13, 14}, seed,
			"the protocol evaluates on seeds no choice used")
	}
	require.Equal(t, brown.Test, lm.EvalSplitOf(st.PromptSeed))
	require.Equal(t, brown.Test, lm.EvalSplitOf(st.TextSeed))
	require.Equal(t, brown.Heldout, lm.EvalSplitOf(s.HeldBack.PromptSeed))
	require.Equal(t, brown.Heldout, lm.EvalSplitOf(s.HeldBack.TextSeed))
	require.Equal(t, "noun.food", st.Supersense)
	require.Equal(t, 28, st.BrownDocs, "the test split's size")
	require.False(t, s.UseHeldBack)
	require.Equal(t, lm.PrismTiny(), Tiny().Config)
	require.Equal(t, lm.PrismPaper(), Paper().Config)
	require.Equal(t, []string{lmdata.SourceSynthetic}, Paper().Sources())
	for name, c := range map[string]Config{"tiny": Tiny(), "quick": q} {
		js, err := json.Marshal(c)
		require.NoError(t, err)
		for _, key := range []string{`"corpora"`, `"spec_range_model"`, `"supersense"`, `"brown_docs"`,
			`"prompt_words"`, `"other_corpora"`} {
			require.NotContains(t, string(js), key, name)
		}
		require.Equal(t, Eval{PromptSeed: 3301, SampleSeed: 3302, TextSeed: 3303}, c.HeldBack, name)
	}
	for _, name := range []string{"tiny", "small", "paper"} {
		cfg, err := Preset(name)
		require.NoError(t, err)
		require.NoError(t, cfg.Validate(), name)
	}
	require.NoError(t, q.Validate())
}

// TestConfig_Errors: bad values name their key, among them the keys of protocol v2 (corpora, spec_range_model and
// the Brown corpus's supersense, brown_docs, prompt_words and the parity of its evaluation seeds).
func TestConfig_Errors(t *testing.T) {
	for _, tc := range []struct{ set, mention string }{
		{"suppress.rule=words", `suppress: rule="words"`},
		{"suppress.min_contexts=11", "min_contexts=11"},
		{"suppress.prototypes=[-1]", "prototypes[0]"},
		{"head=dense", `head="dense"`},
		{"prism.seed_batches=0", "seed_batches"},
		{"seeds=[1,1]", "seeds[1]=1"},
		{"spec_range_k=-1", "spec_range_k=-1"},
		{"spec_range_k=200", "spec_range_k=200"},
		{"held_back.text_seed=3203", "held_back repeats"},
		{"suppress.text_docs=0", "text_docs=0"},
		{"suppress.text_seed=1", "data.synthetic.seed"},
	} {
		cfg := Tiny()
		require.NoError(t, run.Override(&cfg, tc.set))
		require.ErrorContains(t, cfg.Validate(), tc.mention, tc.set)
	}
	for _, tc := range []struct{ set, mention string }{
		{`corpora=["brown","synthetic"]`, `corpora[0]="brown" differs from data.source="synthetic"`},
		{`corpora=["synthetic","synthetic"]`, `corpora[1]="synthetic" repeats`},
		{`corpora=["synthetic","wordnet"]`, `corpus "wordnet"`},
		{`suppress.supersense=""`, "suppress.supersense is empty"},
		{"suppress.supersense=verb.consumption", `suppress.supersense="verb.consumption"`},
		{"suppress.supersense=noun.snacks", `suppress.supersense="noun.snacks"`},
		{"suppress.brown_docs=0", "suppress.brown_docs=0"},
		{"suppress.prompt_words=0", "suppress.prompt_words=0"},
		{"suppress.prompt_seed=3200", "suppress.prompt_seed=3200 reads the Brown heldout split"},
		{"suppress.text_seed=3204", "suppress.text_seed=3204"},
		{"held_back.prompt_seed=3301", "held_back.prompt_seed=3301 reads the Brown test split"},
		{"held_back.text_seed=3305", "set an even seed"},
		{"spec_range_k=0", "spec_range_model is set but spec_range_k=0"},
		{"spec_range_model.head=dense", `spec_range_model.head="dense"`},
		{"spec_range_model.prism.top_k=0", "spec_range_model"},
	} {
		cfg := Small()
		require.NoError(t, run.Override(&cfg, tc.set))
		require.ErrorContains(t, cfg.Validate(), tc.mention, tc.set)
	}
	cfg := Small()
	require.NoError(t, run.Override(&cfg, `suppress.supersense="";suppress.keywords=["bread"]`))
	require.NoError(t, cfg.Validate(), "keywords define the concept on every corpus")
	cfg = Tiny()
	cfg.UseHeldBack = true
	require.NoError(t, cfg.Validate())
	require.Equal(t, cfg.HeldBack.TextSeed, cfg.Settings().TextSeed)
	require.Equal(t, cfg.HeldBack.SampleSeed, cfg.Settings().Sample.Seed)
	cfg = Small()
	cfg.UseHeldBack = true
	require.NoError(t, cfg.Validate(), "the held-back run reads the held-out split")
	require.Equal(t, brown.Heldout, lm.EvalSplitOf(cfg.Settings().PromptSeed))
}

// TestSearched: Small replaces data.source by each of its corpora and seed by each of its seeds; Tiny, on one
// corpus, only the seed.
func TestSearched(t *testing.T) {
	keys := func(c Config) []string {
		var out []string
		for _, s := range c.Searched() {
			out = append(out, s.Key+"<-"+s.Over)
		}
		return out
	}
	require.Equal(t, []string{"data.source<-corpora", "seed<-seeds"}, keys(Small()))
	require.Equal(t, []string{"seed<-seeds"}, keys(Tiny()))
}
