package fvec

import (
	"slices"

	"github.com/protolab/protolab/layers/linattn"
	"github.com/protolab/protolab/models/icl"
	"github.com/protolab/protolab/theory/meanfield"
	"github.com/protolab/protolab/workbench/parallel"
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
	// Patching is the trained model's: the clean MSE per level, ΔMSE(j, ℓ) and its paired standard error.
	icl.Patching
	// Theory is ΔMSE of the ideal model A in the measurement model with shared noise at τ = TheoryTau (exactly 0
	// for j ≥ ℓ), meanfield.PatchDelta.
	Theory    [][]float64 `json:"theory"`
	TheoryTau float64     `json:"theory_tau"`
}

// VectorResult describes the function vectors (workspaces p_ℓ) of a patched model on the tree test set (the seed
// with the lowest validation MSE): icl.Model.FunctionVectors.
type VectorResult struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Seed   int    `json:"seed"`
	Layers int    `json:"layers"`
	icl.Vectors
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
	targets, donors := make([]*icl.Batch, K), make([]*icl.Batch, K)
	for j := 1; j <= K; j++ {
		targets[j-1], donors[j-1] = icl.PatchPairs(d.Tree, d.PatchPairs, d.Tokens, d.LabelNoise, j, c.TestSeed)
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

// patchOne runs the patching experiment on one trained model, beside the ideal model's ΔMSE (theory).
func (s *study) patchOne(t *icl.Model, name string, seed int, targets, donors []*icl.Batch,
	theory [][]meanfield.Estimate, tau float64) (*PatchResult, error) {
	L := t.Config.Measurements
	p, err := t.PatchKeys(targets, donors)
	if err != nil {
		return nil, err
	}
	pr := &PatchResult{Name: name, Kind: t.Config.Kind, Layers: L, Seed: seed, Patching: p, TheoryTau: tau}
	for j := 1; j <= len(targets); j++ {
		th := make([]float64, L)
		for l := 1; l <= L; l++ {
			th[l-1] = theory[j-1][l-1].Mean
		}
		pr.Levels, pr.Theory = append(pr.Levels, j), append(pr.Theory, th)
	}
	s.logf("patching %s (L=%d), seed %d: ΔMSE(j, ℓ) %.4f", name, L, seed, pr.Delta)
	return pr, nil
}

// vectors probes the function vectors of each patched row's model with the lowest validation MSE.
func (s *study) vectors() error {
	for _, name := range s.patchedRows() {
		seed := best(s.keptVal[name])
		t := s.kept[name][seed]
		v, err := t.FunctionVectors(s.treeTest, s.cfg.Data.Tree)
		if err != nil {
			return err
		}
		s.res.Vectors = append(s.res.Vectors, VectorResult{Name: name, Kind: t.Config.Kind, Seed: seed,
			Layers: t.Config.Measurements, Vectors: v})
	}
	return nil
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
