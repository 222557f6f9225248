package decoder

import (
	"fmt"
	"math"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/initializer"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/hook"
)

// Scope and variable names. They are checkpoint and safetensors names: renaming one breaks saved models.
const (
	ScopeEmbed     = "embed"      // token embedding
	VarEmbeddings  = "embeddings" // [V, D]
	ScopeAttnNorm  = "attn_norm"  // RMSNorm before the mixer, inside a block
	ScopeFFNNorm   = "ffn_norm"   // RMSNorm before the FFN, inside a block
	ScopeFFN       = "ffn"        // SwiGLU FFN, inside a block
	VarGate        = "gate"       // [D, F]
	VarUp          = "up"         // [D, F]
	VarDown        = "down"       // [F, D]
	ScopeFinalNorm = "final_norm" // RMSNorm after the last block
	ScopeLMHead    = "lm_head"    // output embedding, absent when tied
	VarLMHead      = "weights"    // [V, D], laid out like the token embedding
	VarGain        = "gain"       // [D], in every *_norm scope
)

// BlockScope returns the scope name of block l: "block_00", "block_01", …
func BlockScope(l int) string { return fmt.Sprintf("block_%02d", l) }

// RMSNorm is y = x / √(mean_d x² + ε) ⊙ gain over the last axis: x [..., D], gain [D] → [..., D].
// Panics if gain is not [D] of x's dtype.
func RMSNorm(x, gain *Node, eps float64) *Node {
	D := x.Shape().Dim(-1)
	if gain.Rank() != 1 || gain.Shape().Dim(0) != D || gain.DType() != x.DType() {
		panic(errors.Errorf("decoder.RMSNorm: x.shape=%s, gain.shape=%s, want gain [D=%d] %s", x.Shape(), gain.Shape(), D, x.DType()))
	}
	rms := Sqrt(AddScalar(ReduceAndKeep(Square(x), ReduceMean, -1), eps)) // [..., 1]
	gainDims := make([]int, x.Rank())
	for i := range gainDims {
		gainDims[i] = 1
	}
	gainDims[x.Rank()-1] = D
	return Mul(Div(x, rms), Reshape(gain, gainDims...))
}

// SwiGLU is the gated FFN y = (SiLU(x·W_gate) ⊙ (x·W_up))·W_down with SiLU(a) = a·σ(a), no biases:
// x [B, T, D], wGate and wUp [D, F], wDown [F, D] → [B, T, D]. Panics on mismatched shapes.
func SwiGLU(x, wGate, wUp, wDown *Node) *Node {
	if x.Rank() != 3 || wGate.Rank() != 2 || !wGate.Shape().Equal(wUp.Shape()) || wGate.Shape().Dim(0) != x.Shape().Dim(2) ||
		wDown.Rank() != 2 || wDown.Shape().Dim(0) != wGate.Shape().Dim(1) || wDown.Shape().Dim(1) != x.Shape().Dim(2) {
		panic(errors.Errorf("decoder.SwiGLU: x.shape=%s, wGate.shape=%s, wUp.shape=%s, wDown.shape=%s: want x [B, T, D], "+
			"wGate and wUp [D, F], wDown [F, D]", x.Shape(), wGate.Shape(), wUp.Shape(), wDown.Shape()))
	}
	gate := Einsum("btd,df->btf", x, wGate)
	up := Einsum("btd,df->btf", x, wUp)
	return Einsum("btf,fd->btd", Mul(Mul(gate, Logistic(gate)), up), wDown)
}

// CrossEntropy returns the per-token loss −log softmax(logits)[target]: logits [B, T, V], targets [B, T] of an
// integer dtype → [B, T]. The target logit is gathered, not picked with a one-hot product. Targets must lie in
// [0, V); the graph cannot check it. Panics on bad shapes.
func CrossEntropy(logits, targets *Node) *Node {
	if logits.Rank() != 3 || targets.Rank() != 2 || !targets.DType().IsInt() ||
		logits.Shape().Dim(0) != targets.Shape().Dim(0) || logits.Shape().Dim(1) != targets.Shape().Dim(1) {
		panic(errors.Errorf("decoder.CrossEntropy: logits.shape=%s, targets.shape=%s, want [B, T, V] and [B, T] integers",
			logits.Shape(), targets.Shape()))
	}
	B, T, V := logits.Shape().Dim(0), logits.Shape().Dim(1), logits.Shape().Dim(2)
	g := logits.Graph()
	maxLogit := StopGradient(ReduceAndKeep(logits, ReduceMax, -1))                            // [B, T, 1]
	logSumExp := Add(Log(ReduceSum(Exp(Sub(logits, maxLogit)), -1)), Reshape(maxLogit, B, T)) // [B, T]
	rows := MulScalar(Iota(g, shapes.Make(dtypes.Int32, B*T), 0), V)                          // row offsets in the flat logits
	index := Add(rows, ConvertDType(Reshape(targets, B*T), dtypes.Int32))                     // [B·T]
	targetLogit := Reshape(Gather(Reshape(logits, B*T*V, 1), InsertAxes(index, -1)), B, T)    // [B, T]
	return Sub(logSumExp, targetLogit)
}

// rmsNorm applies RMSNorm to x [..., D] with the gain [D] of scope (initialised to 1).
func (m *stack) rmsNorm(scope *model.Scope, name string, x *Node) *Node {
	c := scope.At("%s", name).WithInitializer(initializer.One)
	gain := c.VariableWithShape(VarGain, shapes.Make(m.dtype, m.cfg.Width)).NodeValue(x.Graph())
	return RMSNorm(x, gain, m.cfg.NormEpsilon)
}

// normal returns scope with a N(0, std²) initializer.
func normal(scope *model.Scope, std float64) *model.Scope {
	return scope.WithInitializer(initializer.RandomNormalFn(scope, std))
}

// projection returns scope with the initializer of a projection whose output sums fanIn inputs: N(0, std²) when
// std > 0 (InitGPT2), else U(±1/√fanIn), PyTorch's nn.Linear default (InitPyTorch). std comes from
// Config.ProjectionStds.
func projection(scope *model.Scope, std float64, fanIn int) *model.Scope {
	if std > 0 {
		return normal(scope, std)
	}
	b := 1 / math.Sqrt(float64(fanIn))
	return scope.WithInitializer(initializer.RandomUniformFn(scope, -b, b))
}

// stack holds what graph building needs once per call: the validated config and each block's mixer.
type stack struct {
	cfg    Config
	dtype  dtypes.DType
	mixers []Mixer
}

func newStack(cfg Config, caller string) *stack {
	if err := cfg.Validate(); err != nil {
		panic(errors.WithMessagef(err, "decoder.%s", caller))
	}
	m := &stack{cfg: cfg, dtype: cfg.DTypeOf()}
	for l := 0; l < cfg.NumLayers; l++ {
		mixer, err := NewMixer(cfg, l)
		if err != nil {
			panic(errors.WithMessagef(err, "decoder.%s", caller))
		}
		m.mixers = append(m.mixers, mixer)
	}
	return m
}

// embeddingTable returns the token embedding [V, D], creating it under "embed".
func (m *stack) embeddingTable(scope *model.Scope, g *Graph) *Node {
	c := normal(scope.At(ScopeEmbed), m.cfg.InitStd)
	return c.VariableWithShape(VarEmbeddings, shapes.Make(m.dtype, m.cfg.VocabSize, m.cfg.Width)).NodeValue(g)
}

// embed maps tokens [B, T] to [B, T, D].
func (m *stack) embed(scope *model.Scope, tokens *Node) *Node {
	if tokens.Rank() != 2 || !tokens.DType().IsInt() {
		panic(errors.Errorf("decoder: tokens.shape=%s, want [B, T] of an integer dtype", tokens.Shape()))
	}
	return Gather(m.embeddingTable(scope, tokens.Graph()), InsertAxes(tokens, -1))
}

// ffn is the FFN sub-block's SwiGLU with its variables under "ffn".
func (m *stack) ffn(scope *model.Scope, x *Node) *Node {
	D, F, g := m.cfg.Width, m.cfg.FFNWidth(), x.Graph()
	c := scope.At(ScopeFFN)
	inStd, outStd := m.cfg.ProjectionStds()
	in, out := projection(c, inStd, D), projection(c, outStd, F)
	wGate := in.VariableWithShape(VarGate, shapes.Make(m.dtype, D, F)).NodeValue(g)
	wUp := in.VariableWithShape(VarUp, shapes.Make(m.dtype, D, F)).NodeValue(g)
	wDown := out.VariableWithShape(VarDown, shapes.Make(m.dtype, F, D)).NodeValue(g)
	return SwiGLU(x, wGate, wUp, wDown)
}

// block is one pre-norm residual block, h + mix(RMSNorm(h)) then h + FFN(RMSNorm(h)) (the FFN half is absent
// with DropFFN); mix is the mixer's Forward or Step.
//
// Its probe points (layers/hook), under the block's scope, each patchable: ProbeResidPre, ProbeNorm1,
// ProbeResidMid, ProbeNorm2, ProbeFFNOut and ProbeResidPost (the mixer emits its own, e.g. "protot.mix_out").
func (m *stack) block(scope *model.Scope, h *Node, mix func(x *Node) *Node) *Node {
	h = hook.Emit(scope, ProbeResidPre, h)
	h = Add(h, mix(hook.Emit(scope, ProbeNorm1, m.rmsNorm(scope, ScopeAttnNorm, h))))
	if !m.cfg.DropFFN {
		h = hook.Emit(scope, ProbeResidMid, h)
		f := m.ffn(scope, hook.Emit(scope, ProbeNorm2, m.rmsNorm(scope, ScopeFFNNorm, h)))
		h = Add(h, hook.Emit(scope, ProbeFFNOut, f))
	}
	return hook.Emit(scope, ProbeResidPost, h)
}

// Probe names of the decoder (layers/hook), relative to a block's scope ("block_02.resid_post") or, for
// ProbeFinalNorm and ProbeLogits, the model's. Shapes are [B, T, D] (logits [B, T, V]); in Step T = 1.
// Without an FFN (DropFFN) ProbeResidMid, ProbeNorm2 and ProbeFFNOut are absent.
const (
	ProbeResidPre  = "resid_pre"  // block input
	ProbeNorm1     = "norm1"      // RMSNorm before the mixer: the mixer's input
	ProbeResidMid  = "resid_mid"  // after the mixer's residual addition
	ProbeNorm2     = "norm2"      // RMSNorm before the FFN
	ProbeFFNOut    = "ffn_out"    // FFN output, before its residual addition
	ProbeResidPost = "resid_post" // block output
	ProbeFinalNorm = "final_norm" // the final RMSNorm: the LM head's input
	ProbeLogits    = "logits"     // next-token logits
)

// finalNorm applies the RMSNorm after the last block.
func (m *stack) finalNorm(scope *model.Scope, h *Node) *Node {
	return hook.Emit(scope, ProbeFinalNorm, m.rmsNorm(scope, ScopeFinalNorm, h))
}

// head maps h [B, T, D] to logits [B, T, V] with the output embedding [V, D] (the token embedding when tied).
func (m *stack) head(scope *model.Scope, h *Node) *Node {
	w := m.unembedding(scope, h.Graph())
	return hook.Emit(scope, ProbeLogits, Einsum("btd,vd->btv", h, w))
}

// unembedding returns the LM head W [V, D]: the token embedding when tied, else "lm_head/weights", a projection
// from D initialised by the policy (Config.ProjectionStds).
func (m *stack) unembedding(scope *model.Scope, g *Graph) *Node {
	if m.cfg.TieEmbeddings {
		return m.embeddingTable(scope, g) // intended sharing: embed created it
	}
	inStd, _ := m.cfg.ProjectionStds()
	c := projection(scope.At(ScopeLMHead), inStd, m.cfg.Width)
	return c.VariableWithShape(VarLMHead, shapes.Make(m.dtype, m.cfg.VocabSize, m.cfg.Width)).NodeValue(g)
}

// Hidden returns the final-normalised residual stream, the input of the LM head: tokens [B, T] (integers in
// [0, V)) → [B, T, D]. It creates every variable but the LM head's. Panics if cfg is invalid or on bad shapes.
func Hidden(scope *model.Scope, cfg Config, tokens *Node) *Node {
	m := newStack(cfg, "Hidden")
	return m.branches(tokens, func(rows *Node) *Node { return m.hidden(scope, rows) })
}

func (m *stack) hidden(scope *model.Scope, tokens *Node) *Node {
	h := m.embed(scope, tokens)
	for l, mixer := range m.mixers {
		c := scope.At("%s", BlockScope(l))
		h = m.block(c, h, func(x *Node) *Node { return mixer.Forward(c, x) })
	}
	h = m.finalNorm(scope, h)
	h.AssertDims(tokens.Shape().Dim(0), tokens.Shape().Dim(1), m.cfg.Width)
	return h
}

// Logits runs the decoder: tokens [B, T] (integers in [0, V)) → next-token logits [B, T, V]; position t sees
// tokens 0…t only. Creates the variables on first use. Panics if cfg is invalid or on bad shapes.
func Logits(scope *model.Scope, cfg Config, tokens *Node) *Node {
	m := newStack(cfg, "Logits")
	logits := m.branches(tokens, func(rows *Node) *Node { return m.head(scope, m.hidden(scope, rows)) })
	logits.AssertDims(tokens.Shape().Dim(0), tokens.Shape().Dim(1), cfg.VocabSize)
	return logits
}

// TokenLosses returns the cross-entropy of predicting batch[:, t+1] from batch[:, :t+1]: batch [B, T+1] →
// [B, T] (natural log). Their sum over a corpus divided by the count gives log-perplexity. Panics if cfg is
// invalid or batch has fewer than 2 columns.
func TokenLosses(scope *model.Scope, cfg Config, batch *Node) *Node {
	if batch.Rank() != 2 || batch.Shape().Dim(1) < 2 {
		panic(errors.Errorf("decoder.TokenLosses: batch.shape=%s, want [B, T+1] with T ≥ 1", batch.Shape()))
	}
	B, T1 := batch.Shape().Dim(0), batch.Shape().Dim(1)
	m := newStack(cfg, "TokenLosses")
	losses := m.branches(batch, func(part *Node) *Node {
		inputs := Slice(part, AxisRange(), AxisRange(0, T1-1))
		targets := Slice(part, AxisRange(), AxisRange(1, T1))
		return CrossEntropy(m.head(scope, m.hidden(scope, inputs)), targets)
	})
	losses.AssertDims(B, T1-1)
	return losses
}

// branches returns fn(x), computed as independent branches of the graph over row blocks of x (axis 0) and
// concatenated: two halves when B is even and no hook is attached to the graph (a hook sees the whole batch, its
// probes named once), else fn of the whole x. fn must treat rows independently, as every decoder computation
// does, so the result is the same either way up to float rounding (a product's kernel may block half the rows
// differently; the weight gradients add the halves' parts). The pure-Go backend runs independent nodes at once but each
// elementwise node on one core; two branches keep both cores of a 2-core machine busy where one branch leaves one
// idle outside the matrix products. The count is fixed at two, not the machine's cores, so that a run's floats do
// not depend on the machine.
func (m *stack) branches(x *Node, fn func(rows *Node) *Node) *Node {
	B := x.Shape().Dim(0)
	if B < 2 || B%2 != 0 || hook.Active(x.Graph()) {
		return fn(x)
	}
	return Concatenate([]*Node{fn(Slice(x, AxisRange(0, B/2))), fn(Slice(x, AxisRange(B/2, B)))}, 0)
}

// NextTokenLoss is the mean of TokenLosses: batch [B, T+1] → scalar. Panics like TokenLosses.
func NextTokenLoss(scope *model.Scope, cfg Config, batch *Node) *Node {
	return ReduceAllMean(TokenLosses(scope, cfg, batch))
}

// StateShapes returns the shapes of the decoding state, the concatenation over layers of each mixer's
// StateShapes (for attention: key and value caches [B, H_kv, maxLen, D_h] per layer). maxLen ≤ 0 means
// cfg.MaxLen. Panics if cfg is invalid.
func StateShapes(cfg Config, batch, maxLen int) []shapes.Shape {
	m := newStack(cfg, "StateShapes")
	if maxLen <= 0 {
		maxLen = cfg.MaxLen
	}
	var out []shapes.Shape
	for _, mixer := range m.mixers {
		out = append(out, mixer.StateShapes(batch, maxLen, m.dtype)...)
	}
	return out
}

// NewState returns a zero decoding state, one tensor per StateShapes entry. Panics if cfg is invalid.
func NewState(cfg Config, batch, maxLen int) []*tensors.Tensor {
	var out []*tensors.Tensor
	for _, s := range StateShapes(cfg, batch, maxLen) {
		out = append(out, tensors.FromShape(s)) // zero-filled
	}
	return out
}

// Step decodes one position: token [B, 1] (integers in [0, V)), pos (integer scalar, the token's position) and
// the state (StateShapes; zeros before position 0) → logits [B, V] for the next token and the new state. After
// steps 0…t the logits equal Logits' at position t. pos must be below the state's capacity; the graph cannot
// check it. Uses (or creates) the variables Logits uses. Panics if cfg is invalid or on bad shapes.
func Step(scope *model.Scope, cfg Config, token, pos *Node, state []*Node) (logits *Node, newState []*Node) {
	m := newStack(cfg, "Step")
	if token.Rank() != 2 || token.Shape().Dim(1) != 1 {
		panic(errors.Errorf("decoder.Step: token.shape=%s, want [B, 1]", token.Shape()))
	}
	B := token.Shape().Dim(0)
	want := StateShapes(cfg, B, 1)
	if len(state) != len(want) {
		panic(errors.Errorf("decoder.Step: %d state tensors, want %d (StateShapes)", len(state), len(want)))
	}
	h := m.embed(scope, token)
	rest := state
	for l, mixer := range m.mixers {
		c := scope.At("%s", BlockScope(l))
		n := len(mixer.StateShapes(B, 1, m.dtype))
		layerState := rest[:n]
		rest = rest[n:]
		h = m.block(c, h, func(x *Node) *Node {
			y, s := mixer.Step(c, x, pos, layerState)
			newState = append(newState, s...)
			return y
		})
	}
	logits = Reshape(m.head(scope, m.finalNorm(scope, h)), B, cfg.VocabSize)
	return logits, newState
}
