package prism

import (
	"math"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/theory/cost"
	"github.com/protolab/protolab/workbench/run"
)

// The cost model of one query (doc.go, "Cost model"): FLOPs (a multiply-add is 2) and the memory each method scores
// from, as formulas in the model's and corpus's sizes. It is a model, not a measurement: it counts arithmetic, not
// memory traffic (the postings and stored gradients are read once per query, so both sides are memory-bound alike),
// and it assumes uniform prototype usage.

// CostShape is the scale the cost model reads.
type CostShape struct {
	D          int `json:"d"`
	K          int `json:"k"`
	TopK       int `json:"top_k"` // k, prototypes per token
	Layers     int `json:"layers"`
	FFN        int `json:"ffn"` // F, the SwiGLU width
	Vocab      int `json:"vocab"`
	Heads      int `json:"heads"`
	KVHeads    int `json:"kv_heads"`
	HeadDim    int `json:"head_dim"`
	SeqLen     int `json:"seq_len"`    // T, tokens per sequence
	Completion int `json:"completion"` // T_c, attributed tokens per query
	NumSeqs    int `json:"num_seqs"`   // N_seq, corpus sequences
	DirectMaxK int `json:"direct_max_k"`
	// CGIterations is the assumed number of CG iterations of a solve of the full curvature (the mean counted on this
	// run's first model: the curvature at the Paper scale is not known without running it).
	CGIterations float64 `json:"cg_iterations"`
}

// MethodCost is the modelled cost of one query of one method.
type MethodCost struct {
	Name string `json:"name"`
	// Solver is how the method preconditions: "blocks", "direct", "cg", "none" or "ekfac".
	Solver string  `json:"solver"`
	GFLOPs float64 `json:"gflops"` // per query
	GB     float64 `json:"gb"`     // the memory the method scores from
	// StoredSeqs is, for EK-FAC and the gradient dot products, how many training gradients fit in the memory of the
	// default method; the others are recomputed per query.
	StoredSeqs int `json:"stored_seqs,omitempty"`
	// SpeedUp is EK-FAC's (backbone, matched memory) GFLOPs divided by this method's.
	SpeedUp float64 `json:"speed_up"`
}

// CostModel is the cost model of every method at one scale.
type CostModel struct {
	Name    string       `json:"name"` // "this run" or "paper"
	Shape   CostShape    `json:"shape"`
	Methods []MethodCost `json:"methods"`
}

// Method returns the named method's cost, or nil.
func (c *CostModel) Method(name string) *MethodCost {
	for i := range c.Methods {
		if c.Methods[i].Name == name {
			return &c.Methods[i]
		}
	}
	return nil
}

// CorpusPassCost is the estimated compute (run.Cost's conventions) of one forward and backward pass of the PRISM
// model m over seqs corpus sequences, counted as evaluation: what building an Attributor's caches, its reference and
// its EK-FAC fits reads once per sequence; the per-query solves are NewCostModel's.
func CorpusPassCost(m lm.Config, seqs int) run.Cost {
	fwd := decoder.PrismFLOPsPerToken(m.Model, m.Prism.Config, m.Data.SeqLen)
	return run.Eval(int64(seqs)*int64(m.Data.SeqLen), run.TrainPerForward*fwd)
}

// NewCostShape returns the cost shape of the PRISM model m attributed with c: a corpus of numSeqs sequences, queries
// whose first promptTokens predicted positions are not attributed, and cgIters CG iterations per full solve.
func NewCostShape(m lm.Config, c AttributorConfig, promptTokens, numSeqs int, cgIters float64) CostShape {
	mc := m.Model
	headDim := mc.Attention.HeadDim
	if headDim == 0 {
		headDim = mc.Width / mc.Attention.NumHeads
	}
	return CostShape{D: mc.Width, K: m.Prism.NumPrototypes, TopK: m.Prism.TopK, Layers: mc.NumLayers,
		FFN: mc.FFNWidth(), Vocab: mc.VocabSize, Heads: mc.Attention.NumHeads, KVHeads: mc.Attention.KVHeads(),
		HeadDim: headDim, SeqLen: m.Data.SeqLen, Completion: m.Data.SeqLen - promptTokens, NumSeqs: numSeqs,
		DirectMaxK: c.DirectMaxK, CGIterations: cgIters}
}

// trackedLayers returns EK-FAC's modules of the backbone (graph.go, blockNodes): per block the FFN gate, up and
// down projections and the attention output projection.
func (s CostShape) trackedLayers() (in, out []float64) {
	D, F, HD := float64(s.D), float64(s.FFN), float64(s.Heads*s.HeadDim)
	for l := 0; l < s.Layers; l++ {
		in, out = append(in, D, D, F, HD), append(out, F, F, D, D)
	}
	return in, out
}

// NewCostModel returns the modelled cost of every method of Methods at shape s, named name (the formulas in doc.go):
//
//	F_seq  = T·(forward per token of the backbone and LM head (theory/cost) + 2DK + 2kD)      one sequence's forward
//	act_q  = K·(1 − (1 − k/K)^{T_c}),  act_s = K·(1 − (1 − k/K)^T)                             used prototypes
//	post_B = N_tok·k/K (per-token postings),  post_A = N_seq·act_s/K (per-sequence columns)   per prototype
//	prism          F_seq + T_c·2VD + act_q·4D² + act_q·post_B·(2D + 2)
//	prism_dot      F_seq + T_c·2VD + act_q·post_B·(2D + 2)
//	prism_full_c   F_seq + T_c·2VD + solve + K·post_B·(2D + 2)
//	exact_ce, reference   F_seq + T_c·(2VD + 8kD) + solve + N_seq·act_s·2D
//	exact_ce_diag_c       F_seq + T_c·(2VD + 8kD) + act_q·4D² + act_q·post_A·2D
//	solve   direct (K ≤ direct_max_k): 8D²K + 2DK²;   CG: I·(4·nnz(C)·D + 2D²K + 4D²K + 10KD)
//	ekfac   3F_seq + 2T·P + Σ_layers 4(Out²·In + Out·In²) + n·2P + (N_seq − n)·(3F_seq + 2T·P + 2P)
//	graddot the same without the preconditioning
//	ekfac_bank  F_seq + T_c·(2VD + 2kD) + 4(D²K + DK²) + n·act_s·2D + (N_seq − n)·(F_seq + T·(2VD + 2kD) + act_s·2D)
//
// with P the tracked parameters, n the training gradients that fit beside the factors in the memory of prism, and
// nnz(C) = K + K(K − 1)·(1 − exp(−N_tok·k(k − 1)/(K(K − 1)))) under uniform usage.
func NewCostModel(name string, s CostShape) CostModel {
	D, K, k := float64(s.D), float64(s.K), float64(s.TopK)
	V, T, Tc, N := float64(s.Vocab), float64(s.SeqLen), float64(s.Completion), float64(s.NumSeqs)
	Ntok := N * T
	backbone := cost.Model{Vocab: s.Vocab, Width: s.D, Layers: s.Layers, FFN: s.FFN,
		Mixer: cost.Attention{Width: s.D, Heads: s.Heads, KVHeads: s.KVHeads, HeadDim: s.HeadDim}}
	fSeq := T * (backbone.Forward(s.SeqLen).Total() + 2*D*K + 2*k*D)
	used := func(tokens float64) float64 { return K * (1 - math.Pow(1-k/K, tokens)) }
	actQ, actS := used(Tc), used(T)
	postB, postA := Ntok*k/K, N*actS/K
	uQ := Tc * 2 * V * D           // u_t = Wᵀ(π − e_y) of the attributed tokens
	routeQ := Tc * (2*V*D + 8*k*D) // the head's backward with ∂a/∂P
	block := 4 * D * D             // one diagonal-C block applied: Qᵀg, scale, Q·
	pairs := K * (K - 1)
	nnzC := K
	if pairs > 0 {
		nnzC += pairs * (1 - math.Exp(-Ntok*k*(k-1)/pairs))
	}
	solve, solver := 8*D*D*K+2*D*K*K, "direct"
	curvBytes := 8 * (D*K*K + D*D + D)
	if s.K > s.DirectMaxK {
		solve, solver = s.CGIterations*(4*nnzC*D+2*D*D*K+4*D*D*K+10*K*D), "cg"
		curvBytes = 12*2*nnzC + 8*D*D
	}
	blocksBytes := 8 * (D*D + D + 2*K)
	codesBytes := Ntok*(20*k+4*D) + 8*(N+1) + 8*(K+1)
	columnsBytes := N*actS*(4+4*D) + 8*(K+1)
	budget := codesBytes + blocksBytes

	ins, outs := s.trackedLayers()
	var P, factors, pre float64
	for i := range ins {
		in, out := ins[i], outs[i]
		P += in * out
		factors += 8 * (in*in + out*out + in + out + in*out)
		pre += 4 * (out*out*in + out*in*in)
	}
	grad := 4 * P
	stored := func(free, per float64) float64 {
		if free <= 0 || per <= 0 {
			return 0
		}
		return math.Min(math.Floor(free/per), N)
	}
	nEK := stored(budget-factors, grad)
	nGD := stored(budget, grad)
	recompute := 3*fSeq + 2*T*P + 2*P
	bankFactors := 8 * (K*K + D*D + K + D + K*D)
	bankGrad := actS * (4 + 4*D)
	nBank := stored(budget-bankFactors, bankGrad)

	methods := []MethodCost{
		{Name: MethodPrism, Solver: "blocks", GFLOPs: fSeq + uQ + actQ*block + actQ*postB*(2*D+2),
			GB: budget},
		{Name: MethodPrismFullC, Solver: solver, GFLOPs: fSeq + uQ + solve + K*postB*(2*D+2),
			GB: codesBytes + curvBytes},
		{Name: MethodPrismDot, Solver: "none", GFLOPs: fSeq + uQ + actQ*postB*(2*D+2), GB: codesBytes},
		{Name: MethodExactCE, Solver: solver, GFLOPs: fSeq + routeQ + solve + N*actS*2*D, GB: columnsBytes + curvBytes},
		{Name: MethodExactCEDiagC, Solver: "blocks", GFLOPs: fSeq + routeQ + actQ*block + actQ*postA*2*D,
			GB: columnsBytes + blocksBytes},
		{Name: MethodReference, Solver: solver, GFLOPs: fSeq + routeQ + solve + N*actS*2*D,
			GB: N*actS*(4+8*D) + curvBytes},
		{Name: MethodEKFAC, Solver: "ekfac", GFLOPs: 3*fSeq + 2*T*P + pre + nEK*2*P + (N-nEK)*recompute,
			GB: factors + nEK*grad, StoredSeqs: int(nEK)},
		{Name: MethodEKFACBank, Solver: "ekfac", GFLOPs: fSeq + Tc*(2*V*D+2*k*D) + 4*(D*D*K+D*K*K) +
			nBank*actS*2*D + (N-nBank)*(fSeq+T*(2*V*D+2*k*D)+actS*2*D), GB: bankFactors + nBank*bankGrad,
			StoredSeqs: int(nBank)},
		{Name: MethodGradDot, Solver: "none", GFLOPs: 3*fSeq + 2*T*P + nGD*2*P + (N-nGD)*recompute, GB: nGD * grad,
			StoredSeqs: int(nGD)},
	}
	ek := methods[6].GFLOPs
	for i := range methods {
		m := &methods[i]
		m.SpeedUp = ek / m.GFLOPs
		m.GFLOPs /= 1e9
		m.GB /= 1e9
	}
	return CostModel{Name: name, Shape: s, Methods: methods}
}
