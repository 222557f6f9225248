package prism

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/run"
)

// The attribution study's Tiny queries (experiments/attribution): validation sequences whose first 4 predicted
// positions are the prompt; -short tests take 4 of them.
const tinyQueryCount, tinyPromptTokens = 4, 4

// tinyAttributor builds the default attributor of m over its first trainSeqs training sequences.
func tinyAttributor(t testing.TB, m *lm.Model, trainSeqs int) *Attributor {
	c := DefaultAttributorConfig()
	c.TrainSeqs = trainSeqs
	at, err := NewAttributor(m, c)
	require.NoError(t, err)
	return at
}

// tinyModel trains the Tiny PRISM model (lm.PrismTiny) into a temporary run.Out, so that attribution caches are
// written and reloaded.
func tinyModel(t testing.TB) *lm.Model {
	m, err := lm.LoadOrTrain(lm.PrismTiny(), run.Out(t.TempDir()), run.Progress(nil))
	require.NoError(t, err)
	return m
}

// tinyQueries returns tinyQueryCount validation queries from offset on, with tinyPromptTokens prompt positions.
func tinyQueries(t testing.TB, at *Attributor, offset int) []Query {
	qs, err := at.ValidationQueries(offset, tinyQueryCount, tinyPromptTokens)
	require.NoError(t, err)
	return qs
}

// TestAttributor_CacheReloads checks that a second Attributor over the same model and corpus loads the caches from
// the run folder and scores every cached method exactly as the one that built them.
func TestAttributor_CacheReloads(t *testing.T) {
	m := tinyModel(t)
	at := tinyAttributor(t, m, 24)
	require.False(t, at.Cached)
	qs := tinyQueries(t, at, 0)
	again, err := NewAttributor(m, at.Config)
	require.NoError(t, err)
	require.True(t, again.Cached)
	require.FileExists(t, filepath.Join(again.dir, CodesFile))
	require.FileExists(t, filepath.Join(again.dir, ColumnsFile))
	for _, method := range CachedMethods {
		want, err := at.Scores(qs[:2], method)
		require.NoError(t, err)
		reloaded, err := again.Scores(qs[:2], method)
		require.NoError(t, err)
		require.Equal(t, want, reloaded, method)
	}
}

// TestAttributor_TextQuery checks how a text becomes a query: the completion after "|" is attributed, a text
// without "|" attributes every token after the first, long texts keep their end, and an empty completion errors.
func TestAttributor_TextQuery(t *testing.T) {
	m := tinyModel(t)
	at := tinyAttributor(t, m, 8)
	d, err := m.Data()
	require.NoError(t, err)
	tok := d.Tokenizer
	T := m.Config.Data.SeqLen
	sum := func(w []float64) (s float64) {
		for _, v := range w {
			s += v
		}
		return s
	}
	q, err := at.textQuery("the queen|went home")
	require.NoError(t, err)
	np, nc := len(tok.Encode("the queen")), len(tok.Encode("went home"))
	require.Len(t, q.Tokens, T+1)
	require.Equal(t, float64(nc), sum(q.Weights))
	require.Equal(t, 1.0, q.Weights[np-1], "the first completion token is predicted at position len(prompt)−1")
	require.Equal(t, d.EOS, q.Tokens[T])

	q, err = at.textQuery("the queen went home")
	require.NoError(t, err)
	require.Equal(t, float64(len(tok.Encode("the queen went home"))-1), sum(q.Weights))

	long := strings.Repeat("the queen went home. ", 20)
	q, err = at.textQuery(long)
	require.NoError(t, err)
	all := tok.Encode(long)
	require.Equal(t, all[len(all)-T-1:], q.Tokens)
	require.Equal(t, float64(T), sum(q.Weights))

	_, err = at.textQuery("the queen|")
	require.ErrorContains(t, err, "no token to attribute")
}

// TestAttributor_ReferenceDirectEqualsCG: the exact eigenbasis solve of the co-usage curvature and its CG solve (to
// 1e-10) give the same scores, for the reference and the cached methods that use it.
func TestAttributor_ReferenceDirectEqualsCG(t *testing.T) {
	m := tinyModel(t)
	at := tinyAttributor(t, m, 24)
	qs := tinyQueries(t, at, 0)[:2]
	ac := at.Config
	ac.DirectMaxK, ac.CGTol = 0, 1e-10
	cg, err := NewAttributor(m, ac)
	require.NoError(t, err)
	require.Nil(t, cg.Curvature.Direct)
	require.NotNil(t, at.Curvature.Direct)
	for _, method := range []string{MethodReference, MethodExactCE, MethodPrismFullC} {
		want, err := cg.Scores(qs, method)
		require.NoError(t, err)
		got, err := at.Scores(qs, method)
		require.NoError(t, err)
		for q := range want {
			for s := range want[q] {
				require.InDelta(t, want[q][s], got[q][s], 1e-6*(math.Abs(want[q][s])+1e-9), "%s q%d s%d", method, q, s)
			}
		}
	}
}

// TestAttributor_QueriesFromOffset checks that the queries are the validation sequences from an offset on, with
// the prompt excluded, and that an offset past the validation split is an error naming the key.
func TestAttributor_QueriesFromOffset(t *testing.T) {
	m := tinyModel(t)
	at := tinyAttributor(t, m, 8)
	qs := tinyQueries(t, at, 3)
	d, err := m.Data()
	require.NoError(t, err)
	require.Len(t, qs, tinyQueryCount)
	for i, q := range qs {
		require.Equal(t, d.ValSeqs.Sequence(3+i), q.Tokens)
		require.Zero(t, q.Weights[tinyPromptTokens-1])
		require.Equal(t, 1.0, q.Weights[tinyPromptTokens])
	}
	_, err = at.ValidationQueries(d.ValSeqs.NumSequences(), tinyQueryCount, tinyPromptTokens)
	require.ErrorContains(t, err, "query_offset")
}

// TestAttributor_MatchedEKFACQueriesCoverTheCorpus checks the matched-memory EK-FAC queries: as many training
// gradients are stored as fit beside the factors in the budget, and one query scores every corpus sequence once
// (stored or recomputed) for both EK-FAC baselines.
func TestAttributor_MatchedEKFACQueriesCoverTheCorpus(t *testing.T) {
	m := tinyModel(t)
	at := tinyAttributor(t, m, 40)
	qs := tinyQueries(t, at, 0)
	require.NoError(t, at.fitBlockEKFAC())
	grad := at.ekfac.timing.GradBytes
	require.Equal(t, int64(4*at.ekfac.f.NumParams()), grad)
	budget := at.ekfac.f.Bytes() + 13*grad + grad/2
	require.Equal(t, 13, storedWithin(budget-at.ekfac.f.Bytes(), grad, len(at.Corpus)))
	require.Equal(t, len(at.Corpus), storedWithin(1<<40, grad, len(at.Corpus)))
	require.Zero(t, storedWithin(-1, grad, len(at.Corpus)))
	at.ekfac.timing.Stored = 13
	_, _, _, err := at.blockScores(qs[:1])
	require.NoError(t, err)
	require.Len(t, at.ekfac.stored, 13)
	scores, err := at.timeMatchedBlockQuery(qs[0])
	require.NoError(t, err)
	require.Len(t, scores, len(at.Corpus))
	for s, v := range scores {
		require.NotZero(t, v, "sequence %d was neither stored nor recomputed", s)
	}

	require.NoError(t, at.fitBankEKFAC())
	at.storeBankGradients(4 * int64(4+4*at.mc.Width) * int64(at.pc.TopK))
	require.Positive(t, at.bank.timing.Stored)
	require.Less(t, at.bank.timing.Stored, len(at.Corpus))
	require.LessOrEqual(t, at.bank.storedBytes, 4*int64(4+4*at.mc.Width)*int64(at.pc.TopK))
	scores, err = at.timeMatchedBankQuery(qs[0])
	require.NoError(t, err)
	for s, v := range scores {
		require.NotZero(t, v, "sequence %d was neither stored nor recomputed", s)
	}
}

// TestAttributor_RetrainCyclesASmallSubset checks that an LDS retraining on fewer sequences than its updates need
// cycles the subset (train.steps = 40 batches of 4 from 10 sequences) and yields a model.
func TestAttributor_RetrainCyclesASmallSubset(t *testing.T) {
	m := tinyModel(t)
	d, err := m.Data()
	require.NoError(t, err)
	// A corpus of the whole training split, so that no sequence outside it joins the subset.
	at := &Attributor{Model: m, data: d}
	for i := 0; i < d.TrainSeqs.NumSequences(); i++ {
		at.Corpus = append(at.Corpus, d.TrainSeqs.Sequence(i))
	}
	keep := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	tm, err := at.retrain(keep, "test", run.NewOptions())
	require.NoError(t, err)
	require.Equal(t, m.Config.Train.Steps, len(tm.Result.History.Steps))
	_, err = at.retrain(keep[:2], "test", run.NewOptions())
	require.ErrorContains(t, err, "cannot fill one batch")
}
