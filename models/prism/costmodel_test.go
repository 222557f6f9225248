package prism

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/theory/cost"
)

// TestCostModel_TrackedLayersAreTheHookedLayers checks the cost model's EK-FAC modules against the layers the block
// pass captures: the same count and Σ In·Out.
func TestCostModel_TrackedLayersAreTheHookedLayers(t *testing.T) {
	m, rows := untrainedModel(t, 1)
	g, err := newAttrGraphs(m)
	require.NoError(t, err)
	_, layers, err := g.runBlocks(rows, 1, nil, false, 1, noNoise)
	require.NoError(t, err)
	ins, outs := NewCostShape(m.Config, DefaultAttributorConfig(), tinyPromptTokens, 1, 0).trackedLayers()
	require.Len(t, ins, len(layers))
	want, got := 0, 0.0
	for i, l := range layers {
		want += l.Params()
		got += ins[i] * outs[i]
	}
	require.Equal(t, float64(want), got)
}

// TestCostModel_CodesMemoryIsTheCache checks the modelled memory of the per-token cache against the cache itself:
// the model counts k postings per token, the cache only the non-zero activations, 12 bytes each; the rest is exact.
func TestCostModel_CodesMemoryIsTheCache(t *testing.T) {
	m := tinyModel(t)
	at := tinyAttributor(t, m, 24)
	cm := NewCostModel("test", NewCostShape(m.Config, at.Config, tinyPromptTokens, len(at.Corpus), 0))
	postings := 0
	for j := 0; j < at.pc.NumPrototypes; j++ {
		postings += at.Cache.Postings(j)
	}
	missing := at.NumTokens*at.pc.TopK - postings
	require.InDelta(t, float64(at.Cache.Bytes()+int64(12*missing)), 1e9*cm.Method(MethodPrismDot).GB, 1e-3)
	require.InDelta(t, float64(at.Bytes()+int64(12*missing)), 1e9*cm.Method(MethodPrism).GB, 1e-3)
}

// TestCostModel_ClosedForms checks the model where its terms have closed forms: with k = K every query uses every
// prototype, so prism costs F_seq + T_c·2VD + K·4D² + N_tok·k·(2D + 2); EK-FAC's speed-up over itself is 1; the dot
// product costs less than the preconditioned method; banks above direct_max_k are solved by CG at a cost linear in
// the iterations.
func TestCostModel_ClosedForms(t *testing.T) {
	s := CostShape{D: 8, K: 4, TopK: 4, Layers: 1, FFN: 32, Vocab: 20, Heads: 2, KVHeads: 2, HeadDim: 4, SeqLen: 6,
		Completion: 4, NumSeqs: 10, DirectMaxK: 8, CGIterations: 7}
	c := NewCostModel("closed", s)
	D, K, k, V, T, Tc, N := 8.0, 4.0, 4.0, 20.0, 6.0, 4.0, 10.0
	backbone := cost.Model{Vocab: 20, Width: 8, Layers: 1, FFN: 32, Mixer: cost.Attention{Width: 8, Heads: 2,
		KVHeads: 2, HeadDim: 4}}
	fSeq := T * (backbone.Forward(6).Total() + 2*D*K + 2*k*D)
	want := fSeq + Tc*2*V*D + K*4*D*D + N*T*k*(2*D+2)
	require.InDelta(t, want, 1e9*c.Method(MethodPrism).GFLOPs, 1e-6*want)
	require.Equal(t, 1.0, c.Method(MethodEKFAC).SpeedUp)
	require.Less(t, c.Method(MethodPrismDot).GFLOPs, c.Method(MethodPrism).GFLOPs)
	require.Equal(t, "direct", c.Method(MethodExactCE).Solver)

	s.DirectMaxK = 2
	cost0, cost7 := s, s
	cost0.CGIterations = 0
	c0, c7 := NewCostModel("cg", cost0), NewCostModel("cg", cost7)
	require.Equal(t, "cg", c7.Method(MethodExactCE).Solver)
	s.CGIterations = 14
	c14 := NewCostModel("cg", s)
	d1 := c7.Method(MethodPrismFullC).GFLOPs - c0.Method(MethodPrismFullC).GFLOPs
	d2 := c14.Method(MethodPrismFullC).GFLOPs - c7.Method(MethodPrismFullC).GFLOPs
	require.Positive(t, d1)
	require.InDelta(t, d1, d2, 1e-9*math.Abs(d1))
}
