package cost

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// The hand-computed cases use the benchmark sizes of layers/decoder (D = 128, H = 4, D_h = 32) and the spec's
// ProtoT sizes (D = 256, R = 32, D_v = 128, Q = 64, K = 5).

func defaultProtoT(width int) ProtoT {
	return ProtoT{Width: width, Prototypes: 32, Chunk: 64, DenseMaxLen: 64, SharedRoutingLayers: 1, ConvLayers: 2,
		ConvKernel: 5}
}

func TestAttention_HandComputed(t *testing.T) {
	a := Attention{Width: 128, Heads: 4}
	// Projections 2·128·(4 + 8)·32 + 2·4·32·128 = 131,072; scores 4·T·4·32 = 512·T.
	require.Equal(t, 131072.0+512*256, a.Forward(0, 256).MatMul)
	require.Equal(t, 131072.0+512*8192, a.Forward(3, 8192).MatMul)
	// Elementwise: q scale 128 + RoPE 6·(4 + 4)·32 = 1,664, plus 7·4·T.
	require.Equal(t, 1664.0+28*256, a.Forward(0, 256).Elementwise)
	// Decode at capacity 1,000: the same products over the cache; cache write 5·4·1000·32.
	require.Equal(t, 131072.0+512*1000, a.Decode(0, 1000).MatMul)
	require.Equal(t, 1664.0+28*1000+640000, a.Decode(0, 1000).Elementwise)
	// KV cache: 2·4·S·32 floats per layer; grows by 256 per token.
	require.Equal(t, 2*4*8192*32, a.StateFloats(0, 8192))
	require.Equal(t, 256, a.KVGrowth())
	// Grouped-query attention: H_kv = 2 shrinks k, v and the cache, not the scores.
	g := Attention{Width: 128, Heads: 4, KVHeads: 2}
	require.Equal(t, 2*128*(4+4)*32+2*4*32*128+4*256*4*32.0, g.Forward(0, 256).MatMul)
	require.Equal(t, 2*2*100*32, g.StateFloats(0, 100))
	// Chunked, C = 256: at T = 8192 (32 whole blocks) a query scores k̄ = (8192 + 256)/2 = 4,224 keys; at T = 600
	// (blocks of 256, 256, 88) k̄ = (256·256 + 256·512 + 88·600)/600 = 415.68; below ChunkedMinLen the dense T.
	c := Attention{Width: 128, Heads: 4, Block: 256, ChunkedMinLen: 512}
	require.Equal(t, 131072.0+512*4224, c.Forward(0, 8192).MatMul)
	require.Equal(t, 1664.0+28*4224, c.Forward(0, 8192).Elementwise)
	require.InDelta(t, 131072.0+512*415.68, c.Forward(0, 600).MatMul, 1e-6)
	require.Equal(t, 131072.0+512*500, c.Forward(0, 500).MatMul)
	require.Equal(t, a.Decode(0, 1000), c.Decode(0, 1000))
}

func TestProtoT_HandComputed(t *testing.T) {
	p := defaultProtoT(256)
	// Layer 1 at T = 1024, Q = 64: 2·256·32 + 4·256·128 + 2·256·32 + 2·64·(64 + 128) + 4·32·128, plus the carry
	// over n = 16 chunks, 2·32·16²·129/1024 = 2,064.
	require.Equal(t, 2064.0, p.Carry(1024))
	require.Equal(t, 16384.0+131072+16384+24576+16384+2064, p.Forward(1, 1024).MatMul)
	// Layer 0 (shared routing) at T = 32 ≤ DenseMaxLen: one chunk of 32, no carried state.
	require.Equal(t, 16384.0+131072+2*32*192, p.Forward(0, 32).MatMul)
	require.Zero(t, p.Carry(32))
	// Layer 3 at T = 100 > DenseMaxLen: Q = 64, two chunks (the second padded), carry 2·32·2²·129/100.
	require.InDelta(t, 16384.0+131072+16384+24576+16384+330.24, p.Forward(3, 100).MatMul, 1e-9)
	// Chunks of 16 at D = 128 (D_v = 64), T = 8192: 2·R·(T/Q²)·(D_v + 1) = 2·32·32·65.
	q16 := defaultProtoT(128)
	q16.Chunk = 16
	require.Equal(t, 133120.0, q16.Carry(8192))
	// Elementwise of layer 2 (no conv, own read routing) at T = 1024: 12·R + D + 2R + 2R + D_v.
	require.Equal(t, 12*32+256+2*32+2*32+128.0, p.Forward(2, 1024).Elementwise)
	// Layer 1 adds the convolution (2·5 + 2)·128.
	require.Equal(t, 12*32+256+12*128+2*32+2*32+128.0, p.Forward(1, 1024).Elementwise)
	// State (spec §4.4): R·(D_v+1) = 4,128 plus 4·D_v = 512 in convolution layers.
	require.Equal(t, 4128+512, p.StateFloats(0, 1))
	require.Equal(t, 4128+512, p.StateFloats(1, 1<<20))
	require.Equal(t, 4128, p.StateFloats(2, 1))
	// Decode of layer 2: routing 2·256·32·2 + 4·256·128 plus the read 2·32·128.
	require.Equal(t, 32768.0+131072+8192, p.Decode(2, 5000).MatMul)
	require.Equal(t, p.Decode(2, 1), p.Decode(2, 1<<20))
	// Dense forces one chunk of T: cost grows with T.
	d := p
	d.Dense = true
	require.Equal(t, 16384.0+131072+16384+2*1024*192, d.Forward(1, 1024).MatMul)
	require.Equal(t, 1024, d.ChunkLen(1024))
	require.Equal(t, 64, p.ChunkLen(1024))
	require.Equal(t, 40, ProtoT{Width: 8, Prototypes: 2, Chunk: 64}.ChunkLen(40))
}

func TestDeltaNet_HandComputed(t *testing.T) {
	n := DeltaNet{Width: 128, Heads: 4, Chunk: 32, ConvSize: 4}
	proj := 2*128*(3*128+4) + 2*128*128.0
	perHead := func(C float64) float64 { return 2.0/3*C*C + C*32 + 8*C*32 + 6*32*32 }
	require.InDelta(t, proj+4*perHead(32), n.Forward(0, 1024).MatMul, 1e-9)
	// T = 5 uses a chunk of 8, the smallest power of two ≥ 5.
	require.Equal(t, 8, n.ChunkLen(5))
	require.InDelta(t, proj+4*perHead(8), n.Forward(0, 5).MatMul, 1e-9)
	require.Equal(t, 4*3*128+4*32*32, n.StateFloats(0, 9999))
	require.Equal(t, proj+4*4*32*32, n.Decode(0, 1).MatMul)
	// Elementwise at T = 1024: (2·4 + 2)·384 + 9·128 + 4 + 4·128 + 4·128 + 4·32·4 + 4·32·32/32.
	require.InDelta(t, 3840+1152+4+512+512+512+128.0, n.Forward(0, 1024).Elementwise, 1e-9)
}

func TestMamba_HandComputed(t *testing.T) {
	m := Mamba{Width: 128, Expand: 2, StateSize: 16, ConvSize: 4}
	// d = 256, r = ⌈128/16⌉ = 8: 2·128·512 + 2·256·40 + 2·8·256 + 2·256·128 + 4·256·16.
	want := 131072.0 + 20480 + 4096 + 65536 + 16384
	require.Equal(t, want, m.Forward(0, 256).MatMul)
	require.Equal(t, want, m.Forward(0, 8192).MatMul, "Mamba's products do not depend on T")
	// Elementwise: (2·4 + 1 + 2 + 3 + 1 + 2 + 3)·256 + 8·256·16.
	require.Equal(t, 20*256+8*256*16.0, m.Forward(0, 256).Elementwise)
	require.Equal(t, 4*256+256*16, m.StateFloats(0, 1))
	require.Equal(t, want-16384+8192, m.Decode(0, 1).MatMul)
	require.Equal(t, 161+161, Mamba{Width: 161, Expand: 1, StateSize: 1, ConvSize: 1}.StateFloats(0, 1),
		"d_in = 161: K·d + d·N = 161 + 161")
}

func TestModel_SumsLayersFFNAndHead(t *testing.T) {
	a := Attention{Width: 128, Heads: 4}
	m := Model{Vocab: 2048, Width: 128, Layers: 4, Mixer: a}
	require.Equal(t, 352, m.FFNWidth(), "⌈8·128/3⌉ = 342 rounded up to a multiple of 32")
	T := 1024
	want := 2*128*2048 + 4*(a.Forward(0, T).MatMul+6*128*352)
	require.Equal(t, want, m.Forward(T).MatMul)
	wantE := 5*128 + 4*2048 + 4*(a.Forward(0, T).Elementwise+10*128+3*352)
	require.Equal(t, wantE, m.Forward(T).Elementwise)
	require.Equal(t, m.Forward(T).Scale(3), m.Train(T))
	require.Equal(t, 4*a.StateFloats(0, 300), m.StateFloats(300))
	require.Equal(t, 4*a.StateFloats(0, 300)*2*4, m.StateBytes(300, 2, 4))

	// DropFFN keeps one norm and one residual add per block.
	d := m
	d.DropFFN, d.FFN = true, 100
	require.Equal(t, 2*128*2048+4*a.Forward(0, T).MatMul, d.Forward(T).MatMul)
	require.Equal(t, 100, d.FFNWidth())

	// ProtoT's layers differ: the model sums them.
	p := defaultProtoT(128)
	pm := Model{Vocab: 2048, Width: 128, Layers: 3, Mixer: p}
	require.Equal(t, 2*128*2048+p.Forward(0, T).MatMul+p.Forward(1, T).MatMul+p.Forward(2, T).MatMul+3*6*128*352,
		pm.Forward(T).MatMul)
	require.Equal(t, p.StateFloats(0, 1)+p.StateFloats(1, 1)+p.StateFloats(2, 1), pm.StateFloats(1))
}

// TestScaling_FlatVersusLinear checks the shape of the curves the throughput study compares: DeltaNet's and
// Mamba's work per token is the same at every T beyond one chunk, ProtoT's grows only by its chunk carry,
// attention's grows by 4·H·D_h per token of context and layer, and decoding is flat except for attention.
func TestScaling_FlatVersusLinear(t *testing.T) {
	const D, L, V = 128, 4, 2048
	att := Model{Vocab: V, Width: D, Layers: L, Mixer: Attention{Width: D, Heads: 4}}
	pt := Model{Vocab: V, Width: D, Layers: L, Mixer: defaultProtoT(D)}
	dn := Model{Vocab: V, Width: D, Layers: L, Mixer: DeltaNet{Width: D, Heads: 4, Chunk: 32, ConvSize: 4}}
	mb := Model{Vocab: V, Width: D, Layers: L, Mixer: Mamba{Width: D, Expand: 2, StateSize: 16, ConvSize: 4}}
	for _, T := range []int{256, 1024, 4096} {
		for _, m := range []Model{pt, dn, mb} {
			require.Equal(t, m.Decode(T), m.Decode(2*T))
			require.Equal(t, m.StateFloats(T), m.StateFloats(2*T))
		}
		for _, m := range []Model{dn, mb} {
			require.Equal(t, m.Train(T), m.Train(2*T), "T=%d %T", T, m.Mixer)
		}
		// ProtoT grows only by its carry term, which doubles with T at a fixed chunk length.
		p := pt.Mixer.(ProtoT)
		require.Equal(t, 2*p.Carry(T), p.Carry(2*T))
		require.Equal(t, 3*L*(p.Carry(2*T)-p.Carry(T)), pt.Train(2*T).MatMul-pt.Train(T).MatMul)
		require.Equal(t, float64(L*4*T*4*32), att.Forward(2*T).MatMul-att.Forward(T).MatMul)
		require.Equal(t, float64(L*4*T*4*32), att.Decode(2*T).MatMul-att.Decode(T).MatMul)
		require.Equal(t, L*2*4*T*32, att.StateFloats(2*T)-att.StateFloats(T))
	}
	// At T = 8192 attention needs more than 3× ProtoT's products per token at this width.
	require.Greater(t, att.Train(8192).MatMul/pt.Train(8192).MatMul, 3.0)
}

func TestCount_Arithmetic(t *testing.T) {
	c := Count{MatMul: 6e9, Elementwise: 1e8}
	require.Equal(t, Count{MatMul: 7e9, Elementwise: 3e8}, c.Add(Count{MatMul: 1e9, Elementwise: 2e8}))
	require.Equal(t, Count{MatMul: 12e9, Elementwise: 2e8}, c.Scale(2))
	require.Equal(t, 6.1e9, c.Total())
	// 6e9 / 3e9 + 1e8 / 1e8 = 2 + 1 seconds.
	require.InDelta(t, 3.0, c.Seconds(3e9, 1e8), 1e-12)
	require.Panics(t, func() { c.Seconds(0, 1) })
	require.Panics(t, func() { c.Seconds(1, math.NaN()) })
}

func TestInvalid_Panics(t *testing.T) {
	require.Panics(t, func() { Attention{Width: 128}.Forward(0, 1) })
	require.Panics(t, func() { ProtoT{Width: 128, Prototypes: 4}.Forward(0, 1) }, "chunk 0")
	require.Panics(t, func() { ProtoT{Width: 128, Prototypes: 4, Chunk: 8, ConvLayers: 1}.StateFloats(0, 1) })
	require.Panics(t, func() { DeltaNet{Width: 128, Heads: 4, Chunk: 32}.Decode(0, 1) }, "conv_size 0")
	require.Panics(t, func() { Mamba{Width: 128, Expand: 2}.Forward(0, 1) })
	m := Model{Vocab: 10, Width: 8, Layers: 1, Mixer: Attention{Width: 8, Heads: 2}}
	require.Panics(t, func() { m.Forward(0) })
	require.Panics(t, func() { m.Decode(-1) })
	require.Panics(t, func() { Model{Vocab: 10, Width: 8, Layers: 1}.Forward(1) }, "no mixer")
}
