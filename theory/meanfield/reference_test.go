package meanfield

import (
	"fmt"
	"math"

	"github.com/protolab/protolab/theory/prior"
)

// This file holds slow, plain-loop float64 oracles written directly from the spec's equations, with full θ_σ
// vectors and no tree tricks (docs/STYLE.md §1.2).

// referenceThetas returns θ_σ of every leaf as a full D-vector, built from eq. (2.4) by walking the path.
func referenceThetas(t prior.Tree) [][]float64 {
	out := make([][]float64, t.NumLeaves())
	c := 1.0
	if t.Normalize {
		c = math.Sqrt((1 - t.Alpha*t.Alpha) / (1 - math.Pow(t.Alpha, 2*float64(t.Depth))))
	}
	for leaf := range out {
		theta := make([]float64, t.Dim())
		node := 1
		for k := 1; k <= t.Depth; k++ {
			b := (leaf >> (t.Depth - k)) & 1
			theta[node-1] = c * math.Pow(t.Alpha, float64(k-1)) * float64(2*b-1)
			node = 2*node + b
		}
		out[leaf] = theta
	}
	return out
}

// referencePosteriorMean returns θ̂ of eq. (4.9) for measurements (nodes[i], values[i]) by direct enumeration.
func referencePosteriorMean(t prior.Tree, tau float64, nodes []int, values []float64) []float64 {
	thetas := referenceThetas(t)
	logw := make([]float64, len(thetas))
	for s, th := range thetas {
		for i, n := range nodes {
			v := th[n-1]
			logw[s] += (2*values[i]*v - v*v) / (2 * tau * tau)
		}
	}
	top := math.Inf(-1)
	for _, l := range logw {
		top = math.Max(top, l)
	}
	mean := make([]float64, t.Dim())
	total := 0.0
	for s, th := range thetas {
		w := math.Exp(logw[s] - top)
		total += w
		for j := range mean {
			mean[j] += w * th[j]
		}
	}
	for j := range mean {
		mean[j] /= total
	}
	return mean
}

// referenceNoiselessMSE returns the exact noise-free Bayes MSE of a deterministic measurement policy: policy(prev)
// names the next node from the readings so far. Leaves producing the same readings are indistinguishable, so the
// posterior is uniform on that group; the MSE averages ‖θ_σ − group mean‖² over the uniform leaves.
func referenceNoiselessMSE(t prior.Tree, layers int, policy func(readings []float64) int) float64 {
	thetas := referenceThetas(t)
	groups := map[string][]int{}
	for leaf, th := range thetas {
		var readings []float64
		key := ""
		for l := 0; l < layers; l++ {
			n := policy(readings)
			readings = append(readings, th[n-1])
			key += fmt.Sprintf("%d:%g;", n, th[n-1])
		}
		groups[key] = append(groups[key], leaf)
	}
	sum := 0.0
	for _, g := range groups {
		mean := make([]float64, t.Dim())
		for _, leaf := range g {
			for j := range mean {
				mean[j] += thetas[leaf][j] / float64(len(g))
			}
		}
		for _, leaf := range g {
			for j := range mean {
				d := thetas[leaf][j] - mean[j]
				sum += d * d
			}
		}
	}
	return sum / float64(len(thetas))
}

// referenceTraceInverse returns tr A^{−1} by Gauss–Jordan elimination with partial pivoting.
func referenceTraceInverse(a [][]float64) float64 {
	d := len(a)
	m := make([][]float64, d)
	for i := range m {
		m[i] = make([]float64, 2*d)
		copy(m[i], a[i])
		m[i][d+i] = 1
	}
	for col := 0; col < d; col++ {
		p := col
		for r := col + 1; r < d; r++ {
			if math.Abs(m[r][col]) > math.Abs(m[p][col]) {
				p = r
			}
		}
		m[col], m[p] = m[p], m[col]
		piv := m[col][col]
		for j := range m[col] {
			m[col][j] /= piv
		}
		for r := 0; r < d; r++ {
			if r != col {
				f := m[r][col]
				for j := range m[r] {
					m[r][j] -= f * m[col][j]
				}
			}
		}
	}
	tr := 0.0
	for i := 0; i < d; i++ {
		tr += m[i][d+i]
	}
	return tr
}

// referenceOptimalNoiseless evaluates the noise-free programme of eq. (3.2) over node keys by plain recursion on the
// list of leaves still consistent with the readings (no masks, no memo): the expected posterior MSE of the best
// adaptive choice of L nodes.
func referenceOptimalNoiseless(t prior.Tree, leaves []int, layers int) float64 {
	thetas := referenceThetas(t)
	terminal := func(group []int) float64 {
		mean := make([]float64, t.Dim())
		for _, s := range group {
			for j := range mean {
				mean[j] += thetas[s][j] / float64(len(group))
			}
		}
		v := 0.0
		for _, s := range group {
			v += sqDist(thetas[s], mean) / float64(len(group))
		}
		return v
	}
	if layers == 0 {
		return terminal(leaves)
	}
	best := referenceOptimalNoiseless(t, leaves, layers-1)
	for n := 1; n <= t.Dim(); n++ {
		groups := map[float64][]int{}
		for _, s := range leaves {
			groups[thetas[s][n-1]] = append(groups[thetas[s][n-1]], s)
		}
		v := 0.0
		for _, g := range groups {
			v += float64(len(g)) / float64(len(leaves)) * referenceOptimalNoiseless(t, g, layers-1)
		}
		best = math.Min(best, v)
	}
	return best
}
