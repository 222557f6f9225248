package probe

import (
	"fmt"
	"slices"

	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"
	"github.com/protolab/protolab/workbench/host"
)

// Greedy picks the index of the largest logit (the first one on ties).
func Greedy(logits []float32) int32 {
	best := 0
	for i, x := range logits {
		if x > logits[best] {
			best = i
		}
	}
	return int32(best)
}

// Generate decodes one sequence (batch 1) with Model.Step, caching the filtered probes at every step. It feeds the
// prompt one token at a time, then the n tokens pick chooses from each step's output (nil pick: Greedy), and
// finally feeds the last chosen token as well, so that every returned token has been through the model. It returns
// the prompt followed by the n chosen tokens, and a Cache over all T = len(prompt)+n positions: each probe's
// activations concatenated along its time axis (for a causal model they equal Run's on the returned tokens, except
// that attention weights span the state's capacity S), and Output, the steps' outputs stacked along a new axis 1
// ([1, T, V] for logits [1, V]).
//
// Patches apply at the step of each listed position (nil Positions: every step). A patch value has the step
// probe's shape ([1, 1, …] for [B, T, …] probes), or a time axis of length ≥ T, from which each step takes its own
// position. The one Step graph is built on the first step and reused. Generate ignores StopAfter. It returns an
// error without Model.Step, for an empty prompt, n < 0, a malformed patch, a token pick returns outside the
// output's range, and for the build errors of Run.
func (r *Runner) Generate(prompt []int32, n int, pick func(logits []float32) int32, patches ...Patch) (
	[]int32, *Cache, error) {
	switch {
	case r.m.Step == nil:
		return nil, nil, errors.New("probe.Generate: the Model has no Step")
	case len(prompt) == 0 || n < 0:
		return nil, nil, errors.Errorf("probe.Generate: prompt of %d tokens and n=%d, want ≥ 1 and ≥ 0", len(prompt), n)
	}
	if pick == nil {
		pick = Greedy
	}
	T := len(prompt) + n
	state := r.m.NewState(1)
	ns := len(state)

	// Inputs: token [1, 1], pos, the state, then per patch its value at the step and an "enabled" bool scalar.
	type stepValue struct {
		value   *tensors.Tensor
		perStep bool // the value's time axis has T positions: slice the step's own
		axis    int
		enabled []bool // by position
	}
	values := make([]stepValue, len(patches))
	for i, p := range patches {
		if p.Value == nil {
			continue // patchInputs reports it
		}
		axis := r.o.timeAxis(p.Name)
		sv := stepValue{value: p.Value, axis: axis, enabled: make([]bool, T)}
		if s := p.Value.Shape(); axis >= s.Rank() || (s.Dim(axis) != 1 && s.Dim(axis) < T) {
			return nil, nil, errors.Errorf("probe.Generate: patch %q: value shape %s: want 1 or ≥ %d positions on time "+
				"axis %d", p.Name, s, T, axis)
		}
		sv.perStep = p.Value.Shape().Dim(axis) != 1
		if p.Positions == nil {
			for t := range sv.enabled {
				sv.enabled[t] = true
			}
		}
		for _, pos := range p.Positions {
			if pos < 0 || pos >= T {
				return nil, nil, errors.Errorf("probe.Generate: patch %q: position %d outside [0, %d)", p.Name, pos, T)
			}
			sv.enabled[pos] = true
		}
		values[i] = sv
	}
	stepArg := func(i, pos int) (*tensors.Tensor, error) {
		if !values[i].perStep {
			return values[i].value, nil
		}
		return sliceAxis(values[i].value, values[i].axis, pos)
	}
	// The key and specs use the per-step value shapes.
	stepPatches := make([]Patch, len(patches))
	for i, p := range patches {
		stepPatches[i] = p
		if p.Value != nil {
			v, err := stepArg(i, 0)
			if err != nil {
				return nil, nil, err
			}
			stepPatches[i].Value = v
		}
	}
	specs, pkey, _, err := patchInputs(stepPatches, &r.o, 2+ns, func(Patch, int) (any, error) { return true, nil })
	if err != nil {
		return nil, nil, errors.WithMessage(err, "probe.Generate")
	}
	key := "step"
	for _, s := range state {
		key += " " + s.Shape().String()
	}
	key += pkey
	e, err := r.entryFor(key, func(e *entry) func(scope *model.Scope, in []*Node) []*Node {
		return func(scope *model.Scope, in []*Node) []*Node {
			rec := &recorder{keep: r.keep, in: in, patches: specs}
			var newState []*Node
			out := r.graphBuild(rec, in[0].Graph(), func() *Node {
				var out *Node
				out, newState = r.m.Step(scope, in[0], in[1], in[2:2+ns])
				return out
			})
			if len(newState) != ns {
				panic(errors.Errorf("probe.Generate: Step returned %d state tensors, NewState gives %d", len(newState), ns))
			}
			e.all, e.kept, e.built = rec.seen, rec.kept, true
			return withGuard(append(append([]*Node{out}, newState...), rec.nodes...))
		}
	})
	if err != nil {
		return nil, nil, err
	}

	tokens := append(slices.Clone(prompt), make([]int32, n)...)
	var outputs []*tensors.Tensor
	var steps [][]*tensors.Tensor // [probe][position]
	for pos := 0; pos < T; pos++ {
		args := []any{tensors.FromValue([][]int32{{tokens[pos]}}), int32(pos)}
		for _, s := range state {
			args = append(args, s)
		}
		for i := range patches {
			v, err := stepArg(i, pos)
			if err != nil {
				return nil, nil, err
			}
			args = append(args, v, values[i].enabled[pos])
		}
		outs, err := e.exec.Exec(args...)
		if err != nil {
			r.forget(key)
			return nil, nil, errors.WithMessagef(err, "probe.Generate: step at position %d", pos)
		}
		state = outs[1 : 1+ns]
		if steps == nil {
			steps = make([][]*tensors.Tensor, len(e.kept))
		}
		for i := range e.kept {
			steps[i] = append(steps[i], outs[1+ns+i])
		}
		out, err := insertAxis1(outs[0])
		if err != nil {
			return nil, nil, err
		}
		outputs = append(outputs, out)
		if pos >= len(prompt)-1 && pos < T-1 {
			logits, err := host.Floats(outs[0])
			if err != nil {
				return nil, nil, errors.WithMessage(err, "probe.Generate: the step output")
			}
			l32 := make([]float32, len(logits))
			for i, x := range logits {
				l32[i] = float32(x)
			}
			tok := pick(l32)
			if tok < 0 || int(tok) >= len(l32) {
				return nil, nil, errors.Errorf("probe.Generate: pick returned token %d at position %d, want [0, %d)",
					tok, pos+1, len(l32))
			}
			tokens[pos+1] = tok
		}
	}
	c := &Cache{Names: slices.Clone(e.kept), Acts: map[string]*tensors.Tensor{}}
	if c.Output, err = concatAxis(outputs, 1); err != nil {
		return nil, nil, err
	}
	for i, name := range e.kept {
		if c.Acts[name], err = concatAxis(steps[i], r.o.timeAxis(name)); err != nil {
			return nil, nil, errors.WithMessage(err, fmt.Sprintf("probe.Generate: probe %q", name))
		}
	}
	return tokens, c, nil
}
