// Package attention implements causal multi-head self-attention with rotary position embeddings (RoPE) and a
// key/value cache for incremental decoding: the sequence mixer of the LLaMA-style decoder (layers/decoder) and of
// the ProtoT paper's LLaMA baseline (docs/spec/protot.md §9.1; RoFormer, arXiv:2104.09864; GQA, arXiv:2305.13245).
//
// Shapes: B batch, T query tokens, S key positions (S = T in a full pass, the cache length when decoding), D width,
// H query heads, H_kv key/value heads, G = H/H_kv query heads per key/value head, D_h head width, F = D_h/2.
//
// Equations (x: [B, T, D]; all projections without bias, applied on the right):
//
//	(1) q = x·W_q → [B, T, H, D_h],  k = x·W_k, v = x·W_v → [B, T, H_kv, D_h]
//	(2) ω_i = θ^(−2i/D_h), i = 0…F−1;  a_{t,i} = t·ω_i
//	(3) RoPE(u)_t[i] = u_t[i]·cos a_{t,i} − u_t[F+i]·sin a_{t,i}
//	    RoPE(u)_t[F+i] = u_t[F+i]·cos a_{t,i} + u_t[i]·sin a_{t,i}        (rotate-half pairs (i, F+i))
//	(4) A[b,h,t,s] = softmax_s( ⟨RoPE(q)[b,t,h], RoPE(k)[b,s,h/G]⟩ / √D_h ) over s ≤ t
//	(5) o[b,t,h] = Σ_s A[b,h,t,s]·v[b,s,h/G];  y = concat_h(o)·W_o → [B, T, D]
//
// Rotate-half pairs channel i with channel F+i. docs/spec/protot.md §9.1 writes RoPE with interleaved pairs (2i, 2i+1);
// the two are the same model up to a fixed permutation of each head's channels in W_q and W_k, so only a
// checkpoint importer has to care.
//
// Chunked form (Config.Kind; AttendCausalChunked), after FlashAttention (arXiv:2205.14135, 2307.08691): with
// queries and keys split into blocks of C positions and ℓ_ts = ⟨RoPE(q)_t, RoPE(k)_s⟩/√D_h, each query block i
// visits key blocks j = 0…i in order, masking s > t only in block j = i, keeping a running maximum m, sum l and
// weighted sum a per query row:
//
//	(6) m' = max(m, max_{s∈j} ℓ_ts),  α = exp(m − m'),  p_ts = exp(ℓ_ts − m')
//	(7) l' = α·l + Σ_{s∈j} p_ts,  a' = α·a + Σ_{s∈j} p_ts·v_s
//	(8) o_t = a/l,  L_t = m + log l  (the row's log-sum-exp, kept for the backward pass)
//	(9) backward, per block pair with P_ts = exp(ℓ_ts − L_t) and Δ_t = ⟨dO_t, o_t⟩:
//	    dv_s += Σ_t P_ts·dO_t,  dP_ts = ⟨dO_t, v_s⟩,  dℓ_ts = P_ts·(dP_ts − Δ_t),
//	    dq_t += Σ_s dℓ_ts·k_s/√D_h,  dk_s += Σ_t dℓ_ts·q_t/√D_h
//
// (6)–(8) equal (4)–(5), and (9) is their gradient, so the two forms agree to rounding and share every variable.
// Only O(T/C) blocks of C×C weights are live at once instead of the T×T weights (and several tensors of their size)
// that autodiff keeps for the full form's backward pass.
//
// Decoding: Step computes (1)–(5) for one token at position p, writes RoPE(k_p) and v_p into caches
// [B, H_kv, S, D_h] at index p and attends over positions ≤ p, which gives the same output as the full pass.
//
// Scope and variable names (checkpoint and probe names): scope.At("attention") holds "q" [D, H·D_h],
// "k" [D, H_kv·D_h], "v" [D, H_kv·D_h] and "o" [H·D_h, D].
//
// Initialisation: q, k and v are U(±1/√D) and o U(±1/√(H·D_h)), nn.Linear's default (docs/spec/protot.md §2.4),
// unless Config.InitStd (q, k, v) and Config.OutputInitStd (o) ask for N(0, σ²), as a decoder's "gpt2" policy does
// (decoder.Config.Init).
//
// Stateless functions (RoPE, Attend, AttendCausalChunked, CausalMask) take every input as an argument; Mixer and Step create the
// variables. All graph functions panic on bad shapes; Config.Validate returns errors.
package attention
