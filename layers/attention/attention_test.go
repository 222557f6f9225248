package attention

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/workbench/wbtest"
)

const (
	tolParity = 1e-10 // float64 parity with the reference (docs/STYLE.md §11.1)
	tolF32    = 1e-5  // float32 parity
)

func TestRoPE_MatchesReference(t *testing.T) {
	const B, T, H, Dh, base = 2, 5, 3, 6, 10_000.0
	rng := wbtest.RNG(1)
	x := wbtest.Normal(rng, B*T*H*Dh, 1)
	t.Run("positions[T]", func(t *testing.T) {
		pos := []int32{3, 4, 5, 6, 7} // a window that does not start at 0
		got := wbtest.ExecFlat(t, func(in []*Node) []*Node { return []*Node{RoPE(in[0], in[1], base)} },
			wbtest.Tensor64(x, B, T, H, Dh), tensors.FromValue(pos))[0]
		want := referenceRoPE(x, B, T, H, Dh, func(_, t int) int { return int(pos[t]) }, base)
		wbtest.RequireClose(t, "RoPE", want, got, tolParity)
	})
	t.Run("positions[B,T]", func(t *testing.T) {
		pos := [][]int32{{0, 9, 2, 2, 40}, {7, 1, 0, 130, 5}}
		got := wbtest.ExecFlat(t, func(in []*Node) []*Node { return []*Node{RoPE(in[0], in[1], base)} },
			wbtest.Tensor64(x, B, T, H, Dh), tensors.FromValue(pos))[0]
		want := referenceRoPE(x, B, T, H, Dh, func(b, t int) int { return int(pos[b][t]) }, base)
		wbtest.RequireClose(t, "RoPE", want, got, tolParity)
	})
}

func TestAttend_MatchesReference(t *testing.T) {
	const B, Dh = 2, 4
	rng := wbtest.RNG(2)
	randomMask := func(n int, rng *rand.Rand) []bool {
		m := make([]bool, n)
		for i := range m {
			m[i] = rng.IntN(3) > 0
		}
		return m
	}
	cases := []struct {
		name         string
		T, S, H, Hkv int
		maskDims     []int // nil: no mask
		causal       bool
	}{
		{name: "causal [T,S]", T: 5, S: 5, H: 3, Hkv: 3, maskDims: []int{5, 5}, causal: true},
		{name: "GQA causal", T: 5, S: 5, H: 6, Hkv: 2, maskDims: []int{5, 5}, causal: true},
		{name: "no mask, T≠S", T: 3, S: 5, H: 2, Hkv: 1},
		{name: "mask [B,T,S]", T: 3, S: 5, H: 4, Hkv: 2, maskDims: []int{B, 3, 5}},
		{name: "mask [1,1,T,S]", T: 3, S: 5, H: 3, Hkv: 1, maskDims: []int{1, 1, 3, 5}},
		{name: "mask [B,H,T,S] GQA", T: 3, S: 5, H: 4, Hkv: 2, maskDims: []int{B, 4, 3, 5}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := wbtest.Normal(rng, B*c.T*c.H*Dh, 1)
			k := wbtest.Normal(rng, B*c.S*c.Hkv*Dh, 1)
			v := wbtest.Normal(rng, B*c.S*c.Hkv*Dh, 1)
			args := []*tensors.Tensor{wbtest.Tensor64(q, B, c.T, c.H, Dh), wbtest.Tensor64(k, B, c.S, c.Hkv, Dh),
				wbtest.Tensor64(v, B, c.S, c.Hkv, Dh)}
			var allowed func(b, h, t, s int) bool
			if c.maskDims != nil {
				size := 1
				for _, d := range c.maskDims {
					size *= d
				}
				mask := randomMask(size, rng)
				if c.causal {
					for i := range mask {
						mask[i] = i%c.S <= (i/c.S)%c.T
					}
				}
				md := c.maskDims
				allowed = func(b, h, t, s int) bool {
					switch len(md) {
					case 2:
						return mask[t*c.S+s]
					case 3:
						return mask[(b*c.T+t)*c.S+s]
					}
					bb, hh := min(b, md[0]-1), min(h, md[1]-1)
					return mask[((bb*md[1]+hh)*c.T+t)*c.S+s]
				}
				args = append(args, tensors.FromFlatDataAndDimensions(mask, md...))
			}
			got := wbtest.ExecFlat(t, func(in []*Node) []*Node {
				var mask *Node
				if len(in) == 4 {
					mask = in[3]
				}
				out := Attend(in[0], in[1], in[2], mask)
				out.AssertDims(B, c.T, c.H, Dh)
				return []*Node{out}
			}, args...)[0]
			want := referenceAttend(q, k, v, B, c.T, c.S, c.H, c.Hkv, Dh, allowed)
			wbtest.RequireClose(t, "Attend", want, got, tolParity)
		})
	}
}

// mixCase is an attention configuration at the test sizes B=2, T=5, D=12.
type mixCase struct {
	name string
	cfg  Config
}

func mixCases() []mixCase {
	return []mixCase{
		{"H=3", Config{NumHeads: 3, RoPEBase: 10_000}},
		{"GQA H=6 Hkv=2", Config{NumHeads: 6, NumKVHeads: 2, RoPEBase: 500_000}},
		{"MQA H=2 Hkv=1 Dh=4", Config{NumHeads: 2, NumKVHeads: 1, HeadDim: 4, RoPEBase: 100}},
	}
}

// randomWeights returns random x [B,T,D] and weights for cfg, as flat slices with their dims.
func randomWeights(cfg Config, B, T, D int, seed uint64) (values [][]float64, dims [][]int) {
	rng := wbtest.RNG(seed)
	H, Hkv, Dh := cfg.NumHeads, cfg.KVHeads(), cfg.HeadSize(D)
	dims = [][]int{{B, T, D}, {D, H * Dh}, {D, Hkv * Dh}, {D, Hkv * Dh}, {H * Dh, D}}
	for i, d := range dims {
		n := 1
		for _, x := range d {
			n *= x
		}
		std := 0.5
		if i == 0 {
			std = 1
		}
		values = append(values, wbtest.Normal(rng, n, std))
	}
	return values, dims
}

func TestMix_MatchesReference(t *testing.T) {
	const B, T, D = 2, 5, 12
	for i, c := range mixCases() {
		t.Run(c.name, func(t *testing.T) {
			vals, dims := randomWeights(c.cfg, B, T, D, uint64(10+i))
			args := make([]*tensors.Tensor, len(vals))
			for j := range vals {
				args[j] = wbtest.Tensor64(vals[j], dims[j]...)
			}
			got := wbtest.ExecFlat(t, func(in []*Node) []*Node {
				return []*Node{Mix(in[0], in[1], in[2], in[3], in[4], c.cfg)}
			}, args...)[0]
			want := referenceMixer(vals[0], vals[1], vals[2], vals[3], vals[4], B, T, D,
				c.cfg.NumHeads, c.cfg.KVHeads(), c.cfg.HeadSize(D), c.cfg.RoPEBase)
			wbtest.RequireClose(t, "Mix", want, got, tolParity)
		})
	}
}

func TestMix_Float32MatchesReference(t *testing.T) {
	const B, T, D = 2, 5, 12
	c := mixCases()[1]
	vals, dims := randomWeights(c.cfg, B, T, D, 20)
	args := make([]any, len(vals))
	for j := range vals {
		f32 := make([]float32, len(vals[j]))
		for i, v := range vals[j] {
			f32[i] = float32(v)
		}
		vals[j] = make([]float64, len(f32)) // the reference sees exactly the float32-rounded inputs
		for i, v := range f32 {
			vals[j][i] = float64(v)
		}
		args[j] = tensors.FromFlatDataAndDimensions(f32, dims[j]...)
	}
	out := MustExecOnce(wbtest.Backend(t), func(in []*Node) *Node {
		return Mix(in[0], in[1], in[2], in[3], in[4], c.cfg)
	}, args...)
	if out.DType() != dtypes.Float32 {
		t.Fatalf("Mix output dtype %s, want float32", out.DType())
	}
	got32 := tensors.MustCopyFlatData[float32](out)
	got := make([]float64, len(got32))
	for i, v := range got32 {
		got[i] = float64(v)
	}
	want := referenceMixer(vals[0], vals[1], vals[2], vals[3], vals[4], B, T, D,
		c.cfg.NumHeads, c.cfg.KVHeads(), c.cfg.HeadSize(D), c.cfg.RoPEBase)
	wbtest.RequireClose(t, "Mix float32", want, got, tolF32)
}

// TestStep_MatchesMixer checks the KV cache over three head layouts: token by token Step reproduces Mixer (the
// property layers/decoder's conformance suite checks for every mixer) and leaves the cache slots after pos empty.
func TestStep_MatchesMixer(t *testing.T) {
	const B, T, D, S = 2, 5, 12, 7 // cache capacity S > T: unused slots must not matter
	for _, c := range mixCases() {
		t.Run(c.name, func(t *testing.T) {
			backend := wbtest.Backend(t)
			vars := model.NewStore()
			vars.SetParam(model.ParamInitialSeed, int64(60))
			x := wbtest.Normal(wbtest.RNG(61), B*T*D, 1)
			full := wbtest.Flat64(model.MustExecOnce(backend, vars, func(scope *model.Scope, x *Node) *Node {
				return Mixer(scope, c.cfg, x)
			}, wbtest.Tensor64(x, B, T, D)))
			step := model.MustNewExec(backend, vars, func(scope *model.Scope, in []*Node) []*Node {
				y, k, v := Step(scope, c.cfg, in[0], in[1], in[2], in[3])
				return []*Node{y, k, v}
			})
			cs := CacheShapes(c.cfg, D, B, S, dtypes.Float64)
			kc, vc := tensors.FromShape(cs[0]), tensors.FromShape(cs[1])
			for pos := 0; pos < T; pos++ {
				xt := make([]float64, 0, B*D)
				for b := 0; b < B; b++ {
					xt = append(xt, x[(b*T+pos)*D:(b*T+pos+1)*D]...)
				}
				outs := step.MustExec(wbtest.Tensor64(xt, B, 1, D), int32(pos), kc, vc)
				y := wbtest.Flat64(outs[0])
				kc, vc = outs[1], outs[2]
				want := make([]float64, 0, B*D)
				for b := 0; b < B; b++ {
					want = append(want, full[(b*T+pos)*D:(b*T+pos+1)*D]...)
				}
				wbtest.RequireClose(t, fmt.Sprintf("Step output at position %d", pos), want, y, tolParity)
				// Slots after pos are still empty.
				Hkv, Dh := c.cfg.KVHeads(), c.cfg.HeadSize(D)
				kf := wbtest.Flat64(kc)
				for i, v := range kf {
					if s := (i / Dh) % S; s > pos && v != 0 {
						t.Fatalf("after step %d, key cache slot %d (of %d kv heads) is %g, want 0", pos, s, Hkv, v)
					}
				}
			}
		})
	}
}

// A fully masked query row gets uniform weights (the mean of the values), not NaN, and a partly masked row gives its
// masked keys weight exactly 0, also with logits in the hundreds (maskedLogit must absorb them).
func TestAttend_MaskedRowsWithLargeLogits(t *testing.T) {
	const B, T, S, H, Dh = 2, 3, 4, 2, 4
	rng := wbtest.RNG(9)
	q, k, v := wbtest.Normal(rng, B*T*H*Dh, 30), wbtest.Normal(rng, B*S*H*Dh, 30), wbtest.Normal(rng, B*S*H*Dh, 1)
	mask := make([]bool, B*T*S)
	for i := range mask {
		mask[i] = i%3 != 0
	}
	full := 1 // row (b=0, t=1) is fully masked
	for s := range S {
		mask[full*S+s] = false
	}
	got := wbtest.ExecFlat(t, func(in []*Node) []*Node { return []*Node{Attend(in[0], in[1], in[2], in[3])} },
		wbtest.Tensor64(q, B, T, H, Dh), wbtest.Tensor64(k, B, S, H, Dh), wbtest.Tensor64(v, B, S, H, Dh),
		tensors.FromFlatDataAndDimensions(mask, B, T, S))[0]
	want := referenceAttend(q, k, v, B, T, S, H, H, Dh, func(b, _, t, s int) bool { return mask[(b*T+t)*S+s] })
	for h := range H { // the reference divides 0 by 0 there: the fully masked row's answer is the mean of v
		for d := range Dh {
			mean := 0.0
			for s := range S {
				mean += v[(s*H+h)*Dh+d] / S
			}
			want[(full*H+h)*Dh+d] = mean
		}
	}
	wbtest.RequireClose(t, "Attend", want, got, tolParity)
}
