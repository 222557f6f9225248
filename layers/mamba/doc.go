// Package mamba implements the Mamba-1 mixer, a selective state-space model (Gu and Dao 2023, "Mamba: Linear-Time
// Sequence Modeling with Selective State Spaces", arXiv:2312.00752): a baseline mixer of the ProtoT paper
// (docs/spec/protot.md §9.3; equations as in mamba-minimal, initialisation as in mamba_ssm's mamba_simple.py).
//
// Shapes: B batch, T tokens, D width, d = d_in = Expand·D inner width, N state size, K = d_conv, R = dt_rank,
// Q chunk length. Lower-case b and c are the SSM input and output vectors, not the batch.
//
// Layer (x: [B, T, D]; projections applied on the right):
//
//	(1)  [x, z] = x·W_in                                          W_in [D, 2d], no bias
//	(2)  x ← SiLU(CausalConv(x) + bias),  CausalConv(x)_t[i] = Σ_{j<K} w[i, j]·x_{t−K+1+j}[i]   (x_s = 0, s < 0)
//	(3)  [δ, b, c] = x·W_x                                        δ [R], b, c [N]
//	(4)  Δ = softplus(δ·W_dt + b_dt) [d],   A = −exp(A_log) [d, N]
//	(5)  h_t = exp(Δ_t ⊙ A) ⊙ h_{t−1} + (Δ_t ⊙ x_t) ⊗ b_t           h_t [d, N], h_{−1} = 0
//	(6)  y_t = h_t·c_t + D_skip ⊙ x_t
//	(7)  out = (y ⊙ SiLU(z))·W_out                                W_out [d, D], no bias
//
// Parallel form (training): a two-level scan. Mamba-1's decay differs per (channel, state), so the SSD-style
// matrix form needs a [Q, Q, d, N] decay tensor per chunk (Q× the scan's work); instead, with α_t = exp(Δ_t ⊙ A),
// x_t = (Δ_t ⊙ u_t) ⊗ b_t, the sequence cut into chunks of Q tokens and τ the position in a chunk,
//
//	(8)  h⁰_τ = α_τ ⊙ h⁰_{τ−1} + x_τ,  h⁰_{−1} = 0, and P_τ = Π_{s≤τ} α_s, in every chunk at once (Q steps)
//	(9)  H_n = P_{Q−1}(n−1) ⊙ H_{n−1} + h⁰_{Q−1}(n−1),  H_0 = 0        (the state entering chunk n; Nc steps)
//	(10) h_t = h⁰_τ + P_τ ⊙ H_n
//
// Every step is a same-shape elementwise operation on [B, T/Q, d·N]. Decays are multiplied, never divided, so
// nothing overflows and long decays underflow cleanly to 0 (never exp(G_t)·Σ exp(−G_s), which overflows).
// Q = ⌈√T⌉ by default; Q ≥ T is the plain sequential scan. Padding uses Δ = 0 and x = b = 0, which leaves the
// state unchanged.
//
// Gradient (a custom rule: back-propagating through the unrolled loops would cost O(Q) full-size tensors per
// slice), with ȳ = ∂L/∂y:
//
//	(11) e_t = ȳ_t ⊗ c_t
//	(12) g_t = α_{t+1} ⊙ g_{t+1} + e_t,  g_T = 0          (∂L/∂h_t: the same two-level scan, run backwards)
//	(13) ∂L/∂c_t = ȳ_tᵀ h_t,  ∂L/∂b_t = g_tᵀ (Δ_t ⊙ u_t),  ∂L/∂(Δ_t ⊙ u_t) = g_t b_t
//	(14) q_t = g_t ⊙ α_t ⊙ h_{t−1} = g_t ⊙ (h_t − x_t):  ∂L/∂Δ_t += Σ_n q_t ⊙ A,  ∂L/∂A = Σ_t q_t ⊙ Δ_t
//
// The rule is first order: second derivatives through SelectiveScan are not available.
//
// Decoding: Step applies (1)–(7) to one token, as mamba_simple's step(); the state is the last K pre-conv inputs
// [B, K, d] (the current token's last) and h [B, d, N].
//
// Scope and variable names (checkpoint and probe names): scope.At("mamba") holds "in_proj" [D, 2d], "conv_kernel"
// [d, K], "conv_bias" [d], "x_proj" [d, R+2N], "dt_proj" [R, d], "dt_bias" [d], "a_log" [d, N], "d_skip" [d] and
// "out_proj" [d, D]. Spec §2.5 exempts dt_proj, dt_bias, conv_bias, a_log and d_skip from weight decay: NoDecay lists
// them (an optimizer exempts the rank-1 ones by rank anyway; "dt_proj" and "a_log" only by name).
//
// Initialisation: in_proj, x_proj and out_proj are U(±1/√fan_in) (nn.Linear's default) unless Config.InitStd
// (in_proj, x_proj) and Config.OutputInitStd (out_proj) ask for N(0, σ²), as a decoder's "gpt2" policy does
// (decoder.Config.Init); the convolution kernel and bias U(±1/√d_conv), dt_proj U(±dt_rank^(−1/2)), dt_bias from
// a log-uniform Δ, a_log = ln(n+1) and d_skip = 1 stay mamba_simple's under every policy.
//
// Stateless functions (CausalConv, SelectiveScan, ScanStep, Mix, MixStep) take every input as an argument; Mixer
// and Step create the variables. All graph functions panic on bad shapes; Config.Validate returns errors.
package mamba
