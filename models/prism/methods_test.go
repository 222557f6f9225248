package prism

import (
	"math"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/decoder"
	prismlayer "github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/workbench/host"
)

// requireScores checks got against want query by query, to 1e-6 of the query's largest |score|: the caches keep
// activations and gradients in float32 (relative rounding 6e-8), and a score sums a few hundred such products.
func requireScores(t *testing.T, method string, want, got [][]float64) {
	for q := range want {
		scale := 0.0
		for _, v := range want[q] {
			scale = math.Max(scale, math.Abs(v))
		}
		require.Positive(t, scale, "%s: query %d has only zero scores", method, q)
		for s := range want[q] {
			require.InDelta(t, want[q][s], got[q][s], 1e-6*scale, "%s: query %d, sequence %d", method, q, s)
		}
	}
}

// TestAttributor_CodeMethodsMatchPlainLoops recomputes the option-B methods from the spec's equations with plain
// loops: prism (spec §6.2 as written, the diagonal-C blocks, I(q, s) = Σ_j g_{q,j}ᵀ(H_jj + λI)⁻¹g_{s,j}/N_tok),
// prism_full_c (the full H of §5 by a dense solve) and prism_dot (no preconditioner).
func TestAttributor_CodeMethodsMatchPlainLoops(t *testing.T) {
	m := float64Tiny(t)
	at := tinyAttributor(t, m, 24)
	qs := tinyQueries(t, at, 0)[:2]
	corpus := newPlainHead(t, m, at.Corpus)
	st := newPlainStats(corpus, m.Config.Prism.Config, at.batch(), at.Config.Seed, at.Config.DampingScale)
	T, N := corpus.T, len(at.Corpus)
	want := map[string][][]float64{}
	for _, q := range qs {
		qh := newPlainHead(t, m, [][]int32{q.Tokens})
		Gq := qh.codeColumns(0, T, q.Weights)
		pre := map[string][][]float64{MethodPrismDot: Gq, MethodPrismFullC: st.fullSolve(Gq),
			MethodPrism: make([][]float64, len(Gq))}
		for j := range Gq {
			pre[MethodPrism][j] = st.blockSolve(j, Gq[j])
		}
		for method, x := range pre {
			row := make([]float64, N)
			for s := range row {
				Gs := corpus.codeColumns(s*T, (s+1)*T, nil)
				for j := range Gs {
					row[s] += dot(x[j], Gs[j])
				}
				row[s] /= float64(N * T)
			}
			want[method] = append(want[method], row)
		}
	}
	for _, method := range []string{MethodPrism, MethodPrismFullC, MethodPrismDot} {
		got, err := at.Scores(qs, method)
		require.NoError(t, err)
		requireScores(t, method, want[method], got)
	}
}

// TestAttributor_RoutedMethodsMatchDenseInfluence recomputes the option-A methods: each sequence's gradient
// G_s = ∇_P Σ_{t∈s} CE_t (residual held fixed, so ∂a/∂P included) by autodiff with respect to the bank variable, the
// query's G_q likewise on its completion, the curvature from the plain-loop statistics, and
// I(q, s) = ⟨(H + λI)⁻¹ vec(G_q), vec(G_s)⟩/N_tok by a dense solve (exact_ce) or with the diagonal-C blocks
// (exact_ce_diag_c).
func TestAttributor_RoutedMethodsMatchDenseInfluence(t *testing.T) {
	m := float64Tiny(t)
	at := tinyAttributor(t, m, 12)
	qs := tinyQueries(t, at, 0)[:2]
	pc, mc := m.Config.Prism.Config, m.Config.Model
	K, D, N := pc.NumPrototypes, mc.Width, len(at.Corpus)
	gradPC := pc
	gradPC.Residual = prismlayer.ResidualStopGrad
	// One compiled graph: ∇_P Σ_t w_t CE_t over a [N+2, T+1] batch; rows get weight 1 one at a time.
	exec, err := model.NewExec(m.Backend, m.Store, func(scope *model.Scope, batch, w *Node) *Node {
		in, tg := inputsAndTargets(batch)
		d := decoder.PrismHead(scope, mc, gradPC, in)
		bank := prismlayer.BankVariable(scope).NodeValue(batch.Graph())
		return ConvertDType(Gradient(ReduceAllSum(Mul(w, decoder.CrossEntropy(d.Logits, tg))), bank)[0], dtypes.Float64)
	})
	require.NoError(t, err)
	rows := append(append([][]int32(nil), at.Corpus...), qs[0].Tokens, qs[1].Tokens)
	T := len(rows[0]) - 1
	flat := make([]int32, 0, len(rows)*(T+1))
	for _, r := range rows {
		flat = append(flat, r...)
	}
	batch := tensors.FromFlatDataAndDimensions(flat, len(rows), T+1)
	gradOf := func(row int, weights []float64) [][]float64 { // K columns [D]
		w := make([]float64, len(rows)*T)
		for pos := 0; pos < T; pos++ {
			w[row*T+pos] = 1
			if weights != nil {
				w[row*T+pos] = weights[pos]
			}
		}
		res, err := exec.Exec(batch, host.Tensor(w, mc.DTypeOf(), len(rows), T))
		require.NoError(t, err)
		g := tensors.MustCopyFlatData[float64](res[0]) // [K, D]
		cols := make([][]float64, K)
		for j := range cols {
			cols[j] = g[j*D : (j+1)*D]
		}
		return cols
	}
	st := newPlainStats(newPlainHead(t, m, at.Corpus), pc, at.batch(), at.Config.Seed, at.Config.DampingScale)
	Gs := make([][][]float64, N)
	for s := range Gs {
		Gs[s] = gradOf(s, nil)
	}
	want := map[string][][]float64{}
	for qi, q := range qs {
		Gq := gradOf(N+qi, q.Weights)
		blocks := make([][]float64, K)
		for j := range blocks {
			blocks[j] = st.blockSolve(j, Gq[j])
		}
		for method, x := range map[string][][]float64{MethodExactCE: st.fullSolve(Gq), MethodExactCEDiagC: blocks} {
			row := make([]float64, N)
			for s := range row {
				for j := range x {
					row[s] += dot(x[j], Gs[s][j])
				}
				row[s] /= float64(at.NumTokens)
			}
			want[method] = append(want[method], row)
		}
	}
	for _, method := range []string{MethodExactCE, MethodExactCEDiagC} {
		got, err := at.Scores(qs, method)
		require.NoError(t, err)
		requireScores(t, method, want[method], got)
	}
}
