package icl

import "github.com/protolab/protolab/workbench/stats"

// Patching is the key-patching experiment of spec §7 on one model: for target–donor pairs whose tree paths first
// differ at level j (PatchPairs), the target's layer-ℓ keys are replaced by the donor's (linattn eq. 7), and later
// layers run on the corrupted workspace. Matrices are indexed [j−1][ℓ−1].
type Patching struct {
	// CleanMSE is the unpatched MSE of each level's target contexts.
	CleanMSE []float64 `json:"clean_mse"`
	// Delta is ΔMSE(j, ℓ) = MSE_patched − MSE_clean, averaged over the pairs; StdErr is its standard error (paired).
	Delta  [][]float64 `json:"delta"`
	StdErr [][]float64 `json:"std_err"`
}

// PatchKeys runs the patching experiment on m: targets[j−1] and donors[j−1] are the pairs of divergence level j
// (PatchPairs), every layer ℓ = 1…M is patched in turn.
func (m *Model) PatchKeys(targets, donors []*Batch) (Patching, error) {
	L := m.Config.Measurements
	var p Patching
	for j := 1; j <= len(targets); j++ {
		target := targets[j-1]
		don, err := m.Evaluate(donors[j-1], nil, nil)
		if err != nil {
			return p, err
		}
		clean, err := m.Evaluate(target, nil, nil)
		if err != nil {
			return p, err
		}
		mse, _ := stats.MeanSE(clean.SE)
		p.CleanMSE = append(p.CleanMSE, mse)
		row, rowSE := make([]float64, L), make([]float64, L)
		for l := 1; l <= L; l++ {
			mask := make([]float32, L)
			mask[l-1] = 1
			patched, err := m.Evaluate(target, don.Keys, mask)
			if err != nil {
				return p, err
			}
			diff := make([]float64, len(clean.SE))
			for i := range diff {
				diff[i] = patched.SE[i] - clean.SE[i]
			}
			row[l-1], rowSE[l-1] = stats.MeanSE(diff)
		}
		p.Delta, p.StdErr = append(p.Delta, row), append(p.StdErr, rowSE)
	}
	return p, nil
}
