// Package eval measures trained language models: perplexity on a split, and sampling (temperature, top-k) through a
// model's incremental-decoding step with its cache or recurrent state, reporting tokens/s: the perplexity of
// docs/spec/protot.md §7.1 and the sampling settings of §7.6 (without beams, top-p or repetition penalties).
//
// The package is model-agnostic (workbench must not import layers): a model is given as graph functions.
//
//   - TokenLossFn: batch [B,T+1] int32 → per-token negative log-likelihood [B,T] of batch[:,1:] given the prefix.
//   - StepFn: token [B,1] int32, position (int32 scalar), state → logits [B,V] and the new state. The state's shapes
//     are given once (e.g. a KV cache [B,H,S,Dh] per layer, or an O(1) recurrent state); Generate starts it at zero.
//
// Perplexity = exp(Σ nll / Σ tokens) over all tokens of all batches (a token-weighted mean, not a mean of batch
// perplexities).
package eval
