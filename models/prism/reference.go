package prism

import (
	"sort"
	"time"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/influence"
)

// reference is the full prototype-space reference of spec §6.3: per-sequence gradients in float64, solved with
// the Attributor's co-usage curvature (the same sparse C, C_rec, S, n_j and λ).
type reference struct {
	cols  [][]int32     // per corpus sequence: the prototypes with a non-zero gradient column
	grads [][][]float64 // per corpus sequence and column: G^ref_{s,j} [D]
	bytes int64         // memory of the gradients
}

// fitReference runs the reference pass over the corpus: per-sequence gradients with ∂a/∂P, REC and R2.
func (a *Attributor) fitReference() error {
	if a.ref != nil {
		return nil
	}
	D := a.mc.Width
	r := &reference{}
	start := time.Now()
	err := a.batches(0, func(first int, rows [][]int32) error {
		h, err := a.graphs.runHead(rows, a.batch(), nil, true, true, a.Config.Seed, noNoise)
		if err != nil {
			return err
		}
		for row := 0; row < h.rows; row++ {
			cols, g, _ := slotColumns(h, row)
			r.cols, r.grads = append(r.cols, cols), append(r.grads, g)
			r.bytes += int64(len(cols)) * int64(4+8*D)
		}
		return nil
	})
	if err != nil {
		return err
	}
	a.Timings["reference_fit"] = time.Since(start).Seconds()
	a.ref = r
	return nil
}

// slotColumns sums the per-slot reference gradients of one row of a head pass into prototype columns: the full
// gradient and its cross-entropy part.
func slotColumns(h *headOut, row int) (cols []int32, full, ce [][]float64) {
	D, k, T := h.D, h.k, h.T
	type pair struct{ full, ce []float64 }
	byCol := map[int32]pair{}
	for t := row * T; t < (row+1)*T; t++ {
		for i := 0; i < k; i++ {
			j := h.idx[t*k+i]
			c, x := h.refGradCE[(t*k+i)*D:(t*k+i+1)*D], h.refGradAux[(t*k+i)*D:(t*k+i+1)*D]
			if isZeroColumn(c) && isZeroColumn(x) {
				continue
			}
			p, ok := byCol[j]
			if !ok {
				p = pair{make([]float64, D), make([]float64, D)}
				byCol[j] = p
			}
			for d := range c {
				p.full[d] += c[d] + x[d]
				p.ce[d] += c[d]
			}
		}
	}
	for j := range byCol {
		cols = append(cols, j)
	}
	sort.Slice(cols, func(x, y int) bool { return cols[x] < cols[y] })
	for _, j := range cols {
		full, ce = append(full, byCol[j].full), append(ce, byCol[j].ce)
	}
	return cols, full, ce
}

func isZeroColumn(x []float64) bool {
	for _, v := range x {
		if v != 0 {
			return false
		}
	}
	return true
}

// referenceQuery solves x_q = H_ref⁻¹ vec(G^ref_q) (Attributor.Curvature) and returns ⟨x_q, G^ref_s⟩/N_tok for every
// corpus sequence. The query gradient is its completion's cross-entropy with ∂a/∂P.
func (a *Attributor) referenceQuery(q Query) ([]float64, error) {
	h, err := a.graphs.runHead([][]int32{q.Tokens}, 1, [][]float64{q.Weights}, false, true, a.Config.Seed, noNoise)
	if err != nil {
		return nil, err
	}
	r := a.ref
	D := a.mc.Width
	cols, g, _ := slotColumns(h, 0)
	b := make([]float64, a.Curvature.H.K*D)
	for n, j := range cols {
		copy(b[int(j)*D:(int(j)+1)*D], g[n])
	}
	x, err := a.Curvature.Solve(b)
	if err != nil {
		return nil, errors.WithMessage(err, "attribution: reference solve")
	}
	full := make([]float64, len(a.Corpus))
	for s := range full {
		for n, j := range r.cols[s] {
			full[s] += influence.Dot(x[int(j)*D:(int(j)+1)*D], r.grads[s][n])
		}
	}
	return scaleScores(full, 1/float64(a.NumTokens)), nil
}
