package decoder

import (
	"fmt"
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
