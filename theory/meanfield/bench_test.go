package meanfield

import (
	"math/rand/v2"
	"testing"

	"github.com/protolab/protolab/theory/prior"
)

// BenchmarkAdaptiveMC_K8 times the §4.7 adaptive column: K = 8, τ = 0.05, L = 1…8, 2000 contexts.
func BenchmarkAdaptiveMC_K8(b *testing.B) {
	c := TreeMC{Prior: prior.DefaultTree(), Tau: 0.05, Measurements: 8, Contexts: 2000, Seed: 1}
	for b.Loop() {
		if _, err := AdaptiveMC(c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAdaptiveMC_TokensK6 times the ideal Model A on real tokens: K = 6, N = 128, L = 1…6, 2000 contexts.
func BenchmarkAdaptiveMC_TokensK6(b *testing.B) {
	c := TreeMC{Prior: prior.Tree{Depth: 6, Alpha: 0.6}, Tau: 0.11, Tokens: 128, LabelNoise: 0.1, Measurements: 6,
		Contexts: 2000, Seed: 1}
	for b.Loop() {
		if _, err := AdaptiveMC(c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPosterior_K8 times one measurement plus the squared error of the exact posterior over 256 leaves.
func BenchmarkPosterior_K8(b *testing.B) {
	tr := prior.DefaultTree()
	post := NewPosterior(tr, 0.05)
	rng := rand.New(rand.NewPCG(1, 1))
	for b.Loop() {
		post.Observe(1+rng.IntN(tr.Dim()), rng.NormFloat64())
		_ = post.SquaredError(3)
	}
}

// BenchmarkTreeBayesBound_K6N8 times the full-data Bayes bound: K = 6, N = 8, 10,000 contexts.
func BenchmarkTreeBayesBound_K6N8(b *testing.B) {
	c := FullDataMC{Tokens: 8, LabelNoise: 0.1, Contexts: 10000, Seed: 1}
	for b.Loop() {
		if _, err := TreeBayesBound(prior.Tree{Depth: 6, Alpha: 0.6}, c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDP_OptimalK3L2 times the noisy dynamic programme at K = 3, L = 2, Q = 40.
func BenchmarkDP_OptimalK3L2(b *testing.B) {
	d := DP{Prior: prior.Tree{Depth: 3, Alpha: 0.6}, Tau: 0.2, Layers: 2}
	for b.Loop() {
		if _, err := d.Optimal(); err != nil {
			b.Fatal(err)
		}
	}
}
