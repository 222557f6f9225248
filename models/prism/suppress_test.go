package prism

import (
	"math"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/stretchr/testify/require"

	prismlayer "github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/eval"
)

// TestSuppressedNLL_EmptySetIsTheModelsLoss splits fresh documents by the keywords of topic "food" and checks the
// suppressed losses on the Tiny PRISM model: with Ω = ∅ they are the model's own losses on the same sequences
// (lm.Model.TokenLosses), the activity of one watched prototype is its usage count (lm.Model.Coverage) and that of
// {1, 3} lies between the larger count and their sum, and suppressing {1, 3} in either mode changes the losses but
// not the tokens or the activity.
func TestSuppressedNLL_EmptySetIsTheModelsLoss(t *testing.T) {
	m, _ := qualityTinyPair(t)
	kw, err := data.SyntheticWords("topic", "food")
	require.NoError(t, err)
	fresh, err := m.FreshCorpus(60, 3203)
	require.NoError(t, err)
	const maxSeq = 8
	other, concept, err := SplitByKeywords(m, fresh.Texts, kw, maxSeq)
	require.NoError(t, err)
	require.NotEmpty(t, other)
	require.NotEmpty(t, concept)
	for _, part := range [][][]int32{other, concept} {
		require.LessOrEqual(t, len(part), maxSeq)
		for _, s := range part {
			require.Len(t, s, m.Config.Data.SeqLen+1)
		}
	}
	K := m.Config.Prism.NumPrototypes
	none, watch := make([]float64, K), make([]float64, K)
	watch[1], watch[3] = 1, 1
	ref, err := SuppressedNLL(m, other, none, watch, prismlayer.SuppressZero)
	require.NoError(t, err)
	losses, err := m.TokenLosses(other) // the unsuppressed model's own losses, [N, T]
	require.NoError(t, err)
	sum := 0.0
	for _, row := range losses {
		for _, l := range row {
			sum += l
		}
	}
	require.Equal(t, len(other)*m.Config.Data.SeqLen, ref.Tokens)
	require.InDelta(t, sum, ref.Sum, 1e-4*sum)
	// A token uses a prototype at most once, so the activity of one watched prototype is its usage count.
	_, usage, err := m.Coverage([]*tensors.Tensor{tensors.FromValue(other)})
	require.NoError(t, err)
	counts := usage.Counts()
	for _, j := range []int{1, 3} {
		one := make([]float64, K)
		one[j] = 1
		s, err := SuppressedNLL(m, other, none, one, prismlayer.SuppressZero)
		require.NoError(t, err)
		require.Equal(t, int(counts[j]), s.Active, "prototype %d", j)
	}
	require.GreaterOrEqual(t, ref.Active, int(max(counts[1], counts[3])))
	require.LessOrEqual(t, ref.Active, int(counts[1]+counts[3]))
	require.Greater(t, ref.Active, 0, "Ω = {1, 3} is used somewhere")
	for _, mode := range []string{prismlayer.SuppressZero, prismlayer.SuppressMask} {
		s, err := SuppressedNLL(m, other, watch, watch, mode)
		require.NoError(t, err)
		require.NotEqual(t, ref.Sum, s.Sum, mode)
		require.Equal(t, ref.Tokens, s.Tokens, mode)
		require.Equal(t, ref.Active, s.Active, "%s: activity is read from the unsuppressed head", mode)
	}
	pooled := ref.Plus(NLLSum{Sum: 2, Tokens: 1, Active: 1})
	require.Equal(t, NLLSum{Sum: ref.Sum + 2, Tokens: ref.Tokens + 1, Active: ref.Active + 1}, pooled)
	require.Zero(t, NLLSum{}.Perplexity())
	require.Zero(t, NLLSum{}.ActiveFraction())
}

// TestGenerateSuppressed_CompletionPerplexity generates from topic-free prompts on the Tiny PRISM model with Ω = ∅
// and checks the prompts ([EOS] + a first sentence), the generations (at most max_new_tokens each, the same for the
// same seed, a batch of two rows with a padded last batch) and the judge perplexity against lm.Model.TokenLosses of
// each prompt and completion.
func TestGenerateSuppressed_CompletionPerplexity(t *testing.T) {
	m, _ := qualityTinyPair(t)
	d, err := m.Data()
	require.NoError(t, err)
	prompts, err := SuppressPrompts(m, 5, 3201)
	require.NoError(t, err)
	require.Len(t, prompts, 5)
	for _, p := range prompts {
		require.Equal(t, d.EOS, p[0])
		require.Greater(t, len(p), 1)
	}
	sc := eval.SampleConfig{MaxNewTokens: 6, Temperature: 1, StopToken: -1, Seed: 7}
	none := make([]float64, m.Config.Prism.NumPrototypes)
	gens, err := GenerateSuppressed(m, prompts, none, prismlayer.SuppressZero, 2, sc)
	require.NoError(t, err)
	require.Len(t, gens, len(prompts))
	for _, g := range gens {
		require.True(t, len(g) >= 1 && len(g) <= sc.MaxNewTokens, "%d tokens", len(g))
	}
	again, err := GenerateSuppressed(m, prompts, none, prismlayer.SuppressZero, 2, sc)
	require.NoError(t, err)
	require.Equal(t, gens, again)
	got, err := CompletionPerplexity(m, prompts, gens)
	require.NoError(t, err)
	sum, n := 0.0, 0
	for i, p := range prompts {
		losses, err := m.TokenLosses([][]int32{append(append([]int32(nil), p...), gens[i]...)})
		require.NoError(t, err)
		for _, l := range losses[0][len(p)-1:] {
			sum += l
			n++
		}
	}
	want := math.Exp(sum / float64(n))
	require.InDelta(t, want, got, 1e-4*want)
}
