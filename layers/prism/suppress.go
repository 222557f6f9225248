package prism

import (
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/pkg/errors"
)

// Suppression modes of SuppressedLogits (docs/spec/prism.md §10; doc.go, equations 14–15). Both keep r_t at its
// unsuppressed value: otherwise r = z − ẑ silently restores the logits (l = W(r + ẑ) = W z).
const (
	// SuppressZero zeroes the suppressed activations: l′_t = l_t − Σ_{i∈Ω∩K_t} a_{t,i}·(W p_i).
	SuppressZero = "zero"
	// SuppressMask removes Ω before the top-k, so the next-best prototypes fill the slots:
	// l′_t = l_t + W(ẑ′_t − ẑ_t), ẑ′ the reconstruction of the masked selection (DecomposeMasked).
	SuppressMask = "mask"
)

// checkOmega panics unless omega is [K] of d's dtype.
func checkOmega(caller string, d Decomposition, omega *Node) {
	K := d.Config.NumPrototypes
	if omega == nil {
		panic(errors.Errorf("prism.%s: omega is nil", caller))
	}
	if omega.Rank() != 1 || omega.Shape().Dim(0) != K || omega.DType() != d.Hidden.DType() {
		panic(errors.Errorf("prism.%s: omega=%s, want [K=%d] %s", caller, omega.Shape(), K, d.Hidden.DType()))
	}
}

// selectedInOmega returns omega at the selected prototypes: [B, T, k], 1 where Indices[b, t, j] ∈ Ω.
func selectedInOmega(d Decomposition, omega *Node) *Node {
	B, T, k := d.Hidden.Shape().Dim(0), d.Hidden.Shape().Dim(1), d.Config.TopK
	return Reshape(Gather(omega, Reshape(d.Indices, B*T*k, 1)), B, T, k)
}

// SuppressedLogits returns the logits of the head evaluation d with the prototypes marked in omega suppressed
// (docs/spec/prism.md §10; doc.go, equations 14–15): omega [K] of d's dtype, 1 for i ∈ Ω and 0 otherwise;
// → [B, T, V]. Mode SuppressZero subtracts the suppressed slices a_{t,i}·W p_i (i ∈ Ω ∩ K_t); SuppressMask
// re-selects the top-k without Ω (DecomposeMasked) and adds W(ẑ′ − ẑ). Both keep the residual r_t = z_t − ẑ_t of
// the unsuppressed head, and with omega = 0 both return d.Logits exactly (the added term is W·0). Panics on another
// mode, or if omega is nil or not [K] of d's dtype.
func SuppressedLogits(d Decomposition, omega *Node, mode string) *Node {
	checkOmega("SuppressedLogits", d, omega)
	B, T, D := d.Hidden.Shape().Dim(0), d.Hidden.Shape().Dim(1), d.Hidden.Shape().Dim(2)
	var delta *Node // [B, T, D]: the change of the reconstruction the logits see
	switch mode {
	case SuppressZero:
		at := selectedInOmega(d, omega) // [B, T, k]: 1 where i ∈ Ω
		delta = Neg(Einsum("btj,btjd->btd", Mul(d.Activations, at), d.Prototypes))
	case SuppressMask:
		allowed := Equal(omega, ZerosLike(omega))
		dm := DecomposeMasked(d.Hidden, d.Bank, d.Unembed, allowed, d.Config)
		delta = Sub(dm.Reconstruction, d.Reconstruction)
	default:
		panic(errors.Errorf("prism.SuppressedLogits: mode=%q, want %q or %q", mode, SuppressZero, SuppressMask))
	}
	delta.AssertDims(B, T, D)
	return Add(d.Logits, Einsum("btd,vd->btv", delta, d.Unembed))
}

// SuppressedActive returns, per token, 1 where some prototype of Ω is active in d (selected with a > 0) and 0
// elsewhere (doc.go, equation 16): omega [K] of d's dtype as for SuppressedLogits → [B, T] of d's dtype. Its mean is
// spec §10's "fraction of tokens where any i ∈ Ω was active". Panics if omega is nil or not [K] of d's dtype.
func SuppressedActive(d Decomposition, omega *Node) *Node {
	checkOmega("SuppressedActive", d, omega)
	at := selectedInOmega(d, omega)
	hit := ConvertDType(GreaterThan(Mul(d.Activations, at), ZerosLike(at)), d.Hidden.DType()) // [B, T, k]
	return ReduceMax(hit, -1)
}
