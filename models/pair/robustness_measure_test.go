package pair

import (
	"math"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/protot"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/host"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/naming"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/stats"
)

// TestMeasureRobustness_TinyPair measures the Tiny pair (ProtoT, LLaMA, and ProtoT again) under the three typo kinds
// and an identity perturbation: a synonym source that gives each capitalised name of the prompts (a word never
// written in lower case there) as its own synonym, so that PerturbSynonym changes nothing. It checks:
//   - the pairs are data.Perturb's with the caller's rng, once per prompt and kind, those longer than MaxTokens
//     dropped (replayed here with the same seed); Examples is the first pair of each kind;
//   - every statistic equals the one computed here from a forward pass of each prompt alone in its row, padded with
//     another token than EOS (the padding must change nothing before it), and lies in its range;
//   - under the identity perturbation the two distributions and routings are the same: JS 0, top-k overlap,
//     Spearman and top-1 agreement 1, routing JS 0;
//   - ProtoT's layer 0 reads with ρ = π (spec §5), so its read and write routing changes agree; LLaMA has none;
//     the same model measured twice gives the same statistics.
func TestMeasureRobustness_TinyPair(t *testing.T) {
	proto, llama, prep := tinyPair(t)
	cfg := RobustnessConfig{MaxTokens: 16, OverlapK: 5, BatchSize: 8}
	texts := Prompts(prep, 6, cfg.MaxTokens, run.RNG(1, "interp/prompts"))
	require.Len(t, texts, 6)
	const identity = data.PerturbSynonym
	kinds := []string{data.PerturbSwap, data.PerturbDrop, data.PerturbInsert, identity}
	lower, capital := map[string]bool{}, map[string]string{}
	for _, p := range texts {
		for _, w := range data.LetterWords(p) {
			s := p[w.Start:w.End]
			if l := strings.ToLower(s); l == s {
				lower[s] = true
			} else if c, ok := capital[l]; !ok || c == s {
				capital[l] = s
			} else {
				lower[l] = true // written two ways: not a name
			}
		}
	}
	self := func(w string) []string {
		if c, ok := capital[w]; ok && !lower[w] {
			return []string{c}
		}
		return nil
	}
	const seed = 3
	models := []*lm.Model{proto, llama, proto}
	rb, err := MeasureRobustness(models, prep, texts, kinds, cfg, run.RNG(seed, "test/perturb"), self)
	require.NoError(t, err)

	// The pairs, replayed.
	rng := run.RNG(seed, "test/perturb")
	var pairs, examples []PromptPair
	dropped := 0
	for _, kind := range kinds {
		first := true
		for _, text := range texts {
			pt, word, ok, err := data.Perturb(text, kind, rng, self)
			require.NoError(t, err)
			require.True(t, ok, "every prompt has a word of each kind to change")
			if 1+len(prep.Tokenizer.Encode(pt)) > cfg.MaxTokens {
				dropped++
				continue
			}
			p := PromptPair{Kind: kind, Original: text, Perturbed: pt, Word: word}
			require.Equal(t, kind == identity, pt == text, "%+v", p)
			pairs = append(pairs, p)
			if first {
				examples, first = append(examples, p), false
			}
		}
	}
	require.Positive(t, dropped, "some typo makes a prompt too long")
	require.Equal(t, kinds, rb.Kinds)
	require.Equal(t, examples, rb.Examples)
	require.Len(t, rb.Examples, len(kinds))

	require.Len(t, rb.Comparisons, len(models))
	L := proto.Config.Model.NumLayers
	near := func(want, got float64, msg ...any) {
		t.Helper()
		require.InDelta(t, want, got, 1e-6*math.Abs(want)+1e-12, msg...)
	}
	for i, ms := range rb.Comparisons {
		m := models[i]
		require.Equal(t, m.Config.Model.Mixer, ms.Mixer)
		want := referenceStats(t, m, prep, pairs, kinds, cfg)
		require.Len(t, ms.ByKind, len(kinds))
		for j, st := range ms.ByKind {
			w := want[j]
			require.Equal(t, w.Kind, st.Kind)
			require.Equal(t, w.Pairs, st.Pairs, st.Kind)
			require.Positive(t, st.Pairs, st.Kind)
			for _, c := range []struct {
				name      string
				got, want naming.MeanSD
				lo, hi    float64
			}{{"js", st.JS, w.JS, 0, math.Ln2}, {"overlap", st.Overlap, w.Overlap, 0, 1},
				{"spearman", st.Spearman, w.Spearman, -1, 1}, {"top1", st.Top1, w.Top1, 0, 1}} {
				require.Equal(t, st.Pairs, c.got.N, "%s %s", st.Kind, c.name)
				near(c.want.Mean, c.got.Mean, "%s %s %s", ms.Mixer, st.Kind, c.name)
				near(c.want.SD, c.got.SD, "%s %s %s", ms.Mixer, st.Kind, c.name)
				require.True(t, c.got.Mean >= c.lo && c.got.Mean <= c.hi, "%s %s: %v", st.Kind, c.name, c.got)
			}
			if ms.Mixer != decoder.MixerProtoT {
				require.Empty(t, st.RoutingJS)
				require.Empty(t, st.RoutingJSRead)
				continue
			}
			require.Len(t, st.RoutingJS, L)
			require.Len(t, st.RoutingJSRead, L)
			for l := range L {
				near(w.RoutingJS[l].Mean, st.RoutingJS[l].Mean, "%s: π, layer %d", st.Kind, l)
				near(w.RoutingJSRead[l].Mean, st.RoutingJSRead[l].Mean, "%s: ρ, layer %d", st.Kind, l)
			}
			require.InDelta(t, st.RoutingJS[0].Mean, st.RoutingJSRead[0].Mean, 1e-12, "layer 0 reads with ρ = π")
			if st.Kind != identity {
				require.Positive(t, st.RoutingJS[L-1].Mean, "%s moves the routing", st.Kind)
			}
		}
		id := ms.ByKind[len(kinds)-1]
		require.InDelta(t, 0, id.JS.Mean, 1e-12, "%s: the same prompt twice", ms.Mixer)
		require.Equal(t, []float64{1, 1, 1}, []float64{id.Overlap.Mean, id.Spearman.Mean, id.Top1.Mean})
		for l := range id.RoutingJS {
			require.InDelta(t, 0, id.RoutingJS[l].Mean+id.RoutingJSRead[l].Mean, 1e-12)
		}
		require.Positive(t, ms.ByKind[0].JS.Mean, "%s: a typo moves the prediction", ms.Mixer)
	}
	require.Equal(t, rb.Comparisons[0], rb.Comparisons[2], "the same model, the same statistics")
}

// referenceStats computes MeasureRobustness's statistics of one model from scratch: every prompt of the pairs
// (original, then perturbed) EOS-prefixed in its own row, right-padded to cfg.MaxTokens with a token other than
// EOS, run in one batch; the next-token distribution at its last token and the position-averaged π and ρ of each
// layer (ProtoT) compared per pair and aggregated per kind.
func referenceStats(t *testing.T, m *lm.Model, prep *lmdata.Prepared, pairs []PromptPair, kinds []string,
	cfg RobustnessConfig) []Stats {
	t.Helper()
	mc, eos := m.Config.Model, prep.EOS
	pad := (eos + 1) % int32(mc.VocabSize)
	var rows [][]int32
	var lens []int
	for _, p := range pairs {
		for _, text := range []string{p.Original, p.Perturbed} {
			ids := append([]int32{eos}, prep.Tokenizer.Encode(text)...)
			lens = append(lens, len(ids))
			for len(ids) < cfg.MaxTokens {
				ids = append(ids, pad)
			}
			rows = append(rows, ids)
		}
	}
	var names []string
	if mc.Mixer == decoder.MixerProtoT {
		names = append(ProbeNames(mc.NumLayers, protot.Scope+"."+protot.ProbePi),
			ProbeNames(mc.NumLayers, protot.Scope+"."+protot.ProbeRho)...)
	}
	runner, err := Runner(m, append([]string{decoder.ProbeFinalNorm}, names...))
	require.NoError(t, err)
	c, err := runner.Run(tensors.FromValue(rows))
	require.NoError(t, err)
	logits, err := host.Floats(c.Output)
	require.NoError(t, err)
	T, V := cfg.MaxTokens, mc.VocabSize
	require.Len(t, logits, len(rows)*T*V)
	dist := func(r int) []float64 {
		last := r*T + lens[r] - 1
		return stats.Softmax(logits[last*V : (last+1)*V])
	}
	routing := make([][][]float64, len(names)) // [probe][row] position-averaged over the prompt's tokens
	for j, name := range names {
		vals, dims, err := c.Float64(name)
		require.NoError(t, err)
		R := dims[2]
		for r := range rows {
			avg := make([]float64, R)
			for tk := range lens[r] {
				for k := range R {
					avg[k] += vals[(r*T+tk)*R+k] / float64(lens[r])
				}
			}
			routing[j] = append(routing[j], avg)
		}
	}
	var out []Stats
	for _, kind := range kinds {
		var js, ov, sp, t1 []float64
		rjs := make([][]float64, len(names))
		for i, p := range pairs {
			if p.Kind != kind {
				continue
			}
			a, b := dist(2*i), dist(2*i+1)
			js = append(js, stats.JensenShannon(a, b))
			ov = append(ov, naming.TopKOverlap(a, b, cfg.OverlapK))
			sp = append(sp, naming.SpearmanTopK(a, b, cfg.OverlapK))
			agree := 0.0
			if naming.Top1Agree(a, b) {
				agree = 1
			}
			t1 = append(t1, agree)
			for j := range names {
				rjs[j] = append(rjs[j], stats.JensenShannon(routing[j][2*i], routing[j][2*i+1]))
			}
		}
		st := Stats{Kind: kind, Pairs: len(js), JS: naming.NewMeanSD(js), Overlap: naming.NewMeanSD(ov),
			Spearman: naming.NewMeanSD(sp), Top1: naming.NewMeanSD(t1)}
		for j := range names {
			if j < len(names)/2 {
				st.RoutingJS = append(st.RoutingJS, naming.NewMeanSD(rjs[j]))
			} else {
				st.RoutingJSRead = append(st.RoutingJSRead, naming.NewMeanSD(rjs[j]))
			}
		}
		out = append(out, st)
	}
	return out
}
