package lm

import (
	"math"
	"sync"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/wbtest"
)

var trainedPrism struct {
	once sync.Once
	m    *Model
	err  error
}

// tinyPrismModel trains tinyPrism once (in memory) for the read-out tests.
func tinyPrismModel(t *testing.T) *Model {
	t.Helper()
	trainedPrism.once.Do(func() { trainedPrism.m, trainedPrism.err = Train(tinyPrism(), "", run.Progress(nil)) })
	require.NoError(t, trainedPrism.err)
	return trainedPrism.m
}

// TestSignatures_MatchTheGraphSignatures compares the float64 loops of Model.Signatures with prism.Signatures (W p_i
// as one einsum in the model's float32) for some prototypes in a scrambled order, and checks the errors.
func TestSignatures_MatchTheGraphSignatures(t *testing.T) {
	m := tinyPrismModel(t)
	ids := []int{5, 0, 15, 5}
	got, err := m.Signatures(ids)
	require.NoError(t, err)
	mc := m.Config.Model
	exec := model.MustNewExec(m.Backend, m.Store, func(scope *model.Scope, x *Node) *Node {
		bank := prism.BankVariable(scope).NodeValue(x.Graph())
		w := scope.At(decoder.ScopeEmbed).GetVariable(decoder.VarEmbeddings)
		if !mc.TieEmbeddings {
			w = scope.At(decoder.ScopeLMHead).GetVariable(decoder.VarLMHead)
		}
		return ConvertDType(prism.Signatures(bank, w.NodeValue(x.Graph())), dtypes.Float64)
	})
	all := tensors.MustCopyFlatData[float64](exec.MustExec(int32(0))[0]) // [K, V]
	V := mc.VocabSize
	require.Len(t, got, len(ids))
	for c, i := range ids {
		wbtest.RequireClose(t, "W p_i", all[i*V:(i+1)*V], got[c], 1e-5)
	}
	_, err = m.Signatures([]int{16})
	require.ErrorContains(t, err, "outside [0, 16)")
}

// TestCoverage_MatchesCosinesFromHeadStats recomputes R̄1 and R2 (spec §4) with plain loops over the hidden states
// of HeadStats and the bank, and checks the token count and that the usage counts add up to the positive
// activations.
func TestCoverage_MatchesCosinesFromHeadStats(t *testing.T) {
	m := tinyPrismModel(t)
	d, err := m.Data()
	require.NoError(t, err)
	vals, err := d.ValTensors(2)
	require.NoError(t, err)
	cov, usage, err := m.Coverage(vals)
	require.NoError(t, err)
	got, err := cov.Metrics()
	require.NoError(t, err)
	st, err := m.HeadStats(vals)
	require.NoError(t, err)
	bank, err := m.Bank()
	require.NoError(t, err)
	D, K := st.D, m.Config.Prism.NumPrototypes
	norm := func(x []float64) float64 {
		s := 0.0
		for _, v := range x {
			s += v * v
		}
		return math.Sqrt(s)
	}
	protoMax, r2 := make([]float64, K), 0.0
	for j := range protoMax {
		protoMax[j] = math.Inf(-1)
	}
	positive := int64(0)
	for n := range st.N {
		z := st.Z[n*D : (n+1)*D]
		best := math.Inf(-1)
		for j := range K {
			p := bank[j*D : (j+1)*D]
			dot := 0.0
			for i := range D {
				dot += z[i] * p[i]
			}
			c := dot / (norm(z)*norm(p) + prism.Eps)
			best, protoMax[j] = math.Max(best, c), math.Max(protoMax[j], c)
		}
		r2 += best / float64(st.N)
		for x := range st.TopK {
			if st.Acts[n*st.TopK+x] > 0 {
				positive++
			}
		}
	}
	r1 := 0.0
	for _, v := range protoMax {
		r1 += v / float64(K)
	}
	require.Equal(t, st.N, got.Tokens)
	require.InDelta(t, r2, got.R2, 1e-5)
	require.InDelta(t, r1, got.R1Bar, 1e-5)
	total := int64(0)
	for _, c := range usage.Counts() {
		total += c
	}
	require.Equal(t, positive, total)

	dense, err := Train(tinyConfig(), "", run.Progress(nil))
	require.NoError(t, err)
	_, _, err = dense.Coverage(vals)
	require.ErrorContains(t, err, "no prototype head")
}
