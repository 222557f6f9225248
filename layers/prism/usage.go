package prism

import (
	"cmp"
	"maps"
	"math"
	"slices"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/pkg/errors"
)

// Usage accumulates prototype-usage statistics over batches (docs/spec/prism.md §2.3, §4, §5). A prototype is used by
// token t when it is selected with a positive activation, a_{t,j} > 0 (a selected prototype with a non-positive
// cosine contributes nothing and is not counted). Each Add is one step for the dead-prototype window. The zero
// value is not usable; call NewUsage.
type Usage struct {
	counts   []int64              // tokens with a_{t,j} > 0
	mass     []float64            // Σ_t a_{t,j}
	sqMass   []float64            // Σ_t a_{t,j}² = C_jj
	lastUsed []int                // index of the last step that used j; −1 if none
	co       map[[2]int32]float64 // C_ij = Σ_t a_{t,i}·a_{t,j} for i < j, non-zero entries only
	steps    int                  // Add calls
	tokens   int                  // tokens observed (mask true)
	active   int64                // Σ_t #{j : a_{t,j} > 0}
}

// UsageSummary is the scalar summary of a Usage for logging.
type UsageSummary struct {
	// DeadFraction is the fraction of prototypes no token has used.
	DeadFraction float64 `json:"dead_fraction"`
	// Entropy is the usage entropy −Σ_j q_j ln q_j with q_j = count_j / Σ count (nats; ln K when uniform).
	Entropy float64 `json:"entropy"`
	// MeanActive is the mean number of positive activations among a token's k selected prototypes.
	MeanActive float64 `json:"mean_active"`
	// OffDiagonalMass is Σ_{i≠j} C_ij / Σ_{ij} C_ij of the co-usage matrix C = Σ_t a_t a_tᵀ (spec §5).
	OffDiagonalMass float64 `json:"off_diagonal_mass"`
	// Tokens is the number of tokens observed.
	Tokens int `json:"tokens"`
	// Steps is the number of Add calls.
	Steps int `json:"steps"`
}

// NewUsage returns an empty accumulator for a bank of numPrototypes prototypes. Panics if numPrototypes ≤ 0.
func NewUsage(numPrototypes int) *Usage {
	if numPrototypes <= 0 {
		panic(errors.Errorf("prism.NewUsage: numPrototypes=%d, want > 0", numPrototypes))
	}
	u := &Usage{
		counts:   make([]int64, numPrototypes),
		mass:     make([]float64, numPrototypes),
		sqMass:   make([]float64, numPrototypes),
		lastUsed: make([]int, numPrototypes),
		co:       map[[2]int32]float64{},
	}
	for j := range u.lastUsed {
		u.lastUsed[j] = -1
	}
	return u
}

// Add records one step: indices [B, T, k] (int32 or int64, Decomposition.Indices), activations [B, T, k] (float32
// or float64, Decomposition.Activations) and mask [B, T] bool (true = a real token) or nil. It returns an error,
// and changes nothing, on mismatched sizes, an index outside [0, K) or an index repeated within a token.
func (u *Usage) Add(indices, activations, mask *tensors.Tensor) error {
	if indices == nil || activations == nil || indices.Rank() < 1 ||
		!slices.Equal(indices.Shape().Dimensions, activations.Shape().Dimensions) {
		return errors.Errorf("prism.Usage.Add: indices %v and activations %v, want the same [B, T, k] shape",
			shapeOfTensor(indices), shapeOfTensor(activations))
	}
	idx, err := ints(indices)
	if err != nil {
		return err
	}
	act, err := floats(activations, "activations")
	if err != nil {
		return err
	}
	k := indices.Shape().Dim(-1)
	nTok := len(idx) / k
	valid, err := bools(mask, nTok, "mask")
	if err != nil {
		return err
	}
	K := len(u.counts)
	for t := range nTok {
		row := idx[t*k : (t+1)*k]
		for j, i := range row {
			if i < 0 || int(i) >= K {
				return errors.Errorf("prism.Usage.Add: index %d at token %d outside [0, %d)", i, t, K)
			}
			if slices.Contains(row[:j], i) {
				return errors.Errorf("prism.Usage.Add: prototype %d selected twice at token %d", i, t)
			}
		}
	}
	for t := range nTok {
		if valid != nil && !valid[t] {
			continue
		}
		u.tokens++
		row, a := idx[t*k:(t+1)*k], act[t*k:(t+1)*k]
		for j, i := range row {
			if !(a[j] > 0) {
				continue
			}
			u.active++
			u.counts[i]++
			u.mass[i] += a[j]
			u.sqMass[i] += a[j] * a[j]
			u.lastUsed[i] = u.steps
			for l := j + 1; l < k; l++ {
				if a[l] > 0 {
					key := [2]int32{min(i, row[l]), max(i, row[l])}
					u.co[key] += a[j] * a[l]
				}
			}
		}
	}
	u.steps++
	return nil
}

// Counts returns, per prototype, the number of tokens that used it.
func (u *Usage) Counts() []int64 { return slices.Clone(u.counts) }

// Mass returns Σ_t a_{t,j} per prototype.
func (u *Usage) Mass() []float64 { return slices.Clone(u.mass) }

// SqMass returns c_j = Σ_t a_{t,j}² per prototype, the diagonal of the co-usage matrix (spec §5's diagonal-C
// approximation).
func (u *Usage) SqMass() []float64 { return slices.Clone(u.sqMass) }

// Tokens returns the number of tokens observed; Steps the number of Add calls.
func (u *Usage) Tokens() int { return u.tokens }

// Steps returns the number of Add calls.
func (u *Usage) Steps() int { return u.steps }

// Dead returns, in increasing order, the prototypes used in none of the last window steps (spec §2.3 resets
// those of a 1,000-step window). Before window steps have been added, none is dead. Panics if window ≤ 0.
func (u *Usage) Dead(window int) []int {
	if window <= 0 {
		panic(errors.Errorf("prism.Usage.Dead: window=%d, want > 0", window))
	}
	var dead []int
	for j, last := range u.lastUsed {
		if last < u.steps-window {
			dead = append(dead, j)
		}
	}
	return dead
}

// DeadFraction returns the fraction of prototypes no observed token has used.
func (u *Usage) DeadFraction() float64 {
	n := 0
	for _, c := range u.counts {
		if c == 0 {
			n++
		}
	}
	return float64(n) / float64(len(u.counts))
}

// Entropy returns the usage entropy −Σ_j q_j ln q_j, q_j = count_j / Σ count (0 when nothing was used).
func (u *Usage) Entropy() float64 {
	var total float64
	for _, c := range u.counts {
		total += float64(c)
	}
	h := 0.0
	for _, c := range u.counts {
		if c > 0 {
			q := float64(c) / total
			h -= q * math.Log(q)
		}
	}
	return h
}

// MeanActive returns the mean number of positive activations per observed token (0 with no tokens).
func (u *Usage) MeanActive() float64 {
	if u.tokens == 0 {
		return 0
	}
	return float64(u.active) / float64(u.tokens)
}

// CoUsage returns C_ij = Σ_t a_{t,i}·a_{t,j} of the co-usage matrix C = Σ_t a_t a_tᵀ (symmetric; C_jj = SqMass).
// Panics if i or j is outside [0, K).
func (u *Usage) CoUsage(i, j int) float64 {
	K := len(u.counts)
	if i < 0 || j < 0 || i >= K || j >= K {
		panic(errors.Errorf("prism.Usage.CoUsage: (%d, %d) outside [0, %d)²", i, j, K))
	}
	if i == j {
		return u.sqMass[i]
	}
	return u.co[[2]int32{int32(min(i, j)), int32(max(i, j))}]
}

// CoUsageDense returns the K×K co-usage matrix C = Σ_t a_t a_tᵀ (K² float64s: for small banks and tests).
func (u *Usage) CoUsageDense() [][]float64 {
	K := len(u.counts)
	c := make([][]float64, K)
	for i := range c {
		c[i] = make([]float64, K)
		c[i][i] = u.sqMass[i]
	}
	for key, v := range u.co {
		c[key[0]][key[1]] = v
		c[key[1]][key[0]] = v
	}
	return c
}

// OffDiagonalMass returns Σ_{i≠j} C_ij / Σ_{ij} C_ij (0 when C = 0); activations are ≥ 0, so no absolute values
// are needed. The pairs are summed in the order of their indices (not the map's random order), so the value is the
// same, to the last bit, on every call.
func (u *Usage) OffDiagonalMass() float64 {
	var off, diag float64
	keys := slices.SortedFunc(maps.Keys(u.co), func(a, b [2]int32) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	})
	for _, key := range keys {
		off += 2 * u.co[key]
	}
	for _, v := range u.sqMass {
		diag += v
	}
	if off+diag == 0 {
		return 0
	}
	return off / (off + diag)
}

// Summary returns the scalar usage statistics.
func (u *Usage) Summary() UsageSummary {
	return UsageSummary{
		DeadFraction:    u.DeadFraction(),
		Entropy:         u.Entropy(),
		MeanActive:      u.MeanActive(),
		OffDiagonalMass: u.OffDiagonalMass(),
		Tokens:          u.tokens,
		Steps:           u.steps,
	}
}

// ints returns an int32 or int64 tensor's values as int32, flat.
func ints(t *tensors.Tensor) ([]int32, error) {
	switch t.DType() {
	case dtypes.Int32:
		return tensors.MustCopyFlatData[int32](t), nil
	case dtypes.Int64:
		v := tensors.MustCopyFlatData[int64](t)
		out := make([]int32, len(v))
		for i, x := range v {
			if x < math.MinInt32 || x > math.MaxInt32 {
				return nil, errors.Errorf("prism: index %d does not fit in int32", x)
			}
			out[i] = int32(x)
		}
		return out, nil
	}
	return nil, errors.Errorf("prism: indices have dtype %s, want int32 or int64", t.DType())
}

func shapeOfTensor(t *tensors.Tensor) any {
	if t == nil {
		return "nil"
	}
	return t.Shape()
}
