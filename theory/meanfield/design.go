package meanfield

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/protolab/protolab/theory/prior"
)

// LevelDesign is a non-adaptive linear design of M channels on the tree prior whose key weights every node of a
// level alike: channel j measures u_jᵀθ with u_j = Σ_k W[j][k]·1_k/‖·‖, where 1_k is the indicator of the 2^{k−1}
// nodes of level k, so that
//
//	(4.12) u_jᵀθ_σ = Σ_k W[j][k]·c·α^{k−1}·g_k(σ) / ‖u_j‖,   ‖u_j‖² = Σ_k W[j][k]²·2^{k−1}
//
// whatever the path σ. One channel can thus carry the bits of several levels (model B's MLP readout decodes them),
// which is why the node-key curve of §4.3 does not bound model B. Each channel's noise follows eq. (3.6) averaged
// over the prior, τ_j² = (E‖θ‖² + s² + E(u_jᵀθ)²)/N, and the readout is the exact Bayes posterior over leaves
// (eq. 4.9 with u_j in place of e_n).
type LevelDesign struct {
	Prior prior.Tree `json:"prior"`
	// W are the level weights [M][K]; a row that is all zero is not allowed.
	W [][]float64 `json:"w"`
	// Tokens is N ≥ 1 and LabelNoise s ≥ 0 of eq. (3.6).
	Tokens     int     `json:"tokens"`
	LabelNoise float64 `json:"label_noise"`
}

// Tau2 returns τ_j² of channel j (eq. 3.6 with E(u_jᵀθ)² = Σ_k W[j][k]²·c²α^{2(k−1)}/‖u_j‖²).
func (d LevelDesign) Tau2(j int) float64 {
	norm2, sig2 := 0.0, 0.0
	for k, w := range d.W[j] {
		norm2 += w * w * float64(int(1)<<k)
		a := d.Prior.Amplitude(k + 1)
		sig2 += w * w * a * a
	}
	return (d.Prior.MeanSquaredNorm() + d.LabelNoise*d.LabelNoise + sig2/norm2) / float64(d.Tokens)
}

func (d LevelDesign) validate(who string) error {
	if err := d.Prior.Validate(); err != nil {
		return fmt.Errorf("meanfield.%s: %w", who, err)
	}
	if len(d.W) == 0 || d.Tokens < 1 || d.LabelNoise < 0 {
		return fmt.Errorf("meanfield.%s: %d channels, tokens=%d, label_noise=%g: want ≥ 1, ≥ 1, ≥ 0", who, len(d.W),
			d.Tokens, d.LabelNoise)
	}
	for j, row := range d.W {
		nz := false
		for _, w := range row {
			nz = nz || w != 0
		}
		if len(row) != d.Prior.Depth || !nz {
			return fmt.Errorf("meanfield.%s: row %d of W = %v, want %d weights, not all zero", who, j, row, d.Prior.Depth)
		}
	}
	return nil
}

// designEval scores a LevelDesign on fixed draws (common random numbers: the same leaves and unit noises for every
// design), which makes the Monte Carlo objective a smooth function of W for the search.
type designEval struct {
	tree   prior.Tree
	leaves []int       // [contexts]
	noise  [][]float64 // [contexts][M] standard normal
	signs  [][]float64 // [2^K][K] g_k(σ)
	post   *Posterior
	vals   [][]float64 // [2^K][M] u_jᵀθ_σ, scratch
	logw   []float64   // [2^K] scratch
}

func newDesignEval(t prior.Tree, m, contexts int, seed uint64) *designEval {
	rng := rand.New(rand.NewPCG(seed, 0x64657369676e)) // "design"
	e := &designEval{tree: t, post: NewPosterior(t, 1)}
	for range contexts {
		e.leaves = append(e.leaves, t.SampleLeaf(rng))
		z := make([]float64, m)
		for j := range z {
			z[j] = rng.NormFloat64()
		}
		e.noise = append(e.noise, z)
	}
	for s := range t.NumLeaves() {
		g := make([]float64, t.Depth)
		for k := range g {
			g[k] = float64(2*t.Bit(s, k+1) - 1)
		}
		e.signs = append(e.signs, g)
		e.vals = append(e.vals, make([]float64, m))
	}
	e.logw = make([]float64, t.NumLeaves())
	return e
}

// mse returns the mean and standard error of ‖θ − θ̂‖² of design d over the fixed draws.
func (e *designEval) mse(d LevelDesign) Estimate {
	M := len(d.W)
	tau2 := make([]float64, M)
	for j := range d.W {
		tau2[j] = d.Tau2(j)
		norm := 0.0
		for k, w := range d.W[j] {
			norm += w * w * float64(int(1)<<k)
		}
		norm = math.Sqrt(norm)
		for s, g := range e.signs {
			v := 0.0
			for k, w := range d.W[j] {
				v += w * e.tree.Amplitude(k+1) * g[k]
			}
			e.vals[s][j] = v / norm
		}
	}
	var mom moments
	for c, leaf := range e.leaves {
		for s := range e.logw {
			l := 0.0
			for j := range M {
				m := e.vals[leaf][j] + math.Sqrt(tau2[j])*e.noise[c][j]
				v := e.vals[s][j]
				l += (2*m*v - v*v) / (2 * tau2[j])
			}
			e.logw[s] = l
		}
		e.post.setLogWeights(e.logw)
		mom.add(e.post.SquaredError(leaf))
	}
	return mom.estimate()
}

// LevelDesignMC estimates the MSE of design d with the Bayes readout on contexts Monte Carlo draws of the
// measurement model (independent noise N(0, τ_j²) per channel, eq. 4.1).
func LevelDesignMC(d LevelDesign, contexts int, seed uint64) (Estimate, error) {
	if err := d.validate("LevelDesignMC"); err != nil {
		return Estimate{}, err
	}
	if contexts < 2 {
		return Estimate{}, fmt.Errorf("meanfield.LevelDesignMC: contexts=%d, want ≥ 2", contexts)
	}
	return newDesignEval(d.Prior, len(d.W), contexts, seed).mse(d), nil
}

// BestLevelDesign searches the level weights of an M-channel LevelDesign for the lowest Bayes-readout MSE: pattern
// search (each weight ± a step, the step halved when no move helps) on contexts fixed draws, started from channel j
// reading level j alone (the BFS levels). It returns
// the best design found and its MSE re-estimated on fresh draws (seed + 1). The search is local: the result is an
// upper bound on the best non-adaptive level design, not a proof of optimality.
func BestLevelDesign(t prior.Tree, m, tokens int, labelNoise float64, contexts int, seed uint64) (LevelDesign,
	Estimate, error) {
	start := LevelDesign{Prior: t, Tokens: tokens, LabelNoise: labelNoise}
	for j := range m {
		row := make([]float64, t.Depth)
		row[min(j, t.Depth-1)] = 1
		start.W = append(start.W, row)
	}
	if err := start.validate("BestLevelDesign"); err != nil {
		return LevelDesign{}, Estimate{}, err
	}
	if contexts < 2 {
		return LevelDesign{}, Estimate{}, fmt.Errorf("meanfield.BestLevelDesign: contexts=%d, want ≥ 2", contexts)
	}
	e := newDesignEval(t, m, contexts, seed)
	best, bestMSE := start, e.mse(start).Mean
	for step := 0.5; step > 1e-3; {
		improved := false
		for j := range m {
			for k := range t.Depth {
				for _, dir := range []float64{1, -1} {
					cand := cloneDesign(best)
					cand.W[j][k] += dir * step
					if cand.validate("BestLevelDesign") != nil {
						continue
					}
					if v := e.mse(cand).Mean; v < bestMSE-1e-9 {
						best, bestMSE, improved = cand, v, true
					}
				}
			}
		}
		if !improved {
			step /= 2
		}
	}
	est, err := LevelDesignMC(best, contexts, seed+1)
	return best, est, err
}

func cloneDesign(d LevelDesign) LevelDesign {
	c := d
	c.W = make([][]float64, len(d.W))
	for j, row := range d.W {
		c.W[j] = append([]float64(nil), row...)
	}
	return c
}
