package icl

import (
	"github.com/protolab/protolab/theory/prior"
	"github.com/protolab/protolab/workbench/stats"
)

// Patching is the key-patching experiment of spec §7 on one model: for target–donor pairs whose tree paths first
// differ at level j (PatchPairs), the target's layer-ℓ keys are replaced by the donor's (linattn eq. 7), and later
// layers run on the corrupted workspace. Matrices are indexed [j−1][ℓ−1].
type Patching struct {
	// CleanMSE is the unpatched MSE of each level's target contexts.
	CleanMSE []float64
	// Delta is ΔMSE(j, ℓ) = MSE_patched − MSE_clean, averaged over the pairs; StdErr is its standard error (paired).
	Delta, StdErr [][]float64
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

// Vectors describes the function vectors (workspaces p_ℓ) of a model on a batch of tree-prior contexts.
type Vectors struct {
	// ProbeAccuracy[ℓ−1][k−1] is the held-out accuracy of a logistic-regression probe decoding bit b_k from
	// p_ℓ = (φ_1 … φ_ℓ) (spec §6 item 4): trained on the first half of the batch, tested on the second.
	ProbeAccuracy [][]float64 `json:"probe_accuracy"`
	// Centroids[ℓ−1][c] is the mean of φ_ℓ over contexts whose first ℓ bits, read as a binary number with b_1
	// most significant, equal c (0 if no context took that prefix): how the new statistic of layer ℓ depends on the
	// path so far.
	Centroids [][]float64 `json:"centroids"`
	// Workspace holds p_L of the first contexts (at most 500; [i][ℓ−1]) and Leaves their tree leaves.
	Workspace [][]float64 `json:"workspace"`
	Leaves    []int       `json:"leaves"`
}

// FunctionVectors probes the function vectors of m on b, contexts of the tree prior t (b.Leaves set).
func (m *Model) FunctionVectors(b *Batch, t prior.Tree) (Vectors, error) {
	L, K := m.Config.Measurements, t.Depth
	var v Vectors
	out, err := m.Evaluate(b, nil, nil)
	if err != nil {
		return v, err
	}
	E := b.B
	half := E / 2
	for l := 1; l <= L; l++ {
		feats := make([][]float64, E)
		for i := range feats {
			feats[i] = out.Workspace[i*L : i*L+l]
		}
		accs := make([]float64, K)
		for k := 1; k <= K; k++ {
			labels := make([]bool, E)
			for i := range labels {
				labels[i] = t.Bit(b.Leaves[i], k) == 1
			}
			w := fitLogistic(feats[:half], labels[:half])
			accs[k-1] = accuracy(w, feats[half:], labels[half:])
		}
		v.ProbeAccuracy = append(v.ProbeAccuracy, accs)
		sum, n := make([]float64, 1<<l), make([]float64, 1<<l)
		for i := 0; i < E; i++ {
			c := b.Leaves[i] >> (K - l) // the first l bits, b_1 most significant
			sum[c] += out.Workspace[i*L+l-1]
			n[c]++
		}
		for c := range sum {
			if n[c] > 0 {
				sum[c] /= n[c]
			}
		}
		v.Centroids = append(v.Centroids, sum)
	}
	for i := 0; i < min(E, 500); i++ {
		v.Workspace = append(v.Workspace, out.Workspace[i*L:(i+1)*L])
		v.Leaves = append(v.Leaves, b.Leaves[i])
	}
	return v, nil
}
