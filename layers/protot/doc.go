// Package protot implements the sequence mixer of the Prototype Transformer (ProtoT): Y. Yordanov et al.,
// "Prototype Transformer: Towards Language Model Architectures Interpretable by Design", arXiv:2602.11852, as
// specified in docs/spec/protot.md §2–§6 (official code YDYordanov/prototype_transformer, ProtoBroadcastMixerUpgraded).
//
// Each layer has R learnable prototypes P_k, each a communication channel with its own memory. A token writes its
// value into the channels through a softmax over prototypes, and reads back a mix of the channels' discounted
// means of the past.
//
// Shapes (spec §1): B batch, T tokens, D width, R prototypes, D_v value width (D/2 by default), K convolution kernel.
// t and j are positions (0-based), k a prototype, ℓ the layer (0-based); σ is the logistic function, ε = 1e−6.
//
// Equations (numbered as the steps of docs/spec/protot.md §2.3):
//
//	(1)  π[t,k] = softmax_k( ⟨x_t, P_k⟩ / (|τ_w| + ε) )                                  write gate
//	(2a) v_t = W_V x_t ∈ R^{D_v}
//	(2b) layers ℓ < 2:  v_t ← ½·v_t + ½·Σ_{i=0}^{K−1} w[:,0,i] ⊙ v_{t−K+1+i}                 causal depthwise conv
//	(3)  β_k = σ(γ_k)
//	     num[t,k] = Σ_{j ≤ t−1} (1−β_k)·β_k^{t−1−j}·π[j,k]·v_j
//	     den[t,k] = Σ_{j ≤ t−1} (1−β_k)·β_k^{t−1−j}·π[j,k]
//	     M[t,k]   = num[t,k] / max(den[t,k], 1e−6)                    (M[0] = 0: strictly past-only)
//	(4)  ℓ ≥ 1:  ρ[t,k] = softmax_k( ⟨W_r x_t, P_k⟩ / (|τ_r| + ε) );   ℓ = 0:  ρ = π  ("shared routing")
//	(5)  y_t = α · W_U Σ_k ρ[t,k]·M[t,k]
//
// "Shared routing" is within a layer: layer 0 reads with its own write routing. No information passes between
// layers besides the residual stream, so the decoder only needs the layer index.
//
// Parallel forms (training; spec §4.1, §4.2). With λ_k = ln β_k = −softplus(−γ_k), 1−β_k = σ(−γ_k) and
// Λ_k[t, j] = (1−β_k)·exp((t−1−j)·λ_k) for j ≤ t−1 (else 0), num[t,k] = Σ_j Λ_k[t, j]·π[j,k]·v_j. Form A
// (Config.Form "dense") uses one T×T matrix per prototype; Form B ("chunked") uses Q×Q matrices inside chunks of
// Q = Config.ChunkSize tokens plus chunk states carried by a matrix product over chunks (entries β_k^{Q(n−1−m)});
// "auto" picks A for T ≤ Config.DenseMaxLen. Exponents are masked before exp, so nothing overflows. The output
// never forms num: with u[t,k] = ρ[t,k]/max(den[t,k], 1e−6), Σ_k ρ M = Σ_j G[t, j]·v_j with
// G[t, j] = Σ_k u[t,k]·Λ_k[t, j]·π[j,k], a Q×Q matrix per chunk and sequence (DiscountedRead), which costs
// O(T·Q·(R + D_v)) instead of O(T·Q·R·D_v); den is DiscountedPrefix of π. The trace's num and M come from
// DiscountedPrefix of π⊗v and are evaluated only when a caller asks for them. All forms are matrix products; no
// operation is per token.
//
// Recurrent form (generation, spec §4.4, Form D): the state of a layer is num and den as one [B, R, D_v+1]
// tensor plus, in convolution layers, the last K−1 values [B, K−1, D_v]. At token t: read M = num/max(den, 1e−6)
// and y_t; then write num ← β⊙num + (1−β)·π_t⊗v_t, den ← β⊙den + (1−β)·π_t. O(1) work and memory per token.
//
// Numerics (spec §4.5; Config.Numerics). "exact" (default) evaluates (3) as written, in the model's dtype.
// "reference" reproduces the official code's float32 arithmetic whatever the model's dtype: with p_j = β_k^j,
// w_j = (1−β_k)/(p_j + 1e−12), num[t] = p_{t−1}·Σ_{j ≤ t−1} w_j π[j,k] v_j (den likewise); its recurrent state
// holds the running sums and is rescaled by β^{t−1} at read time. Once β^j falls below about 1e−12 the weights
// saturate and M decays towards 0 (with π = 1/32: below half of the exact value from position ≈ 61 for β = 0.5,
// ≈ 393 for β = 0.9, ≈ 806 for β = 0.95), which injects an absolute-position signal.
//
// Pads (Mix only): with a pad mask m_t (1 = pad), π, ρ and v are multiplied by 1 − m_t, the value before the
// convolution, so pads add neither sum nor mass.
//
// Interventions (spec §5). Write and read masks [R] are non-trainable variables (SetMasks): entries ≤ 0 add a
// −1e30 logit to that prototype before the softmax, so it gets exactly zero weight and the rest renormalise.
// In layer 0 a write mask also acts on the read side; a read mask there gives ρ = softmax(a_w + write + read
// biases) while π is unchanged. ReinitPrototype redraws one prototype as at initialisation, from a seed.
//
// Scope and variables (checkpoint paths), under scope.At("protot") of a block: "prototypes" [R, D], "value"
// [D_v, D], "output" [D, D_v], "read_query" [D, D] (layers ≥ 1), "decay_logit" [R], "write_temp" [],
// "read_temp" [] (layers ≥ 1), "alpha" [], "conv" [D_v, 1, K] (layers 0 and 1), and the non-trainable float32
// masks "write_mask" [R] and "read_mask" [R]. The layouts are the official code's, so an importer copies
// P_tables.0, V.0, U.0, pre_r.0, logit_beta ([1, R] → [R]), tau.0, tau_read.0, alpha.0 and local_dw.dw.weight (and
// drops layer 0's unused pre_r and tau_read, and the conv of layers ≥ 2). Weight decay falls on value, output,
// read_query and conv only, as in the official code: NoDecay lists the others by name.
//
// Initialisation (spec §2.2, §2.4): W_V, W_r and W_U are U(±1/√fan_in), PyTorch's nn.Linear default and the
// official code's, unless Config.InitStd (W_V, W_r) and Config.OutputInitStd (W_U) ask for N(0, σ²), as a decoder's
// "gpt2" policy does (decoder.Config.Init). The prototypes (N(0, 1)/√D entries, rows scaled to unit length), γ, τ_w,
// τ_r, α and the convolution kernel (U(±1/√K)) keep their own initialisation under every policy.
//
// Probe names (Trace.Named; spec §6), with the shapes of Mix; Step gives the same names with T = 1:
//
//	write_logits [B, T, R]      ⟨x_t, P_k⟩/(|τ_w|+ε), before masks
//	pi           [B, T, R]      write routing π (after masks and pads)
//	read_logits  [B, T, R]      read logits (the write logits in layer 0)
//	rho          [B, T, R]      read routing ρ
//	v            [B, T, D_v]    W_V x_t
//	v_conv       [B, T, D_v]    the value written (after the convolution in layers 0 and 1; else v)
//	num          [B, T, R, D_v] num[t], the sums of positions < t
//	den          [B, T, R]      den[t]
//	M            [B, T, R, D_v] the memory read at t
//	mix_pre_alpha [B, T, D]     W_U Σ_k ρ_k M_k
//	mix_out      [B, T, D]      the mixer output y
//
// Stateless functions (Mix, MixStep, DiscountedPrefix) take every weight as an argument; Mixer and Step create
// the variables. Graph functions panic on bad shapes; Config.Validate and the intervention functions return
// errors.
package protot
