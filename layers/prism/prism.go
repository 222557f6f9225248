package prism

import (
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/initializer"
	"github.com/pkg/errors"
)

// Scope is the sub-scope Head creates the bank in; with VarPrototypes it is a checkpoint path
// ("/prism/prototypes" under a decoder's root scope).
const Scope = "prism"

// VarPrototypes is the name of the prototype bank variable P [K, D] (row i is p_i).
const VarPrototypes = "prototypes"

// NoDecay returns the names of the head's variables that must not be weight-decayed: the bank, which is rank 2 so
// an optimizer must be told by name. decoder.Config.NoDecay collects it.
func NoDecay() []string { return []string{VarPrototypes} }

// Decomposition holds the nodes of one PRISM head evaluation (doc.go, equations 1–6). Shapes use B batch, T tokens,
// D width, K bank size, k = Config.TopK, V vocabulary. Every node is built when Decompose returns, but a graph only
// computes the ones its outputs reach, so unused fields cost nothing.
type Decomposition struct {
	// Config is the configuration Decompose ran with; Losses reads its weights and flags.
	Config Config
	// Hidden is z [B, T, D], the input hidden states.
	Hidden *Node
	// Bank is P [K, D], row i the prototype p_i.
	Bank *Node
	// Unembed is W [V, D], the LM head shared with the prototype path.
	Unembed *Node
	// Scores is s [B, T, K], the cosines of every token with every prototype, under stop-gradient (pass 1).
	Scores *Node
	// Indices [B, T, k] (int32) are the selected prototypes K_t, in decreasing order of cosine; ties go to the
	// lower index. Exactly k distinct entries per token.
	Indices *Node
	// Selected [B, T, K] (bool) marks the selected prototypes: exactly k true entries per token.
	Selected *Node
	// Activations [B, T, k] are a_{t,i} for i = Indices[b, t, :] (pass 2, with gradients); zero where the cosine is
	// not positive, so a token has at most k non-zero activations.
	Activations *Node
	// Codes [B, T, K] are the activations scattered to the bank: a_t with at most k non-zeros, all at Selected
	// entries. ẑ = Codes·P. They carry the gradients of Activations.
	Codes *Node
	// Prototypes [B, T, k, D] are the selected prototypes p_i, gathered from Bank with gradients.
	Prototypes *Node
	// Reconstruction is ẑ_t = Σ_{i∈K_t} a_{t,i} p_i [B, T, D].
	Reconstruction *Node
	// Residual is r_t = z_t − ẑ_t [B, T, D] with ordinary autodiff in both Residual variants (L_REC uses it).
	Residual *Node
	// LogitResidual is the residual the logits use [B, T, D]: Residual under "autodiff", z_t − stopgrad(ẑ_t)
	// under "stopgrad". Same values as Residual.
	LogitResidual *Node
	// Logits are l_t = W(LogitResidual_t + ẑ_t) [B, T, V]; the same values as W z_t in both variants.
	Logits *Node

	nearest *Node // [B, T] int32: argmax_j s_{t,j} over the whole bank (ignores the allowed mask)
}

// Decompose is the PRISM head (doc.go, equations 1–6) with every weight an argument: h [B, T, D] (the decoder's
// final-normalised hidden states z), bank [K, D], unembed [V, D] → Decomposition. The top-k selection runs on the
// cosines under stop-gradient; the selected cosines are recomputed with gradients, so gradients reach z and the
// bank only through the k selected entries per token. Panics if cfg is invalid or on bad shapes or dtypes.
func Decompose(h, bank, unembed *Node, cfg Config) Decomposition {
	return decompose("Decompose", h, bank, unembed, nil, cfg)
}

// DecomposeMasked is Decompose with the prototypes where allowed [K] (bool) is false removed before the top-k
// selection, so the next-best allowed prototypes fill the slots (docs/spec/prism.md §10, variant). If fewer than k
// prototypes are allowed, the remaining slots hold disallowed prototypes with activation 0. Scores and the R2
// nearest prototype still cover the whole bank. Panics like Decompose, or if allowed is not [K] bool.
func DecomposeMasked(h, bank, unembed, allowed *Node, cfg Config) Decomposition {
	if allowed == nil || allowed.DType() != dtypes.Bool || allowed.Rank() != 1 || allowed.Shape().Dim(0) != cfg.NumPrototypes {
		panic(errors.Errorf("prism.DecomposeMasked: allowed=%v, want [K=%d] bool", shapeOf(allowed), cfg.NumPrototypes))
	}
	return decompose("DecomposeMasked", h, bank, unembed, allowed, cfg)
}

func shapeOf(x *Node) any {
	if x == nil {
		return "nil"
	}
	return x.Shape()
}

// checkShapes panics unless h [B, T, D], bank [K, D], unembed [V, D] share one float dtype.
func checkShapes(caller string, h, bank, unembed *Node, cfg Config) {
	if err := cfg.Validate(); err != nil {
		panic(errors.WithMessagef(err, "prism.%s", caller))
	}
	ok := h != nil && bank != nil && unembed != nil && h.Rank() == 3 && bank.Rank() == 2 && unembed.Rank() == 2 &&
		h.DType().IsFloat() && bank.DType() == h.DType() && unembed.DType() == h.DType() &&
		bank.Shape().Dim(0) == cfg.NumPrototypes && bank.Shape().Dim(1) == h.Shape().Dim(2) &&
		unembed.Shape().Dim(1) == h.Shape().Dim(2)
	if !ok {
		panic(errors.Errorf("prism.%s: h=%v, bank=%v, unembed=%v, want h [B, T, D], bank [K=%d, D], unembed [V, D] of one "+
			"float dtype", caller, shapeOf(h), shapeOf(bank), shapeOf(unembed), cfg.NumPrototypes))
	}
}

// norms returns the Euclidean norm over the last axis: x [..., D] → [...].
func norms(x *Node) *Node { return Sqrt(ReduceSum(Square(x), -1)) }

// cosines returns ⟨z_t, p_i⟩/(‖z_t‖·‖p_i‖ + ε) for every token and prototype: z [..., D], bank [K, D] → [..., K].
func cosines(z, bank *Node) *Node {
	K := bank.Shape().Dim(0)
	dots := DotGeneral(z, []int{z.Rank() - 1}, nil, bank, []int{1}, nil) // [..., K]
	pn := norms(bank)                                                    // [K]
	pnDims := make([]int, z.Rank())
	for i := range pnDims {
		pnDims[i] = 1
	}
	pnDims[len(pnDims)-1] = K
	den := AddScalar(Mul(InsertAxes(norms(z), -1), Reshape(pn, pnDims...)), Eps)
	return Div(dots, den)
}

func decompose(caller string, h, bank, unembed, allowed *Node, cfg Config) Decomposition {
	checkShapes(caller, h, bank, unembed, cfg)
	g, dt := h.Graph(), h.DType()
	B, T, D := h.Shape().Dim(0), h.Shape().Dim(1), h.Shape().Dim(2)
	K, k, V := cfg.NumPrototypes, cfg.TopK, unembed.Shape().Dim(0)
	d := Decomposition{Config: cfg, Hidden: h, Bank: bank, Unembed: unembed}

	// Pass 1 (stop-gradient): cosines with the whole bank, then k rounds of ArgMax, each masking its pick to −∞.
	// ArgMax returns the first maximal index, so ties go to the lower index.
	d.Scores = cosines(StopGradient(h), StopGradient(bank)) // [B, T, K]
	d.Scores.AssertDims(B, T, K)
	work := d.Scores
	if allowed != nil {
		// Disallowed cosines move to [−4, −2]: below every allowed one, above the −∞ of picked entries, in order.
		work = Where(BroadcastToDims(Reshape(allowed, 1, 1, K), B, T, K), work, AddScalar(work, -3))
	}
	negInf := Infinity(g, dt, -1)
	iotaK := Iota(g, shapes.Make(dtypes.Int32, B, T, K), 2)
	picks := make([]*Node, k)
	for j := range picks {
		picks[j] = ArgMax(work, -1, dtypes.Int32) // [B, T]
		work = Where(Equal(iotaK, InsertAxes(picks[j], -1)), negInf, work)
	}
	d.Indices = Stack(picks, -1) // [B, T, k]
	d.Indices.AssertDims(B, T, k)
	d.Selected = Equal(work, negInf) // exactly the k picked entries (cosines are finite)
	d.nearest = picks[0]
	if allowed != nil {
		d.nearest = ArgMax(d.Scores, -1, dtypes.Int32)
	}

	// Pass 2 (with gradients): gather the k selected prototypes and recompute their cosines and activations.
	d.Prototypes = gatherRows(bank, d.Indices) // [B, T, k, D]
	d.Prototypes.AssertDims(B, T, k, D)
	zNorm := InsertAxes(norms(h), -1) // [B, T, 1]
	pNorm := norms(d.Prototypes)      // [B, T, k]
	cos := Div(Einsum("btd,btjd->btj", h, d.Prototypes), AddScalar(Mul(zNorm, pNorm), Eps))
	a := MaxScalar(cos, 0.0) // ReLU: [B, T, k]
	if cfg.ActivationScale == ScaleNorm {
		a = Mul(a, Div(zNorm, AddScalar(pNorm, Eps)))
	}
	if allowed != nil {
		keep := gatherRows(ConvertDType(allowed, dt), d.Indices) // [B, T, k] of 0/1
		a = Mul(a, keep)
	}
	d.Activations = a
	d.Activations.AssertDims(B, T, k)

	// Codes: scatter the k activations of each token into its row of K (flat indices (b·T + t)·K + i; unique).
	rows := MulScalar(Iota(g, shapes.Make(dtypes.Int32, B*T, k), 0), K)
	flat := Reshape(Add(rows, Reshape(d.Indices, B*T, k)), B*T*k, 1)
	d.Codes = Reshape(Scatter(flat, Reshape(a, B*T*k), shapes.Make(dt, B*T*K), false, true), B, T, K)

	d.Reconstruction = Einsum("btj,btjd->btd", a, d.Prototypes) // ẑ [B, T, D]
	d.Residual = Sub(h, d.Reconstruction)
	d.LogitResidual = d.Residual
	if cfg.Residual == ResidualStopGrad {
		d.LogitResidual = Sub(h, StopGradient(d.Reconstruction))
	}
	// l = W(r + ẑ): under "autodiff" the two ẑ paths cancel exactly in the backward pass (g − g = 0), so the
	// cross-entropy's gradient to the bank is exactly zero; under "stopgrad" only the +ẑ path carries gradient.
	d.Logits = Einsum("btd,vd->btv", Add(d.LogitResidual, d.Reconstruction), unembed)
	d.Logits.AssertDims(B, T, V)
	return d
}

// TokenSlices returns the logit decomposition of one token per position: targets [B, T] (integers in [0, V), e.g.
// the emitted or gold tokens y) → protoSlices [B, T, k], protoSlices[b, t, j] = a_{t,i}·(W p_i)[y_t] for
// i = Indices[b, t, j], and residualSlice [B, T] = (W r_t)[y_t]. protoSlices summed over j plus residualSlice
// equals Logits[b, t, y_t] up to round-off (spec §2.1, exact additivity). Panics on bad shapes.
func (d Decomposition) TokenSlices(targets *Node) (protoSlices, residualSlice *Node) {
	B, T := d.Hidden.Shape().Dim(0), d.Hidden.Shape().Dim(1)
	if targets == nil || targets.Rank() != 2 || !targets.DType().IsInt() || targets.Shape().Dim(0) != B || targets.Shape().Dim(1) != T {
		panic(errors.Errorf("prism.TokenSlices: targets=%v, want [B=%d, T=%d] integers", shapeOf(targets), B, T))
	}
	wy := gatherRows(d.Unembed, targets) // W[y_t] [B, T, D]
	protoSlices = Mul(d.Activations, Einsum("btd,btjd->btj", wy, d.Prototypes))
	residualSlice = ReduceSum(Mul(wy, d.LogitResidual), -1)
	protoSlices.AssertDims(B, T, d.Config.TopK)
	return protoSlices, residualSlice
}

// PositionSlices returns the full per-prototype logit slices at N chosen positions: positions [N] (integers
// b·T + t in [0, B·T)) → protoSlices [N, k, V], protoSlices[n, j, :] = a_{t,i}·W p_i for i = Indices[b, t, j], and
// residualSlices [N, V] = W r_t. Summed over j and added to residualSlices they give the logits at those positions
// up to round-off. The [B, T, K, V] tensor of all slices is never formed. Panics on bad shapes.
func (d Decomposition) PositionSlices(positions *Node) (protoSlices, residualSlices *Node) {
	B, T, D := d.Hidden.Shape().Dim(0), d.Hidden.Shape().Dim(1), d.Hidden.Shape().Dim(2)
	k, V := d.Config.TopK, d.Unembed.Shape().Dim(0)
	if positions == nil || positions.Rank() != 1 || !positions.DType().IsInt() {
		panic(errors.Errorf("prism.PositionSlices: positions=%v, want [N] integers", shapeOf(positions)))
	}
	N := positions.Shape().Dim(0)
	protos := gatherRows(Reshape(d.Prototypes, B*T, k, D), positions)                 // [N, k, D]
	acts := gatherRows(Reshape(d.Activations, B*T, k), positions)                     // [N, k]
	resid := gatherRows(Reshape(d.LogitResidual, B*T, D), positions)                  // [N, D]
	protoSlices = Mul(InsertAxes(acts, -1), Einsum("njd,vd->njv", protos, d.Unembed)) // [N, k, V]
	residualSlices = Einsum("nd,vd->nv", resid, d.Unembed)
	protoSlices.AssertDims(N, k, V)
	residualSlices.AssertDims(N, V)
	return protoSlices, residualSlices
}

// RecRatio returns ‖r_t‖²/(‖z_t‖² + ε) per token [B, T], the per-token scale-free reconstruction error
// (spec §4 logs its mean).
func (d Decomposition) RecRatio() *Node {
	return Div(ReduceSum(Square(d.Residual), -1), AddScalar(ReduceSum(Square(d.Hidden), -1), Eps))
}

// Signatures returns the logit signatures W p_i of every prototype: bank [K, D], unembed [V, D] → [K, V]. The
// slice of prototype i at token t is a_{t,i}·Signatures[i] in both activation scales (a is the coefficient of p_i
// in ẑ). Precompute once per checkpoint for attribution, controllers and suppression. Panics on bad shapes.
func Signatures(bank, unembed *Node) *Node {
	if bank == nil || unembed == nil || bank.Rank() != 2 || unembed.Rank() != 2 || bank.Shape().Dim(1) != unembed.Shape().Dim(1) ||
		bank.DType() != unembed.DType() {
		panic(errors.Errorf("prism.Signatures: bank=%v, unembed=%v, want [K, D] and [V, D] of one dtype", shapeOf(bank), shapeOf(unembed)))
	}
	return Einsum("kd,vd->kv", bank, unembed)
}

// Head is the PRISM layer: it creates (or reuses) the bank VarPrototypes [K, D] under scope.At(Scope), with
// N(0, InitStd²) entries, and returns Decompose(h, bank, unembed, cfg). h [B, T, D] are the decoder's
// final-normalised hidden states, unembed [V, D] its LM head (tied to the embedding or not). Panics if cfg is
// invalid or on bad shapes.
func Head(scope *model.Scope, cfg Config, h, unembed *Node) Decomposition {
	if err := cfg.Validate(); err != nil {
		panic(errors.WithMessage(err, "prism.Head"))
	}
	if h == nil || h.Rank() != 3 {
		panic(errors.Errorf("prism.Head: h=%v, want [B, T, D]", shapeOf(h)))
	}
	return Decompose(h, BankNode(scope, cfg, h.Graph(), h.DType(), h.Shape().Dim(2)), unembed, cfg)
}

// BankNode returns the bank VarPrototypes [K, D] of the given dtype under scope.At(Scope) as a node of g, creating
// the variable with N(0, InitStd²) entries on first use. Panics if cfg is invalid or an existing bank has another
// shape.
func BankNode(scope *model.Scope, cfg Config, g *Graph, dtype dtypes.DType, width int) *Node {
	if err := cfg.Validate(); err != nil {
		panic(errors.WithMessage(err, "prism.BankNode"))
	}
	c := scope.At(Scope).WithInitializer(initializer.RandomNormalFn(scope, cfg.InitStd))
	v := c.VariableWithShape(VarPrototypes, shapes.Make(dtype, cfg.NumPrototypes, width))
	return v.NodeValue(g)
}

// BankVariable returns the bank variable under scope.At(Scope) (scope is the one Head was given), or nil if it does
// not exist yet. Use it to read or overwrite the bank (seeding from sampled hidden states, dead-prototype resets)
// and to take gradients with respect to it (Variable.ValueGraph, then graph.Gradient).
func BankVariable(scope *model.Scope) *model.Variable {
	return scope.At(Scope).GetVariable(VarPrototypes) // At: a lookup may repeat on one scope
}

// gatherRows returns table[idx] for a table [R, ...] and integer indices idx of any shape: → [idx..., ...]. The
// indices are flattened to [n, 1] before the Gather (gomlx v0.26's pure-Go backend rejected index tensors of
// rank > 3).
func gatherRows(table, idx *Node) *Node {
	n := idx.Shape().Size()
	out := Gather(table, Reshape(idx, n, 1)) // [n, ...]
	dims := append(append([]int(nil), idx.Shape().Dimensions...), table.Shape().Dimensions[1:]...)
	return Reshape(out, dims...)
}
