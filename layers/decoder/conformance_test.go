package decoder

import (
	"fmt"
	"testing"

	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/layers/attention"
	"github.com/protolab/protolab/layers/deltanet"
	"github.com/protolab/protolab/layers/mamba"
	"github.com/protolab/protolab/layers/protot"
	"github.com/protolab/protolab/workbench/wbtest"
)

// The Mixer conformance suite: every mixer of KnownMixers is held to the contract of the Mixer interface
// (mixer.go), table-driven with a subtest per mixer and per configuration variant:
//
//	TestMixers_Causal                         perturbing x at positions > t leaves Forward's output at t unchanged
//	TestMixers_StepMatchesForward             Step from StateShapes' zero state reproduces Forward at every position
//	TestMixers_LongStepMatchesForward         the same over a thousand tokens, for the recurrent mixers
//	TestMixers_GradientsMatchFiniteDifferences ∂⟨Forward(x), c⟩ for x and every trainable weight (wbtest.CheckGradients)
//	TestMixers_ProbeMixOut                    ProbeMixOut under the mixer's scope, [B, T, D] and [B, 1, D]
//	TestMixers_NumParamsAndScope              NumParams = the values the variables hold, all under the mixer's scope
//	TestDecoders_Causal, TestDecoders_StepMatchesLogits   the same identities for the decoder on each mixer
//
// A new mixer needs an entry in mixerSpecs; the suite fails for a KnownMixers value without one.

// confT is the sequence length of the causality and Step checks: 7 is a multiple of no chunk length of the cases
// (ProtoT 2, Mamba ⌈√7⌉ = 3, DeltaNet 4), so every chunked form runs a padded last chunk. The gradient checks use
// testT = 5 (not a multiple of 2, ⌈√5⌉ = 3 or 4 either) to keep the finite differences cheap.
const confT = 7

// mixerCase is one configuration of a mixer under test.
type mixerCase struct {
	variant string
	cfg     Config // a small float64 decoder (D = 12, V = 11) with the mixer in every block
	layers  []int  // the blocks whose mixers the mixer-level checks build: ProtoT's blocks differ
	// longGradients moves the case's gradient check out of -short runs (make test-long): a variant whose
	// finite differences cost seconds and whose code paths the first case's check mostly shares.
	longGradients bool
}

// mixerSpec is what the suite knows of one mixer.
type mixerSpec struct {
	scope string // the mixer's sub-scope of a block: its variables and its ProbeMixOut live there
	// stateless is the mixer's computation with every weight an argument, looked up by variable name. The gradient
	// check differences it, since context variables cannot be the inputs of wbtest.CheckGradients' plain graphs;
	// it first checks that stateless equals Forward on the variables' values, bit for bit.
	stateless func(cfg Config, layer int, x *Node, w weightSet) *Node
	cases     []mixerCase
	// long are cases decoded over a thousand tokens as well (TestMixers_LongStepMatchesForward), where a recurrent
	// form could drift from the chunked one.
	long []mixerCase
}

// weightSet hands a stateless mixer its weights by variable name and records which it took.
type weightSet struct {
	nodes map[string]*Node
	taken map[string]bool
}

// get returns the weight named name, or nil when the mixer has no such variable (ProtoT's optional ones).
func (w weightSet) get(name string) *Node {
	w.taken[name] = true
	return w.nodes[name]
}

// conformanceBase is the decoder of the recurrent-mixer cases: V = 11, D = 12, L = 2, F = 20, tied, float64.
func conformanceBase(mixer string) Config {
	cfg := DefaultConfig()
	cfg.VocabSize, cfg.Width, cfg.NumLayers, cfg.MaxLen, cfg.FFNHidden = 11, 12, 2, 8, 20
	cfg.DType, cfg.NormEpsilon = "float64", 1e-5
	cfg.Mixer = mixer
	return cfg
}

// protoTTinyConfig is a 3-block float64 decoder with ProtoT mixers: R = 3, kernel 3, chunks of 2. Block 0 has the
// shared routing and the convolution, block 1 the convolution, block 2 neither.
func protoTTinyConfig() Config {
	cfg := DefaultConfig()
	cfg.VocabSize, cfg.Width, cfg.NumLayers, cfg.MaxLen = 11, 12, 3, 8
	cfg.DType, cfg.NormEpsilon = "float64", 1e-5
	cfg.Mixer = MixerProtoT
	cfg.ProtoT.NumPrototypes, cfg.ProtoT.ConvKernel = 3, 3
	cfg.ProtoT.Form, cfg.ProtoT.ChunkSize = protot.FormChunked, 2
	return cfg
}

// mixerSpecs returns the suite's table, keyed by Config.Mixer value.
func mixerSpecs() map[string]mixerSpec {
	mqa := tinyConfigs()["untied H=3"]
	mqa.Attention = attention.Config{NumHeads: 2, NumKVHeads: 1, HeadDim: 4, RoPEBase: 100} // H·D_h = 8 ≠ D

	dn := conformanceBase(MixerDeltaNet)
	dn.DeltaNet.NumHeads, dn.DeltaNet.ChunkSize = 3, 4 // d = 4
	dn1 := dn
	dn1.DeltaNet.ConvSize, dn1.DeltaNet.HeadDim = 1, 2 // an empty convolution state; H·d = 6 ≠ D
	dnLong := dn
	dnLong.DeltaNet.ChunkSize = deltanet.DefaultConfig().ChunkSize

	mb := conformanceBase(MixerMamba)
	mb.Mamba.StateSize = 4 // d_in = 24, dt_rank = 1, chunks of ⌈√T⌉
	mb1 := mb
	mb1.Mamba.ConvSize, mb1.Mamba.DTRank = 1, 2

	return map[string]mixerSpec{
		MixerAttention: {
			scope: attention.Scope,
			stateless: func(cfg Config, _ int, x *Node, w weightSet) *Node {
				return attention.Mix(x, w.get(attention.VarQuery), w.get(attention.VarKey), w.get(attention.VarValue),
					w.get(attention.VarOutput), cfg.Attention)
			},
			cases: []mixerCase{
				{"GQA H=6 Hkv=2", tinyConfigs()["tied GQA H=6 Hkv=2"], []int{0}, false},
				{"MQA H=2 Hkv=1 Dh=4", mqa, []int{0}, false},
			},
		},
		MixerProtoT: {
			scope: protot.Scope,
			stateless: func(cfg Config, layer int, x *Node, w weightSet) *Node {
				p := protot.Params{Prototypes: w.get(protot.VarPrototypes), Value: w.get(protot.VarValue),
					Output: w.get(protot.VarOutput), ReadQuery: w.get(protot.VarReadQuery),
					DecayLogit: w.get(protot.VarDecayLogit), WriteTemp: w.get(protot.VarWriteTemp),
					ReadTemp: w.get(protot.VarReadTemp), Alpha: w.get(protot.VarAlpha), Conv: w.get(protot.VarConv),
					WriteMask: w.get(protot.VarWriteMask), ReadMask: w.get(protot.VarReadMask)}
				y, _ := protot.Mix(x, nil, p, layer, cfg.ProtoT)
				return y
			},
			cases: []mixerCase{{"R=3 chunked", protoTTinyConfig(), []int{0, 1, 2}, false}},
		},
		MixerDeltaNet: {
			scope: deltanet.Scope,
			stateless: func(cfg Config, _ int, x *Node, w weightSet) *Node {
				return deltanet.Mix(x, deltanet.Weights{Query: w.get(deltanet.VarQuery), Key: w.get(deltanet.VarKey),
					Value: w.get(deltanet.VarValue), QueryConv: w.get(deltanet.VarQueryConv),
					KeyConv: w.get(deltanet.VarKeyConv), ValueConv: w.get(deltanet.VarValueConv),
					Beta: w.get(deltanet.VarBeta), OutNorm: w.get(deltanet.VarOutNorm),
					Output: w.get(deltanet.VarOutput)}, cfg.DeltaNet)
			},
			cases: []mixerCase{{"H=3 chunk=4", dn, []int{0}, false}, {"conv=1 H·d≠D", dn1, []int{0}, true}},
			long:  []mixerCase{{"default chunk", dnLong, []int{0}, false}},
		},
		MixerMamba: {
			scope: mamba.Scope,
			stateless: func(cfg Config, _ int, x *Node, w weightSet) *Node {
				return mamba.Mix(x, mamba.Weights{In: w.get(mamba.VarIn), ConvKernel: w.get(mamba.VarConvKernel),
					ConvBias: w.get(mamba.VarConvBias), XProj: w.get(mamba.VarXProj), DTProj: w.get(mamba.VarDTProj),
					DTBias: w.get(mamba.VarDTBias), ALog: w.get(mamba.VarALog), DSkip: w.get(mamba.VarDSkip),
					Out: w.get(mamba.VarOut)}, cfg.Mamba)
			},
			cases: []mixerCase{{"N=4 chunk=⌈√T⌉", mb, []int{0}, false}, {"conv=1 dt_rank=2", mb1, []int{0}, true}},
			long:  []mixerCase{{"chunk=⌈√T⌉", mb, []int{0}, false}},
		},
	}
}

// forEachCase runs check in a subtest per mixer of KnownMixers and per case, failing for a mixer without a spec.
func forEachCase(t *testing.T, check func(t *testing.T, spec mixerSpec, c mixerCase)) {
	specs := mixerSpecs()
	for _, name := range KnownMixers {
		t.Run(name, func(t *testing.T) {
			spec, ok := specs[name]
			if !ok || len(spec.cases) == 0 {
				t.Fatalf("mixer %q has no conformance spec (conformance_test.go, mixerSpecs)", name)
			}
			for _, c := range spec.cases {
				if c.cfg.Mixer != name {
					t.Fatalf("case %q configures mixer %q", c.variant, c.cfg.Mixer)
				}
				t.Run(c.variant, func(t *testing.T) { check(t, spec, c) })
			}
		})
	}
}

// forEachLayer runs check for every block of the case's layers, as "layer=l" subtests.
func forEachLayer(t *testing.T, c mixerCase, check func(t *testing.T, m Mixer, layer int)) {
	for _, layer := range c.layers {
		t.Run(fmt.Sprintf("layer=%d", layer), func(t *testing.T) {
			m, err := NewMixer(c.cfg, layer)
			if err != nil {
				t.Fatalf("NewMixer: %+v", err)
			}
			check(t, m, layer)
		})
	}
}

// forwardExec returns an executor of block layer's m.Forward on scope: x [B, T, D] → [B, T, D].
func forwardExec(t *testing.T, scope *model.Store, m Mixer, layer int) *model.Exec {
	return model.MustNewExec(wbtest.Backend(t), scope, func(scope *model.Scope, x *Node) *Node {
		return m.Forward(scope.At("%s", BlockScope(layer)), x)
	})
}

// newMixerFixture builds block layer's mixer variables on a fresh context with one Forward pass on a [B, T, D]
// input and randomizes them (randomizeVariables). It returns the context and a Forward executor on it.
func newMixerFixture(t *testing.T, m Mixer, cfg Config, layer, T int, seed uint64) (*model.Store, *model.Exec) {
	t.Helper()
	vars := model.NewStore()
	vars.SetParam(model.ParamInitialSeed, int64(seed))
	exec := forwardExec(t, vars, m, layer)
	exec.MustExec(wbtest.Tensor64(make([]float64, testB*T*cfg.Width), testB, T, cfg.Width))
	randomizeVariables(t, vars, seed+1)
	return vars, exec
}

// requireCausal compares outputs [B, T, inner] after a change of the inputs at positions > tc with the base run:
// positions ≤ tc must be bit-identical, and the last position must have changed, else the check cannot fail. (Not
// every later position need change: ProtoT's output at t = 1 reads a memory of x_0 alone, the same in every slot.)
func requireCausal(t *testing.T, label string, base, got []float64, T, inner, tc int) {
	t.Helper()
	for row := 0; row < len(base)/inner; row++ {
		s := row % T
		d := wbtest.MaxAbsDiff(base[row*inner:(row+1)*inner], got[row*inner:(row+1)*inner])
		if s <= tc && d != 0 {
			t.Fatalf("%s: changing positions > %d changed position %d (row %d) by %g", label, tc, s, row, d)
		}
		if s == T-1 && d == 0 {
			t.Fatalf("%s: changing positions > %d left the last position (row %d) unchanged: the check cannot fail",
				label, tc, row)
		}
	}
}
