package decoder

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/protolab/protolab/workbench/wbtest"
)

// The attention pattern [B, H, T, S] of Logits is causal softmax weights: each row sums to 1 and is 0 above the
// diagonal.
func TestProbes_AttentionPatternIsCausalSoftmax(t *testing.T) {
	cfg := hookTestConfigs()[MixerAttention]
	vars, _, _ := newTinyModel(t, cfg, 320)
	tokens := randomTokens(321, testB, testT, cfg.VocabSize)
	keep := func(name string) bool { return strings.HasSuffix(name, ".pattern") }
	_, _, acts := logitsProbes(t, vars, cfg, tokens, keep, nil, nil, false)
	if len(acts) != cfg.NumLayers {
		t.Fatalf("%d patterns, want %d", len(acts), cfg.NumLayers)
	}
	for name, a := range acts {
		H := cfg.Attention.NumHeads
		if d := a.Shape().Dimensions; !slices.Equal(d, []int{testB, H, testT, testT}) {
			t.Fatalf("%s shape %v, want [B, H, T, S] = [%d, %d, %d, %d]", name, d, testB, H, testT, testT)
		}
		p := wbtest.Flat64(a)
		for r := 0; r < testB*H*testT; r++ {
			row, q := p[r*testT:(r+1)*testT], r%testT
			sum := 0.0
			for s, w := range row {
				if s > q && w != 0 {
					t.Fatalf("%s row %d: weight %g on future key %d > %d", name, r, w, s, q)
				}
				if w < 0 {
					t.Fatalf("%s row %d: negative weight %g", name, r, w)
				}
				sum += w
			}
			if math.Abs(sum-1) > 1e-12 {
				t.Fatalf("%s row %d sums to %.15g, want 1", name, r, sum)
			}
		}
	}
}

// referenceHeads is the head-level part of referenceAttention: x [B, T, D] (the block's norm1) → the weights
// [B, H, T, T] (0 above the diagonal) and the head outputs z [B, T, H, D_h] before the output projection.
func referenceHeads(x, wq, wk, wv []float64, B, T, D, H, Hkv, Dh int, base float64) (pattern, z []float64) {
	q := refMatMul(x, wq, B*T, D, H*Dh)
	k := refMatMul(x, wk, B*T, D, Hkv*Dh)
	v := refMatMul(x, wv, B*T, D, Hkv*Dh)
	rope := func(u []float64, heads int) {
		F := Dh / 2
		for bt := 0; bt < B*T; bt++ {
			for h := 0; h < heads; h++ {
				row := (bt*heads + h) * Dh
				for i := 0; i < F; i++ {
					a := float64(bt%T) * math.Pow(base, -2*float64(i)/float64(Dh))
					x1, x2 := u[row+i], u[row+F+i]
					u[row+i], u[row+F+i] = x1*math.Cos(a)-x2*math.Sin(a), x2*math.Cos(a)+x1*math.Sin(a)
				}
			}
		}
	}
	rope(q, H)
	rope(k, Hkv)
	pattern, z = make([]float64, B*H*T*T), make([]float64, B*T*H*Dh)
	G := H / Hkv
	for b := 0; b < B; b++ {
		for h := 0; h < H; h++ {
			for t := 0; t < T; t++ {
				w := pattern[((b*H+h)*T+t)*T : ((b*H+h)*T+t+1)*T]
				qRow := ((b*T+t)*H + h) * Dh
				maxLogit, sum := math.Inf(-1), 0.0
				for s := 0; s <= t; s++ {
					kRow := ((b*T+s)*Hkv + h/G) * Dh
					for d := 0; d < Dh; d++ {
						w[s] += q[qRow+d] * k[kRow+d] / math.Sqrt(float64(Dh))
					}
					maxLogit = math.Max(maxLogit, w[s])
				}
				for s := 0; s <= t; s++ {
					w[s] = math.Exp(w[s] - maxLogit)
					sum += w[s]
				}
				for s := 0; s <= t; s++ {
					w[s] /= sum
					vRow := ((b*T+s)*Hkv + h/G) * Dh
					for d := 0; d < Dh; d++ {
						z[qRow+d] += w[s] * v[vRow+d]
					}
				}
			}
		}
	}
	return pattern, z
}

// The attention probes hold the right heads in the right order (grouped-query heads h = kv·G + g): pattern and z
// of every block equal the float64 reference computed from the block's norm1 probe.
func TestProbes_AttentionHeadsMatchReference(t *testing.T) {
	cfg := hookTestConfigs()[MixerAttention]
	vars, _, p := newTinyModel(t, cfg, 360)
	tokens := randomTokens(361, testB, testT, cfg.VocabSize)
	_, _, acts := logitsProbes(t, vars, cfg, tokens, keepAll, nil, nil, false)
	ac, D := cfg.Attention, cfg.Width
	for l := 0; l < cfg.NumLayers; l++ {
		block := BlockScope(l)
		prefix := "/" + block + "/attention/"
		pattern, z := referenceHeads(wbtest.Flat64(acts[block+".norm1"]), p[prefix+"q"], p[prefix+"k"], p[prefix+"v"],
			testB, testT, D, ac.NumHeads, ac.KVHeads(), ac.HeadSize(D), ac.RoPEBase)
		wbtest.RequireClose(t, block+" pattern", pattern, wbtest.Flat64(acts[block+".attention.pattern"]), tolParity)
		wbtest.RequireClose(t, block+" z", z, wbtest.Flat64(acts[block+".attention.z"]), tolParity)
	}
}
