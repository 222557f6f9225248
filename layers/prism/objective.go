package prism

import (
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/pkg/errors"
)

// BankObjective returns the PRISM loss as a function of the bank with the backbone frozen, the objective whose
// Hessian the curvature study takes (docs/spec/prism.md §5; doc.go, equation 17): z [B, T, D] (the hidden states,
// fixed), bank P [K, D], unembed W [V, D], targets [B, T] (integers in [0, V)) and r0 (nil or [B, T, D]) → the
// scalar
//
//	L(P) = N·(L_CE + λ_rec·L_REC + λ_2·L_R2) + K·λ_1·L_R1,   N = B·T,
//
// the terms of Losses (every token counts, no mask) as sums over the tokens and over the prototypes, with cfg's
// weights; a term whose weight is 0 is left out of the graph. It also returns the head evaluation d. The head runs
// with cfg.Residual = ResidualStopGrad and cfg.ClusterGrad = ClusterGradBoth whatever cfg says, so that L_CE reaches
// P through a and p and R1, R2 carry no stop-gradient: L depends on P alone. r0 sets the residual of the logits:
//
//   - r0 nil: the head's l_t = W(z_t − sg(ẑ_t) + ẑ_t), W z_t in value. Its first and second derivatives in P are
//     those of W(r_0 + ẑ_t(P)) with r_0 = z − ẑ(P_0) frozen at the current bank P_0 (the Hessian's form).
//   - r0 given: l_t = W(r0_t + ẑ_t(P)), whose value moves with P. With r0 = z − ẑ(P_0) it is the function that
//     finite differences of L and of its gradient must see at P_0.
//
// Panics if cfg is invalid, on bad shapes (as Decompose and Losses do), or if r0 is not nil and not shaped like z.
func BankObjective(z, bank, unembed, targets, r0 *Node, cfg Config) (*Node, Decomposition) {
	cfg.Residual = ResidualStopGrad
	cfg.ClusterGrad = ClusterGradBoth
	if z != nil && r0 != nil && !r0.Shape().Equal(z.Shape()) {
		panic(errors.Errorf("prism.BankObjective: r0=%s, want nil or z's shape %s", r0.Shape(), z.Shape()))
	}
	d := Decompose(z, bank, unembed, cfg)
	if r0 != nil {
		d.Logits = Einsum("btd,vd->btv", Add(r0, d.Reconstruction), unembed)
	}
	t := Losses(d, targets, nil)
	N, K := float64(z.Shape().Dim(0)*z.Shape().Dim(1)), float64(cfg.NumPrototypes)
	L := MulScalar(t.CE, N)
	if cfg.RecWeight != 0 {
		L = Add(L, MulScalar(t.Rec, N*cfg.RecWeight))
	}
	if cfg.R2Weight != 0 {
		L = Add(L, MulScalar(t.R2, N*cfg.R2Weight))
	}
	if cfg.R1Weight != 0 {
		L = Add(L, MulScalar(t.R1, K*cfg.R1Weight))
	}
	L.AssertDims()
	return L, d
}
