// Package cost is the cost model of the sequence mixers compared in
//
//	Y. Yordanov et al., "Prototype Transformer: Towards Language Model Architectures Interpretable by Design",
//	arXiv:2602.11852 (2026)
//
// and of the decoder that hosts them (docs/spec/protot.md §2.1, §4, §9): work per token as a function of the sequence
// length T, the width D, the heads H, the prototypes R, the value width D_v, the chunk length Q, Mamba's expansion
// and state size N; and the size of the decoding state, including the growth of attention's KV cache. These are the
// predictions experiments/speed sets beside its throughput and decoding measurements (§7.2).
//
// Everything is float64 or int and depends only on the standard library. The package is part of the independent
// theory oracle: it must not import gomlx, layers/… or any other ProtoLab package. It has its own configuration
// structs; models/timing checks that its matrix-product counts equal the layers' FLOPsPerToken exactly, so
// the two cannot drift.
//
// # Units
//
// A Count splits the work of one token into MatMul, the FLOPs of matrix products (a multiply-add is 2 FLOPs), and
// Elementwise, one operation per output element of every elementwise op and reduction on tensors that grow with
// the batch or the sequence (parameter-only tensors are ignored). The two run at very different rates on a CPU
// backend, so Count.Seconds takes one rate for each. Forward work is per token of a sequence of T tokens; training
// (forward and backward) is taken as 3× forward for both parts, the usual rule for matrix products (the backward
// pass computes two products per forward product) and a rough one for elementwise work.
//
// # Matrix products per token, one layer (forward)
//
// Shape letters as in docs/spec/protot.md §1, and a multiply-add counts 2:
//
//	(1) attention:  2·D·(H + 2·H_kv)·D_h + 2·H·D_h·D + 4·T·H·D_h
//	(2) ProtoT:     2·D·R + 4·D·D_v + [2·D·R unless routing is shared] + 2·Q·(2R + D_v)
//	                + [4·R·D_v + 2·R·n²·(D_v + 1)/T if n = ⌈T/Q⌉ > 1]
//	(3) DeltaNet:   2·D·(3·H·d + H) + 2·H·d·D + H·((2/3)·C² + C·d + 8·C·d + 6·d²)
//	(4) Mamba:      2·D·2d_in + 2·d_in·(r + 2N) + 2·r·d_in + 2·d_in·D + 4·d_in·N
//	(5) FFN:        3·2·D·F;   LM head: 2·D·V (once per token, not per layer)
//
// (1) counts the full T×T score matrix, masked entries included, as the dense causal attention computes it.
// (2) is Form B of spec §4.2 with chunks of Q = T when the dense Form A is used (T ≤ DenseMaxLen or Q ≥ T):
// the projections (write logits, value, output, read logits), then inside a chunk the mass, the per-sequence
// weight matrix G[τ,σ] = Σ_k u_k·Λ_k·π_k and its product with the values (full Q×Q blocks, 2·Q·(2R + D_v)), the
// chunk states with their read (4·R·D_v), and the carry of the states across chunks by one n×n decay matrix per
// prototype (2·R·n²·(D_v + 1)/T per token: linear in T at fixed Q, as T/Q²). G is formed by an elementwise
// product and a sum over R; it is counted here as product FLOPs, as layers/protot does. layers/protot's
// FLOPsPerToken omits the carry term; models/timing's test checks that this is the only difference. (3) is the
// chunkwise delta rule with chunks of C = min(chunk, T rounded up to a power of two) and d = d_k = d_v: the inverse
// (I + A)⁻¹ by block doubling, W and U, QKᵀ and its product with U′, and the three state products. (4) is
// independent of T: the projections and the read-out y = h·c, counted twice (once for the inter-chunk term); the
// scan itself is elementwise.
// With T = Q, (2) grows linearly in T; with fixed Q only the carry term grows, by 2·R·(D_v + 1)/Q² per token
// of context: ProtoT's training cost per token is flat while that term is small next to the rest (Q ≳ √T).
//
// # Decoding (one token, batch 1)
//
// One step with a state of capacity S positions: attention reads its whole KV cache (4·S·H·D_h product FLOPs,
// and it rewrites the cache with a one-hot select, 2·H_kv·S·D_h elementwise work per layer), so its cost grows
// with S; ProtoT (Form D, spec §4.4), DeltaNet and Mamba update a fixed-size state.
//
// # Decoding state per sequence, one layer (floats)
//
//	(6) attention:  2·H_kv·S·D_h           (K and V caches; grows by 2·H_kv·D_h per token)
//	(7) ProtoT:     R·(D_v + 1) + [(K − 1)·D_v in convolution layers]
//	(8) DeltaNet:   K·3·H·d + H·d²          (convolution window and S)
//	(9) Mamba:      K·d_in + d_in·N         (convolution window and h)
//
// (7) at D = 256, R = 32, D_v = 128, K = 5 is 4,128 + 512 floats, spec §4.4's figure.
//
// # Elementwise estimates
//
// The Elementwise counts are estimates read from the graphs the layers build (one operation per element of each
// op's output; transposes, reshapes and slices are free). They are approximate by construction, unlike the
// MatMul counts, and the tests check them only against their own formulas, written out in the doc comments.
package cost
