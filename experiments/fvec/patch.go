package fvec

import (
	"math"
	"slices"

	"github.com/protolab/protolab/layers/linattn"
	"github.com/protolab/protolab/theory/meanfield"
	"github.com/protolab/protolab/workbench/parallel"
	"github.com/protolab/protolab/workbench/stats"
)

// PatchResult is the key-patching experiment of spec §7 on one trained model A (or A′, or the key-gain ablation):
// for target–donor pairs from the test seed whose tree paths first differ at level j, the target's layer-ℓ keys are
// replaced by the donor's (same x and ξ). Matrices are indexed [j−1][ℓ−1].
type PatchResult struct {
	Name   string  `json:"name"` // the row (Curve.Name)
	Kind   string  `json:"kind"`
	Layers int     `json:"layers"`  // L of the patched model
	Seed   int     `json:"seed"`    // which seed's model
	ValMSE float64 `json:"val_mse"` // its final validation MSE (Result.Patch shows the seed with the lowest)
	Levels []int   `json:"levels"`  // divergence levels j = 1…K
	// CleanMSE is the unpatched MSE of each level's target contexts.
	CleanMSE []float64 `json:"clean_mse"`
	// Delta is ΔMSE(j, ℓ) = MSE_patched − MSE_clean, averaged over the pairs; StdErr is its standard error (paired).
	Delta  [][]float64 `json:"delta"`
	StdErr [][]float64 `json:"std_err"`
	// Theory is ΔMSE of the ideal model A in the measurement model with shared noise at τ = TheoryTau (exactly 0
	// for j ≥ ℓ), meanfield.PatchDelta.
	Theory    [][]float64 `json:"theory"`
	TheoryTau float64     `json:"theory_tau"`
}

// VectorResult describes the function vectors (workspaces p_ℓ) of a patched model on the tree test set (the seed
// with the lowest validation MSE).
type VectorResult struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Seed   int    `json:"seed"`
	Layers int    `json:"layers"`
	// ProbeAccuracy[ℓ−1][k−1] is the held-out accuracy of a logistic-regression probe decoding bit b_k from
	// p_ℓ = (φ_1 … φ_ℓ) (spec §6 item 4): trained on the first half of the test set, tested on the second.
	ProbeAccuracy [][]float64 `json:"probe_accuracy"`
	// Centroids[ℓ−1][c] is the mean of φ_ℓ over contexts whose first ℓ bits, read as a binary number with b_1
	// most significant, equal c (0 if no context took that prefix): how the new statistic of layer ℓ depends on the
	// path so far.
	Centroids [][]float64 `json:"centroids"`
	// Workspace holds p_L of the first test contexts ([i][ℓ−1]) and Leaves their tree leaves.
	Workspace [][]float64 `json:"workspace"`
	Leaves    []int       `json:"leaves"`
}

// best returns the index of the smallest value.
func best(v []float64) int {
	b := 0
	for i := range v {
		if v[i] < v[b] {
			b = i
		}
	}
	return b
}

// patchedRows returns the rows that are patched and probed: Sweep.PatchKinds, then the key-gain ablation when
// model A is patched.
func (s *study) patchedRows() []string {
	rows := slices.Clone(s.cfg.Sweep.PatchKinds)
	if slices.Contains(rows, linattn.KindA) && s.cfg.Sweep.KeyGainAblation > 0 {
		rows = append(rows, AblationKeyGain)
	}
	return rows
}

// patch runs the patching experiment on every seed of every patched row, on pairs from the test seed.
func (s *study) patch() error {
	rows := s.patchedRows()
	if len(rows) == 0 {
		return nil
	}
	c, d := s.cfg, s.cfg.Data
	L, K := c.Sweep.TreeM[len(c.Sweep.TreeM)-1], d.Tree.Depth
	tau := s.res.Tree.Theory.Config.Tau
	theory, err := meanfield.PatchDelta(meanfield.PatchMC{Prior: d.Tree, Tau: tau, Layers: L, Pairs: d.TheoryContexts,
		Seed: c.Seed})
	if err != nil {
		return err
	}
	targets, donors := make([]*Batch, K), make([]*Batch, K)
	for j := 1; j <= K; j++ {
		targets[j-1], donors[j-1] = PatchPairs(d.Tree, d.PatchPairs, d.Tokens, d.LabelNoise, j, c.TestSeed)
	}
	S := c.Sweep.Seeds
	out := make([]PatchResult, len(rows)*S)
	if err := parallel.Do(len(out), c.Sweep.Workers, func(i int) error {
		name, seed := rows[i/S], i%S
		pr, err := s.patchOne(s.kept[name][seed], name, seed, targets, donors, theory, tau)
		if err != nil {
			return err
		}
		pr.ValMSE = s.keptVal[name][seed]
		out[i] = *pr
		return nil
	}); err != nil {
		return err
	}
	s.res.Patches = out
	return nil
}

// patchOne runs the patching experiment on one trained model.
func (s *study) patchOne(t *trained, name string, seed int, targets, donors []*Batch, theory [][]meanfield.Estimate,
	tau float64) (*PatchResult, error) {
	L := t.cfg.Measurements
	pr := &PatchResult{Name: name, Kind: t.cfg.Kind, Layers: L, Seed: seed, TheoryTau: tau}
	for j := 1; j <= len(targets); j++ {
		target := targets[j-1]
		don, err := t.run(donors[j-1], nil, nil)
		if err != nil {
			return nil, err
		}
		clean, err := t.run(target, nil, nil)
		if err != nil {
			return nil, err
		}
		mse, _ := stats.MeanSE(clean.se)
		pr.Levels = append(pr.Levels, j)
		pr.CleanMSE = append(pr.CleanMSE, mse)
		row, rowSE, th := make([]float64, L), make([]float64, L), make([]float64, L)
		for l := 1; l <= L; l++ {
			mask := make([]float32, L)
			mask[l-1] = 1
			patched, err := t.run(target, don.keys, mask)
			if err != nil {
				return nil, err
			}
			diff := make([]float64, len(clean.se))
			for i := range diff {
				diff[i] = patched.se[i] - clean.se[i]
			}
			row[l-1], rowSE[l-1] = stats.MeanSE(diff)
			th[l-1] = theory[j-1][l-1].Mean
		}
		pr.Delta, pr.StdErr, pr.Theory = append(pr.Delta, row), append(pr.StdErr, rowSE), append(pr.Theory, th)
	}
	s.logf("patching %s (L=%d), seed %d: ΔMSE(j, ℓ) %.4f", name, L, seed, pr.Delta)
	return pr, nil
}

// vectors probes the function vectors of each patched row's model with the lowest validation MSE.
func (s *study) vectors() error {
	for _, name := range s.patchedRows() {
		seed := best(s.keptVal[name])
		vr, err := s.vectorsOne(s.kept[name][seed], name, seed)
		if err != nil {
			return err
		}
		s.res.Vectors = append(s.res.Vectors, *vr)
	}
	return nil
}

// vectorsOne probes the function vectors of one trained model on the tree test set.
func (s *study) vectorsOne(t *trained, name string, seed int) (*VectorResult, error) {
	d := s.cfg.Data
	L, K := t.cfg.Measurements, d.Tree.Depth
	eval := s.treeTest
	out, err := t.run(eval, nil, nil)
	if err != nil {
		return nil, err
	}
	E := eval.B
	vr := &VectorResult{Name: name, Kind: t.cfg.Kind, Seed: seed, Layers: L}
	half := E / 2
	for l := 1; l <= L; l++ {
		feats := make([][]float64, E)
		for i := range feats {
			feats[i] = out.workspace[i*L : i*L+l]
		}
		accs := make([]float64, K)
		for k := 1; k <= K; k++ {
			labels := make([]bool, E)
			for i := range labels {
				labels[i] = d.Tree.Bit(eval.Leaves[i], k) == 1
			}
			w := fitLogistic(feats[:half], labels[:half])
			accs[k-1] = accuracy(w, feats[half:], labels[half:])
		}
		vr.ProbeAccuracy = append(vr.ProbeAccuracy, accs)
		sum, n := make([]float64, 1<<l), make([]float64, 1<<l)
		for i := 0; i < E; i++ {
			c := eval.Leaves[i] >> (K - l) // the first l bits, b_1 most significant
			sum[c] += out.workspace[i*L+l-1]
			n[c]++
		}
		for c := range sum {
			if n[c] > 0 {
				sum[c] /= n[c]
			}
		}
		vr.Centroids = append(vr.Centroids, sum)
	}
	for i := 0; i < min(E, 500); i++ {
		vr.Workspace = append(vr.Workspace, out.workspace[i*L:(i+1)*L])
		vr.Leaves = append(vr.Leaves, eval.Leaves[i])
	}
	return vr, nil
}

// fitLogistic fits P(label) = σ(w₀ + Σ_j w_j·x_j) by Newton's method with a small ridge penalty (so separable data
// give finite weights); features are standardised inside. It returns [w₀, w_1 …] on the standardised features, with
// the means and scales appended so that accuracy can apply them.
func fitLogistic(x [][]float64, y []bool) []float64 {
	p := len(x[0])
	mu, sd := make([]float64, p), make([]float64, p)
	for _, r := range x {
		for j, v := range r {
			mu[j] += v
		}
	}
	for j := range mu {
		mu[j] /= float64(len(x))
	}
	for _, r := range x {
		for j, v := range r {
			sd[j] += (v - mu[j]) * (v - mu[j])
		}
	}
	for j := range sd {
		sd[j] = math.Sqrt(sd[j]/float64(len(x))) + 1e-12
	}
	z := func(r []float64, j int) float64 { // design column j (0 = intercept)
		if j == 0 {
			return 1
		}
		return (r[j-1] - mu[j-1]) / sd[j-1]
	}
	const ridge = 1e-3
	n := p + 1
	w := make([]float64, n)
	for iter := 0; iter < 30; iter++ {
		g := make([]float64, n)
		h := make([][]float64, n)
		for a := range h {
			h[a] = make([]float64, n)
			h[a][a] = ridge * float64(len(x))
			g[a] = ridge * float64(len(x)) * w[a]
		}
		for i, r := range x {
			eta := 0.0
			for j := 0; j < n; j++ {
				eta += w[j] * z(r, j)
			}
			pr := 1 / (1 + math.Exp(-eta))
			t := 0.0
			if y[i] {
				t = 1
			}
			for a := 0; a < n; a++ {
				za := z(r, a)
				g[a] += (pr - t) * za
				for b := 0; b < n; b++ {
					h[a][b] += pr * (1 - pr) * za * z(r, b)
				}
			}
		}
		step := solve(h, g)
		for a := range w {
			w[a] -= step[a]
		}
	}
	return append(append(w, mu...), sd...)
}

// accuracy is the fraction of rows whose predicted label (probability > ½) matches y, for weights from fitLogistic.
func accuracy(w []float64, x [][]float64, y []bool) float64 {
	p := len(x[0])
	mu, sd := w[p+1:2*p+1], w[2*p+1:]
	right := 0
	for i, r := range x {
		eta := w[0]
		for j, v := range r {
			eta += w[j+1] * (v - mu[j]) / sd[j]
		}
		if (eta > 0) == y[i] {
			right++
		}
	}
	return float64(right) / float64(len(x))
}

// solve returns h⁻¹g by Gaussian elimination with partial pivoting (h is small and positive definite).
func solve(h [][]float64, g []float64) []float64 {
	n := len(g)
	a := make([][]float64, n)
	for i := range a {
		a[i] = append(append([]float64{}, h[i]...), g[i])
	}
	for c := 0; c < n; c++ {
		piv := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[piv][c]) {
				piv = r
			}
		}
		a[c], a[piv] = a[piv], a[c]
		for r := c + 1; r < n; r++ {
			f := a[r][c] / a[c][c]
			for k := c; k <= n; k++ {
				a[r][k] -= f * a[c][k]
			}
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		s := a[r][n]
		for k := r + 1; k < n; k++ {
			s -= a[r][k] * x[k]
		}
		x[r] = s / a[r][r]
	}
	return x
}

// Patch returns the patching result of row name (a kind, or AblationKeyGain) for the seed with the lowest
// validation MSE, or nil.
func (r *Result) Patch(name string) *PatchResult {
	var out *PatchResult
	for i := range r.Patches {
		if p := &r.Patches[i]; p.Name == name && (out == nil || p.ValMSE < out.ValMSE) {
			out = p
		}
	}
	return out
}

// PatchSeeds returns the patching results of row name, one per seed.
func (r *Result) PatchSeeds(name string) []PatchResult {
	var out []PatchResult
	for _, p := range r.Patches {
		if p.Name == name {
			out = append(out, p)
		}
	}
	return out
}

// Vector returns the function-vector result of row name, or nil.
func (r *Result) Vector(name string) *VectorResult {
	for i := range r.Vectors {
		if r.Vectors[i].Name == name {
			return &r.Vectors[i]
		}
	}
	return nil
}
