package attribution

import (
	"strings"
	"testing"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/models/prism"
	"github.com/protolab/protolab/workbench/data/brown"
	"github.com/protolab/protolab/workbench/data/brown/browntest"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/plot"
	"github.com/protolab/protolab/workbench/run"
)

// TestLoadOrRun_TinyTwoCorpora runs protocol v2's machinery at Tiny scale on the synthetic corpus and the Brown
// corpus (a fixture shaped like the installed one), each a complete run: its models are trained on that corpus (the
// Brown ones on its first brown_train_docs training documents) and attributed over that corpus's training set, each
// has its own queries, LDS retrainings and summary; the claim rows of each corpus read its own run, the table has a
// part per corpus, and the charts show the first corpus unless given another.
func TestLoadOrRun_TinyTwoCorpora(t *testing.T) {
	t.Setenv(brown.EnvDir, browntest.Dir(t))
	cfg := Tiny()
	cfg.Attribution = shortAttribution()
	a := &cfg.Attribution
	a.TrainSeqs, a.Corpora, a.BrownTrainDocs = 0, []string{lmdata.SourceSynthetic, lmdata.SourceBrown}, 3
	cfg.Data.Synthetic.NumDocs = 30
	res, err := Runs.LoadOrRun(cfg, run.Out(t.TempDir()), run.Progress(nil))
	require.NoError(t, err)
	require.Equal(t, a.Corpora, res.Sources())
	n := a.ModelSeeds
	require.Len(t, res.Models, 2*n)
	seqs := map[string]int{}
	for i, mr := range res.Models {
		source := a.Corpora[i/n]
		mc := modelConfig(cfg, source, i%n)
		require.Equal(t, source, mc.Data.Source)
		require.Equal(t, source, mr.Source)
		require.Equal(t, mc.Name(), mr.Run)
		require.Equal(t, cfg.Seed+uint64(i%n), mr.Seed)
		p, err := lmdata.Prepare(mc.Resolved().Data, "")
		require.NoError(t, err)
		require.Equal(t, p.TrainSeqs.NumSequences(), mr.NumSeqs, "%s: attributed over its own training set", source)
		if source == lmdata.SourceBrown {
			require.Len(t, p.Train.Texts, a.BrownTrainDocs)
		}
		seqs[source] = mr.NumSeqs
		require.Equal(t, a.Queries, mr.NumQueries)
		require.Equal(t, a.LDSSubsets, mr.LDSModels)
	}
	require.NotEqual(t, seqs[lmdata.SourceSynthetic], seqs[lmdata.SourceBrown])
	require.Len(t, res.Summary, 2*len(prism.Methods))
	for i, sm := range res.Summary {
		require.Equal(t, a.Corpora[i/len(prism.Methods)], sm.Source)
		require.Equal(t, n, sm.Models)
	}
	require.Contains(t, res.Provenance.Timings, lmdata.SourceBrown)

	syn, br := res.Corpus(lmdata.SourceSynthetic), res.Corpus(lmdata.SourceBrown)
	require.NotEqual(t, syn.Method(prism.MethodPrism).LDS, br.Method(prism.MethodPrism).LDS)
	require.Same(t, &res.Summary[0], res.Method(prism.MethodPrism), "Method reads the first corpus")
	at10 := func(r *Result) float64 {
		for _, o := range r.Method(prism.MethodPrism).Overlap {
			if o.K == overlapK {
				return o.Mean
			}
		}
		t.Fatal("no Overlap@10")
		return 0
	}
	claims := Claims(res)
	require.Len(t, claims, 12)
	require.Equal(t, at10(syn), claims[0].Ours.Value)
	require.Equal(t, at10(br), claims[7].Ours.Value)
	require.Equal(t, br.Method(prism.MethodPrism).LDS.Mean, claims[8].Ours.Value)
	require.Equal(t, syn.Method(prism.MethodPrism).LDS.Mean, claims[1].Ours.Value)
	for _, c := range claims[7:] {
		require.Contains(t, c.Claim, "Brown")
		require.Contains(t, c.Method, "Brown corpus: 2 models × 4 queries of its validation split, trained and "+
			"attributed on the first 3 documents of its training split")
		require.NoError(t, c.Validate(), c.Claim)
	}

	var sb strings.Builder
	require.NoError(t, WriteTable(&sb, res))
	require.Contains(t, sb.String(), "synthetic corpus: 2 model(s)")
	require.Contains(t, sb.String(), "brown corpus: 2 model(s)")
	require.Equal(t, 1, strings.Count(sb.String(), "cost model at paper"))
	require.Contains(t, LDSChart(res).RenderSnippet().Option, "synthetic corpus: 2 model(s)")
	require.Contains(t, LDSChart(br).RenderSnippet().Option, "brown corpus: 2 model(s)")
	figs := Figures(res)
	var names []string
	for _, f := range figs {
		names = append(names, f.Name)
	}
	require.Equal(t, []string{"attribution_speed", "attribution_overlap", "attribution_lds",
		"attribution_brown_overlap", "attribution_brown_lds"}, names, "the further corpus's figures follow")
	require.Contains(t, figs[4].Chart.(*charts.Bar).RenderSnippet().Option, "brown corpus: 2 model(s)")
	require.NoError(t, plot.CheckFigures(figs))
	require.Equal(t, 2*n*(1+a.LDSSubsets), cfg.Cost().Runs)
}
