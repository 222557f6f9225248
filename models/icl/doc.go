// Package icl is the in-context regression model of the function-vector study (experiments/fvec): the constrained
// linear-attention models A, A′, B and C of layers/linattn, trained to read the latent θ of a regression context, as
// reconstructed in docs/spec/function_vectors.md §2 and §5–§7. It samples its contexts from the priors of theory/prior
// and trains with workbench/fit.
//
// # Data (data.go, spec §2 and §7)
//
// A context is N tokens z_i = (x_i, y_i) with x_i ~ N(0, I_D) and y_i = θᵀx_i + s·ξ_i (prior doc.go eq. 2.1), θ
// drawn from a prior (Gaussian or tree). Generate draws a Batch of independent contexts, GenerateShared one whose
// contexts share x_{1:N} (our training optimisation, Data.SharedTokens), Stream an endless fit.Batches of fresh
// ones, PatchPairs the target–donor pairs of spec §7 (same x and ξ, paths first differing at level j). Every draw is
// fixed by a seed and a stream name (run.RNG).
//
// # Training and evaluation (model.go, chain.go, store.go, curve.go; spec §5, §6)
//
// Train fits one model (Config: the linattn model, the fit schedule, Data, the prior and a seed) with the loss
//
//	L = (1/B) Σ_b ‖θ̂_b − θ_b‖²
//
// on fresh contexts every step, validating on a fixed set in chunks of at most ValidationChunk contexts; Record
// turns its validation curve into the plateau statistic (Training). With a smaller model of the same kind as from,
// Train first copies the variables that model has (a grown layer's leading rows keep their trained values).
// Model.Evaluate returns per-context squared errors, workspaces p_M and channel keys, with a key patch (linattn eq. 7)
// when donor keys and a mask are given.
//
// A Chain is one seed of one row of a sweep over M: one model per Segment, each optionally grown from the one before
// (Grow), scored on fixed test and held-out sets (EvalSets). With Chain.Dir set, a finished chain is stored there
// (ModelFile, the last model's trainable variables; ChainFile, its scores and records, written last) and a later Run
// of the same chain loads it instead of training; a folder without ChainFile is retrained, a ChainFile or model that
// cannot be read is an error naming the folder to delete.
//
// NewCurve turns the chains of one row, one per seed, into its Curve: at each M the mean over seeds of the test MSE
// with a standard error that combines the seeds' spread with the finite test set,
//
//	se = √(Var_s/S + se_eval²),   se_eval = the standard error over contexts of the seed-averaged squared error,
//
// the median and best over seeds, and the same on the held-out set (curve.go).
//
// # Patching and function vectors (patch.go, probe.go; spec §6 item 4, §7)
//
// Model.PatchKeys replaces the target's layer-ℓ keys by the donor's for every divergence level j and layer ℓ:
// ΔMSE(j, ℓ) = MSE_patched − MSE_clean, averaged over pairs with a paired standard error. Model.FunctionVectors
// probes the workspaces: a logistic-regression probe (Newton's method, small ridge, standardised features) of each
// path bit b_k from p_ℓ, trained on the first half of a batch and scored on the second, and the mean of φ_ℓ per path
// prefix.
//
// # Cost (cost.go)
//
// StepFLOPs counts the forward matrix-product FLOPs of a model from linattn's equations; Segment.Cost turns one
// model's training and evaluation into a run.Cost.
package icl
