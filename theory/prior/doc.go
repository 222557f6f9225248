// Package prior holds the exact samplers and moments of the two latent-variable priors, and the regression-token
// generator, of
//
//	R. Raj, G. Reddy, "Adaptive inference and function vectors in deep transformers", arXiv:2606.16694 (2026),
//
// as reconstructed in docs/spec/function_vectors.md §2. Everything is float64 and depends only on the standard library:
// this package is part of the independent theory oracle and must not import gomlx or any other ProtoLab package.
//
// # Notation (package-local, as in the spec)
//
// D is the dimension of x and θ, N the number of context tokens, K the tree depth, α the tree scale ratio and s the
// label-noise standard deviation. Nodes of the tree are numbered n = 1 … 2^K − 1 in heap order.
//
// # Equations
//
// Data generator (spec §2), for a context with latent θ:
//
//	(2.1)  x_i ~ N(0, I_D),   y_i = θᵀx_i + s·ξ_i,   ξ_i ~ N(0, 1),   i = 1 … N
//
// Gaussian prior (spec §2.1):
//
//	(2.2)  θ ~ N(0, I_D),   E‖θ‖² = D
//
// Tree prior (spec §2.2): a balanced binary tree of depth K and scale ratio α ∈ (0, 1), with one orthonormal
// direction e_n ∈ R^D per internal node, D = 2^K − 1. Node n sits at level k(n) = ⌊log₂ n⌋ + 1 and has children
// 2n and 2n+1. With i.i.d. bits b_k ~ Bernoulli(½) and signs g_k = 2b_k − 1,
//
//	(2.3)  n_1 = 1,   n_{k+1} = 2n_k + b_k
//	(2.4)  θ_σ = c · Σ_{k=1..K} α^{k−1} g_k e_{n_k}
//	(2.5)  E θ = 0,   Cov θ = c² diag(λ_n),   λ_n = (α²/2)^{k(n)−1}
//	(2.6)  Σ_{n at level k} λ_n = α^{2(k−1)}                       (variance per level)
//	(2.7)  E‖θ‖² = c² (1 − α^{2K}) / (1 − α²)
//
// where c = 1 by default and c = √((1 − α²)/(1 − α^{2K})) with the optional normalisation (E‖θ‖² = 1).
//
// # Leaf encoding
//
// A leaf σ = (b_1 … b_K) is stored as the integer Σ_k b_k 2^{K−k} ∈ [0, 2^K), so b_1 is the most significant bit.
// Then the node reached at level k is n_k = (2^K + σ) >> (K − k + 1), and the leaves below node n at level k form
// the contiguous range [(n − 2^{k−1})·2^{K−k+1}, (n − 2^{k−1} + 1)·2^{K−k+1}).
//
// # Scope
//
// Only the standard-basis directions e_n are implemented; the spec's variant with random unit directions in a smaller
// D is not. DefaultTree is the tree the spec decides on in §9 (K = 8, α = 0.6); the tests check the samplers' moments
// as §8 item 1 asks. The measurement models and the MSE curves built on these priors are in package theory/meanfield.
package prior
