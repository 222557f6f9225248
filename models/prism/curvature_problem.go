package prism

import (
	"cmp"
	"math"
	"slices"

	"github.com/gomlx/compute"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/pkg/errors"
	"gonum.org/v1/gonum/mat"

	prismlayer "github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/theory/curvature"
)

// This file holds the float64 head problem of the curvature study: the objective (3) of curvature.go
// (prismlayer.BankObjective) on a fixed token set, its forward pass, gradient and exact Hessian (gomlx, double
// backpropagation), and the clustering choices and routed Gauss–Newton matrix that the approximations need.

// curvatureProblem is the prototype-space objective (3) on a fixed token set (backbone frozen): hidden states Z [N, D],
// gold tokens Targets [N], bank [K, D] and LM head W [V, D], float64, head configuration Cfg.
type curvatureProblem struct {
	N, D, K, V int
	Z, Bank, W []float64
	Targets    []int32
	Cfg        prismlayer.Config
}

func (hp *curvatureProblem) tensors() []any {
	return []any{tensors.FromFlatDataAndDimensions(hp.Z, 1, hp.N, hp.D),
		tensors.FromFlatDataAndDimensions(hp.Bank, hp.K, hp.D), tensors.FromFlatDataAndDimensions(hp.W, hp.V, hp.D),
		tensors.FromFlatDataAndDimensions(hp.Targets, 1, hp.N)}
}

// curvatureForward holds the head's selections on the problem's tokens, in float64.
type curvatureForward struct {
	Codes    []curvature.Code // a_t
	Logits   [][]float64      // l_t [N][V]
	Residual []float64        // r_t = z_t − ẑ_t [N, D]
	Loss     float64          // L(P)
}

func (hp *curvatureProblem) forward(backend compute.Backend) (*curvatureForward, error) {
	exec, err := NewExec(backend, func(z, bank, W, targets *Node) []*Node {
		L, d := prismlayer.BankObjective(z, bank, W, targets, nil, hp.Cfg)
		return []*Node{L, d.Indices, d.Activations, d.Logits, d.Residual}
	})
	if err != nil {
		return nil, errors.Wrap(err, "prism: curvature forward graph")
	}
	outs, err := exec.Exec(hp.tensors()...)
	if err != nil {
		return nil, errors.Wrap(err, "prism: curvature forward")
	}
	k := hp.Cfg.TopK
	idx := tensors.MustCopyFlatData[int32](outs[1])
	act := tensors.MustCopyFlatData[float64](outs[2])
	logits := tensors.MustCopyFlatData[float64](outs[3])
	f := &curvatureForward{Loss: tensors.ToScalar[float64](outs[0]), Codes: make([]curvature.Code, hp.N),
		Logits: make([][]float64, hp.N), Residual: tensors.MustCopyFlatData[float64](outs[4])}
	for t := 0; t < hp.N; t++ {
		for j := 0; j < k; j++ {
			if a := act[t*k+j]; a > 0 {
				f.Codes[t].Idx = append(f.Codes[t].Idx, int(idx[t*k+j]))
				f.Codes[t].Val = append(f.Codes[t].Val, a)
			}
		}
		f.Logits[t] = logits[t*hp.V : (t+1)*hp.V]
	}
	return f, nil
}

// gradient returns ∂L/∂P [K, D] at bank, with the residual of the logits fixed at r0 [N, D] (prismlayer.BankObjective's
// r0).
func (hp *curvatureProblem) gradient(backend compute.Backend, bank, r0 []float64) ([]float64, error) {
	exec, err := NewExec(backend, func(z, bank, W, targets, r0 *Node) *Node {
		L, _ := prismlayer.BankObjective(z, bank, W, targets, r0, hp.Cfg)
		return Gradient(L, bank)[0]
	})
	if err != nil {
		return nil, errors.Wrap(err, "prism: curvature gradient graph")
	}
	args := hp.tensors()
	args[1] = tensors.FromFlatDataAndDimensions(bank, hp.K, hp.D)
	outs, err := exec.Exec(append(args, tensors.FromFlatDataAndDimensions(r0, 1, hp.N, hp.D))...)
	if err != nil {
		return nil, errors.Wrap(err, "prism: curvature gradient")
	}
	return tensors.MustCopyFlatData[float64](outs[0]), nil
}

// hessian returns the exact Hessian of L with respect to the bank rows protos, as the principal submatrix
// [M·D, M·D] (row (r, m) ↔ entry m of prototype protos[r]), by one double-backpropagation pass per prototype: the D
// columns of prototype j are ∇_P (∂L/∂p_j)_m. Also returns ‖H − Hᵀ‖_F/‖H‖_F before symmetrisation.
func (hp *curvatureProblem) hessian(backend compute.Backend, protos []int) (*mat.SymDense, float64, error) {
	return hp.hessianOf(backend, protos, func(z, bank, W, targets *Node) *Node {
		L, _ := prismlayer.BankObjective(z, bank, W, targets, nil, hp.Cfg)
		return L
	})
}

// clusterHessian returns the exact Hessian on protos of the clustering terms of L alone, H_clust (equation 8):
// N·λ_2·L_R2 + K·λ_1·L_R1 as prismlayer.BankObjective weighs them, with its routing (both terms move P, nearest
// choices held). It is zero when λ_1 = λ_2 = 0.
func (hp *curvatureProblem) clusterHessian(backend compute.Backend, protos []int) (*mat.SymDense, error) {
	pc := hp.Cfg
	if pc.R1Weight == 0 && pc.R2Weight == 0 {
		return mat.NewSymDense(len(protos)*hp.D, nil), nil
	}
	pc.Residual, pc.ClusterGrad = prismlayer.ResidualStopGrad, prismlayer.ClusterGradBoth
	h, _, err := hp.hessianOf(backend, protos, func(z, bank, W, targets *Node) *Node {
		t := prismlayer.Losses(prismlayer.Decompose(z, bank, W, pc), targets, nil)
		N, K := float64(z.Shape().Dim(0)*z.Shape().Dim(1)), float64(pc.NumPrototypes)
		var L *Node
		add := func(x *Node) {
			if L == nil {
				L = x
			} else {
				L = Add(L, x)
			}
		}
		if pc.R2Weight != 0 {
			add(MulScalar(t.R2, N*pc.R2Weight))
		}
		if pc.R1Weight != 0 {
			add(MulScalar(t.R1, K*pc.R1Weight))
		}
		return L
	})
	return h, err
}

// hessianOf returns the exact Hessian of objective (z [1, N, D], bank [K, D], W [V, D], targets [1, N] → scalar) on
// protos, as hessian describes.
func (hp *curvatureProblem) hessianOf(backend compute.Backend, protos []int,
	objective func(z, bank, W, targets *Node) *Node) (*mat.SymDense, float64, error) {
	D, K := hp.D, hp.K
	exec, err := NewExec(backend, func(z, bank, W, targets, onehot *Node) []*Node {
		L := objective(z, bank, W, targets)
		g := Gradient(L, bank)[0]          // [K, D]
		gj := Einsum("k,kd->d", onehot, g) // ∂L/∂p_j [D]
		cols := make([]*Node, D)
		for m := range cols {
			em := make([]float64, D)
			em[m] = 1
			cols[m] = Gradient(ReduceAllSum(Mul(Const(z.Graph(), em), gj)), bank)[0] // column (j, m): [K, D]
		}
		return []*Node{Stack(cols, 0)} // [D, K, D]
	})
	if err != nil {
		return nil, 0, errors.Wrap(err, "prism: Hessian graph")
	}
	M := len(protos)
	full := mat.NewDense(M*D, M*D, nil)
	args := hp.tensors()
	for c, j := range protos {
		onehot := make([]float64, K)
		onehot[j] = 1
		outs, err := exec.Exec(append(args, tensors.FromFlatDataAndDimensions(onehot, K))...)
		if err != nil {
			return nil, 0, errors.Wrapf(err, "prism: Hessian columns of prototype %d", j)
		}
		h := tensors.MustCopyFlatData[float64](outs[0]) // [m, i, m′]: ∂²L/∂p_j,m ∂p_i,m′
		for m := 0; m < D; m++ {
			for r, i := range protos {
				for mp := 0; mp < D; mp++ {
					full.Set(r*D+mp, c*D+m, h[(m*K+i)*D+mp])
				}
			}
		}
	}
	sym := mat.NewSymDense(M*D, nil)
	asym, ref := 0.0, 0.0
	for r := 0; r < M*D; r++ {
		for c := 0; c < M*D; c++ {
			d := full.At(r, c) - full.At(c, r)
			asym += d * d
			ref += full.At(r, c) * full.At(r, c)
			if r <= c {
				sym.SetSym(r, c, (full.At(r, c)+full.At(c, r))/2)
			}
		}
	}
	if ref == 0 {
		return sym, 0, nil
	}
	return sym, math.Sqrt(asym / ref), nil
}

// nearest returns the clustering choices of prismlayer.Losses on the problem's tokens: tokProto[t], the nearest
// prototype of token t (R2), and protoToks[j], the R1Nearest nearest tokens of prototype j (R1), both by cosine
// ("cos") or by −‖z − p‖² ("sqL2"), ties to the lower index.
func (hp *curvatureProblem) nearest() (tokProto []int, protoToks [][]int) {
	N, K, D := hp.N, hp.K, hp.D
	close := make([]float64, N*K)
	zn, pn := curvatureRowNorms(hp.Z, D), curvatureRowNorms(hp.Bank, D)
	for t := 0; t < N; t++ {
		for j := 0; j < K; j++ {
			dot := 0.0
			for m := 0; m < D; m++ {
				dot += hp.Z[t*D+m] * hp.Bank[j*D+m]
			}
			if hp.Cfg.Dist == prismlayer.DistSqL2 {
				close[t*K+j] = 2*dot - zn[t]*zn[t] - pn[j]*pn[j]
			} else {
				close[t*K+j] = dot / (zn[t]*pn[j] + prismlayer.Eps)
			}
		}
	}
	tokProto = make([]int, N)
	for t := range tokProto {
		best := 0
		for j := 1; j < K; j++ {
			if close[t*K+j] > close[t*K+best] {
				best = j
			}
		}
		tokProto[t] = best
	}
	protoToks = make([][]int, K)
	for j := range protoToks {
		order := make([]int, N)
		for t := range order {
			order[t] = t
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(close[b*K+j], close[a*K+j]) })
		protoToks[j] = order[:hp.Cfg.R1Nearest]
	}
	return tokProto, protoToks
}

func curvatureRowNorms(x []float64, D int) []float64 {
	out := make([]float64, len(x)/D)
	for i := range out {
		s := 0.0
		for _, v := range x[i*D : (i+1)*D] {
			s += v * v
		}
		out[i] = math.Sqrt(s)
	}
	return out
}

// clusterBlocks returns the exact Hessian of the clustering terms λ_1 Σ_j R1_j + λ_2 Σ_t R2_t restricted to protos
// (block-diagonal: each term involves one prototype), with the nearest choices frozen: per pair, ∇²_p dist(p, z) =
// curvature.CosineDistHessian for "cos", 2I for "sqL2".
func (hp *curvatureProblem) clusterBlocks(protos []int, tokProto []int, protoToks [][]int) *mat.SymDense {
	D := hp.D
	h := mat.NewSymDense(len(protos)*D, nil)
	pc := hp.Cfg
	pair := func(r, j, t int, w float64) {
		if w == 0 {
			return
		}
		if pc.Dist == prismlayer.DistSqL2 {
			for m := 0; m < D; m++ {
				h.SetSym(r*D+m, r*D+m, h.At(r*D+m, r*D+m)+2*w)
			}
			return
		}
		curvature.AddBlock(h, r, curvature.CosineDistHessian(hp.Bank[j*D:(j+1)*D], hp.Z[t*D:(t+1)*D]), w)
	}
	for r, j := range protos {
		for _, t := range protoToks[j] {
			pair(r, j, t, pc.R1Weight/float64(pc.R1Nearest))
		}
		for t, jt := range tokProto {
			if jt == j {
				pair(r, j, t, pc.R2Weight)
			}
		}
	}
	return h
}

// routedGN returns Σ_t J_tᵀ M_t J_t on J (theory/curvature equation 17) with M_t = G_t + 2λ_rec w_t I (w_t = 1
// without RecNorm): the Gauss–Newton matrix of the CE and REC terms with the routing's Jacobian. rc are the codes
// restricted to J.
func (hp *curvatureProblem) routedGN(J []int, rc []curvature.Code, gs []*mat.SymDense, recW []float64) *mat.SymDense {
	D := hp.D
	jac := make([][]*mat.Dense, hp.N)
	ms := make([]*mat.SymDense, hp.N)
	for t := range rc {
		z := hp.Z[t*D : (t+1)*D]
		for _, r := range rc[t].Idx {
			j := J[r]
			jac[t] = append(jac[t], curvature.RoutedJacobian(hp.Bank[j*D:(j+1)*D], z))
		}
		w := 1.0
		if recW != nil {
			w = recW[t]
		}
		ms[t] = mat.NewSymDense(D, nil)
		ms[t].CopySym(gs[t])
		for m := 0; m < D; m++ {
			ms[t].SetSym(m, m, ms[t].At(m, m)+2*hp.Cfg.RecWeight*w)
		}
	}
	return curvature.GaussNewtonRouted(len(J), rc, jac, ms)
}
