package prism

import (
	"math"
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/attention"
	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/hook"
	prismlayer "github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/models/influence"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/host"
	"github.com/protolab/protolab/workbench/run"
)

// This file holds the graph passes attribution runs over token batches [B, T+1] (spec §6–§7):
//
//   - the head pass (forward only, plus optionally the reference gradient): per token the code (K_t, a_t), the
//     prototype-pathway output gradients u_t = Wᵀ(softmax(l_t) − e_{y_t}) with the gold label and ũ_t with a label
//     sampled from softmax(l_t) (Gumbel-max with noise drawn in Go), w_t = 1/(‖z_t‖² + ε), and, with the reference,
//     ∂/∂p of Σ_t [c_t·CE_t + e_t·(λ_rec·REC_t + λ_2·R2_t)] for every selected slot [B, T, k, D] (spec §6.3: residual
//     held fixed, ∂a/∂P through the cosine, top-k and nearest prototype held at their forward choice);
//   - the block pass: the inputs a and pre-activation output gradients g of the backbone's linear layers (the FFN
//     gate, up and down projections and the attention output projection of every block) for the loss
//     Σ_t c_t·CE_t with gold or sampled labels, captured with layers/hook: the FFN is recomputed from its probed
//     input with a zero added to each projection's output, the attention output gets a zero added at "mix_out",
//     and the gradients with respect to those zeros are the g's.
//
// Row weights c_t and e_t let a query attribute only its completion and let padding rows count for nothing.

// attrGraphs holds the compiled passes of one model.
type attrGraphs struct {
	m       *lm.Model
	mc      decoder.Config    // the backbone
	pc      prismlayer.Config // the head
	head    *model.Exec       // outputs: indices, acts, u, ũ, w
	headRef *model.Exec       // the same plus the per-slot reference gradient
	blocks  [2]*model.Exec
	mu      sync.Mutex
	layers  []influence.Linear // discovered when a block graph is built
}

func newAttrGraphs(m *lm.Model) (*attrGraphs, error) {
	if m.Dense() {
		return nil, errors.New("attribution: the dense model has no prototype bank")
	}
	a := &attrGraphs{m: m, mc: m.Config.Model, pc: m.Config.Prism.Config}
	var err error
	if a.head, err = model.NewExec(m.Backend, m.Store, func(scope *model.Scope, batch, noise, wCE,
		wAux *Node) []*Node {
		return a.headNodes(scope, batch, noise, wCE, wAux, false)
	}); err != nil {
		return nil, errors.Wrap(err, "attribution: head pass")
	}
	if a.headRef, err = model.NewExec(m.Backend, m.Store, func(scope *model.Scope, batch, noise, wCE,
		wAux *Node) []*Node {
		return a.headNodes(scope, batch, noise, wCE, wAux, true)
	}); err != nil {
		return nil, errors.Wrap(err, "attribution: reference pass")
	}
	for i, sampled := range []bool{false, true} {
		if a.blocks[i], err = model.NewExec(m.Backend, m.Store, func(scope *model.Scope, batch, noise,
			wCE *Node) []*Node {
			return a.blockNodes(scope, batch, noise, wCE, sampled)
		}); err != nil {
			return nil, errors.Wrap(err, "attribution: block pass")
		}
	}
	return a, nil
}

// inputsAndTargets returns the inputs [B, T] and targets [B, T] of a [B, T+1] token batch.
func inputsAndTargets(batch *Node) (in, tg *Node) {
	T1 := batch.Shape().Dim(1)
	return Slice(batch, AxisRange(), AxisRange(0, T1-1)), Slice(batch, AxisRange(), AxisRange(1, T1))
}

// outputGradient returns Wᵀ(π − e_y) per token: probs [B, T, V], labels [B, T], unembed [V, D] → [B, T, D].
func outputGradient(probs, labels, unembed *Node) *Node {
	V := probs.Shape().Dim(2)
	return Einsum("btv,vd->btd", Sub(probs, OneHot(labels, V, probs.DType())), unembed)
}

// sampledLabels returns argmax(l + noise) per token (Gumbel-max: a sample of softmax(l) when noise is Gumbel).
func sampledLabels(logits, noise *Node) *Node {
	return ArgMax(Add(StopGradient(logits), noise), -1, dtypes.Int32)
}

func (a *attrGraphs) headNodes(scope *model.Scope, batch, noise, wCE, wAux *Node, withRef bool) []*Node {
	in, tg := inputsAndTargets(batch)
	pc := a.pc
	// The reference differentiates the prototype pathway with the residual held fixed and lets R2 reach the bank
	// (spec §6.3); forward values are those of the trained configuration.
	pc.Residual, pc.ClusterGrad = prismlayer.ResidualStopGrad, prismlayer.ClusterGradBoth
	d := decoder.PrismHead(scope, a.mc, pc, in)
	B, T, D, k := in.Shape().Dim(0), in.Shape().Dim(1), a.mc.Width, pc.TopK
	W := StopGradient(d.Unembed)
	probs := Softmax(StopGradient(d.Logits), -1)
	u := outputGradient(probs, tg, W)                                    // [B, T, D]
	uSampled := outputGradient(probs, sampledLabels(d.Logits, noise), W) // [B, T, D]
	z := StopGradient(d.Hidden)
	zz := ReduceSum(Square(z), -1)                 // ‖z‖² [B, T]
	w := Reciprocal(AddScalar(zz, prismlayer.Eps)) // [B, T]
	u.AssertDims(B, T, D)
	outs := []*Node{ConvertDType(d.Indices, dtypes.Int32), ConvertDType(StopGradient(d.Activations), dtypes.Float32),
		ConvertDType(u, dtypes.Float32), ConvertDType(uSampled, dtypes.Float32), ConvertDType(w, dtypes.Float64)}
	if !withRef {
		return outs
	}
	ce := decoder.CrossEntropy(d.Logits, tg) // [B, T]
	// L_REC per token: ‖r‖²·w = ‖r‖²/(‖z‖² + ε) (RecNorm) or ‖r‖², as prismlayer.Losses averages it. It multiplies by
	// the w output above where Decomposition.RecRatio divides: the quotient rounds differently in the last bit, and
	// the reference's scores would change with it.
	rec := ReduceSum(Square(d.Residual), -1)
	if pc.RecNorm {
		rec = Mul(rec, w)
	}
	// R2 per token with the nearest prototype = the top cosine = slot 0 of the selection. prismlayer.Losses cannot
	// serve here: it averages R2 over the batch and gathers the nearest prototype from the bank, while the reference
	// needs each token's term weighted by e_t and differentiated through the selected prototypes [B, T, k, D].
	slot0 := make([]float64, k)
	slot0[0] = 1
	pNear := Einsum("btjd,j->btd", d.Prototypes, ConstAsDType(batch.Graph(), d.Hidden.DType(), slot0))
	var r2 *Node
	if pc.Dist == prismlayer.DistSqL2 {
		r2 = ReduceSum(Square(Sub(pNear, z)), -1)
	} else {
		cos := Div(ReduceSum(Mul(pNear, z), -1),
			AddScalar(Mul(Sqrt(ReduceSum(Square(pNear), -1)), Sqrt(zz)), prismlayer.Eps))
		r2 = OneMinus(cos)
	}
	aux := Add(MulScalar(rec, pc.RecWeight), MulScalar(r2, pc.R2Weight))
	// The cross-entropy and the REC + R2 parts separately (their sum is the reference gradient), so that an
	// ablation can drop the latter.
	gradCE := Gradient(ReduceAllSum(Mul(wCE, ce)), d.Prototypes)[0]    // [B, T, k, D]
	gradAux := Gradient(ReduceAllSum(Mul(wAux, aux)), d.Prototypes)[0] // [B, T, k, D]
	gradCE.AssertDims(B, T, k, D)
	return append(outs, ConvertDType(gradCE, dtypes.Float64), ConvertDType(gradAux, dtypes.Float64))
}

// blockScopeOf returns the block scope of a probe name ("block_01.ffn_out" → "block_01").
func blockScopeOf(probe string) string {
	if i := strings.IndexByte(probe, '.'); i > 0 {
		return probe[:i]
	}
	return probe
}

func (a *attrGraphs) blockNodes(scope *model.Scope, batch, noise, wCE *Node, sampled bool) []*Node {
	in, tg := inputsAndTargets(batch)
	g := batch.Graph()
	B, T := in.Shape().Dim(0), in.Shape().Dim(1)
	type capture struct {
		name   string
		input  *Node // a [B, T, In]
		zero   *Node // the zero added to the output [B, T, Out]
		linear influence.Linear
	}
	var caps []capture
	add := func(name string, input, out *Node) *Node {
		zero := ZerosLike(out)
		caps = append(caps, capture{name, input, zero,
			influence.Linear{Name: name, In: input.Shape().Dim(-1), Out: out.Shape().Dim(-1)}})
		return Add(out, zero)
	}
	ffnIn := map[string]*Node{}
	headsIn := map[string]*Node{}
	detach := hook.Attach(g, func(name string, x *Node) *Node {
		blk := blockScopeOf(name)
		switch name {
		case blk + "." + decoder.ProbeNorm2:
			ffnIn[blk] = x
		case blk + "." + decoder.ProbeFFNOut:
			x2 := ffnIn[blk]
			if x2 == nil {
				panic(errors.Errorf("attribution: probe %s fired before %s.%s", name, blk, decoder.ProbeNorm2))
			}
			c := scope.At("%s", blk).At(decoder.ScopeFFN)
			weight := func(v string) *Node {
				variable := c.GetVariable(v)
				if variable == nil {
					panic(errors.Errorf("attribution: no variable %s/%s", c.Scope(), v))
				}
				return variable.NodeValue(g)
			}
			// SwiGLU, recomputed with a zero added to each projection's output (decoder.SwiGLU's equation; the
			// layer itself offers no handle on the projections' outputs, whose per-token gradients EK-FAC needs).
			gate := add(blk+".ffn.gate", x2, Einsum("btd,df->btf", x2, weight(decoder.VarGate)))
			up := add(blk+".ffn.up", x2, Einsum("btd,df->btf", x2, weight(decoder.VarUp)))
			hidden := Mul(Mul(gate, Logistic(gate)), up)
			return add(blk+".ffn.down", hidden, Einsum("btf,fd->btd", hidden, weight(decoder.VarDown)))
		case blk + "." + attention.Scope + "." + attention.ProbeZ:
			headsIn[blk] = Reshape(x, B, T, x.Shape().Dim(2)*x.Shape().Dim(3))
		case blk + "." + attention.Scope + "." + decoder.ProbeMixOut:
			if z := headsIn[blk]; z != nil {
				return add(blk+".attention.o", z, x)
			}
		}
		return x
	})
	defer detach()
	d := decoder.PrismHead(scope, a.mc, a.pc, in)
	labels := tg
	if sampled {
		labels = sampledLabels(d.Logits, noise)
	}
	loss := ReduceAllSum(Mul(wCE, decoder.CrossEntropy(d.Logits, labels)))
	if len(caps) == 0 {
		panic(errors.New("attribution: the backbone emitted none of the probes of its linear layers"))
	}
	zeros := make([]*Node, len(caps))
	layers := make([]influence.Linear, len(caps))
	for i, c := range caps {
		zeros[i], layers[i] = c.zero, c.linear
	}
	grads := Gradient(loss, zeros...)
	outs := make([]*Node, 0, 2*len(caps))
	for i, c := range caps {
		outs = append(outs, ConvertDType(StopGradient(c.input), dtypes.Float32), ConvertDType(grads[i], dtypes.Float32))
	}
	a.mu.Lock()
	a.layers = layers
	a.mu.Unlock()
	return outs
}

// noNoise is the tag of passes that use only gold labels (queries, scoring passes, the reference): their Gumbel
// noise is zero and costs no sampling, so their sampled-label outputs are the argmax labels and must not be used.
const noNoise = ""

// batchInputs returns the tensors of one pass over rows (each [T+1] tokens; fewer than B rows are padded with copies of
// row 0 whose weights are 0): batch [B, T+1] int32, Gumbel noise [B, T, V] (seeded by seed and tag; zero for noNoise),
// and the weights c [B, T] (ceWeights[r] per row, nil = all 1) and e [B, T] (aux, 1 on real rows when aux is true).
func (a *attrGraphs) batchInputs(rows [][]int32, B int, ceWeights [][]float64, aux bool, seed uint64,
	tag string) []any {
	T1 := len(rows[0])
	T, V := T1-1, a.mc.VocabSize
	toks := make([]int32, B*T1)
	wc, we := make([]float64, B*T), make([]float64, B*T)
	for r := 0; r < B; r++ {
		src := rows[0]
		if r < len(rows) {
			src = rows[r]
		}
		copy(toks[r*T1:(r+1)*T1], src)
		if r >= len(rows) {
			continue
		}
		for t := 0; t < T; t++ {
			wc[r*T+t] = 1
			if ceWeights != nil && ceWeights[r] != nil {
				wc[r*T+t] = ceWeights[r][t]
			}
			if aux {
				we[r*T+t] = 1
			}
		}
	}
	noise := make([]float64, B*T*V)
	if tag != noNoise {
		rng := run.RNG(seed, tag)
		for i := range noise {
			noise[i] = gumbelNoise(rng)
		}
	}
	dt := a.mc.DTypeOf()
	return []any{tensors.FromFlatDataAndDimensions(toks, B, T1), host.Tensor(noise, dt, B, T, V),
		host.Tensor(wc, dt, B, T), host.Tensor(we, dt, B, T)}
}

// gumbelNoise draws −log(−log U), U uniform in (0, 1).
func gumbelNoise(rng *rand.Rand) float64 {
	u := rng.Float64()
	for u == 0 {
		u = rng.Float64()
	}
	return -math.Log(-math.Log(u))
}

// headOut is the head pass of a batch: flat per-token arrays of its real rows, in row, position order.
type headOut struct {
	rows, T, k, D int
	idx           []int32   // [rows·T, k]
	acts          []float32 // [rows·T, k]
	u, uSampled   []float32 // [rows·T, D]
	w             []float64 // [rows·T] 1/(‖z‖² + ε)
	refGradCE     []float64 // [rows·T, k, D], with the reference only: the cross-entropy part
	refGradAux    []float64 // [rows·T, k, D], the λ_rec·REC + λ_2·R2 part
}

// runHead runs the head pass (with the reference gradient when ref) on up to B rows.
func (a *attrGraphs) runHead(rows [][]int32, B int, ceWeights [][]float64, aux, ref bool, seed uint64,
	tag string) (*headOut, error) {
	exec := a.head
	if ref {
		exec = a.headRef
	}
	outs, err := exec.Exec(a.batchInputs(rows, B, ceWeights, aux, seed, tag)...)
	if err != nil {
		return nil, errors.Wrap(err, "attribution: head pass")
	}
	n, T, k, D := len(rows), len(rows[0])-1, a.pc.TopK, a.mc.Width
	h := &headOut{rows: n, T: T, k: k, D: D,
		idx:      tensors.MustCopyFlatData[int32](outs[0])[:n*T*k],
		acts:     tensors.MustCopyFlatData[float32](outs[1])[:n*T*k],
		u:        tensors.MustCopyFlatData[float32](outs[2])[:n*T*D],
		uSampled: tensors.MustCopyFlatData[float32](outs[3])[:n*T*D],
		w:        tensors.MustCopyFlatData[float64](outs[4])[:n*T]}
	if ref {
		h.refGradCE = tensors.MustCopyFlatData[float64](outs[5])[:n*T*k*D]
		h.refGradAux = tensors.MustCopyFlatData[float64](outs[6])[:n*T*k*D]
	}
	return h, nil
}

// blockOut is the block pass of a batch: per tracked layer, inputs [rows·T, In] and output gradients
// [rows·T, Out] of the real rows.
type blockOut struct {
	rows, T int
	a, g    [][]float32
}

// runBlocks runs the block pass with gold (sampled false) or sampled labels on up to B rows.
func (a *attrGraphs) runBlocks(rows [][]int32, B int, ceWeights [][]float64, sampled bool, seed uint64,
	tag string) (*blockOut, []influence.Linear, error) {
	in := a.batchInputs(rows, B, ceWeights, false, seed, tag)
	i := 0
	if sampled {
		i = 1
	}
	outs, err := a.blocks[i].Exec(in[:3]...)
	if err != nil {
		return nil, nil, errors.Wrap(err, "attribution: block pass")
	}
	a.mu.Lock()
	layers := a.layers
	a.mu.Unlock()
	if len(outs) != 2*len(layers) {
		return nil, nil, errors.Errorf("attribution: block pass returned %d outputs for %d layers", len(outs),
			len(layers))
	}
	n, T := len(rows), len(rows[0])-1
	b := &blockOut{rows: n, T: T}
	for l, lin := range layers {
		b.a = append(b.a, tensors.MustCopyFlatData[float32](outs[2*l])[:n*T*lin.In])
		b.g = append(b.g, tensors.MustCopyFlatData[float32](outs[2*l+1])[:n*T*lin.Out])
	}
	return b, layers, nil
}

// widen converts float32 values to float64.
func widen(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}
