package attention

import (
	"fmt"
	"strings"
	"testing"

	. "github.com/gomlx/gomlx/core/graph"

	"github.com/protolab/protolab/workbench/wbtest"
)

// chunkCase is a causal attention problem q [B, T, H, D_h], k, v [B, T, H_kv, D_h] with block length C.
type chunkCase struct {
	T, H, Hkv, C int
}

func (c chunkCase) String() string { return fmt.Sprintf("T=%d H=%d Hkv=%d C=%d", c.T, c.H, c.Hkv, c.C) }

// chunkCases covers T a multiple of C, T not a multiple of C, T < C, C = 1 and grouped-query heads.
func chunkCases() []chunkCase {
	return []chunkCase{
		{T: 8, H: 2, Hkv: 2, C: 4},
		{T: 11, H: 2, Hkv: 2, C: 4},
		{T: 3, H: 3, Hkv: 3, C: 4},
		{T: 5, H: 1, Hkv: 1, C: 1},
		{T: 7, H: 6, Hkv: 2, C: 3},
	}
}

const chunkB, chunkDh = 2, 4

// chunkInputs returns random q, k, v and a cotangent of the output for c, flat, with their dims.
func chunkInputs(c chunkCase, seed uint64) (vals [][]float64, dims [][]int, cot []float64) {
	rng := wbtest.RNG(seed)
	dims = [][]int{{chunkB, c.T, c.H, chunkDh}, {chunkB, c.T, c.Hkv, chunkDh}, {chunkB, c.T, c.Hkv, chunkDh}}
	for _, d := range dims {
		vals = append(vals, wbtest.Normal(rng, d[0]*d[1]*d[2]*d[3], 1))
	}
	return vals, dims, wbtest.Normal(rng, chunkB*c.T*c.H*chunkDh, 1)
}

func causal(_, _, t, s int) bool { return s <= t }

// The chunked form equals the plain-loop reference and the full form (Attend with CausalMask), output and the
// gradients of ⟨out, c⟩ with respect to q, k and v; the reference gradient is referenceAttendVJP.
func TestAttendCausalChunked_MatchesReferenceAndFull(t *testing.T) {
	for i, c := range chunkCases() {
		t.Run(c.String(), func(t *testing.T) {
			vals, dims, cot := chunkInputs(c, uint64(100+i))
			args := wbtest.Tensors64(vals, dims)
			both := func(in []*Node) []*Node {
				chunked := AttendCausalChunked(in[0], in[1], in[2], c.C)
				chunked.AssertDims(chunkB, c.T, c.H, chunkDh)
				full := Attend(in[0], in[1], in[2], CausalMask(in[0].Graph(), c.T))
				gc := Gradient(wbtest.CotangentLoss(chunked, cot), in...)
				gf := Gradient(wbtest.CotangentLoss(full, cot), in...)
				return append([]*Node{chunked, full}, append(gc, gf...)...)
			}
			got := wbtest.ExecFlat(t, both, args...)
			want := referenceAttend(vals[0], vals[1], vals[2], chunkB, c.T, c.T, c.H, c.Hkv, chunkDh, causal)
			wbtest.RequireClose(t, "chunked vs reference", want, got[0], tolParity)
			wbtest.RequireClose(t, "chunked vs full", got[1], got[0], tolParity)
			dq, dk, dv := referenceAttendVJP(vals[0], vals[1], vals[2], cot, chunkB, c.T, c.H, c.Hkv, chunkDh)
			for j, name := range []string{"dq", "dk", "dv"} {
				wbtest.RequireClose(t, name+" chunked vs reference", [][]float64{dq, dk, dv}[j], got[2+j], tolParity)
				wbtest.RequireClose(t, name+" chunked vs full", got[5+j], got[2+j], tolParity)
			}
		})
	}
}

// The hand-written backward pass agrees with central finite differences of the chunked forward pass.
func TestAttendCausalChunked_FiniteDifferenceGradient(t *testing.T) {
	c := chunkCase{T: 7, H: 4, Hkv: 2, C: 3}
	vals, dims, cot := chunkInputs(c, 200)
	wbtest.CheckGradients(t, []string{"q", "k", "v"}, vals, dims, func(in []*Node) *Node {
		return wbtest.CotangentLoss(AttendCausalChunked(in[0], in[1], in[2], c.C), cot)
	})
}

// Causality: changing q, k and v at positions > t leaves the outputs at positions ≤ t exactly unchanged, for a t
// inside a block and at a block boundary.
func TestAttendCausalChunked_Causal(t *testing.T) {
	c := chunkCase{T: 10, H: 2, Hkv: 1, C: 4}
	vals, dims, _ := chunkInputs(c, 300)
	exec := MustNewExec(wbtest.Backend(t), func(q, k, v *Node) *Node { return AttendCausalChunked(q, k, v, c.C) })
	run := func(vs [][]float64) []float64 {
		return wbtest.Flat64(exec.MustExec(wbtest.Tensor64(vs[0], dims[0]...), wbtest.Tensor64(vs[1], dims[1]...),
			wbtest.Tensor64(vs[2], dims[2]...))[0])
	}
	base := run(vals)
	rng := wbtest.RNG(301)
	for _, last := range []int{5, 3} { // positions > last change; 3 ends the first block
		changed := make([][]float64, 3)
		for i, v := range vals {
			changed[i] = append([]float64(nil), v...)
			heads := dims[i][2]
			for j := range changed[i] {
				if (j/(heads*chunkDh))%c.T > last {
					changed[i][j] += rng.NormFloat64()
				}
			}
		}
		got := run(changed)
		for j := range got {
			pos := (j / (c.H * chunkDh)) % c.T
			if pos <= last && got[j] != base[j] {
				t.Fatalf("changing positions > %d changed the output at position %d: %g → %g", last, pos, base[j], got[j])
			}
			if pos == c.T-1 && got[j] == base[j] {
				t.Fatalf("changing positions > %d left output %d at position %d unchanged", last, j, pos)
			}
		}
	}
}

// Mix with the chunked form equals the reference layer, and its gradients with respect to x and every weight
// equal the full form's (the same variables serve both forms).
func TestMix_ChunkedMatchesReferenceAndFull(t *testing.T) {
	const B, T, D = 2, 7, 12
	for i, mc := range mixCases() {
		t.Run(mc.name, func(t *testing.T) {
			chunked, full := mc.cfg, mc.cfg
			chunked.Kind, chunked.BlockSize = KindChunked, 3
			full.Kind = KindFull
			vals, dims := randomWeights(mc.cfg, B, T, D, uint64(400+i))
			cot := wbtest.Normal(wbtest.RNG(uint64(500+i)), B*T*D, 1)
			got := wbtest.ExecFlat(t, func(in []*Node) []*Node {
				yc := Mix(in[0], in[1], in[2], in[3], in[4], chunked)
				yf := Mix(in[0], in[1], in[2], in[3], in[4], full)
				gc := Gradient(wbtest.CotangentLoss(yc, cot), in...)
				gf := Gradient(wbtest.CotangentLoss(yf, cot), in...)
				return append([]*Node{yc}, append(gc, gf...)...)
			}, wbtest.Tensors64(vals, dims)...)
			want := referenceMixer(vals[0], vals[1], vals[2], vals[3], vals[4], B, T, D,
				mc.cfg.NumHeads, mc.cfg.KVHeads(), mc.cfg.HeadSize(D), mc.cfg.RoPEBase)
			wbtest.RequireClose(t, "Mix chunked", want, got[0], tolParity)
			for j, name := range []string{"x", VarQuery, VarKey, VarValue, VarOutput} {
				wbtest.RequireClose(t, "d/d"+name+" chunked vs full", got[6+j], got[1+j], tolParity)
			}
		})
	}
}

// Config.Chunked resolves Kind and the threshold; Validate names the key of an unknown kind or a negative block.
func TestConfig_Kind(t *testing.T) {
	cfg := DefaultConfig()
	for _, c := range []struct {
		kind   string
		minLen int
		T      int
		want   bool
	}{
		{"", 0, DefaultChunkedMinLen - 1, false},
		{"", 0, DefaultChunkedMinLen, true},
		{KindAuto, 100, 99, false},
		{KindAuto, 100, 100, true},
		{KindFull, 0, 1 << 20, false},
		{KindChunked, 0, 2, true},
	} {
		cfg.Kind, cfg.ChunkedMinLen = c.kind, c.minLen
		if got := cfg.Chunked(c.T); got != c.want {
			t.Errorf("kind=%q chunked_min_len=%d: Chunked(%d)=%v, want %v", c.kind, c.minLen, c.T, got, c.want)
		}
	}
	if b := (Config{}).Block(); b != DefaultBlockSize {
		t.Errorf("Block() of block_size=0 is %d, want DefaultBlockSize=%d", b, DefaultBlockSize)
	}
	for _, c := range []struct {
		mutate func(*Config)
		key    string
	}{
		{func(c *Config) { c.Kind = "flash" }, `kind="flash" is unknown; known kinds: auto, full, chunked`},
		{func(c *Config) { c.BlockSize = -1 }, "block_size=-1"},
		{func(c *Config) { c.ChunkedMinLen = -5 }, "chunked_min_len=-5"},
	} {
		cfg := DefaultConfig()
		c.mutate(&cfg)
		err := cfg.Validate(16)
		if err == nil || !strings.Contains(err.Error(), c.key) {
			t.Errorf("Validate: %v, want an error containing %q", err, c.key)
		}
	}
}
