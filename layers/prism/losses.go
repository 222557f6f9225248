package prism

import (
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/pkg/errors"
)

// LossTerms holds the scalar loss terms of docs/spec/prism.md §3 (doc.go, equations 7–11) and their weighted total
// L = L_CE + λ_rec·L_REC + λ_1·L_R1 + λ_2·L_R2. A term whose weight is 0 is still returned (for logging) but is
// left out of Total, so it adds nothing to the gradient graph.
type LossTerms struct {
	Total *Node // L
	CE    *Node // L_CE: mean next-token cross-entropy over the non-pad tokens
	Rec   *Node // L_REC: mean ‖r‖²/(‖z‖² + ε) (RecNorm) or mean ‖r‖²
	R1    *Node // L_R1: mean over prototypes of the distance to their m nearest tokens
	R2    *Node // L_R2: mean over tokens of the distance to their nearest prototype
}

// Losses returns the PRISM loss terms of a Decomposition with the weights and flags of d.Config: targets [B, T]
// (integers in [0, V), the gold next tokens), mask [B, T] bool (true = a real token of B_tok) or nil for all
// tokens. The batch's tokens are the candidates of R1's and R2's minima (spec §3). The cross-entropy uses
// d.Logits, so it follows the Residual variant; L_REC uses the plain residual z − ẑ in both variants. If the mask
// leaves fewer than R1Nearest real tokens, R1's extra picks fall on token 0. Panics on bad shapes, or if R1Nearest
// exceeds B·T.
func Losses(d Decomposition, targets, mask *Node) LossTerms {
	cfg := d.Config
	g, dt := d.Hidden.Graph(), d.Hidden.DType()
	B, T, D := d.Hidden.Shape().Dim(0), d.Hidden.Shape().Dim(1), d.Hidden.Shape().Dim(2)
	K, N, m := cfg.NumPrototypes, B*T, cfg.R1Nearest
	if targets == nil || targets.Rank() != 2 || !targets.DType().IsInt() || targets.Shape().Dim(0) != B || targets.Shape().Dim(1) != T {
		panic(errors.Errorf("prism.Losses: targets=%v, want [B=%d, T=%d] integers", shapeOf(targets), B, T))
	}
	if mask != nil && (mask.DType() != dtypes.Bool || mask.Rank() != 2 || mask.Shape().Dim(0) != B || mask.Shape().Dim(1) != T) {
		panic(errors.Errorf("prism.Losses: mask=%v, want nil or [B=%d, T=%d] bool", mask.Shape(), B, T))
	}
	if m > N {
		panic(errors.Errorf("prism.Losses: r1_nearest=%d exceeds the batch's %d tokens", m, N))
	}

	// Token weights w_t ∈ {0, 1} and N_B = Σ w (at least 1, so an all-pad batch gives 0, not NaN).
	w := OnesLike(ConvertDType(targets, dt))
	if mask != nil {
		w = ConvertDType(mask, dt)
	}
	nTok := MaxScalar(ReduceAllSum(w), 1.0)
	tokenMean := func(x *Node) *Node { return Div(ReduceAllSum(Mul(x, w)), nTok) }

	var t LossTerms
	t.CE = tokenMean(crossEntropy(d.Logits, targets))
	rec := ReduceSum(Square(d.Residual), -1) // ‖r_t‖² [B, T]
	if cfg.RecNorm {
		rec = d.RecRatio()
	}
	t.Rec = tokenMean(rec)

	// Stop-gradients of the "split" routing: R1 sees sg(z), R2 sees sg(P).
	zR1, bankR2 := d.Hidden, d.Bank
	if cfg.ClusterGrad == ClusterGradSplit {
		zR1, bankR2 = StopGradient(d.Hidden), StopGradient(d.Bank)
	}
	// closeness [N, K] ranks (token, prototype) pairs, higher = nearer, without gradients: the cosine for "cos",
	// −‖z − p‖² for "sqL2". The minima below pick with it, then recompute the chosen distance with gradients.
	closeness := Reshape(d.Scores, N, K)
	nearest := Reshape(d.nearest, B, T) // R2's prototype per token
	if cfg.Dist == DistSqL2 {
		zs, ps := StopGradient(Reshape(d.Hidden, N, D)), StopGradient(d.Bank)
		dots := Einsum("nd,kd->nk", zs, ps)
		sq := Add(InsertAxes(ReduceSum(Square(zs), -1), -1), InsertAxes(ReduceSum(Square(ps), -1), 0)) // [N, K]
		closeness = Sub(MulScalar(dots, 2), sq)
		nearest = Reshape(ArgMax(closeness, -1, dtypes.Int32), B, T)
	}
	dist := func(u, v *Node) *Node { // [..., D] × [..., D] → [...]
		if cfg.Dist == DistSqL2 {
			return ReduceSum(Square(Sub(u, v)), -1)
		}
		cos := Div(ReduceSum(Mul(u, v), -1), AddScalar(Mul(norms(u), norms(v)), Eps))
		return OneMinus(cos)
	}

	// L_R2 = (1/N_B) Σ_t min_j dist(p_j, z_t).
	t.R2 = tokenMean(dist(gatherRows(bankR2, nearest), d.Hidden))

	// L_R1 = (1/K) Σ_j (1/m) Σ_{m nearest tokens t of p_j} dist(p_j, z_t): m rounds of ArgMax over the tokens,
	// pads excluded by −∞.
	negInf := Infinity(g, dt, -1)
	work := closeness
	if mask != nil {
		work = Where(Reshape(mask, N), work, negInf)
	}
	zFlat := Reshape(zR1, N, D)
	iotaN := Iota(g, shapes.Make(dtypes.Int32, N, K), 0)
	var r1 *Node
	for range m {
		tok := ArgMax(work, 0, dtypes.Int32) // [K]
		term := dist(d.Bank, gatherRows(zFlat, tok))
		if r1 == nil {
			r1 = term
		} else {
			r1 = Add(r1, term)
		}
		work = Where(Equal(iotaN, InsertAxes(tok, 0)), negInf, work)
	}
	t.R1 = DivScalar(ReduceAllSum(r1), float64(K*m))

	t.Total = t.CE
	for _, wt := range []struct {
		lambda float64
		term   *Node
	}{{cfg.RecWeight, t.Rec}, {cfg.R1Weight, t.R1}, {cfg.R2Weight, t.R2}} {
		if wt.lambda != 0 {
			t.Total = Add(t.Total, MulScalar(wt.term, wt.lambda))
		}
	}
	return t
}

// crossEntropy returns the per-token loss −log softmax(logits)[target]: logits [B, T, V], targets [B, T] integers
// in [0, V) → [B, T]. The target logit is gathered from the flat logits, as decoder.CrossEntropy does.
func crossEntropy(logits, targets *Node) *Node {
	B, T, V := logits.Shape().Dim(0), logits.Shape().Dim(1), logits.Shape().Dim(2)
	maxLogit := StopGradient(ReduceAndKeep(logits, ReduceMax, -1))                            // [B, T, 1]
	logSumExp := Add(Log(ReduceSum(Exp(Sub(logits, maxLogit)), -1)), Reshape(maxLogit, B, T)) // [B, T]
	rows := MulScalar(Iota(logits.Graph(), shapes.Make(dtypes.Int32, B*T), 0), V)             // row offsets
	index := Add(rows, ConvertDType(Reshape(targets, B*T), dtypes.Int32))                     // [B·T]
	target := Reshape(gatherRows(Reshape(logits, B*T*V, 1), index), B, T)                     // [B, T]
	return Sub(logSumExp, target)
}
