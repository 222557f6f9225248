// Package deltanet implements DeltaNet, linear attention with the delta rule (Schlag et al. 2021, "Linear
// Transformers Are Secretly Fast Weight Programmers", arXiv:2102.11174; Yang et al. 2024, "Parallelizing Linear
// Transformers with the Delta Rule over Sequence Length", arXiv:2406.06484), as configured by fla's DeltaNet layer:
// a baseline mixer of the ProtoT paper (docs/spec/protot.md §9.2).
//
// Shapes: B batch, T tokens, D width, H heads, d = d_k = d_v head width, K ShortConv length, C chunk length.
//
// Layer (x: [B, T, D]; projections without bias, applied on the right):
//
//	(1)  q̃, k̃, ṽ = SiLU(ShortConv(x·W_q)), SiLU(ShortConv(x·W_k)), SiLU(ShortConv(x·W_v))      [B, T, H, d]
//	     ShortConv(z)_t[c] = Σ_{i<K} w[c, i]·z_{t−K+1+i}[c]   (causal, depthwise, no bias; z_s = 0 for s < 0)
//	(2)  q = d^(−1/2)·q̃/√(‖q̃‖² + 1e−6),  k = k̃/√(‖k̃‖² + 1e−6)  (per head),  v = ṽ
//	(3)  β_t = σ(x_t·W_β) ∈ (0, 1)^H
//
// Recurrence, per head, S ∈ R^{d×d}, S_{−1} = 0:
//
//	(4)  u_t = β_t (v_t − S_{t−1}ᵀ k_t)
//	(5)  S_t = S_{t−1} + k_t u_tᵀ  (= (I − β_t k_t k_tᵀ) S_{t−1} + β_t k_t v_tᵀ),   o_t = S_tᵀ q_t
//
// Chunkwise form (training), per head and chunk of C rows Q, K, V with incoming state S0:
//
//	(6)  A = tril(diag(β) K Kᵀ, −1)                       strictly lower triangular, [C, C]
//	(7)  Γ = (I + A)⁻¹ diag(β),   W = Γ K,   U = Γ V
//	(8)  U′ = U − W S0
//	(9)  O = Q S0 + ((Q Kᵀ) ⊙ tril_incl) U′              tril_incl keeps j ≤ i
//	(10) S_next = S0 + Kᵀ U′
//
// Output:
//
//	(11) y = concat_h( o_h/√(mean(o_h²) + ε) ⊙ g )·W_o      g [d] shared by the heads, ε = 1e−5
//
// (I + A)⁻¹ is computed by block doubling (unitLowerInverse), not by the Neumann product Π(I + (−A)^(2^i)) that
// spec §9.2 offers: the product's intermediate powers grow like binomial coefficients when keys repeat, and at
// C = 64 in float32 it returns garbage (TestDeltaRule_EqualKeysFloat32); doubling is exact and costs fewer FLOPs.
// Its gradient is attached as the analytic rule of a matrix inverse, ∂L/∂A = −Xᵀ·(∂L/∂X)·Xᵀ with X = (I + A)⁻¹, a
// first-order rule: second derivatives through DeltaRule are not available. Only eq. (8) and (10) run chunk after
// chunk; everything else is batched over all chunks. A sequence is padded to a multiple of C with k = v = 0 and
// β = 0, which leaves the state unchanged. ChunkSize = 1 is the recurrence itself.
//
// Decoding: Step applies (1)–(5) and (11) to one token; the state is the last K pre-conv projections
// [B, K, 3·H·d] (the current token's last) and S [B, H, d, d].
//
// Scope and variable names (checkpoint and probe names): scope.At("deltanet") holds "q_proj", "k_proj", "v_proj"
// [D, H·d], "q_conv", "k_conv", "v_conv" [H·d, K], "beta_proj" [D, H], "out_norm" [d] and "out_proj" [H·d, D].
// Every rank-2 variable is weight-decayed; "out_norm" is not (rank 1).
//
// Initialisation: the q, k, v, β and output projections are U(±1/√fan_in) (nn.Linear's default) unless
// Config.InitStd (q, k, v, β) and Config.OutputInitStd (output) ask for N(0, σ²), as a decoder's "gpt2" policy
// does (decoder.Config.Init); the ShortConv kernels (U(±1/√K), Conv1d's default) and the out_norm gain (1) keep
// theirs under every policy.
//
// Stateless functions (ShortConv, DeltaRule, DeltaRuleStep, Mix, MixStep) take every input as an argument; Mixer
// and Step create the variables. All graph functions panic on bad shapes; Config.Validate returns errors.
package deltanet
