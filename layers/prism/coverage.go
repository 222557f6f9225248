package prism

import (
	"math"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/pkg/errors"
)

// Cosines returns s = ⟨z, p_i⟩/(‖z‖·‖p_i‖ + ε) for every vector and prototype: z [..., D], bank [K, D] → [..., K],
// with gradients (Decomposition.Scores is the same under stop-gradient). Panics on bad shapes.
func Cosines(z, bank *Node) *Node {
	if z == nil || bank == nil || z.Rank() < 1 || bank.Rank() != 2 || z.Shape().Dim(-1) != bank.Shape().Dim(1) || z.DType() != bank.DType() {
		panic(errors.Errorf("prism.Cosines: z=%v, bank=%v, want [..., D] and [K, D] of one dtype", shapeOf(z), shapeOf(bank)))
	}
	return cosines(z, bank)
}

// CoverageStats reduces one batch's cosines for the coverage metrics (docs/spec/prism.md §4): scores [B, T, K] (e.g.
// Decomposition.Scores, or Cosines of held-out hidden states), mask [B, T] bool (true = a token of E) or nil →
// protoMax [K] = max_{t∈E} cos(p_j, z_t) (−∞ if the batch has no token of E) and tokenMax [B, T] = max_j
// cos(z_t, p_j). Feed both to Coverage.Add. Panics on bad shapes.
func CoverageStats(scores, mask *Node) (protoMax, tokenMax *Node) {
	if scores == nil || scores.Rank() != 3 {
		panic(errors.Errorf("prism.CoverageStats: scores=%v, want [B, T, K]", shapeOf(scores)))
	}
	B, T := scores.Shape().Dim(0), scores.Shape().Dim(1)
	if mask != nil && (mask.DType() != dtypes.Bool || mask.Rank() != 2 || mask.Shape().Dim(0) != B || mask.Shape().Dim(1) != T) {
		panic(errors.Errorf("prism.CoverageStats: mask=%v, want nil or [B=%d, T=%d] bool", mask.Shape(), B, T))
	}
	tokenMax = ReduceMax(scores, -1)
	masked := scores
	if mask != nil {
		masked = Where(mask, scores, Infinity(scores.Graph(), scores.DType(), -1))
	}
	return ReduceMax(masked, 0, 1), tokenMax
}

// CoverageMetrics are the coverage and health numbers of docs/spec/prism.md §4 over a held-out token set E.
type CoverageMetrics struct {
	// R1Bar is R̄1 = (1/K) Σ_j max_{t∈E} cos(p_j, z_t): prototypes lie near some real token.
	R1Bar float64 `json:"r1_bar"`
	// R2 is (1/N_E) Σ_{t∈E} max_j cos(z_t, p_j): every token is covered by some prototype.
	R2 float64 `json:"r2"`
	// R1Frac is #{j : max_t cos > τ}/K.
	R1Frac float64 `json:"r1_frac"`
	// R2Frac is #{t : max_j cos > τ}/N_E.
	R2Frac float64 `json:"r2_frac"`
	// Threshold is τ.
	Threshold float64 `json:"threshold"`
	// Tokens is N_E.
	Tokens int `json:"tokens"`
	// RecRatio is the mean over E of ‖r_t‖²/(‖z_t‖² + ε), over the batches that supplied it (0 if none did).
	RecRatio float64 `json:"rec_ratio"`
	// RecTokens is the number of tokens RecRatio averages.
	RecTokens int `json:"rec_tokens"`
}

// Coverage accumulates CoverageStats over the batches of a held-out set. The zero value is not usable; call
// NewCoverage.
type Coverage struct {
	tau           float64
	protoMax      []float64
	tokens, above int
	tokenSum      float64
	recSum        float64
	recTokens     int
}

// NewCoverage returns an empty accumulator for a bank of numPrototypes prototypes and threshold tau (Config's
// CoverageThreshold). Panics if numPrototypes ≤ 0.
func NewCoverage(numPrototypes int, tau float64) *Coverage {
	if numPrototypes <= 0 {
		panic(errors.Errorf("prism.NewCoverage: numPrototypes=%d, want > 0", numPrototypes))
	}
	c := &Coverage{tau: tau, protoMax: make([]float64, numPrototypes)}
	for j := range c.protoMax {
		c.protoMax[j] = math.Inf(-1)
	}
	return c
}

// Add merges one batch: protoMax [K] and tokenMax [B, T] from CoverageStats, recRatio [B, T] from
// Decomposition.RecRatio or nil, mask [B, T] bool (the same mask CoverageStats got) or nil. Tensors may be float32
// or float64. It returns an error, and changes nothing, on a size or dtype mismatch.
func (c *Coverage) Add(protoMax, tokenMax, recRatio, mask *tensors.Tensor) error {
	pm, err := floats(protoMax, "protoMax")
	if err != nil {
		return err
	}
	if len(pm) != len(c.protoMax) {
		return errors.Errorf("prism.Coverage.Add: protoMax has %d values, want K=%d", len(pm), len(c.protoMax))
	}
	tm, err := floats(tokenMax, "tokenMax")
	if err != nil {
		return err
	}
	valid, err := bools(mask, len(tm), "mask")
	if err != nil {
		return err
	}
	var rec []float64
	if recRatio != nil {
		if rec, err = floats(recRatio, "recRatio"); err != nil {
			return err
		}
		if len(rec) != len(tm) {
			return errors.Errorf("prism.Coverage.Add: recRatio has %d values, tokenMax %d", len(rec), len(tm))
		}
	}
	for j, v := range pm {
		c.protoMax[j] = math.Max(c.protoMax[j], v)
	}
	for t, v := range tm {
		if valid != nil && !valid[t] {
			continue
		}
		c.tokens++
		c.tokenSum += v
		if v > c.tau {
			c.above++
		}
		if rec != nil {
			c.recSum += rec[t]
			c.recTokens++
		}
	}
	return nil
}

// Metrics returns the coverage metrics of the tokens added so far; an error if no token was added.
func (c *Coverage) Metrics() (CoverageMetrics, error) {
	if c.tokens == 0 {
		return CoverageMetrics{}, errors.New("prism.Coverage.Metrics: no tokens were added")
	}
	m := CoverageMetrics{Threshold: c.tau, Tokens: c.tokens, RecTokens: c.recTokens}
	K := float64(len(c.protoMax))
	for _, v := range c.protoMax {
		m.R1Bar += v / K
		if v > c.tau {
			m.R1Frac += 1 / K
		}
	}
	m.R2 = c.tokenSum / float64(c.tokens)
	m.R2Frac = float64(c.above) / float64(c.tokens)
	if c.recTokens > 0 {
		m.RecRatio = c.recSum / float64(c.recTokens)
	}
	return m, nil
}

// floats returns a float32 or float64 tensor's values as float64, flat.
func floats(t *tensors.Tensor, name string) ([]float64, error) {
	if t == nil {
		return nil, errors.Errorf("prism: %s is nil", name)
	}
	switch t.DType() {
	case dtypes.Float64:
		return tensors.MustCopyFlatData[float64](t), nil
	case dtypes.Float32:
		f := tensors.MustCopyFlatData[float32](t)
		out := make([]float64, len(f))
		for i, v := range f {
			out[i] = float64(v)
		}
		return out, nil
	}
	return nil, errors.Errorf("prism: %s has dtype %s, want float32 or float64", name, t.DType())
}

// bools returns a bool tensor's values, flat; nil for a nil tensor. n is the required size.
func bools(t *tensors.Tensor, n int, name string) ([]bool, error) {
	if t == nil {
		return nil, nil
	}
	if t.DType() != dtypes.Bool || t.Shape().Size() != n {
		return nil, errors.Errorf("prism: %s is %s, want %d bool values", name, t.Shape(), n)
	}
	return tensors.MustCopyFlatData[bool](t), nil
}
