package prism

import (
	"testing"

	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/attention"
	"github.com/protolab/protolab/layers/decoder"
	prismlayer "github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/models/influence"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/wbtest"
)

// untrainedModel returns a float64 Tiny-shaped PRISM model with freshly initialised weights (variables are created
// by the first execution) and random token rows [n, T+1].
func untrainedModel(t *testing.T, n int) (*lm.Model, [][]int32) {
	cfg := lm.PrismTiny().Resolved()
	cfg.Model.DType = "float64"
	mc := cfg.Model
	m := &lm.Model{Config: cfg, Store: run.NewStore(3), Backend: wbtest.Backend(t)}
	rng := wbtest.RNG(4)
	rows := make([][]int32, n)
	for r := range rows {
		rows[r] = make([]int32, cfg.Data.SeqLen+1)
		for i := range rows[r] {
			rows[r][i] = int32(rng.IntN(mc.VocabSize))
		}
	}
	// Create the variables (attribution runs on a trained model's context with Reuse).
	init, err := model.NewExec(m.Backend, m.Store, func(scope *model.Scope, batch *Node) *Node {
		in, _ := inputsAndTargets(batch)
		return decoder.PrismLogits(scope, mc, cfg.Prism.Config, in)
	})
	require.NoError(t, err)
	_, err = init.Exec(tensors.FromFlatDataAndDimensions(rows[0], 1, len(rows[0])))
	require.NoError(t, err)
	return m, rows
}

// TestBlockPass_SequenceGradientsEqualAutodiff: for every tracked layer, Σ_t g_t a_tᵀ from the hooked block pass
// equals the autodiff gradient of the row's summed cross-entropy with respect to the layer's weight variable
// (stored [In, Out], so the transpose), and the hooks leave the logits unchanged.
func TestBlockPass_SequenceGradientsEqualAutodiff(t *testing.T) {
	m, rows := untrainedModel(t, 2)
	a, err := newAttrGraphs(m)
	require.NoError(t, err)
	out, layers, err := a.runBlocks(rows[:1], 2, nil, false, 1, "test")
	require.NoError(t, err)
	L := m.Config.Model.NumLayers
	require.Len(t, layers, 4*L, "gate, up, down and the attention output of every block")

	varOf := map[string][2]string{"ffn.gate": {decoder.ScopeFFN, decoder.VarGate},
		"ffn.up":   {decoder.ScopeFFN, decoder.VarUp},
		"ffn.down": {decoder.ScopeFFN, decoder.VarDown}, "attention.o": {attention.Scope, attention.VarOutput}}
	for li, lin := range layers {
		blk := blockScopeOf(lin.Name)
		sv := varOf[lin.Name[len(blk)+1:]]
		exec, err := model.NewExec(m.Backend, m.Store, func(scope *model.Scope, batch *Node) *Node {
			in, tg := inputsAndTargets(batch)
			d := decoder.PrismHead(scope, m.Config.Model, m.Config.Prism.Config, in)
			loss := ReduceAllSum(decoder.CrossEntropy(d.Logits, tg))
			w := scope.At("%s", blk).At("%s", sv[0]).GetVariable(sv[1]).NodeValue(batch.Graph())
			return Gradient(loss, w)[0]
		})
		require.NoError(t, err)
		res, err := exec.Exec(tensors.FromFlatDataAndDimensions(rows[0], 1, len(rows[0])))
		require.NoError(t, err)
		wantT := tensors.MustCopyFlatData[float64](res[0]) // [In, Out]
		G := influence.SequenceGradient(widen(out.a[li]), widen(out.g[li]), lin.In, lin.Out)
		got := make([]float64, len(G))
		for o := 0; o < lin.Out; o++ {
			for i := 0; i < lin.In; i++ {
				got[i*lin.Out+o] = G[o*lin.In+i]
			}
		}
		// The block pass returns float32 activations and gradients.
		wbtest.RequireClose(t, lin.Name, wantT, got, 1e-5)
	}
}

// TestHeadPass_OutputGradientsAndReference: u_t equals the autodiff gradient of CE_t with respect to ẑ_t (residual
// held fixed), and the per-slot reference gradients, summed into their prototypes, equal the autodiff gradient of
// the reference loss with respect to the bank.
func TestHeadPass_OutputGradientsAndReference(t *testing.T) {
	m, rows := untrainedModel(t, 3)
	a, err := newAttrGraphs(m)
	require.NoError(t, err)
	B := 3
	h, err := a.runHead(rows, B, nil, true, true, 1, "test")
	require.NoError(t, err)
	pc := m.Config.Prism.Config
	pc.Residual, pc.ClusterGrad = prismlayer.ResidualStopGrad, prismlayer.ClusterGradBoth
	exec, err := model.NewExec(m.Backend, m.Store, func(scope *model.Scope, batch *Node) []*Node {
		in, tg := inputsAndTargets(batch)
		d := decoder.PrismHead(scope, m.Config.Model, pc, in)
		ce := ReduceAllSum(decoder.CrossEntropy(d.Logits, tg))
		return []*Node{Gradient(ce, d.Reconstruction)[0]}
	})
	require.NoError(t, err)
	in := a.batchInputs(rows, B, nil, true, 1, "test")
	res, err := exec.Exec(in[0])
	require.NoError(t, err)
	wbtest.RequireClose(t, "u", tensors.MustCopyFlatData[float64](res[0]), widen(h.u), 1e-6)

	// Reference: the same loss graph as headNodes, differentiated with respect to the bank variable.
	refExec, err := model.NewExec(m.Backend, m.Store, func(scope *model.Scope, batch, noise, wCE, wAux *Node) []*Node {
		outs := a.headNodes(scope, batch, noise, wCE, wAux, true)
		return outs[len(outs)-2:]
	})
	require.NoError(t, err)
	_, err = refExec.Exec(in...)
	require.NoError(t, err)
	bankExec, err := model.NewExec(m.Backend, m.Store, func(scope *model.Scope, batch, wCE, wAux *Node) *Node {
		in, tg := inputsAndTargets(batch)
		d := decoder.PrismHead(scope, m.Config.Model, pc, in)
		bank := prismlayer.BankVariable(scope).NodeValue(batch.Graph())
		ce := decoder.CrossEntropy(d.Logits, tg)
		w := Reciprocal(AddScalar(ReduceSum(Square(d.Hidden), -1), prismlayer.Eps))
		rec := Mul(ReduceSum(Square(d.Residual), -1), w)
		slot0 := Reshape(Slice(d.Indices, AxisRange(), AxisRange(), AxisElem(0)), -1, 1)
		near := Reshape(Gather(bank, slot0), d.Hidden.Shape().Dimensions...)
		cos := Div(ReduceSum(Mul(near, d.Hidden), -1), AddScalar(Mul(Sqrt(ReduceSum(Square(near), -1)),
			Sqrt(ReduceSum(Square(d.Hidden), -1))), prismlayer.Eps))
		aux := Add(MulScalar(rec, pc.RecWeight), MulScalar(OneMinus(cos), pc.R2Weight))
		loss := ReduceAllSum(Add(Mul(wCE, ce), Mul(wAux, aux)))
		return Gradient(loss, bank)[0]
	})
	require.NoError(t, err)
	res, err = bankExec.Exec(in[0], in[2], in[3])
	require.NoError(t, err)
	want := tensors.MustCopyFlatData[float64](res[0]) // [K, D]
	K, D := pc.NumPrototypes, m.Config.Model.Width
	got := make([]float64, K*D)
	for p, j := range h.idx {
		for d := 0; d < D; d++ {
			got[int(j)*D+d] += h.refGradCE[p*D+d] + h.refGradAux[p*D+d]
		}
	}
	require.Len(t, h.refGradCE, len(h.idx)*D)
	wbtest.RequireClose(t, "reference gradient", want, got, 1e-9)
}
