package interp

import (
	"math"
	"sort"
)

// JS returns the Jensen–Shannon divergence of two distributions over the same support, in nats (spec §7.5):
// ½ KL(p‖m) + ½ KL(q‖m) with m = ½(p + q); terms with a zero probability contribute 0. It lies in [0, ln 2].
func JS(p, q []float64) float64 {
	js := 0.0
	for i := range p {
		m := 0.5 * (p[i] + q[i])
		if p[i] > 0 {
			js += 0.5 * p[i] * math.Log(p[i]/m)
		}
		if q[i] > 0 {
			js += 0.5 * q[i] * math.Log(q[i]/m)
		}
	}
	return math.Max(0, js)
}

// TopIndices returns the indices of the k largest values of p, largest first (ties: lower index first).
func TopIndices(p []float64, k int) []int {
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] > p[idx[b]] })
	return idx[:min(k, len(idx))]
}

// TopKOverlap returns |topk(p) ∩ topk(q)| / k.
func TopKOverlap(p, q []float64, k int) float64 {
	in := map[int]bool{}
	for _, i := range TopIndices(p, k) {
		in[i] = true
	}
	n := 0
	for _, i := range TopIndices(q, k) {
		if in[i] {
			n++
		}
	}
	return float64(n) / float64(k)
}

// Top1Agree reports whether argmax p = argmax q (ties: the lower index).
func Top1Agree(p, q []float64) bool { return TopIndices(p, 1)[0] == TopIndices(q, 1)[0] }

// SpearmanTopK returns Spearman's rank correlation of p and q over the union of their top-k token sets (spec
// §7.5): both are ranked on that union (average ranks for ties) and the Pearson correlation of the ranks is
// returned. It is 0 when either ranking is constant (a union of one token, or all-equal probabilities).
func SpearmanTopK(p, q []float64, k int) float64 {
	seen := map[int]bool{}
	var union []int
	for _, i := range append(TopIndices(p, k), TopIndices(q, k)...) {
		if !seen[i] {
			seen[i] = true
			union = append(union, i)
		}
	}
	a, b := make([]float64, len(union)), make([]float64, len(union))
	for j, i := range union {
		a[j], b[j] = p[i], q[i]
	}
	return pearson(ranks(a), ranks(b))
}

// ranks returns the 1-based ranks of xs in ascending order, tied values sharing their average rank.
func ranks(xs []float64) []float64 {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return xs[idx[a]] < xs[idx[b]] })
	r := make([]float64, len(xs))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && xs[idx[j+1]] == xs[idx[i]] {
			j++
		}
		avg := float64(i+j)/2 + 1
		for t := i; t <= j; t++ {
			r[idx[t]] = avg
		}
		i = j + 1
	}
	return r
}

// pearson returns the Pearson correlation of a and b, 0 when either has zero variance.
func pearson(a, b []float64) float64 {
	n := float64(len(a))
	if n < 2 {
		return 0
	}
	ma, mb := 0.0, 0.0
	for i := range a {
		ma += a[i]
		mb += b[i]
	}
	ma, mb = ma/n, mb/n
	sab, saa, sbb := 0.0, 0.0, 0.0
	for i := range a {
		sab += (a[i] - ma) * (b[i] - mb)
		saa += (a[i] - ma) * (a[i] - ma)
		sbb += (b[i] - mb) * (b[i] - mb)
	}
	if saa == 0 || sbb == 0 {
		return 0
	}
	return sab / math.Sqrt(saa*sbb)
}

// Softmax returns the softmax of logits in float64 (max-subtracted).
func Softmax(logits []float64) []float64 {
	m := math.Inf(-1)
	for _, x := range logits {
		m = math.Max(m, x)
	}
	out := make([]float64, len(logits))
	sum := 0.0
	for i, x := range logits {
		out[i] = math.Exp(x - m)
		sum += out[i]
	}
	for i := range out {
		out[i] /= sum
	}
	return out
}

// Normalize returns xs divided by their sum (xs itself when the sum is not positive).
func Normalize(xs []float64) []float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	if !(s > 0) {
		return xs
	}
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x / s
	}
	return out
}
