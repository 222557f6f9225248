package decoder

import (
	"slices"
	"strings"
	"testing"

	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/workbench/wbtest"
)

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
