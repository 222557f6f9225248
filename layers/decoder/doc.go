// Package decoder implements a LLaMA-style decoder-only language model with a pluggable sequence mixer: token
// embedding, L pre-norm residual blocks (RMSNorm → mixer, RMSNorm → SwiGLU FFN), a final RMSNorm and an LM head
// that may be tied to the embedding. It is the backbone of the ProtoT paper's models and baselines
// (docs/spec/protot.md §2.1, §9; LLaMA, arXiv:2302.13971; SwiGLU, arXiv:2002.05202; RMSNorm, arXiv:1910.07467).
// The mixers (Config.Mixer) are "attention" (layers/attention); ProtoT, DeltaNet and Mamba plug in through the
// Mixer interface (DeltaNet and Mamba through one generic adapter, mixer_recurrent.go). Every mixer of KnownMixers
// passes the conformance suite of conformance_test.go: causality, Step = Forward, finite-difference gradients for
// the input and every weight, the mix_out probe's name and shapes, and NumParams (the model-level invariants of
// docs/spec/protot.md §4.6; NumParams gives the counts of §2.6).
//
// Shapes: B batch, T tokens, D width, F FFN inner width, V vocabulary, L layers.
//
// Equations (tokens x_0…x_{T−1}; ⊙ elementwise; σ the logistic function):
//
//	(1) h⁰_t = E[x_t]                                             E ∈ R^{V×D}
//	(2) RMSNorm(h; g) = h / √(mean_d h_d² + ε) ⊙ g                g ∈ R^D, initialised to 1
//	(3) u^ℓ = h^ℓ + Mixer_ℓ(RMSNorm(h^ℓ; g_attn^ℓ))                 causal: u_t depends on h_{≤t}
//	(4) h^{ℓ+1} = u^ℓ + SwiGLU(RMSNorm(u^ℓ; g_ffn^ℓ))
//	(5) SwiGLU(x) = (SiLU(x·W_gate) ⊙ (x·W_up))·W_down,  SiLU(a) = a·σ(a)   W_gate, W_up ∈ R^{D×F}, W_down ∈ R^{F×D}
//	(6) logits_t = RMSNorm(h^L_t; g_final)·W_headᵀ                  W_head ∈ R^{V×D}; W_head = E when tied
//	(7) loss = mean_{b,t} [ logsumexp(logits_{b,t}) − logits_{b,t}[x_{b,t+1}] ]
//
// Eq. (7) is the training loss of docs/spec/protot.md §3. No biases anywhere, no dropout, no positional embedding
// besides what the mixer adds (RoPE for attention).
//
// # Initialisation
//
// One policy, Config.Init, initialises every projection of the model, whatever the mixer: the mixer's (attention's
// q, k, v, o; ProtoT's W_V, W_r, W_U; DeltaNet's q, k, v, β and output projections; Mamba's in_proj, x_proj and
// out_proj), the FFN's W_gate, W_up, W_down and an untied W_head. Config.ProjectionStds turns the policy into two
// standard deviations, which NewMixer passes to the mixer's configuration (its init_std and output_init_std, which
// a decoder's configuration must leave 0) and the FFN and the head use directly:
//
//	"pytorch" (InitPyTorch, the default; docs/spec/protot.md §2.4, the official code): W ~ U(±1/√fan_in)
//	"gpt2"    (InitGPT2, an option):   W ~ N(0, σ²);  W_o, W_U, out_proj, W_down ~ N(0, σ²/(2L))
//
// where fan_in is the number of inputs each output sums (D for the projections from the residual stream, F for
// W_down, H·D_h for W_o, D_v for W_U, d_in for Mamba's x_proj and out_proj) and σ = Config.InitStd. Under both,
// E ~ N(0, σ²) (the official code re-initialises the embedding so) and the norm gains start at 1. The
// initialisations the spec gives a layer of its own stay that layer's under both policies, as in the official code
// and mamba_ssm: ProtoT's prototypes (unit rows), γ, τ_w, τ_r, α and value convolution (U(±1/√K)); DeltaNet's
// ShortConv kernels (U(±1/√K)) and output-norm gain (1); Mamba's convolution kernel and bias (U(±1/√d_conv)),
// dt_proj (U(±dt_rank^(−1/2))), dt_bias (log-uniform Δ), a_log (ln(n+1)) and d_skip (1).
// TestInit_StandardDeviations checks, for every mixer and both policies, that every projection has the policy's
// distribution and that no other rank-2 weight escapes the list above.
//
// Scopes and variables (checkpoint and safetensors names):
//
//	/embed/embeddings                 [V, D]
//	/block_%02d/attn_norm/gain        [D]
//	/block_%02d/attention/{q,k,v,o}   (the mixer's own scope and variables)
//	/block_%02d/ffn_norm/gain         [D]
//	/block_%02d/ffn/{gate,up}         [D, F]
//	/block_%02d/ffn/down              [F, D]
//	/final_norm/gain                  [D]
//	/lm_head/weights                  [V, D]   (absent when tie_embeddings)
//
// Weight decay: Config.NoDecay returns the path elements whose variables must not be weight-decayed, for an
// optimizer that exempts a variable when one element of its path ("/block_00/attn_norm/gain" has three) equals an
// entry or ends in "_" + entry, and every rank ≤ 1 variable (workbench/fit's rule). The entries come from the
// packages that own the variables: the norm scopes attn_norm, ffn_norm and final_norm (ScopeAttnNorm, …), the
// configured mixer's NoDecay (protot: prototypes, decay_logit, write_temp, read_temp, alpha; deltanet: out_norm;
// mamba: dt_proj, a_log, conv_bias, dt_bias, d_skip; attention: none) and the PRISM bank (prism.NoDecay:
// prototypes). The embedding, the LM head, the FFN and the mixers' projections and convolutions decay.
// TestConfig_NoDecay_KeepsTheDecayDecisions checks, for every variable of every mixer's decoder (tied or not, with
// or without the FFN and the PRISM head), that NoDecay exempts exactly what fit's former default list
// ("norm", "bias", "prototypes", "dt_proj", "a_log") did. These are the groups of docs/spec/protot.md §2.5.
//
// Probes (layers/hook; docs/spec/protot.md §6): every block emits ProbeResidPre, ProbeNorm1, ProbeResidMid,
// ProbeNorm2, ProbeFFNOut and ProbeResidPost, the model ProbeFinalNorm and ProbeLogits, in Logits and in Step alike;
// workbench/probe's doc lists them with their shapes.
//
// Decoding: StateShapes/NewState give each mixer's state (KV caches for attention); Step consumes one token at
// a time and returns the same logits as Logits at that position.
//
// Speed: train-step throughput on the pure-Go backend is measured by BenchmarkForwardBackward against
// BenchmarkMatMul (raw matmul FLOP/s); FLOPsPerToken gives the analytic count.
//
// PRISM head (prism.go; docs/spec/prism.md §2.1, §3): PrismHead feeds the backbone's final-normalised hidden states
// and its LM head to layers/prism, whose bank lives at /prism/prototypes [K, D]; PrismLogits and PrismLoss give the
// PRISM model's logits and training loss (L_CE equals NextTokenLoss under the default residual), PrismNumParams and
// PrismFLOPsPerToken its counts.
package decoder
