// Package linattn implements the constrained linear-attention models A, B and C of
//
//	R. Raj, G. Reddy, "Adaptive inference and function vectors in deep transformers", arXiv:2606.16694 (2026),
//
// as reconstructed in docs/spec/function_vectors.md §5 (every architectural detail there is "our choice": the paper's
// body is not public). Each model reads a regression context of N tokens z_i = (x_i, y_i) through M scalar
// linear-attention statistics (channels) and predicts the latent θ ∈ R^D from them.
//
// # Shape letters (package-local, as in the spec)
//
// B batch (contexts), N tokens per context, D dimension of x and θ, M measurements (layers of A, channels of B and
// C), H hidden width of an MLP, L layers.
//
// # Equations
//
// Common to all models: non-causal attention whose keys and values come from the N context tokens only, a constant
// query, no softmax and no normalisation other than 1/N. Channel m reads the mean-field statistic of spec §3
//
//	(1)  φ_m = (1/N) Σ_i k_i^m y_i                                         (value = y_i, key k_i^m ∈ R)
//
// and the workspace p = (φ_1 … φ_M) ∈ R^M is the same for every token (mean field). An MLP is
//
//	(2)  MLP(u) = W_2ᵀ act(W_1ᵀ u + b_1) + b_2,    act = GELU (exact, with erf) or ReLU
//
// Model A (deep, adaptive; L = M layers, one channel each). With p_0 = ∅ and p_ℓ = (φ_1 … φ_ℓ),
//
//	(3)  k_i^ℓ = MLP_ℓ([x_i; p_{ℓ−1}]) ∈ R,   input size D + ℓ − 1
//	(4)  φ_ℓ = (1/N) Σ_i k_i^ℓ y_i,   p_ℓ = [p_{ℓ−1}; φ_ℓ],   θ̂ = MLP_out(p_L) ∈ R^D
//
// The first linear map of MLP_ℓ acts on the concatenation [x_i; p_{ℓ−1}]; it is stored as two blocks, W_x [D, H] and
// W_p [ℓ−1, H], and computed as x_i·W_x + p_{ℓ−1}·W_p (the same function, without broadcasting p to every token
// first). The workspace p_ℓ is the function vector: it selects which function of each token the next layer computes.
//
// Model B (one layer, M heads with MLP keys, non-adaptive):
//
//	(5)  k_i^h = MLP_h(x_i) ∈ R,   φ_h = (1/N) Σ_i k_i^h y_i,   θ̂ = MLP_out(φ) ∈ R^D
//
// Model C (one layer, M linear channels, linear readout):
//
//	(6)  k_i = W_K x_i ∈ R^M,   φ = W_K (1/N) Σ_i x_i y_i,   θ̂ = W_O φ,   W_K [M, D], W_O [D, M]
//
// Model A′ (spec §5, "easier to train"; deep, adaptive, linear keys). The workspace chooses a query instead of
// shaping the keys:
//
//	(9)  q_1 learned,   q_ℓ = MLP_ℓ(p_{ℓ−1}) ∈ R^D,   k_i^ℓ = q_ℓᵀ x_i,   φ_ℓ = (1/N) Σ_i k_i^ℓ y_i = q_ℓᵀ (1/N) Σ_i x_i y_i
//
// The reported (and patchable) keys are the scalar channel keys k_i^ℓ, so key patching of A′ is query patching.
//
// Shared tokens (an optimisation device for training, not part of the spec): every Forward function also accepts x
// of batch 1 with y of batch B, i.e. B contexts that share x_{1:N} but have their own y (their own θ and label
// noise). Each context's outputs are exactly those of the same model run on x repeated B times, but the products
// x_i·W that do not depend on the workspace (all of B's and C's keys, A's first layer and the x-block of every
// layer of A) are computed once instead of B times, and the statistics of shared keys are one [B, N]·[N, M]
// product. Independently of sharing, A′ without a patch computes φ_ℓ = q_ℓᵀv with v = (1/N) Σ_i x_i y_i formed
// once (eq. 9), so its keys are computed only when they are asked for.
//
// Key patching (spec §7): a Patch replaces the keys of the layers (channels) it selects by donor keys before (1)
// is evaluated, so in Model A every later layer runs on the corrupted workspace:
//
//	(7)  k^ℓ ← k^ℓ + mask_ℓ·(k_donor^ℓ − k^ℓ)
//
// Workspace gains (an optimisation device, not part of the spec): wherever the workspace enters an MLP it is
// multiplied by a constant, g_k in A's key MLPs (Config.KeyGain; 0 means g) and g elsewhere (A′'s queries and the
// readouts of A, A′ and B; Config.WorkspaceGain, default 1),
//
//	(8)  MLP_ℓ([x_i; g_k·p_{ℓ−1}]),   θ̂ = MLP_out(g·p)
//
// which is the same function class (W_p and the readout's W_1 absorb the constants) but lets Adam, whose steps have
// size ≈ lr whatever the gradient's scale, reach the large workspace weights that gating a key on small statistics
// needs. The two are separate so that a study can scale the keys alone; experiments/fvec measures the key gain as an
// ablation row beside the common recipe (its stored results, not this comment, say what it does).
//
// # Scopes and variables
//
// Everything lives under scope.At(Scope) = "linattn". Matrices are applied on the right (u·W):
//
//	A: "layer_01" … "layer_LL" / "key": "w_x" [D, H], "w_p" [ℓ−1, H] (layer ℓ ≥ 2 only), "b_1" [H], "w_2" [H], "b_2" []
//	B: "heads": "w_1" [M, D, H], "b_1" [M, H], "w_2" [M, H], "b_2" [M]
//	C: "key": "w" [M, D]
//	A′: "layer_01" / "query": "q" [D];   "layer_ℓ" / "query" (ℓ ≥ 2): "w_1" [ℓ−1, H], "b_1" [H], "w_2" [H, D], "b_2" [D]
//	A, A′, B: "readout": "w_1" [M, H_out], "b_1" [H_out], "w_2" [H_out, D], "b_2" [D];   C: "readout": "w" [D, M]
//
// Weights are drawn from N(0, InitScale/fan_in) (variance scaling; von Oswald et al. use scale 0.002/L), biases
// start at 0. The fan-in of MLP_ℓ's first layer is D + ℓ − 1.
//
// The stateless computations ForwardA, ForwardAPrime, ForwardB and ForwardC take every weight as an argument; Model creates the
// variables and calls the one its Config selects. All graph functions panic on bad shapes; Config.Validate returns
// errors.
package linattn
