package sae

import (
	"math"
	"sort"
)

// refOut is the float64 reference of equations (1)–(6).
type refOut struct {
	f, xHat                []float64 // [N, F], [N, D]
	loss, mse, l1, l0, fvu float64
	selected               [][]int // per row, the features kept by "topk" (all F for "relu_l1")
}

// referenceSAE computes the SAE with plain loops from doc.go's equations: x [N, D], wEnc [D, F], bEnc [F],
// wDec [F, D], bDec [D].
func referenceSAE(x, wEnc, bEnc, wDec, bDec []float64, N, D, F int, kind string, k int, lambda float64) refOut {
	dict := make([]float64, F*D) // (1)
	for j := 0; j < F; j++ {
		norm := 0.0
		for d := 0; d < D; d++ {
			norm += wDec[j*D+d] * wDec[j*D+d]
		}
		for d := 0; d < D; d++ {
			dict[j*D+d] = wDec[j*D+d] / math.Sqrt(norm+Eps)
		}
	}
	o := refOut{f: make([]float64, N*F), xHat: make([]float64, N*D)}
	for n := 0; n < N; n++ {
		a := make([]float64, F) // (2)
		for j := 0; j < F; j++ {
			a[j] = bEnc[j]
			for d := 0; d < D; d++ {
				a[j] += (x[n*D+d] - bDec[d]) * wEnc[d*F+j]
			}
		}
		order := make([]int, F) // (3): the K largest, ties to the lower index
		for j := range order {
			order[j] = j
		}
		if kind == KindTopK {
			sort.SliceStable(order, func(i, j int) bool { return a[order[i]] > a[order[j]] })
			order = order[:k]
		}
		o.selected = append(o.selected, order)
		for _, j := range order {
			o.f[n*F+j] = math.Max(a[j], 0)
		}
		for d := 0; d < D; d++ { // (4)
			o.xHat[n*D+d] = bDec[d]
			for j := 0; j < F; j++ {
				o.xHat[n*D+d] += o.f[n*F+j] * dict[j*D+d]
			}
		}
	}
	sq, total := 0.0, 0.0 // (5)
	for d := 0; d < D; d++ {
		mean := 0.0
		for n := 0; n < N; n++ {
			mean += x[n*D+d] / float64(N)
		}
		for n := 0; n < N; n++ {
			e := x[n*D+d] - o.xHat[n*D+d]
			sq += e * e
			total += (x[n*D+d] - mean) * (x[n*D+d] - mean)
		}
	}
	for _, v := range o.f {
		o.l1 += v / float64(N)
		if v > 0 {
			o.l0 += 1 / float64(N)
		}
	}
	o.mse, o.fvu = sq/float64(N*D), sq/total
	o.loss = o.mse // (6)
	if kind == KindReLUL1 {
		o.loss += lambda * o.l1
	}
	return o
}
