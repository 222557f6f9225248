package influence

import (
	"github.com/pkg/errors"
)

// CodeStats accumulates the curvature statistics of a sparse-coded layer (doc.go, equation 8; docs/spec/prism.md §6.2
// fitting pass): the Fisher sum Σ ũ ũᵀ [D, D] of sampled-label output gradients, c_j = Σ_t a_{t,j}², the weighted
// c^w_j = Σ_t w_t a_{t,j}², counts n_j of a per-token column (PRISM: the nearest prototype), and, when Full, the
// sparse co-usage matrices C = Σ_t a_t a_tᵀ and C^w = Σ_t w_t a_t a_tᵀ.
type CodeStats struct {
	K, D    int
	Tokens  int64
	Fisher  []float64 // Σ ũ ũᵀ [D, D]
	Usage   []float64 // c_j [K]
	UsageW  []float64 // c^w_j [K]
	Counts  []int64   // n_j [K]
	CoUse   *SymAccumulator
	CoUseW  *SymAccumulator
	full    bool
	scratch []float64
}

// NewCodeStats returns empty statistics; full also accumulates the sparse co-usage matrices (k² map updates per
// token).
func NewCodeStats(K, D int, full bool) *CodeStats {
	s := &CodeStats{K: K, D: D, Fisher: make([]float64, D*D), Usage: make([]float64, K), UsageW: make([]float64, K),
		Counts: make([]int64, K), full: full}
	if full {
		s.CoUse, s.CoUseW = NewSymAccumulator(K), NewSymAccumulator(K)
	}
	return s
}

// Add accumulates n tokens: idx and acts [n, k], weights [n] (w_t; nil means 1), counted [n] (the column whose n_j
// each token increments; nil counts nothing) and sampled [n, D] (the sampled-label output gradients ũ_t). It fails on
// inconsistent lengths or indices outside [0, K).
func (s *CodeStats) Add(k int, idx []int32, acts, weights []float64, counted []int32, sampled []float64) error {
	if k <= 0 || len(idx)%k != 0 || len(acts) != len(idx) {
		return errors.Errorf("influence.CodeStats.Add: k=%d, len(idx)=%d, len(acts)=%d", k, len(idx), len(acts))
	}
	n := len(idx) / k
	if (weights != nil && len(weights) != n) || (counted != nil && len(counted) != n) || len(sampled) != n*s.D {
		return errors.Errorf("influence.CodeStats.Add: %d tokens but len(weights)=%d, len(counted)=%d, len(sampled)=%d (want %d·%d)",
			n, len(weights), len(counted), len(sampled), n, s.D)
	}
	for t := 0; t < n; t++ {
		w := 1.0
		if weights != nil {
			w = weights[t]
		}
		for i := 0; i < k; i++ {
			j, a := idx[t*k+i], acts[t*k+i]
			if j < 0 || int(j) >= s.K {
				return errors.Errorf("influence.CodeStats.Add: index %d outside [0, %d)", j, s.K)
			}
			if a == 0 {
				continue
			}
			s.Usage[j] += a * a
			s.UsageW[j] += w * a * a
			if s.full {
				for i2 := i; i2 < k; i2++ {
					j2, a2 := idx[t*k+i2], acts[t*k+i2]
					if a2 == 0 {
						continue
					}
					s.CoUse.Add(int(j), int(j2), a*a2)
					s.CoUseW.Add(int(j), int(j2), w*a*a2)
				}
			}
		}
		if counted != nil {
			if c := counted[t]; c >= 0 && int(c) < s.K {
				s.Counts[c]++
			}
		}
	}
	if n > 0 {
		addGram(s.Fisher, sampled, n, s.D)
	}
	s.Tokens += int64(n)
	return nil
}

// FisherMean returns S = (1/N) Σ ũ ũᵀ, symmetrised; zeros if no token was added.
func (s *CodeStats) FisherMean() []float64 {
	out := append([]float64(nil), s.Fisher...)
	if s.Tokens == 0 {
		return make([]float64, len(out))
	}
	return normaliseSym(out, s.D, float64(s.Tokens))
}
