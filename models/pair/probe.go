package pair

import (
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

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

// collect runs the runner over sequences of T inputs (each [T+1] or longer; its first T tokens are the inputs) in
// batches of B (the last batch padded with copies of its last row, so one executable serves all) and returns each
// probe as a row-major [N, F] matrix over the N = len(seqs)·T input tokens, F the product of its axes after [B, T].
func collect(r *probe.Runner, seqs [][]int32, T, B int, names []string) (map[string][]float64, map[string]int,
	error) {
	S := len(seqs)
	B = min(B, S)
	acts := map[string][]float64{}
	width := map[string]int{}
	for from := 0; from < S; from += B {
		to := min(from+B, S)
		rows := make([][]int32, B)
		for i := range rows {
			rows[i] = seqs[min(from+i, to-1)][:T]
		}
		c, err := r.Run(tensors.FromValue(rows))
		if err != nil {
			return nil, nil, errors.WithMessagef(err, "pair: probing sequences %d–%d", from, to)
		}
		for _, name := range names {
			vals, dims, err := c.Float64(name)
			if err != nil {
				return nil, nil, err
			}
			if len(dims) < 2 || dims[0] != B || dims[1] != T {
				return nil, nil, errors.Errorf("pair: probe %s has dims %v, want [%d, %d, ...]", name, dims, B, T)
			}
			F := len(vals) / (B * T)
			width[name] = F
			acts[name] = append(acts[name], vals[:(to-from)*T*F]...)
		}
	}
	return acts, width, nil
}
