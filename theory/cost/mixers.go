package cost

import "fmt"

// Attention is causal multi-head attention with RoPE (docs/spec/protot.md §9.1) as a dense T×T computation, or
// in blocks of Block positions that skip the blocks above the diagonal (layers/attention's chunked form), and a KV
// cache for decoding.
type Attention struct {
	Width   int // D; > 0
	Heads   int // H; > 0
	KVHeads int // H_kv; 0 means H
	HeadDim int // D_h; 0 means D/H
	// Block is C, the block length of the chunked form; 0 means the dense T×T form; ≥ 0.
	Block int
	// ChunkedMinLen: with Block > 0, sequences of T < ChunkedMinLen use the dense form; 0 means always chunked.
	ChunkedMinLen int
}

func (a Attention) dims() (D, H, Hkv, Dh float64) {
	if a.Width <= 0 || a.Heads <= 0 || a.KVHeads < 0 || a.HeadDim < 0 {
		panic(fmt.Sprintf("cost.Attention: %+v, want width, heads > 0 and kv_heads, head_dim ≥ 0", a))
	}
	hkv, dh := a.KVHeads, a.HeadDim
	if hkv == 0 {
		hkv = a.Heads
	}
	if dh == 0 {
		dh = a.Width / a.Heads
	}
	return float64(a.Width), float64(a.Heads), float64(hkv), float64(dh)
}

// projections returns the q, k, v and o products, 2·D·(H + 2H_kv)·D_h + 2·H·D_h·D, and the elementwise work
// that does not depend on T: the query scale H·D_h and RoPE on q and k, 6 operations per element.
func (a Attention) projections() Count {
	D, H, Hkv, Dh := a.dims()
	return Count{MatMul: 2*D*(H+2*Hkv)*Dh + 2*H*Dh*D, Elementwise: H*Dh + 6*(H+Hkv)*Dh}
}

// Forward returns equation (1) of doc.go, and as Elementwise the projections' plus 7·H·T for the scores of one
// query (mask broadcast and select, max, subtract, exp, sum, divide). In the chunked form (Block > 0 and
// T ≥ ChunkedMinLen) a query scores only the keys up to the end of its block, on average k̄ = Σ_i C_i·e_i / T
// (block i has C_i positions and ends at e_i; k̄ = (T + C)/2 when C divides T), so T becomes k̄ in both terms.
// Model.Train's 3·Forward then undercounts the chunked backward pass, which recomputes the scores: 5 products per
// block against the dense form's 4. The layer ignores `layer`.
func (a Attention) Forward(_, T int) Count {
	_, H, _, Dh := a.dims()
	if a.Block < 0 || a.ChunkedMinLen < 0 {
		panic(fmt.Sprintf("cost.Attention: block=%d, chunked_min_len=%d, want ≥ 0", a.Block, a.ChunkedMinLen))
	}
	keys := float64(T)
	if a.Block > 0 && T >= a.ChunkedMinLen {
		sum := 0.0
		for start := 0; start < T; start += a.Block {
			end := min(start+a.Block, T)
			sum += float64(end-start) * float64(end)
		}
		keys = sum / float64(T)
	}
	return a.projections().Add(Count{MatMul: 4 * keys * H * Dh, Elementwise: 7 * H * keys})
}

// Decode returns one decoding step reading a cache of S = capacity positions: the projections, MatMul 4·S·H·D_h
// and Elementwise 7·H·S for the scores over the whole cache (masked beyond the position), plus 5·H_kv·S·D_h for
// writing the new key and value with a one-hot select over the whole cache (broadcasts of k, v and the mask, and
// the two selects).
func (a Attention) Decode(_, capacity int) Count {
	_, H, Hkv, Dh := a.dims()
	s := float64(capacity)
	return a.projections().Add(Count{MatMul: 4 * s * H * Dh, Elementwise: 7*H*s + 5*Hkv*s*Dh})
}

// StateFloats returns the KV cache of one layer and sequence, equation (6): 2·H_kv·capacity·D_h.
func (a Attention) StateFloats(_, capacity int) int {
	_, _, Hkv, Dh := a.dims()
	return 2 * int(Hkv) * capacity * int(Dh)
}

// KVGrowth returns the floats the KV cache of one layer and sequence gains per token, 2·H_kv·D_h.
func (a Attention) KVGrowth() int { return a.StateFloats(0, 1) }

// ProtoT is the Prototype Transformer mixer (docs/spec/protot.md §2.3, §4).
type ProtoT struct {
	Width               int  // D; > 0
	Prototypes          int  // R; > 0
	ValueWidth          int  // D_v; 0 means D/2
	Chunk               int  // Q, the chunk length of Form B; > 0
	DenseMaxLen         int  // sequences of T ≤ DenseMaxLen use one chunk of T (Form A); ≥ 0
	Dense               bool // always one chunk of T (Form A), whatever T
	SharedRoutingLayers int  // leading layers that read with the write routing (no W_r); ≥ 0
	ConvLayers          int  // leading layers with the value convolution; ≥ 0
	ConvKernel          int  // K of the value convolution; ≥ 2 when ConvLayers > 0
}

func (p ProtoT) dims() (D, R, Dv float64) {
	if p.Width <= 0 || p.Prototypes <= 0 || p.ValueWidth < 0 || p.Chunk <= 0 || p.DenseMaxLen < 0 ||
		p.SharedRoutingLayers < 0 || p.ConvLayers < 0 || (p.ConvLayers > 0 && p.ConvKernel < 2) {
		panic(fmt.Sprintf("cost.ProtoT: %+v, want width, prototypes, chunk > 0, conv_kernel ≥ 2 with conv layers", p))
	}
	dv := p.ValueWidth
	if dv == 0 {
		dv = p.Width / 2
	}
	return float64(p.Width), float64(p.Prototypes), float64(dv)
}

// ChunkLen returns the chunk length Q used for T tokens: T with Dense, when T ≤ DenseMaxLen or Chunk ≥ T
// (Form A), else Chunk (Form B).
func (p ProtoT) ChunkLen(T int) int {
	if p.Dense || T <= p.DenseMaxLen || p.Chunk >= T {
		return T
	}
	return p.Chunk
}

// routing returns the per-token work shared by Forward and Decode: MatMul 2·D·R (write logits) + 4·D·D_v (value
// and output) + 2·D·R (read logits unless routing is shared); Elementwise 6·R per softmax (scale, max, subtract,
// exp, sum, divide), (2K + 2)·D_v for the value convolution ½v + ½·conv(v) and D for α.
func (p ProtoT) routing(layer int) Count {
	D, R, Dv := p.dims()
	c := Count{MatMul: 2*D*R + 4*D*Dv, Elementwise: 6*R + D}
	if layer >= p.SharedRoutingLayers {
		c = c.Add(Count{MatMul: 2 * D * R, Elementwise: 6 * R})
	}
	if layer < p.ConvLayers {
		c.Elementwise += float64(2*p.ConvKernel+2) * Dv
	}
	return c
}

// Forward returns equation (2) of doc.go with Q = ChunkLen(T), plus, with n = ⌈T/Q⌉ > 1 chunks, the carry of
// the chunk states, Carry(T); Elementwise adds to routing's 2·R for u = ρ / max(den, 1e−6) and, with more than
// one chunk, 2·R + D_v for the carried state's decay and addition.
func (p ProtoT) Forward(layer, T int) Count {
	_, R, Dv := p.dims()
	q := float64(p.ChunkLen(T))
	c := p.routing(layer).Add(Count{MatMul: 2 * q * (2*R + Dv), Elementwise: 2 * R})
	if p.ChunkLen(T) < T {
		c = c.Add(Count{MatMul: 4*R*Dv + p.Carry(T), Elementwise: 2*R + Dv})
	}
	return c
}

// Carry returns the product FLOPs per token of carrying the chunk states across the n = ⌈T/Q⌉ chunks of a
// sequence with one n×n decay matrix per prototype (spec §4.2, first way): 2·R·n²·(D_v + 1)/T, for the read
// (D_v channels) and the mass (1). It grows linearly in T at a fixed Q, as T/Q² (one chunk: 0). layers/protot's
// FLOPsPerToken leaves this term out; it is what makes ProtoT's cost per token rise with T at small Q.
func (p ProtoT) Carry(T int) float64 {
	_, R, Dv := p.dims()
	q := p.ChunkLen(T)
	if q >= T {
		return 0
	}
	n := float64((T + q - 1) / q)
	return 2 * R * n * n * (Dv + 1) / float64(T)
}

// Decode returns one recurrent step (Form D): routing's work, MatMul 2·R·D_v for the read Σ_k ρ_k·M_k, and
// Elementwise 2·R·D_v + R for M = num / max(den, 1e−6) and 4·R·(D_v + 1) for the write (π ⊗ [v, 1], then
// β⊙mem + (1−β)⊙write). Independent of capacity.
func (p ProtoT) Decode(layer, _ int) Count {
	_, R, Dv := p.dims()
	return p.routing(layer).Add(Count{MatMul: 2 * R * Dv, Elementwise: 2*R*Dv + R + 4*R*(Dv+1)})
}

// StateFloats returns equation (7): R·(D_v + 1), plus (K − 1)·D_v in convolution layers.
func (p ProtoT) StateFloats(layer, _ int) int {
	_, R, Dv := p.dims()
	n := int(R * (Dv + 1))
	if layer < p.ConvLayers {
		n += (p.ConvKernel - 1) * int(Dv)
	}
	return n
}

// DeltaNet is linear attention with the delta rule (docs/spec/protot.md §9.2), chunkwise for training and recurrent
// for decoding.
type DeltaNet struct {
	Width    int // D; > 0
	Heads    int // H; > 0
	HeadDim  int // d = d_k = d_v; 0 means D/H
	Chunk    int // C, a power of two; > 0
	ConvSize int // K of the short convolutions on q, k, v; > 0
}

func (n DeltaNet) dims() (D, H, d float64) {
	if n.Width <= 0 || n.Heads <= 0 || n.HeadDim < 0 || n.Chunk <= 0 || n.ConvSize <= 0 {
		panic(fmt.Sprintf("cost.DeltaNet: %+v, want width, heads, chunk, conv_size > 0 and head_dim ≥ 0", n))
	}
	hd := n.HeadDim
	if hd == 0 {
		hd = n.Width / n.Heads
	}
	return float64(n.Width), float64(n.Heads), float64(hd)
}

// ChunkLen returns the chunk length used for T tokens: Chunk, or the smallest power of two ≥ T when smaller.
func (n DeltaNet) ChunkLen(T int) int {
	c := 1
	for c < T && c < n.Chunk {
		c *= 2
	}
	return c
}

// features returns the projections, MatMul 2·D·(3·H·d + H) + 2·H·d·D, and the per-token elementwise work of
// the features and the output: (2K + 2)·3·H·d for the short convolutions and SiLU, 9·H·d for the two
// normalisations and the query scale, H for β's σ, and 4·H·d for the output RMSNorm.
func (n DeltaNet) features() Count {
	D, H, d := n.dims()
	K := float64(n.ConvSize)
	return Count{MatMul: 2*D*(3*H*d+H) + 2*H*d*D, Elementwise: (2*K+2)*3*H*d + 9*H*d + H + 4*H*d}
}

// Forward returns equation (3) of doc.go with C = ChunkLen(T); Elementwise adds to features' 2·H·d for diag(β)K
// and diag(β)V, 4·C·H for the two triangular masks and the straight-through sum, 2·H·d for U′ and the two-part
// output, and H·d²/C for the state sums.
func (n DeltaNet) Forward(_, T int) Count {
	_, H, d := n.dims()
	C := float64(n.ChunkLen(T))
	perHead := 2.0/3*C*C + C*d + 4*C*d + 4*C*d + 6*d*d
	return n.features().Add(Count{MatMul: H * perHead, Elementwise: 4*H*d + 4*C*H + H*d*d/C})
}

// Decode returns one recurrent step: features' work, MatMul 4·H·d² for Sᵀk and S′ᵀq, and Elementwise 2·H·d for
// u = β(v − Sᵀk) and 2·H·d² for S + k·uᵀ. Independent of capacity.
func (n DeltaNet) Decode(_, _ int) Count {
	_, H, d := n.dims()
	return n.features().Add(Count{MatMul: 4 * H * d * d, Elementwise: 2*H*d + 2*H*d*d})
}

// StateFloats returns equation (8): K·3·H·d + H·d².
func (n DeltaNet) StateFloats(_, _ int) int {
	_, H, d := n.dims()
	return n.ConvSize*3*int(H*d) + int(H*d*d)
}

// Mamba is the Mamba-1 selective state-space mixer (docs/spec/protot.md §9.3).
type Mamba struct {
	Width     int // D; > 0
	Expand    int // d_in = Expand·D; > 0
	StateSize int // N; > 0
	DTRank    int // r, the rank of the Δ projection; 0 means ⌈D/16⌉
	ConvSize  int // K of the causal convolution; > 0
}

func (m Mamba) dims() (D, d, r, N float64) {
	if m.Width <= 0 || m.Expand <= 0 || m.StateSize <= 0 || m.DTRank < 0 || m.ConvSize <= 0 {
		panic(fmt.Sprintf("cost.Mamba: %+v, want width, expand, state_size, conv_size > 0 and dt_rank ≥ 0", m))
	}
	rank := m.DTRank
	if rank == 0 {
		rank = (m.Width + 15) / 16
	}
	return float64(m.Width), float64(m.Expand * m.Width), float64(rank), float64(m.StateSize)
}

// projections returns the products shared by Forward and Decode, 2·D·2d + 2·d·(r + 2N) + 2·r·d + 2·d·D, and the
// elementwise work outside the scan: (2K + 1)·d for the convolution with its bias, 2·d for SiLU, 3·d for the
// softplus of Δ with its bias, d for Δ⊙u, 2·d for the skip D⊙x and 3·d for the gate y⊙SiLU(z).
func (m Mamba) projections() Count {
	D, d, r, N := m.dims()
	K := float64(m.ConvSize)
	return Count{MatMul: 2*D*2*d + 2*d*(r+2*N) + 2*r*d + 2*d*D, Elementwise: (2*K+1)*d + 2*d + 3*d + d + 2*d + 3*d}
}

// Forward returns equation (4) of doc.go (independent of T) and, for the two-level scan, Elementwise 8·d·N:
// the decays exp(Δ⊙A) (2), the outer product Δu⊗b (1), the scan step a·h + x and the running product (3) and
// the carry of the chunk-entry state (2).
func (m Mamba) Forward(_, _ int) Count {
	_, d, _, N := m.dims()
	return m.projections().Add(Count{MatMul: 4 * d * N, Elementwise: 8 * d * N})
}

// Decode returns one recurrent step: the projections, MatMul 2·d·N for y = h·c, and Elementwise 5·d·N for the
// decay exp(Δ⊙A) (2) and h' = decay⊙h + Δu⊗b (3). Independent of capacity.
func (m Mamba) Decode(_, _ int) Count {
	_, d, _, N := m.dims()
	return m.projections().Add(Count{MatMul: 2 * d * N, Elementwise: 5 * d * N})
}

// StateFloats returns equation (9): K·d_in + d_in·N.
func (m Mamba) StateFloats(_, _ int) int {
	_, d, _, N := m.dims()
	return m.ConvSize*int(d) + int(d*N)
}
