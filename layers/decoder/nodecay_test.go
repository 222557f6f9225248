package decoder

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/workbench/wbtest"
)

// fitDefaultNoDecay is workbench/fit's default no_decay list from before Config.NoDecay (fit.DefaultConfig), the
// decisions NoDecay must keep.
var fitDefaultNoDecay = []string{"norm", "bias", "prototypes", "dt_proj", "a_log"}

// decays mirrors workbench/fit's Config.Decays (layers cannot import workbench): a variable of rank ≤ 1 is never
// decayed, and neither is one with a path element equal to an entry of noDecay or ending in "_" + entry.
func decays(path string, rank int, noDecay []string) bool {
	if rank <= 1 {
		return false
	}
	for _, elem := range strings.Split(path, "/") {
		for _, s := range noDecay {
			if elem == s || strings.HasSuffix(elem, "_"+s) {
				return false
			}
		}
	}
	return true
}

// decoderVariables builds cfg's decoder (with the PRISM head when prismHead) in a graph that is never run and
// returns the variables it creates, gomlx's own state left out.
func decoderVariables(t *testing.T, cfg Config, prismHead bool) []*model.Variable {
	t.Helper()
	g := NewGraph(wbtest.Backend(t), "variables")
	defer g.Finalize()
	vars := model.NewStore()
	tokens := Parameter(g, "tokens", shapes.Make(dtypes.Int32, testB, testT))
	if prismHead {
		PrismLogits(vars.RootScope(), cfg, prismTinyConfig(), tokens)
	} else {
		Logits(vars.RootScope(), cfg, tokens)
	}
	var out []*model.Variable
	for v := range vars.IterVariables() {
		if !strings.HasPrefix(v.Name(), "#") {
			out = append(out, v)
		}
	}
	return out
}

// TestConfig_NoDecay_KeepsTheDecayDecisions: for every variable of every decoder (each conformance case of each
// mixer, tied and untied, with and without the FFN, with and without the PRISM head), Config.NoDecay under fit's
// rule exempts exactly the variables the former default list exempted.
func TestConfig_NoDecay_KeepsTheDecayDecisions(t *testing.T) {
	forEachCase(t, func(t *testing.T, _ mixerSpec, c mixerCase) {
		exempt := map[string]bool{} // rank ≥ 2 variables exempt by name, over all variants
		for _, tied := range []bool{true, false} {
			for _, dropFFN := range []bool{false, true} {
				for _, prismHead := range []bool{false, true} {
					cfg := c.cfg
					cfg.TieEmbeddings, cfg.DropFFN = tied, dropFFN
					noDecay := cfg.NoDecay()
					for _, v := range decoderVariables(t, cfg, prismHead) {
						path, rank := v.Path(), v.Shape().Rank()
						before, now := decays(path, rank, fitDefaultNoDecay), decays(path, rank, noDecay)
						if before != now {
							t.Fatalf("tied=%v drop_ffn=%v prism=%v: %s (rank %d) decays=%v with NoDecay() %q, %v before",
								tied, dropFFN, prismHead, path, rank, now, noDecay, before)
						}
						if !now && rank >= 2 {
							exempt[v.Name()] = true
						}
					}
				}
			}
		}
		// The names a rank ≥ 2 exemption rests on, so that the test cannot pass by having no such variable.
		want := []string{"prototypes"} // the PRISM bank, and ProtoT's prototypes
		if c.cfg.Mixer == MixerMamba {
			want = []string{"a_log", "dt_proj", "prototypes"}
		}
		if got := slices.Sorted(maps.Keys(exempt)); !slices.Equal(got, want) {
			t.Fatalf("rank ≥ 2 variables exempt by name: %v, want %v", got, want)
		}
	})
}
