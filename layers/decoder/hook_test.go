package decoder

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/layers/hook"
	"github.com/protolab/protolab/workbench/wbtest"
)

// Probe tests: the names each mixer's decoder emits (the table in workbench/probe's doc.go), the recurrent path
// firing with the parallel path's values, patching, and the attention pattern's identities. The hooks are
// attached with layers/hook directly (layers cannot import workbench/probe).

const tolProbe = 1e-9 // Step against Logits probe values, float64

// hookTestConfigs are 2-layer float64 decoders, one per mixer: the first case of each mixer's conformance spec
// (for attention, grouped heads, which exercise the probe layout transposes), with ProtoT cut to 2 layers.
func hookTestConfigs() map[string]Config {
	out := map[string]Config{}
	for name, spec := range mixerSpecs() {
		cfg := spec.cases[0].cfg
		cfg.NumLayers = 2
		out[name] = cfg
	}
	return out
}

// expectedProbeNames is the sorted set of probe names of a 2-layer decoder with the given mixer, written out.
func expectedProbeNames(mixer string) []string {
	perMixer := map[string][]string{
		MixerAttention: {"pattern", "z", "mix_out"},
		MixerProtoT: {"write_logits", "pi", "read_logits", "rho", "v", "v_conv", "num", "den", "M",
			"mix_pre_alpha", "mix_out"},
		MixerDeltaNet: {"mix_out"},
		MixerMamba:    {"mix_out"},
	}
	names := []string{"final_norm", "logits"}
	for _, block := range []string{"block_00", "block_01"} {
		for _, n := range []string{"resid_pre", "norm1", "resid_mid", "norm2", "ffn_out", "resid_post"} {
			names = append(names, block+"."+n)
		}
		for _, n := range perMixer[mixer] {
			names = append(names, block+"."+mixer+"."+n)
		}
	}
	slices.Sort(names)
	return names
}

// probeGraph is what one hooked graph reported: every probe name in emission order and the kept probe nodes.
type probeGraph struct {
	names []string
	kept  []string
	nodes []*Node
}

// attachProbes attaches a hook to g that records every name, keeps the nodes of names keep accepts, and replaces
// (add=false) or adds to (add=true) the probes named in patches with the given nodes.
func attachProbes(g *Graph, pg *probeGraph, keep func(string) bool, patches map[string]*Node, add bool) func() {
	return hook.Attach(g, func(name string, x *Node) *Node {
		pg.names = append(pg.names, name)
		if p, ok := patches[name]; ok {
			if add {
				x = Add(x, p)
			} else {
				x = p
			}
		}
		if keep(name) {
			pg.kept = append(pg.kept, name)
			pg.nodes = append(pg.nodes, x)
		}
		return x
	})
}

// logitsProbes runs Logits on tokens with a hook: patchNames[i] is replaced by (or, with add, incremented by)
// patchValues[i]. It returns the logits, the emitted names in order and the kept probes' values.
func logitsProbes(t *testing.T, scope *model.Store, cfg Config, tokens [][]int32, keep func(string) bool,
	patchNames []string, patchValues []*tensors.Tensor, add bool) ([]float64, []string, map[string]*tensors.Tensor) {
	t.Helper()
	pg := &probeGraph{}
	exec := model.MustNewExec(wbtest.Backend(t), scope, func(scope *model.Scope, in []*Node) []*Node {
		patches := map[string]*Node{}
		for i, name := range patchNames {
			patches[name] = in[1+i]
		}
		defer attachProbes(in[0].Graph(), pg, keep, patches, add)()
		return append([]*Node{Logits(scope, cfg, in[0])}, pg.nodes...)
	})
	args := []any{tensors.FromValue(tokens)}
	for _, v := range patchValues {
		args = append(args, v)
	}
	outs := exec.MustExec(args...)
	acts := map[string]*tensors.Tensor{}
	for i, name := range pg.kept {
		acts[name] = outs[1+i]
	}
	return wbtest.Flat64(outs[0]), pg.names, acts
}

// stepProbes decodes tokens one position at a time with Step and a hook, returning the emitted names (of the one
// step graph) and, per position, the kept probes' values.
func stepProbes(t *testing.T, scope *model.Store, cfg Config, tokens [][]int32, keep func(string) bool) (
	[]string, []map[string]*tensors.Tensor) {
	t.Helper()
	pg := &probeGraph{}
	nState := len(StateShapes(cfg, len(tokens), 0))
	exec := model.MustNewExec(wbtest.Backend(t), scope, func(scope *model.Scope, in []*Node) []*Node {
		defer attachProbes(in[0].Graph(), pg, keep, nil, false)()
		logits, state := Step(scope, cfg, in[0], in[1], in[2:])
		return append(append([]*Node{logits}, state...), pg.nodes...)
	})
	state := NewState(cfg, len(tokens), 0)
	var perPos []map[string]*tensors.Tensor
	for pos := range tokens[0] {
		col := make([][]int32, len(tokens))
		for b := range col {
			col[b] = []int32{tokens[b][pos]}
		}
		args := []any{tensors.FromValue(col), int32(pos)}
		for _, s := range state {
			args = append(args, s)
		}
		outs := exec.MustExec(args...)
		state = outs[1 : 1+nState]
		acts := map[string]*tensors.Tensor{}
		for i, name := range pg.kept {
			acts[name] = outs[1+nState+i]
		}
		perPos = append(perPos, acts)
	}
	return pg.names, perPos
}

// prefix returns the first n tokens of every row.
func prefix(tokens [][]int32, n int) [][]int32 {
	out := make([][]int32, len(tokens))
	for b, row := range tokens {
		out[b] = row[:n]
	}
	return out
}

func keepAll(string) bool  { return true }
func keepNone(string) bool { return false }

// sliceT returns x[:, t] of a row-major [B, T, rest...] tensor's flat values.
func sliceT(x []float64, dims []int, t int) []float64 {
	B, T := dims[0], dims[1]
	inner := len(x) / (B * T)
	var out []float64
	for b := 0; b < B; b++ {
		out = append(out, x[(b*T+t)*inner:(b*T+t+1)*inner]...)
	}
	return out
}

// For each mixer, Logits emits exactly the documented names (workbench/probe doc.go), each once, and Step emits
// the same names.
func TestProbes_NamesPerMixer(t *testing.T) {
	for mixer, cfg := range hookTestConfigs() {
		t.Run(mixer, func(t *testing.T) {
			vars, _, _ := newTinyModel(t, cfg, 300)
			tokens := randomTokens(301, testB, testT, cfg.VocabSize)
			_, names, _ := logitsProbes(t, vars, cfg, tokens, keepNone, nil, nil, false)
			sorted := slices.Sorted(slices.Values(names))
			if want := expectedProbeNames(mixer); !slices.Equal(sorted, want) {
				t.Fatalf("Logits emitted\n%v\nwant\n%v", sorted, want)
			}
			if len(slices.Compact(slices.Clone(sorted))) != len(names) {
				t.Fatalf("a name was emitted twice: %v", names)
			}
			if mixer == MixerProtoT { // reported in the computation's order
				var got []string
				for _, n := range names {
					if short, ok := strings.CutPrefix(n, "block_01.protot."); ok {
						got = append(got, short)
					}
				}
				want := []string{"write_logits", "pi", "read_logits", "rho", "v", "v_conv", "num", "den", "M",
					"mix_pre_alpha", "mix_out"}
				if !slices.Equal(got, want) {
					t.Fatalf("ProtoT probes emitted in the order %v, want %v", got, want)
				}
			}
			stepNames, _ := stepProbes(t, vars, cfg, prefix(tokens, 1), keepNone)
			if got := slices.Sorted(slices.Values(stepNames)); !slices.Equal(got, sorted) {
				t.Fatalf("Step emitted\n%v\nLogits\n%v", got, sorted)
			}
		})
	}
}

// Step fires every probe with the values Logits gives at the same position (docs/spec/protot.md §6), for every mixer;
// the attention pattern of Step (S = capacity) equals Logits' row t on keys 0…t and is 0 beyond.
func TestProbes_StepMatchesLogits(t *testing.T) {
	for mixer, cfg := range hookTestConfigs() {
		t.Run(mixer, func(t *testing.T) {
			vars, _, _ := newTinyModel(t, cfg, 310)
			tokens := randomTokens(311, testB, testT, cfg.VocabSize)
			_, names, full := logitsProbes(t, vars, cfg, tokens, keepAll, nil, nil, false)
			_, perPos := stepProbes(t, vars, cfg, tokens, keepAll)
			checked := 0
			for _, name := range names {
				want := wbtest.Flat64(full[name])
				dims := full[name].Shape().Dimensions
				for pos, acts := range perPos {
					got := wbtest.Flat64(acts[name])
					label := fmt.Sprintf("%s at position %d", name, pos)
					if strings.HasSuffix(name, ".pattern") {
						checkStepPattern(t, label, want, dims, got, acts[name].Shape().Dimensions, pos)
						continue
					}
					if sd := acts[name].Shape().Dimensions; sd[1] != 1 || !slices.Equal(sd[2:], dims[2:]) {
						t.Fatalf("%s: Step shape %v, Logits shape %v: want [B, 1, …] of the same trailing dims", label, sd, dims)
					}
					wbtest.RequireClose(t, label, sliceT(want, dims, pos), got, tolProbe)
				}
				checked++
			}
			if checked != len(expectedProbeNames(mixer)) {
				t.Fatalf("checked %d probes, want %d", checked, len(expectedProbeNames(mixer)))
			}
		})
	}
}

// checkStepPattern compares Step's attention weights [B, H, 1, S] at position pos with Logits' [B, H, T, T].
func checkStepPattern(t *testing.T, label string, full []float64, dims []int, step []float64, stepDims []int, pos int) {
	t.Helper()
	B, H, T := dims[0], dims[1], dims[2]
	S := stepDims[3]
	if stepDims[0] != B || stepDims[1] != H || stepDims[2] != 1 || S < T {
		t.Fatalf("%s: Step pattern shape %v, want [%d, %d, 1, S ≥ %d]", label, stepDims, B, H, T)
	}
	for bh := 0; bh < B*H; bh++ {
		row := step[bh*S : (bh+1)*S]
		want := full[(bh*T+pos)*T : (bh*T+pos)*T+pos+1]
		wbtest.RequireClose(t, label+" keys 0…t", want, row[:pos+1], tolProbe)
		wbtest.RequireClose(t, label+" keys beyond t", make([]float64, S-pos-1), row[pos+1:], 0)
	}
}

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

// Replacing a probe with its own value (a graph parameter, as workbench/probe patches) leaves the logits
// bit-identical, for the residual stream, every mixer's output and attention's per-head z; adding zeros too.
func TestProbes_PatchWithItselfIsIdentity(t *testing.T) {
	for mixer, cfg := range hookTestConfigs() {
		t.Run(mixer, func(t *testing.T) {
			vars, _, _ := newTinyModel(t, cfg, 330)
			tokens := randomTokens(331, testB, testT, cfg.VocabSize)
			targets := []string{"block_00.resid_post", "block_01." + mixer + ".mix_out", "block_00.norm2"}
			if mixer == MixerAttention {
				targets = append(targets, "block_01.attention.z")
			}
			keep := func(name string) bool { return slices.Contains(targets, name) }
			base, _, acts := logitsProbes(t, vars, cfg, tokens, keep, nil, nil, false)
			for _, name := range targets {
				v := acts[name]
				if v == nil {
					t.Fatalf("probe %s not emitted", name)
				}
				got, _, _ := logitsProbes(t, vars, cfg, tokens, keepNone, []string{name}, []*tensors.Tensor{v}, false)
				if d := wbtest.MaxAbsDiff(base, got); d != 0 {
					t.Fatalf("replacing %s with itself changed the logits by %g", name, d)
				}
				zero := tensors.FromShape(v.Shape())
				got, _, _ = logitsProbes(t, vars, cfg, tokens, keepNone, []string{name}, []*tensors.Tensor{zero}, true)
				if d := wbtest.MaxAbsDiff(base, got); d != 0 {
					t.Fatalf("adding zeros to %s changed the logits by %g", name, d)
				}
			}
		})
	}
}

// Zeroing block_00.resid_post changes every later logit and makes block_01's input zero, but leaves the
// embedding (block_00.resid_pre) untouched.
func TestProbes_ZeroResidPostChangesOnlyLaterActivations(t *testing.T) {
	for mixer, cfg := range hookTestConfigs() {
		t.Run(mixer, func(t *testing.T) {
			vars, _, _ := newTinyModel(t, cfg, 340)
			tokens := randomTokens(341, testB, testT, cfg.VocabSize)
			keep := func(name string) bool {
				return name == "block_00.resid_pre" || name == "block_00.resid_post" || name == "block_01.resid_pre"
			}
			base, _, before := logitsProbes(t, vars, cfg, tokens, keep, nil, nil, false)
			zero := tensors.FromShape(before["block_00.resid_post"].Shape())
			got, _, after := logitsProbes(t, vars, cfg, tokens, keep, []string{"block_00.resid_post"},
				[]*tensors.Tensor{zero}, false)
			wbtest.RequireClose(t, "embedding", wbtest.Flat64(before["block_00.resid_pre"]),
				wbtest.Flat64(after["block_00.resid_pre"]), 0)
			wbtest.RequireClose(t, "block_01 input", make([]float64, zero.Size()), wbtest.Flat64(after["block_01.resid_pre"]), 0)
			V := cfg.VocabSize
			for i := 0; i < testB*testT; i++ {
				if wbtest.MaxAbsDiff(base[i*V:(i+1)*V], got[i*V:(i+1)*V]) < 1e-6 {
					t.Fatalf("logits of token %d did not change when block_00.resid_post was zeroed", i)
				}
			}
		})
	}
}

// Patching an observe-only probe (ProtoT's routing, attention's pattern) is refused while the graph is built.
func TestProbes_ObserveOnlyRefusesPatches(t *testing.T) {
	for mixer, name := range map[string]string{MixerProtoT: "block_00.protot.pi", MixerAttention: "block_01.attention.pattern"} {
		cfg := hookTestConfigs()[mixer]
		vars, _, _ := newTinyModel(t, cfg, 350)
		_, _, acts := logitsProbes(t, vars, cfg, randomTokens(351, testB, testT, cfg.VocabSize),
			func(n string) bool { return n == name }, nil, nil, false)
		exec := model.MustNewExec(wbtest.Backend(t), vars, func(scope *model.Scope, tokens, v *Node) *Node {
			pg := &probeGraph{}
			defer attachProbes(tokens.Graph(), pg, keepNone, map[string]*Node{name: v}, false)()
			return Logits(scope, cfg, tokens)
		})
		_, err := exec.Exec(tensors.FromValue(randomTokens(352, testB, testT, cfg.VocabSize)), acts[name])
		if err == nil || !strings.Contains(err.Error(), "observe-only") {
			t.Fatalf("%s: patching %s gave error %v, want an observe-only error", mixer, name, err)
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
