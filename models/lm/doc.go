// Package lm is the decoder language model every study trains: the LLaMA-style decoder of layers/decoder with any
// mixer (attention, ProtoT, DeltaNet, Mamba), under the dense LM head or the PRISM prototype head (layers/prism,
// docs/spec/prism.md), on a corpus prepared by workbench/lmdata and trained by workbench/fit. Studies describe a model
// by a Config and get it from LoadOrTrain, which trains it once and loads it afterwards.
//
// # Objectives
//
// The dense model minimises the mean next-token cross-entropy L_CE over the B·T positions of a batch
// (decoder.NextTokenLoss). The PRISM model minimises (docs/spec/prism.md §3, §2.3)
//
//	L = L_CE + on(s)·(λ_rec·L_REC + λ_1·L_R1 + λ_2·L_R2),   on(s) = [s ≥ ProtoWarmup],
//
// where s is the optimizer step read from fit's step counter inside the graph, so one compiled step serves the
// cross-entropy-only warm-up and the rest of training (prismLoss). Weight decay spares the variables the decoder
// names (decoder.Config.NoDecay: norms, prototypes, Mamba's dt_proj and a_log) and every rank ≤ 1 variable.
//
// # Bank seeding
//
// With ProtoWarmup > 0, right after update ProtoWarmup (before that step's checkpoint) the bank P [K, D] is
// overwritten by K distinct final-normalised hidden states z_t drawn uniformly (run.RNG(seed, "prism/seed-bank"))
// from the first SeedBatches training batches (spec §2.3). With RescaleSeed it is then multiplied by
//
//	s = Σ_t ⟨z_t, ẑ_t⟩ / Σ_t ‖ẑ_t‖²,   ẑ_t = Σ_{i ∈ K_t} a_{t,i} p_i,
//
// the least-squares scale of the seeded bank's reconstructions over those tokens (our choice): seeded prototypes
// have the norm of a hidden state while ẑ sums k of them with cosines near 1, so without it ‖ẑ‖ starts near k·‖z‖,
// L_REC near (k−1)², and its gradient pushes z away from every prototype. The cosines, and so the routing, do not
// depend on s.
//
// # PRISM read-outs and presets
//
// The PRISM studies share these (docs/spec/prism.md): HeadStats returns the head's per-token codes, Signatures the
// logit signatures W p_i (§2.1), Coverage the coverage and usage statistics of §4, and SuppressedStep decodes with a
// set of prototypes suppressed (§10). PrismTiny, PrismSmall and PrismPaper are the PRISM model presets (PrismPaper is
// §12's small-scale plan); TrainOn retrains a model's recipe on given batches, for the linear datamodeling score of
// §8.
//
// # Equal parameter count
//
// Comparisons of mixers at one width (the baselines of docs/spec/protot.md §9) keep D, the depth L, the vocabulary and
// the (tied) embedding, and re-solve only the SwiGLU FFN width F (MatchParams) so that the non-embedding parameter
// count P (everything but the V·D embedding and an untied head; NonEmbeddingParams) matches the reference model's:
//
//	F = round((P_ref − P_0) / (3·D·L)),   P_0 = P of the mixer's model with no FFN weights,
//
// since each unit of F adds 3·D weights per block. Then |P − P_ref| ≤ 3·D·L/2 (MatchTolerance), a relative error of
// at most about 1/(8D) against the ≈ 12·D²·L parameters of an attention reference (0.4% at D = 32).
//
// # Run folders
//
// LoadOrTrain keeps a model in <out>/models/<name>-<hash>/ (RunDir; out is the run.Out root shared by every study,
// so studies that ask for the same model share one run), the hash being store.KeyHash of the resolved Config:
//
//	config.json          the resolved Config, written first; a folder holding another config is refused
//	tokenizer.json       the BPE tokenizer, trained on the training split only
//	checkpoints/         fit checkpoints: an interrupted run resumes from the newest intact one
//	weights.safetensors  the trained weights (workbench/store names), metadata format WeightsFormat
//	result.json          Result (history, validation perplexity, provenance, the weights' SHA-256), written last:
//	                     a finished run
//	protolab.lock        present while a process trains in the folder (store.Lock), naming it
//
// Train checks a folder before writing anything (another config, a corrupt config.json, run files without one, or
// the user's files are refused, naming the keys or files and the fix), then locks it; RemoveRun clears a run folder
// for `protolab train --fresh`. Open checks that the files agree: weights.safetensors has the recorded digest, the
// tokenizer's vocabulary is the model's, and the stored weights are exactly the variables the config's model uses.
//
// # PyTorch export
//
// Model.Export (the CLI's `protolab export --out RUN_DIR --to FILE.safetensors`) writes one safetensors file
// (format ExportFormat, "protolab.export/v1"; written atomically) in a layout fixed by two rules:
//
//   - Names. Every tensor keeps its workbench variable's name: the scope path and variable name joined by dots
//     (workbench/store), e.g. "embed.embeddings", "block_00.attention.q", "block_01.ffn.down",
//     "block_00.protot.read_query", "final_norm.gain", "lm_head.weights" (absent when tied), "prism.prototypes".
//     There are no ".weight"/".weights" suffixes besides lm_head's own variable name. The names are the probe and
//     checkpoint names, so a PyTorch user addresses the same weight as a notebook.
//   - Orientation (the "orientation" of each tensor in the "tensors" metadata). "linear_out_in": a projection that
//     the workbench applies as x·W with W [in, out] is transposed to nn.Linear's [out, in] (attention q, k, v, o;
//     ffn gate, up, down; deltanet q_proj, k_proj, v_proj, beta_proj, out_proj; mamba in_proj, x_proj, dt_proj,
//     out_proj), so y = F.linear(x, W). "conv_c1k": a depthwise kernel held as [C, K] gets nn.Conv1d(groups=C)'s
//     singleton axis, [C, 1, K], the last tap multiplying the current token (deltanet q_conv, k_conv, v_conv;
//     mamba conv_kernel), as ProtoT's conv already is. "as_is": everything else is stored as the workbench holds
//     it: embeddings and lm_head [V, D], gains [D], ProtoT's value [D_v, D], output [D, D_v] and read_query [D, D]
//     (already [out, in]), ProtoT's prototypes [R, D] and PRISM's bank [K, D] (one prototype per row, compared by
//     dot products and cosines, not applied as a projection), mamba's a_log [d, N], biases and scalars.
//
// A workbench variable without a rule is an export error, so a new weight cannot leave with an undocumented layout.
// ProtoT's intervention masks write_mask and read_mask [R] (float32; entries ≤ 0 remove a prototype) are exported
// with the weights, all ones when never set. The tensors have the model's dtype (model.dtype).
//
// The metadata ("__metadata__", string values) holds: "format"; "architecture", the JSON of Architecture: mixer,
// head, V, D, L, the resolved FFN width, drop_ffn, tie_embeddings, the RMSNorm ε, the dtype, each layer's rules
// (ProtoT's shared routing and convolution), the mixer's resolved sizes and fixed constants (ProtoT's temperature
// ε, mass floor, masked logit and numerics; DeltaNet's q/k-norm ε; attention's RoPE base and convention) and
// PRISM's K, k and activation scale; "config", the run's resolved Config; "tensors", each tensor's workbench
// variable, workbench shape and orientation; "tokenizer", the run's tokenizer.json; "git".
//
// RoPE: attention rotates each head's channel i with channel i + D_h/2 ("rotate_half", as GPT-NeoX and Hugging
// Face's LLaMA). docs/spec/protot.md §9.1 writes interleaved pairs (2i, 2i+1); the two are the same model up to a
// permutation of q's and k's channels, which the export does not apply: architecture.attention.rope_convention
// says "rotate_half".
//
// models/lm/pytorch/protolab_lm.py (plain PyTorch) loads an export into a torch.nn.Module whose state_dict keys are
// these names (loaded strictly) and reproduces the workbench's logits for every mixer and both heads;
// TestExport_PyTorchReproducesLogits checks it to float32 precision where python3 has torch (Debian's
// python3-torch) and skips otherwise.
package lm
