package cost

import "fmt"

// Count is the work of one token: matrix-product FLOPs and elementwise operations.
type Count struct {
	// MatMul is the FLOPs of matrix products; a multiply-add is 2 FLOPs.
	MatMul float64 `json:"matmul"`
	// Elementwise is the number of elementwise and reduction operations, one per output element.
	Elementwise float64 `json:"elementwise"`
}

// Add returns c + o, part by part.
func (c Count) Add(o Count) Count {
	return Count{MatMul: c.MatMul + o.MatMul, Elementwise: c.Elementwise + o.Elementwise}
}

// Scale returns s·c, part by part.
func (c Count) Scale(s float64) Count {
	return Count{MatMul: s * c.MatMul, Elementwise: s * c.Elementwise}
}

// Total returns MatMul + Elementwise, every operation weighted alike.
func (c Count) Total() float64 { return c.MatMul + c.Elementwise }

// Seconds returns the time the work takes at matMulRate product FLOPs per second and elementwiseRate elementwise
// operations per second: MatMul/matMulRate + Elementwise/elementwiseRate. Panics unless both rates are > 0.
func (c Count) Seconds(matMulRate, elementwiseRate float64) float64 {
	if !(matMulRate > 0) || !(elementwiseRate > 0) {
		panic(fmt.Sprintf("cost.Count.Seconds: rates %g and %g, want both > 0", matMulRate, elementwiseRate))
	}
	return c.MatMul/matMulRate + c.Elementwise/elementwiseRate
}

// Mixer is the cost model of one kind of sequence mixer in a decoder block. Layers are 0-based; mixers whose
// layers differ (ProtoT's shared routing and value convolution) use the index, the others ignore it.
type Mixer interface {
	// Forward returns the forward work per token of layer `layer` for a sequence of T tokens.
	Forward(layer, T int) Count
	// Decode returns the work of one decoding step of layer `layer` with a state of capacity positions.
	Decode(layer, capacity int) Count
	// StateFloats returns the decoding state of layer `layer` for one sequence, in floats, at a capacity of
	// capacity positions (only attention's grows with it).
	StateFloats(layer, capacity int) int
}

// Model is the decoder of docs/spec/protot.md §2.1: token embedding, Layers blocks of RMSNorm + mixer and RMSNorm +
// SwiGLU FFN (the FFN and its norm are absent with DropFFN), a final RMSNorm and the LM head.
type Model struct {
	Vocab   int   // V; > 0
	Width   int   // D; > 0
	Layers  int   // L; > 0
	FFN     int   // F, the SwiGLU inner width; 0 means ⌈8D/3⌉ rounded up to a multiple of 32 (the LLaMA rule)
	DropFFN bool  // no FFN sub-block
	Mixer   Mixer // the mixer of every block
}

// FFNWidth returns F with the zero value resolved.
func (m Model) FFNWidth() int {
	if m.FFN != 0 {
		return m.FFN
	}
	f := (8*m.Width + 2) / 3
	return (f + 31) / 32 * 32
}

func (m Model) check(name string) {
	if m.Vocab <= 0 || m.Width <= 0 || m.Layers <= 0 || m.FFN < 0 || m.Mixer == nil {
		panic(fmt.Sprintf("cost.Model.%s: vocab=%d, width=%d, layers=%d, ffn=%d, mixer=%v: want positive sizes, "+
			"ffn ≥ 0 and a mixer", name, m.Vocab, m.Width, m.Layers, m.FFN, m.Mixer))
	}
}

// block returns the work of one block's non-mixer parts per token: MatMul 6·D·F (the FFN), Elementwise
// 2·(4D) for the norms, 2·D for the residual adds and 3·F for SwiGLU's gate (σ, two products); with DropFFN only
// one norm and one add, 5·D.
func (m Model) block() Count {
	D, F := float64(m.Width), float64(m.FFNWidth())
	if m.DropFFN {
		return Count{Elementwise: 5 * D}
	}
	return Count{MatMul: 6 * D * F, Elementwise: 10*D + 3*F}
}

// Forward returns the forward work per token of a sequence of T tokens: per layer the mixer's Forward plus the
// FFN (eq. 5) and the block's elementwise work, then the LM head, MatMul 2·D·V, with Elementwise D (embedding
// gather) + 4·D (final norm) + 4·V (the softmax cross-entropy: max, subtract, exp, sum). Panics on a bad Model
// or T ≤ 0.
func (m Model) Forward(T int) Count {
	m.check("Forward")
	if T <= 0 {
		panic(fmt.Sprintf("cost.Model.Forward: T=%d, want > 0", T))
	}
	D, V := float64(m.Width), float64(m.Vocab)
	c := Count{MatMul: 2 * D * V, Elementwise: 5*D + 4*V}
	for l := 0; l < m.Layers; l++ {
		c = c.Add(m.Mixer.Forward(l, T)).Add(m.block())
	}
	return c
}

// Train returns the work per token of one training step (forward and backward) at sequence length T: 3·Forward(T).
// The optimizer update costs O(parameters) per step, not per token, and is left out.
func (m Model) Train(T int) Count { return m.Forward(T).Scale(3) }

// Decode returns the work of decoding one token with a state of capacity positions: per layer the mixer's
// Decode plus the block's non-mixer work, then the LM head (MatMul 2·D·V, Elementwise D + 4·D + V for the
// embedding, the final norm and the logits' copy). Panics on a bad Model or capacity ≤ 0.
func (m Model) Decode(capacity int) Count {
	m.check("Decode")
	if capacity <= 0 {
		panic(fmt.Sprintf("cost.Model.Decode: capacity=%d, want > 0", capacity))
	}
	D, V := float64(m.Width), float64(m.Vocab)
	c := Count{MatMul: 2 * D * V, Elementwise: 5*D + V}
	for l := 0; l < m.Layers; l++ {
		c = c.Add(m.Mixer.Decode(l, capacity)).Add(m.block())
	}
	return c
}

// StateFloats returns the decoding state of one sequence over all layers, in floats, at a capacity of capacity
// positions. Panics on a bad Model or capacity ≤ 0.
func (m Model) StateFloats(capacity int) int {
	m.check("StateFloats")
	if capacity <= 0 {
		panic(fmt.Sprintf("cost.Model.StateFloats: capacity=%d, want > 0", capacity))
	}
	n := 0
	for l := 0; l < m.Layers; l++ {
		n += m.Mixer.StateFloats(l, capacity)
	}
	return n
}

// StateBytes returns StateFloats(capacity)·bytesPerFloat·batch: the decoding state of a batch (4 bytes per float
// for float32).
func (m Model) StateBytes(capacity, batch, bytesPerFloat int) int {
	return m.StateFloats(capacity) * batch * bytesPerFloat
}
