package eval_test

import (
	"math"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/eval"
	"github.com/protolab/protolab/workbench/wbtest"
)

const vocab = 7

// uniformLoss is a model whose predictive distribution is uniform over the vocabulary: nll = log V for every token.
func uniformLoss(scope *model.Scope, batch *Node) *Node {
	B, T := batch.Shape().Dim(0), batch.Shape().Dim(1)-1
	logits := Zeros(batch.Graph(), shapes.Make(dtypes.Float64, B, T, vocab))
	return Neg(ReduceMax(LogSoftmax(logits, -1), -1)) // [B,T]
}

func TestPerplexity_UniformModelIsVocabularySize(t *testing.T) {
	b := wbtest.Backend(t)
	batches := []*tensors.Tensor{
		tensors.FromValue([][]int32{{1, 2, 3, 4}, {0, 1, 2, 3}}),
		tensors.FromValue([][]int32{{6, 5, 4, 3}, {2, 2, 2, 2}}),
	}
	res, err := eval.Perplexity(b, model.NewStore(), uniformLoss, batches)
	require.NoError(t, err)
	require.Equal(t, 2*2*3, res.Tokens)
	require.InDelta(t, math.Log(vocab), res.Loss, 1e-12)
	require.InDelta(t, float64(vocab), res.Perplexity, 1e-10)

	_, err = eval.Perplexity(b, model.NewStore(), uniformLoss, nil)
	require.ErrorContains(t, err, "no batches")
}

// successorStep is a model that predicts (token + pos) mod V with a sharp distribution and counts its steps in the state.
func successorStep(scope *model.Scope, token, pos *Node, state []*Node) (*Node, []*Node) {
	g := token.Graph()
	next := Mod(Add(Reshape(token, -1), ConvertDType(pos, dtypes.Int32)), Const(g, int32(vocab))) // [B]
	logits := MulScalar(OneHot(next, vocab, dtypes.Float32), 20)                                  // [B,V]
	return logits, []*Node{AddScalar(state[0], 1)}
}

func TestGenerate_GreedyFollowsTheModelAndCarriesState(t *testing.T) {
	b := wbtest.Backend(t)
	stateShapes := []shapes.Shape{shapes.Make(dtypes.Float32, 2, 1)}
	dec, err := eval.NewDecoder(b, model.NewStore(), successorStep, stateShapes, 2, 16)
	require.NoError(t, err)
	cfg := eval.SampleConfig{MaxNewTokens: 4, Temperature: 0, StopToken: -1, Seed: 1}
	prompts := [][]int32{{3}, {1, 5, 2}}
	out, stats, err := dec.Generate(prompts, cfg)
	require.NoError(t, err)
	// Expected by hand: a token generated after reading position p is (last + p) mod 7.
	want := make([][]int32, 2)
	for r, p := range prompts {
		last, pos := p[len(p)-1], len(p)-1
		for len(want[r]) < cfg.MaxNewTokens {
			last = (last + int32(pos)) % vocab
			want[r] = append(want[r], last)
			pos++
		}
	}
	require.Equal(t, want, out)
	require.Equal(t, 8, stats.GeneratedTokens)
	require.Equal(t, 4, stats.PromptTokens)
	require.Greater(t, stats.TokensPerS, 0.0)

	// A stop token ends a row early.
	cfg.StopToken = want[0][1]
	out, _, err = dec.Generate(prompts, cfg)
	require.NoError(t, err)
	require.Equal(t, want[0][:2], out[0])
}

func TestGenerate_Errors(t *testing.T) {
	b := wbtest.Backend(t)
	dec, err := eval.NewDecoder(b, model.NewStore(), successorStep, []shapes.Shape{shapes.Make(dtypes.Float32, 1, 1)}, 1, 8)
	require.NoError(t, err)
	cfg := eval.DefaultSampleConfig()
	cfg.MaxNewTokens = 8
	_, _, err = dec.Generate([][]int32{{1, 2}}, cfg)
	require.ErrorContains(t, err, "exceeds the decoding capacity")
	cfg.MaxNewTokens = 2
	_, _, err = dec.Generate([][]int32{{}}, cfg)
	require.ErrorContains(t, err, "prompt 0 is empty")
	_, _, err = dec.Generate([][]int32{{1}, {2}}, cfg)
	require.ErrorContains(t, err, "2 prompts for a decoder of batch 1")
	cfg.MaxNewTokens = 0
	_, _, err = dec.Generate([][]int32{{1}}, cfg)
	require.ErrorContains(t, err, "max_new_tokens")
}

func TestSample_TopKAndTemperature(t *testing.T) {
	logits := []float64{0.5, 2, -1, 1.5, 0}
	rng := wbtest.RNG(7)
	require.Equal(t, int32(1), eval.Sample(logits, 0, 0, rng), "temperature 0 is argmax")
	// With top-k 2 only tokens 1 and 3 appear, with probabilities softmax([2, 1.5]/T).
	const n, temp = 20000, 0.7
	count := map[int32]int{}
	for i := 0; i < n; i++ {
		count[eval.Sample(logits, temp, 2, rng)]++
	}
	require.Equal(t, n, count[1]+count[3], "only the top-2 tokens are sampled")
	p1 := 1 / (1 + math.Exp((1.5-2)/temp))
	stderr := math.Sqrt(p1 * (1 - p1) / n)
	require.InDelta(t, p1, float64(count[1])/n, 4*stderr)
}
