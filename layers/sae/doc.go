// Package sae implements a sparse autoencoder (SAE) on model activations, for dictionary-learning
// interpretability: each input (a residual-stream vector, typically the probe "block_LL.resid_post") is written as
// a sparse, non-negative combination of F learned unit directions, the features. It follows the SAEs of Bricken et
// al., "Towards Monosemanticity" (Anthropic, 2023) with a ReLU encoder and an L1 penalty, and Gao et al., "Scaling
// and evaluating sparse autoencoders" (OpenAI, arXiv:2406.04093) with a TopK encoder. docs/spec/protot.md §7.3 uses one
// ReLU SAE per layer on resid_post with F = 8·D and the L1 weight tuned so that the mean L0 is about 32: the
// defaults here.
//
// Shapes: N inputs (any leading axes of x are flattened into N), D input width, F features.
//
// Equations (b_dec is the tied pre-encoder and decoder bias; ε = Eps):
//
//	(1) d_j = w_j / sqrt(‖w_j‖² + ε)                         dictionary: the rows w_j of W_dec [F, D], unit length
//	(2) a = (x − b_dec)·W_enc + b_enc                         pre-activations [N, F]; W_enc [D, F], b_enc [F]
//	(3) f = ReLU(a)                                           "relu_l1"
//	    f = ReLU(a) on the K largest a of each row, else 0    "topk" (ties to the lower index)
//	(4) x̂ = f·D + b_dec                                       reconstruction [N, D], D the matrix of rows d_j
//	(5) MSE = (1/(N·D)) Σ_n ‖x_n − x̂_n‖²
//	    L1  = (1/N) Σ_n Σ_j f_nj
//	    L0  = (1/N) Σ_n #{j : f_nj > 0}
//	    FVU = Σ_n ‖x_n − x̂_n‖² / Σ_n ‖x_n − x̄‖²               fraction of variance unexplained (x̄ the batch mean)
//	(6) L = MSE + λ·L1   ("relu_l1"),   L = MSE   ("topk")
//
// Decoder norm. The decoder is parametrised by (1), so its directions have unit norm at every step and the L1
// penalty cannot be dodged by shrinking f while growing the decoder; this equals Anthropic's λ Σ_j f_j ‖d_j‖ with
// the norms held at 1, and needs no projection after each optimizer step, so any optimizer (workbench/fit) trains
// it. Train with weight decay 0: decay of W_dec only rescales a direction, and decay of W_enc biases the codes.
//
// Top-k. gomlx has no TopK op: (3) takes K rounds of ArgMax, each masking its pick to −∞, under stop-gradient, so
// exactly K entries are selected per row even with ties; gradients reach a only through selected entries with a > 0.
//
// Tuning λ (spec §7.3). With TargetL0 > 0 ("relu_l1"), every training graph (ctx.IsTraining) also updates λ, a
// non-trainable variable starting at Config.L1, from the batch's L0:
//
//	(7) λ ← λ · exp(η · clamp((L0 − L0*)/L0*, −1, 1)),   η = L1Rate, L0* = TargetL0
//
// so λ grows while the codes are denser than the target and shrinks while they are sparser; the loss of a step
// uses λ before its update. TargetL0 = 0 keeps λ = Config.L1.
//
// Initialisation. The rows of W_dec are independent Gaussian directions normalised to unit length, drawn from
// Config.InitSeed, and W_enc starts as the transpose of that dictionary (tied initialisation, Gao et al. §A.1); b_enc
// and b_dec start at 0 (set b_dec to the data mean or geometric median for faster training).
//
// Scope and variables (checkpoint paths), under scope.At(Scope) = "sae": VarWEnc "w_enc" [D, F], VarBEnc "b_enc" [F],
// VarWDec "w_dec" [F, D] (the raw rows; Dictionary normalises them), VarBDec "b_dec" [D], and with "relu_l1"
// VarL1 "l1" [] (λ, not trainable).
//
// Training with workbench/fit (from an experiment; layers cannot import workbench):
//
//	cfg := sae.DefaultConfig()
//	cfg.Width = 256
//	fitCfg := fit.DefaultConfig()
//	fitCfg.WeightDecay = 0
//	hist, err := fit.Train(backend, ctx, sae.LossFn(cfg), batches, nil, fitCfg) // batches yield x [N, D]
package sae
