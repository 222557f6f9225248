package decoder

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/layers/hook"
	"github.com/protolab/protolab/workbench/wbtest"
)

// The mixer-level checks of the conformance suite (conformance_test.go).

// (a) Perturbing x at positions > t leaves Forward's output at t unchanged, for every t.
func TestMixers_Causal(t *testing.T) {
	forEachCase(t, func(t *testing.T, _ mixerSpec, c mixerCase) {
		forEachLayer(t, c, func(t *testing.T, m Mixer, layer int) {
			D := c.cfg.Width
			_, exec := newMixerFixture(t, m, c.cfg, layer, confT, uint64(400+layer))
			run := func(x []float64) []float64 {
				return wbtest.Flat64(exec.MustExec(wbtest.Tensor64(x, testB, confT, D))[0])
			}
			x := wbtest.Normal(wbtest.RNG(uint64(410+layer)), testB*confT*D, 1)
			base := run(x)
			for tc := 0; tc < confT-1; tc++ {
				moved := slices.Clone(x)
				for i := range moved {
					if (i/D)%confT > tc {
						moved[i] += 1 + float64(i%3)
					}
				}
				requireCausal(t, "Forward", base, run(moved), confT, D, tc)
			}
		})
	})
}

// (b) Decoding position by position with Step, from StateShapes' zero state and with a capacity beyond T, gives
// Forward's output at every position (1e-10), and the new state keeps StateShapes' shapes.
func TestMixers_StepMatchesForward(t *testing.T) {
	forEachCase(t, func(t *testing.T, _ mixerSpec, c mixerCase) {
		forEachLayer(t, c, func(t *testing.T, m Mixer, layer int) {
			checkStepMatchesForward(t, m, c.cfg, layer, testB, confT, uint64(420+layer))
		})
	})
}

// TestMixers_LongStepMatchesForward is (b) over longT tokens for the specs' long cases: the chunked form's many
// chunks (the last one padded) against a thousand recurrent steps.
func TestMixers_LongStepMatchesForward(t *testing.T) {
	const longT = 1000
	specs := mixerSpecs()
	for _, name := range KnownMixers {
		for _, c := range specs[name].long {
			t.Run(name+"/"+c.variant, func(t *testing.T) {
				forEachLayer(t, c, func(t *testing.T, m Mixer, layer int) {
					checkStepMatchesForward(t, m, c.cfg, layer, 1, longT, 435)
				})
			})
		}
	}
}

// checkStepMatchesForward runs block layer's randomized mixer on a random x [B, T, D] with Forward, then position
// by position with Step, and compares the outputs (1e-10) and the state shapes.
func checkStepMatchesForward(t *testing.T, m Mixer, cfg Config, layer, B, T int, seed uint64) {
	t.Helper()
	D := cfg.Width
	vars, exec := newMixerFixture(t, m, cfg, layer, T, seed)
	x := wbtest.Normal(wbtest.RNG(seed+10), B*T*D, 1)
	dims := []int{B, T, D}
	full := wbtest.Flat64(exec.MustExec(wbtest.Tensor64(x, dims...))[0])
	step := model.MustNewExec(wbtest.Backend(t), vars, func(scope *model.Scope, in []*Node) []*Node {
		y, s := m.Step(scope.At("%s", BlockScope(layer)), in[0], in[1], in[2:])
		return append([]*Node{y}, s...)
	})
	stateShapes := m.StateShapes(B, T+2, dtypes.Float64) // unused capacity must not matter
	var state []*tensors.Tensor
	for _, s := range stateShapes {
		state = append(state, tensors.FromShape(s)) // zeros
	}
	for pos := 0; pos < T; pos++ {
		args := []any{wbtest.Tensor64(sliceT(x, dims, pos), B, 1, D), int32(pos)}
		for _, s := range state {
			args = append(args, s)
		}
		outs := step.MustExec(args...)
		if got := outs[0].Shape().Dimensions; !slices.Equal(got, []int{B, 1, D}) {
			t.Fatalf("Step output shape %v, want [%d 1 %d]", got, B, D)
		}
		wbtest.RequireClose(t, fmt.Sprintf("Step at position %d", pos), sliceT(full, dims, pos), wbtest.Flat64(outs[0]),
			tolParity)
		state = outs[1:]
		for i, s := range state {
			if !s.Shape().Equal(stateShapes[i]) {
				t.Fatalf("state %d after position %d has shape %s, want %s", i, pos, s.Shape(), stateShapes[i])
			}
		}
	}
}

// mixerVariables returns the variables of vars in creation order and fails unless every one lies directly under
// block layer's mixer scope. gomlx's own state (the initializers' "#rngState") is left out.
func mixerVariables(t *testing.T, vars *model.Store, spec mixerSpec, layer int) []*model.Variable {
	t.Helper()
	scope := "/" + BlockScope(layer) + "/" + spec.scope
	var out []*model.Variable
	for v := range vars.IterVariables() {
		if strings.HasPrefix(v.Name(), "#") {
			continue
		}
		if v.Scope() != scope {
			t.Fatalf("variable %s is not under the mixer's scope %s", v.Path(), scope)
		}
		out = append(out, v)
	}
	return out
}

// (c) The gradients of ⟨Forward(x), c⟩ with respect to x and every trainable weight equal central finite
// differences (wbtest.CheckGradients), through the mixer's stateless form, which first must equal Forward exactly.
func TestMixers_GradientsMatchFiniteDifferences(t *testing.T) {
	forEachCase(t, func(t *testing.T, spec mixerSpec, c mixerCase) {
		if c.longGradients && testing.Short() {
			t.Skip("a variant's finite differences take seconds: run without -short (make test-long)")
		}
		forEachLayer(t, c, func(t *testing.T, m Mixer, layer int) {
			D := c.cfg.Width
			vars, _ := newMixerFixture(t, m, c.cfg, layer, testT, uint64(440+layer))
			params := mixerVariables(t, vars, spec, layer)
			x := wbtest.Normal(wbtest.RNG(uint64(450+layer)), testB*testT*D, 1)

			// The stateless form on the variables' values is Forward, and it takes every trainable weight.
			taken := map[string]bool{}
			outs := model.MustExecOnceN(wbtest.Backend(t), vars, func(scope *model.Scope, x *Node) []*Node {
				w := weightSet{nodes: map[string]*Node{}, taken: taken}
				for _, v := range params {
					w.nodes[v.Name()] = v.NodeValue(x.Graph())
				}
				return []*Node{m.Forward(scope.At("%s", BlockScope(layer)), x), spec.stateless(c.cfg, layer, x, w)}
			}, wbtest.Tensor64(x, testB, testT, D))
			wbtest.RequireClose(t, "stateless vs Forward", wbtest.Flat64(outs[0]), wbtest.Flat64(outs[1]), 0)

			names, values, dims := []string{"x"}, [][]float64{x}, [][]int{{testB, testT, D}}
			var trainable []*model.Variable
			for _, v := range params {
				if !v.Trainable {
					continue
				}
				if !taken[v.Name()] {
					t.Fatalf("the stateless form does not take the trainable variable %s", v.Path())
				}
				trainable = append(trainable, v)
				names = append(names, v.Path())
				values = append(values, wbtest.Flat64(v.MustValue()))
				dims = append(dims, v.Shape().Dimensions)
			}
			cot := wbtest.Normal(wbtest.RNG(uint64(460+layer)), testB*testT*D, 1) // random cotangent
			wbtest.CheckGradients(t, names, values, dims, func(in []*Node) *Node {
				w := weightSet{nodes: map[string]*Node{}, taken: map[string]bool{}}
				for _, v := range params {
					if !v.Trainable { // ProtoT's intervention masks: constants
						w.nodes[v.Name()] = ConstTensor(in[0].Graph(), v.MustValue())
					}
				}
				for j, v := range trainable {
					w.nodes[v.Name()] = in[1+j]
				}
				return wbtest.CotangentLoss(spec.stateless(c.cfg, layer, in[0], w), cot)
			})
		})
	})
}

// probeShapes runs build in a graph with a hook attached and returns the dimensions of every probe it emitted, by
// full name, failing on a name emitted twice.
func probeShapes(t *testing.T, vars *model.Store, args []any, build func(scope *model.Scope, in []*Node) []*Node) map[string][]int {
	t.Helper()
	got := map[string][]int{}
	model.MustCallOnceN(wbtest.Backend(t), vars, func(scope *model.Scope, in []*Node) []*Node {
		defer hook.Attach(in[0].Graph(), func(name string, x *Node) *Node {
			if _, dup := got[name]; dup {
				t.Errorf("probe %s emitted twice", name)
			}
			got[name] = x.Shape().Dimensions
			return x
		})()
		return build(scope, in)
	}, args...)
	return got
}

// (d) Forward and Step emit the same probe names, among them ProbeMixOut under the mixer's scope of the block,
// shaped [B, T, D] by Forward and [B, 1, D] by Step.
func TestMixers_ProbeMixOut(t *testing.T) {
	forEachCase(t, func(t *testing.T, spec mixerSpec, c mixerCase) {
		forEachLayer(t, c, func(t *testing.T, m Mixer, layer int) {
			D := c.cfg.Width
			vars := model.NewStore()
			vars.SetParam(model.ParamInitialSeed, int64(470+layer))
			want := hook.Name(vars.RootScope().At("%s", BlockScope(layer)).At("%s", spec.scope), ProbeMixOut)
			full := probeShapes(t, vars, []any{wbtest.Tensor64(make([]float64, testB*testT*D), testB, testT, D)},
				func(scope *model.Scope, in []*Node) []*Node {
					return []*Node{m.Forward(scope.At("%s", BlockScope(layer)), in[0])}
				})
			args := []any{wbtest.Tensor64(make([]float64, testB*D), testB, 1, D), int32(0)}
			for _, s := range m.StateShapes(testB, testT, dtypes.Float64) {
				args = append(args, tensors.FromShape(s))
			}
			step := probeShapes(t, vars, args, func(scope *model.Scope, in []*Node) []*Node {
				y, s := m.Step(scope.At("%s", BlockScope(layer)), in[0], in[1], in[2:])
				return append([]*Node{y}, s...)
			})
			if got, ok := full[want]; !ok || !slices.Equal(got, []int{testB, testT, D}) {
				t.Fatalf("Forward: probe %s emitted=%v with shape %v, want [%d %d %d]; probes: %v", want, ok, got,
					testB, testT, D, full)
			}
			if got, ok := step[want]; !ok || !slices.Equal(got, []int{testB, 1, D}) {
				t.Fatalf("Step: probe %s emitted=%v with shape %v, want [%d 1 %d]; probes: %v", want, ok, got, testB, D, step)
			}
			fullNames, stepNames := slices.Sorted(maps.Keys(full)), slices.Sorted(maps.Keys(step))
			if !slices.Equal(fullNames, stepNames) {
				t.Fatalf("Forward emitted %v, Step %v", fullNames, stepNames)
			}
		})
	})
}

// (e) NumParams equals the number of values the trainable variables hold; Forward and Step create the same
// variables, all under the mixer's scope of the block.
func TestMixers_NumParamsAndScope(t *testing.T) {
	forEachCase(t, func(t *testing.T, spec mixerSpec, c mixerCase) {
		forEachLayer(t, c, func(t *testing.T, m Mixer, layer int) {
			D := c.cfg.Width
			vars := model.NewStore()
			forwardExec(t, vars, m, layer).MustExec(wbtest.Tensor64(make([]float64, testB*testT*D), testB, testT, D))
			stepCtx := model.NewStore()
			args := []any{wbtest.Tensor64(make([]float64, testB*D), testB, 1, D), int32(0)}
			for _, s := range m.StateShapes(testB, testT, dtypes.Float64) {
				args = append(args, tensors.FromShape(s))
			}
			model.MustExecOnceN(wbtest.Backend(t), stepCtx, func(scope *model.Scope, in []*Node) []*Node {
				y, s := m.Step(scope.At("%s", BlockScope(layer)), in[0], in[1], in[2:])
				return append([]*Node{y}, s...)
			}, args...)
			describe := func(vars []*model.Variable) (list []string, total int) {
				for _, v := range vars {
					list = append(list, fmt.Sprintf("%s %v trainable=%v", v.Path(), v.Shape().Dimensions, v.Trainable))
					if v.Trainable {
						total += v.Shape().Size()
					}
				}
				return list, total
			}
			fromForward, total := describe(mixerVariables(t, vars, spec, layer))
			fromStep, _ := describe(mixerVariables(t, stepCtx, spec, layer))
			if !slices.Equal(fromForward, fromStep) {
				t.Fatalf("Forward created\n%v\nStep created\n%v", fromForward, fromStep)
			}
			if n := m.NumParams(); n != total {
				t.Fatalf("NumParams() = %d, the trainable variables hold %d values: %v", n, total, fromForward)
			}
		})
	})
}
