package suppression

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/models/lm"
	mprism "github.com/protolab/protolab/models/prism"
	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/data/brown"
	"github.com/protolab/protolab/workbench/data/brown/browntest"
	"github.com/protolab/protolab/workbench/data/wordnet"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/report"
	"github.com/protolab/protolab/workbench/run"
)

// TestRun_TinyTwoCorpora runs protocol v2's machinery at Tiny scale on the synthetic corpus and the Brown corpus (a
// fixture shaped like the installed one, whose documents end "This is document <id>."): the synthetic part is
// exactly the single-corpus Tiny study (the labelled path is unchanged); every Brown model trains on Brown; its
// concept is WordNet's noun.food words; its prompts are keyword-free sentences and its perplexity text the sequences
// of the first suppress.brown_docs documents of the test split (odd seeds), and of the held-out split under
// use_held_back (even seeds); the claims read each corpus's part. It needs WordNet (`make wordnet`).
func TestRun_TinyTwoCorpora(t *testing.T) {
	if _, err := wordnet.Dir(); err != nil {
		t.Skipf("the Brown concept is defined by WordNet, which is not installed (run `make wordnet`): %v", err)
	}
	t.Setenv(brown.EnvDir, browntest.Dir(t))
	cfg := Tiny()
	cfg.Corpora = []string{lmdata.SourceSynthetic, lmdata.SourceBrown}
	s := &cfg.Suppress
	s.Supersense, s.BrownDocs, s.PromptWords = "noun.food", 6, 6
	cfg.HeldBack = Eval{PromptSeed: 3302, SampleSeed: 3303, TextSeed: 3304}
	require.NoError(t, cfg.Validate())
	out := t.TempDir()
	res, err := Runs.Run(cfg, run.Out(out), run.Progress(nil))
	require.NoError(t, err)

	require.Len(t, res.Corpora(), 2)
	require.Equal(t, lmdata.SourceSynthetic, res.Source)
	require.Equal(t, "topic=food", res.Concept)
	br := res.Corpus(lmdata.SourceBrown)
	require.Same(t, &res.Others[0], br)
	require.Equal(t, "WordNet noun.food", br.Concept)
	// The synthetic part is the single-corpus study, computed the same way on the same (stored) models.
	single, err := Runs.Run(Tiny(), run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	require.Empty(t, single.Others)
	require.Equal(t, single.Summaries, res.Summaries)

	models := cfg.ModelsOn(lmdata.SourceBrown)
	require.Len(t, br.Runs, len(models))
	food, err := supersenseWords("noun.food")
	require.NoError(t, err)
	for i, r := range br.Runs {
		require.Equal(t, models[i].Label, r.Label)
		require.Equal(t, models[i].Config.Prism.NumPrototypes, r.K)
		require.Equal(t, food, r.Keywords)
		m, err := lm.Open(lm.RunDir(out, models[i].Config))
		require.NoError(t, err)
		require.Equal(t, lmdata.SourceBrown, m.Config.Data.Source)
		require.Equal(t, r.Run, m.Config.Name())
		require.Len(t, r.Modes, len(Modes))
		require.Greater(t, r.OtherTokens, 0)
	}
	require.Contains(t, food, "pie", "the fixture's fiction sample has a blueberry pie")
	require.NotContains(t, food, "fish")
	trained, err := filepath.Glob(filepath.Join(out, lm.ModelsDir, "*"))
	require.NoError(t, err)
	require.Len(t, trained, 8, "2 corpora × 2 seeds × 2 banks, trained once")

	// The Brown data: prompts from keyword-free sentences of the test split's first brown_docs documents, text from
	// the same documents; under use_held_back, the held-out split's.
	m, err := lm.Open(lm.RunDir(out, models[0].Config))
	require.NoError(t, err)
	docIDs := regexp.MustCompile(`document (c[a-r]\d\d)`)
	for _, held := range []bool{false, true} {
		c := cfg
		c.UseHeldBack = held
		st := c.Settings()
		st.EvalSequences = 1 << 20 // every sequence, to read the document ids
		want := brown.Test
		if held {
			want = brown.Heldout
		}
		prompts, other, concept, err := suppressData(m, st, food, true)
		require.NoError(t, err)
		require.Len(t, prompts, st.Samples)
		docs, err := m.FreshCorpus(st.BrownDocs, st.PromptSeed)
		require.NoError(t, err)
		for _, text := range docs.Texts {
			id := docIDs.FindStringSubmatch(text)[1]
			require.Equal(t, want, brown.SplitOf(id), "prompt document %s", id)
		}
		d, err := m.Data()
		require.NoError(t, err)
		for _, p := range prompts {
			text := d.Tokenizer.DecodeString(p[1:])
			require.True(t, slices.ContainsFunc(docs.Texts, func(doc string) bool { return strings.Contains(doc, text) }),
				"prompt %q comes from the documents", text)
			for _, w := range mprism.SplitWords(text) {
				require.NotContains(t, food, w, "prompt %q names no food", text)
			}
		}
		texts, err := m.FreshCorpus(st.BrownDocs, st.TextSeed)
		require.NoError(t, err)
		encoded := make([][]int32, len(texts.Texts))
		for i, text := range texts.Texts {
			id := docIDs.FindStringSubmatch(text)[1]
			require.Equal(t, want, brown.SplitOf(id), id)
			encoded[i] = d.Tokenizer.Encode(text)
		}
		packed, err := data.Pack(encoded, m.Config.Data.SeqLen, d.EOS)
		require.NoError(t, err)
		var all [][]int32
		for i := range packed.NumSequences() {
			all = append(all, packed.Sequence(i))
		}
		require.ElementsMatch(t, all, slices.Concat(other, concept), "the %s split's first brown_docs documents", want)
		require.NotEmpty(t, concept, "the fiction sample's pie")
	}

	claims := Claims(res)
	require.Len(t, claims, 8)
	for i, c := range claims {
		require.NoError(t, c.Validate())
		require.Contains(t, c.Untestable, "needs ≥ 3 training seeds, the result has 2", "row %d reads its corpus", i)
		require.Equal(t, i >= 4, strings.HasPrefix(c.Claim, "Brown corpus: "), c.Claim)
	}
	require.Contains(t, claims[4].Method, "the Brown test split's first 6 documents (seed 3203)")
	names := []string{}
	for _, f := range Figures(res) {
		names = append(names, f.Name)
	}
	require.Equal(t, []string{"suppression_rate", "suppression_perplexity", "suppression_rate_brown",
		"suppression_perplexity_brown"}, names)
	require.Contains(t, CorpusRateChart(res, br).RenderSnippet().Option, "WordNet noun.food")
}

// TestClaims_BrownRows: the Brown rows read the Brown corpus's part of the result and only it, with the same rules: a
// Brown run whose recipe model cuts the concept by 40 ± 5% at +3 ± 1% other-text perplexity is not reproduced on
// either claim, while the synthetic rows keep their values and verdicts; the Brown rows name the corpus in claim and
// method, and keep the synthetic rows' ids and rules.
func TestClaims_BrownRows(t *testing.T) {
	paper := map[string]report.Paper{PaperCut: {Value: 80, HasValue: true}, PaperQuality: {}}
	verdicts := func(cs []report.Claim) []string {
		var out []string
		for _, c := range cs {
			v, _ := report.Verdict(c, paper[c.ID])
			out = append(out, v)
		}
		return out
	}
	syn := Claims(handResult())[:4]
	r := handResult()
	b := handResult().CorpusResult
	b.Source, b.Concept = lmdata.SourceBrown, "WordNet noun.food"
	z := b.Summary(ModelRecipe).Mode(ModeZero)
	z.Reduction, z.OtherChange = Stat{Mean: 0.4, SE: 0.05, N: 3}, Stat{Mean: 0.03, SE: 0.01, N: 3}
	r.Others = []CorpusResult{b}
	all := Claims(r)
	require.Len(t, all, 8)
	require.Equal(t, syn, all[:4], "the synthetic rows unchanged")
	for i, c := range all[4:] {
		require.NoError(t, c.Validate())
		require.Empty(t, c.Untestable, c.Claim)
		require.Equal(t, syn[i].ID, c.ID)
		require.Equal(t, syn[i].Rule, c.Rule)
		require.Equal(t, "Brown corpus: "+syn[i].Claim, c.Claim)
		require.Contains(t, c.Method, "Brown corpus; ")
		require.Contains(t, c.Method, "the words of WordNet noun.food")
		require.Contains(t, c.Method, "the Brown test split's first 28 documents (seed 3203)")
		require.NotContains(t, syn[i].Claim+syn[i].Method, "Brown")
	}
	require.InDelta(t, 40, all[4].Ours.Value, 1e-12)
	require.InDelta(t, 5, all[4].Ours.SE, 1e-12)
	require.InDelta(t, 3, all[5].Ours.Value, 1e-12)
	require.InDelta(t, 30, all[6].Ours.Value, 1e-12, "the spec-range rows read the Brown spec-range summary")
	require.Equal(t, []string{report.NotReproduced, report.NotReproduced, report.NotReproduced,
		report.NotReproduced}, verdicts(all[4:]))
	require.Equal(t, []string{report.Reproduced, report.Reproduced, report.NotReproduced, report.NotReproduced},
		verdicts(all[:4]))
}
