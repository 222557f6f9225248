// Package probe caches and patches a model's named intermediate activations, in the spirit of TransformerLens's
// HookedTransformer: every probe point a model emits (layers/hook) has a stable dotted name, a Filter keeps the
// memory bounded to the probes asked for, and a Patch replaces or adds to an activation in another run, at chosen
// positions. It works in the parallel forward pass (Run) and during generation (Generate), with early stop after a
// given probe (StopAfter).
//
// workbench cannot import layers, so a Model comes in as functions; for a layers/decoder model:
//
//	m := probe.Model{Backend: backend, Store: store, Attach: hook.Attach,
//		Forward:  func(scope *model.Scope, tok *Node) *Node { return decoder.Logits(scope, cfg, tok) },
//		Step:     func(scope *model.Scope, tok, pos *Node, s []*Node) (*Node, []*Node) { return decoder.Step(scope, cfg, tok, pos, s) },
//		NewState: func(b int) []*tensors.Tensor { return decoder.NewState(cfg, b, 0) }}
//	r, err := probe.NewRunner(m, probe.Match("block_*.protot.pi", "block_*.resid_post"))
//	c, err := r.Run(tokens)                                   // c.Acts["block_01.protot.pi"]: [B, T, R]
//	c, err = r.Run(tokens, probe.Patch{Name: "block_00.resid_post", Value: zeros, Positions: []int{3}})
//
// # Compilation
//
// A Runner builds one graph per input shape and patch layout (probe names, Add, value shapes, whether Positions is
// set), through gomlx's model.Exec, and reuses the compiled executable: patch values and position masks are graph
// parameters, not constants, so sweeping a patch over values or positions compiles once. Cached activations are
// extra outputs of the graph. On the pure-Go backend only nodes that feed an output are computed, so an unfiltered
// observe-only probe costs nothing at run time, and StopAfter does not even build the rest of the model.
//
// # Patching
//
// With v the Value (broadcast over the batch when its batch axis is 1) and m the position mask (all true without
// Positions), a patched activation is
//
//	x′ = where(m, v, x)        (replace)
//	x′ = where(m, x + v, x)    (Add)
//
// so unpatched positions keep their values bit for bit, and replacing a probe by its own cached value reproduces the
// run exactly. The model continues from x′, and the cache holds x′. Observe-only probes (the table below) refuse
// patches with an error: the replacement could not take effect.
//
// # Time axis
//
// Patch.Positions index, and Generate concatenates along, a probe's time axis: axis 1 ([B, T, …]) unless a TimeAxis
// option says otherwise; attention weights ("*.pattern", [B, H, T, S]) use axis 2 by default.
//
// # Generation
//
// Generate runs Model.Step position by position at batch 1, over the prompt and then the picked tokens, and caches
// the filtered probes at every step; Step emits the same names as the forward pass with T = 1, so the concatenated
// cache has the forward pass's layout (attention weights span the state's capacity S instead of T). A causal model's
// generation cache equals Run's on the generated tokens.
//
// # Probe names of layers/decoder
//
// Names are the scope path with dots plus a short name; LL is the zero-padded block index ("block_00", …). B batch,
// T positions (1 in Step), D width, V vocabulary, H heads, D_h head width, S keys (T in the forward pass, the cache
// capacity in Step), R ProtoT prototypes, D_v ProtoT value width. "patch" marks patchable probes; the others are
// observe only.
//
//	name                            shape            patch  what
//	block_LL.resid_pre              [B, T, D]        yes    block input (block_00: the token embedding)
//	block_LL.norm1                  [B, T, D]        yes    RMSNorm before the mixer: the mixer's input
//	block_LL.<mixer>.mix_out        [B, T, D]        yes    mixer output, before the residual addition
//	block_LL.resid_mid              [B, T, D]        yes    after the mixer's residual addition   (absent with drop_ffn)
//	block_LL.norm2                  [B, T, D]        yes    RMSNorm before the FFN                (absent with drop_ffn)
//	block_LL.ffn_out                [B, T, D]        yes    SwiGLU output, before its addition    (absent with drop_ffn)
//	block_LL.resid_post             [B, T, D]        yes    block output
//	final_norm                      [B, T, D]        yes    final RMSNorm: the LM head's input
//	logits                          [B, T, V]        yes    next-token logits
//
// <mixer> is the mixer's scope: "attention", "protot", "deltanet" or "mamba". Mixer-specific probes:
//
//	block_LL.attention.pattern      [B, H, T, S]     no     attention weights (rows sum to 1; 0 on future keys)
//	block_LL.attention.z            [B, T, H, D_h]   yes    each head's output before the output projection
//	block_LL.protot.write_logits    [B, T, R]        no     write-router logits, before masks
//	block_LL.protot.pi              [B, T, R]        no     write routing π (after masks and pads)
//	block_LL.protot.read_logits     [B, T, R]        no     read-router logits (the write logits with shared routing)
//	block_LL.protot.rho             [B, T, R]        no     read routing ρ
//	block_LL.protot.v               [B, T, D_v]      no     values W_V x_t
//	block_LL.protot.v_conv          [B, T, D_v]      no     value written (½v + ½conv(v) in convolution layers, else v)
//	block_LL.protot.num             [B, T, R, D_v]   no     channel memory numerator: discounted sum of the past
//	block_LL.protot.den             [B, T, R]        no     channel memory denominator: discounted mass of the past
//	block_LL.protot.M               [B, T, R, D_v]   no     channel memory num / max(den, 1e−6)
//	block_LL.protot.mix_pre_alpha   [B, T, D]        no     W_U Σ_k ρ_k M_k, before the gate α
//
// The gate α itself is a scalar variable, not an activation: mix_out = α·mix_pre_alpha, and its value is the
// context variable "/block_LL/protot/alpha".
//
// DeltaNet and Mamba emit only mix_out. The short names are constants of layers/decoder (ProbeResidPre, …,
// ProbeMixOut), layers/attention (ProbePattern, ProbeZ) and layers/protot (ProbePi, …); docs/spec/protot.md §6 lists the
// ProtoT probe points. A Runner's Names lists the names of any model.
package probe
