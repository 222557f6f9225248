package icl

import (
	"math"
	"strings"
	"testing"

	"github.com/protolab/protolab/theory/prior"
)

// TestGenerate_Tokens checks the data generator: y = θᵀx + s·ξ with θ the leaf's θ_σ, reproducible per seed.
func TestGenerate_Tokens(t *testing.T) {
	tree := prior.Tree{Depth: 3, Alpha: 0.6}
	b := Generate(tree, 5, 7, 0, 3, "x")
	theta := make([]float64, tree.Dim())
	for i := 0; i < b.B; i++ {
		tree.Theta(b.Leaves[i], theta)
		for n := 0; n < b.N; n++ {
			y := 0.0
			for d := 0; d < b.D; d++ {
				y += theta[d] * float64(b.X[(i*b.N+n)*b.D+d])
				if float32(theta[d]) != b.Theta[i*b.D+d] {
					t.Fatalf("context %d: θ[%d] = %g, leaf's θ = %g", i, d, b.Theta[i*b.D+d], theta[d])
				}
			}
			if math.Abs(y-float64(b.Y[i*b.N+n])) > 1e-5 {
				t.Fatalf("context %d, token %d: y = %g, θᵀx = %g (s = 0)", i, n, b.Y[i*b.N+n], y)
			}
		}
	}
	again := Generate(tree, 5, 7, 0, 3, "x")
	if again.X[17] != b.X[17] || again.Leaves[4] != b.Leaves[4] {
		t.Error("Generate is not reproducible for equal seeds")
	}
}

// TestGenerateShared_SharesOnlyTokens checks the shared-token batches: one x_{1:N} for all contexts, each context
// with its own θ (a tree leaf) and y = θᵀx + s·ξ, reproducible per seed.
func TestGenerateShared_SharesOnlyTokens(t *testing.T) {
	tree := prior.Tree{Depth: 3, Alpha: 0.6}
	const B, N = 40, 6
	b := GenerateShared(tree, B, N, 0, 3, "x")
	if !b.Shared || len(b.X) != N*tree.Dim() || b.Tensors()[0].Shape().Dim(0) != 1 {
		t.Fatalf("shared batch: Shared=%v, len(X)=%d, x shape %s", b.Shared, len(b.X), b.Tensors()[0].Shape())
	}
	theta := make([]float64, tree.Dim())
	leaves := map[int]bool{}
	for i := 0; i < B; i++ {
		tree.Theta(b.Leaves[i], theta)
		leaves[b.Leaves[i]] = true
		for n := 0; n < N; n++ {
			y := 0.0
			for d := range theta {
				y += theta[d] * float64(b.X[n*b.D+d])
			}
			if math.Abs(y-float64(b.Y[i*N+n])) > 1e-5 {
				t.Fatalf("context %d, token %d: y = %g, θᵀx = %g (s = 0)", i, n, b.Y[i*N+n], y)
			}
		}
	}
	if len(leaves) < 4 {
		t.Errorf("%d contexts drew only %d distinct leaves", B, len(leaves))
	}
	sub := b.Slice(5, 9)
	if sub.B != 4 || &sub.X[0] != &b.X[0] || sub.Y[0] != b.Y[5*N] {
		t.Error("Slice of a shared batch must keep the shared tokens and take the contexts' y")
	}
	noisy := GenerateShared(tree, B, N, 0.5, 3, "x")
	if noisy.X[7] != b.X[7] || noisy.Y[7] == b.Y[7] {
		t.Error("the same seed must give the same tokens, and label noise must change y")
	}
}

// TestPatchPairs_ShareTokensAndPrefix checks spec §7's pairs: same x, same ξ, paths equal before level j, different
// at j.
func TestPatchPairs_ShareTokensAndPrefix(t *testing.T) {
	tree := prior.Tree{Depth: 4, Alpha: 0.6}
	const s = 0.3
	for j := 1; j <= tree.Depth; j++ {
		tg, dn := PatchPairs(tree, 20, 6, s, j, 9)
		for i := 0; i < 20; i++ {
			for k := 1; k <= tree.Depth; k++ {
				same := tree.Bit(tg.Leaves[i], k) == tree.Bit(dn.Leaves[i], k)
				if (k < j && !same) || (k == j && same) {
					t.Fatalf("j=%d pair %d: bit %d of %04b and %04b", j, i, k, tg.Leaves[i], dn.Leaves[i])
				}
			}
		}
		for k := range tg.X {
			if tg.X[k] != dn.X[k] {
				t.Fatalf("j=%d: x differs at %d", j, k)
			}
		}
		// y_t − θ_tᵀx = y_d − θ_dᵀx = s·ξ.
		for i := 0; i < 20; i++ {
			for n := 0; n < 6; n++ {
				var rt, rd float64
				rt, rd = float64(tg.Y[i*6+n]), float64(dn.Y[i*6+n])
				for d := 0; d < tg.D; d++ {
					x := float64(tg.X[(i*6+n)*tg.D+d])
					rt -= float64(tg.Theta[i*tg.D+d]) * x
					rd -= float64(dn.Theta[i*tg.D+d]) * x
				}
				if math.Abs(rt-rd) > 1e-5 {
					t.Fatalf("j=%d pair %d token %d: noise %g vs %g", j, i, n, rt, rd)
				}
			}
		}
	}
}

// TestStream_RestoreReplays checks that Restore returns to a position: the batches after it repeat exactly.
func TestStream_RestoreReplays(t *testing.T) {
	s := &Stream{Prior: prior.NewGaussian(3), B: 2, N: 4, S: 0.1, Seed: 5}
	s.Next()
	st, _ := s.State()
	first, _ := s.Next()
	s.Next()
	if err := s.Restore(st); err != nil {
		t.Fatal(err)
	}
	again, _ := s.Next()
	a, b := first[0].Value().([][][]float32), again[0].Value().([][][]float32)
	if a[1][2][0] != b[1][2][0] || a[0][0][1] != b[0][0][1] {
		t.Error("the batch after Restore differs")
	}
	if err := s.Restore([]byte("x")); err == nil || !strings.Contains(err.Error(), "Restore") {
		t.Errorf("Restore of a bad state: %v", err)
	}
}
