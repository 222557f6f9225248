package pair

import (
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/hook"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/probe"
)

// ProbeNames returns the probe names "block_LL.<suffix>" of layers 0 … L−1 (suffix e.g. "protot.pi").
func ProbeNames(L int, suffix string) []string {
	out := make([]string, L)
	for l := range out {
		out[l] = decoder.BlockScope(l) + "." + suffix
	}
	return out
}

// Runner returns a probe runner over the model's logits [B, T, V] that keeps the named probes.
func Runner(m *lm.Model, names []string) (*probe.Runner, error) {
	cfg := m.Config.Model
	pm := probe.Model{
		Backend: m.Backend,
		Store:   m.Store,
		Forward: func(scope *model.Scope, tokens *graph.Node) *graph.Node { return decoder.Logits(scope, cfg, tokens) },
		Attach:  hook.Attach,
	}
	return probe.NewRunner(pm, probe.Match(names...))
}
