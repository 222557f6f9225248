package run_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/wbtest"
)

type modelCfg struct {
	NumLayers int     `json:"num_layers"`
	Mixer     string  `json:"mixer"`
	Tied      bool    `json:"tie_embeddings"`
	Dropout   float64 `json:"dropout"`
	Windows   []int   `json:"windows"`
}

type trainCfg struct {
	LR    float64 `json:"lr"`
	Steps int     `json:"steps"`
}

type expCfg struct {
	Model modelCfg `json:"model"`
	Train trainCfg `json:"train"`
	Seed  uint64   `json:"seed"`
}

func TestOverride_SetsDottedKeys(t *testing.T) {
	cfg := expCfg{Model: modelCfg{NumLayers: 2, Mixer: "attention"}, Train: trainCfg{LR: 1e-3, Steps: 10}}
	err := run.Override(&cfg, "model.num_layers=4; train.lr=3e-4\nmodel.mixer=protot;model.tie_embeddings=true;"+
		" model.windows=[1,4,12]; seed=7; model.dropout=0.1 ;")
	require.NoError(t, err)
	want := expCfg{Model: modelCfg{NumLayers: 4, Mixer: "protot", Tied: true, Dropout: 0.1, Windows: []int{1, 4, 12}},
		Train: trainCfg{LR: 3e-4, Steps: 10}, Seed: 7}
	require.Equal(t, want, cfg)
}

func TestOverride_Errors(t *testing.T) {
	for _, tc := range []struct{ in, mention string }{
		{"model.num_layer=4", `unknown key "model.num_layer"`},
		{"modle.num_layers=4", `unknown key "modle.num_layers"`},
		{"model.num_layers=abc", "model.num_layers"},
		{"model.num_layers=2.5", "integer"},
		{"train.lr=fast", "number"},
		{"model.tie_embeddings=maybe", "boolean"},
		{"model=3", "names a section"},
		{"model.num_layers.x=3", "not a section"},
		{"num_layers", "want key=value"},
	} {
		cfg := expCfg{Model: modelCfg{NumLayers: 2}}
		before := cfg
		err := run.Override(&cfg, "train.steps=5;"+tc.in)
		require.Error(t, err, tc.in)
		require.Contains(t, err.Error(), tc.mention, tc.in)
		require.Equal(t, before, cfg, "a failed override must leave the config unchanged (%s)", tc.in)
	}
	require.Error(t, run.Override(expCfg{}, "seed=1"), "non-pointer")
}

func TestKeys_ListsLeaves(t *testing.T) {
	keys := run.Keys(expCfg{})
	require.Equal(t, []string{"model.dropout", "model.mixer", "model.num_layers", "model.tie_embeddings",
		"model.windows", "seed", "train.lr", "train.steps"}, keys)
}

func TestBackend_HonoursEnvironment(t *testing.T) {
	t.Setenv("GOMLX_BACKEND", "go:parallelism=-1")
	require.Equal(t, "go:parallelism=-1", run.BackendConfig())
	t.Setenv("GOMLX_BACKEND", "")
	require.Equal(t, run.GoBackendConfig, run.BackendConfig(), "no XLA plugin in tests: fall back to pure Go")
}

func TestBackend_RunsAGraph(t *testing.T) {
	t.Setenv("GOMLX_BACKEND", run.GoBackendConfig)
	b, err := run.Backend()
	require.NoError(t, err)
	out := MustExecOnce(b, func(x *Node) *Node { return Mul(x, x) }, []float64{1, 2, 3})
	require.Equal(t, []float64{1, 4, 9}, tensors.MustCopyFlatData[float64](out))
	require.Equal(t, run.GoBackendConfig, run.BackendName())
}

func TestNewContext_SameSeedSameWeights(t *testing.T) {
	t.Setenv("GOMLX_BACKEND", run.GoBackendConfig)
	b, err := run.Backend()
	require.NoError(t, err)
	init := func(seed uint64) []float32 {
		vars := run.NewStore(seed)
		e := model.MustNewExec(b, vars, func(scope *model.Scope, g *Graph) *Node {
			return scope.VariableWithShape("w", shapes.Make(dtypes.Float32, 3, 4)).NodeValue(g)
		})
		return tensors.MustCopyFlatData[float32](e.MustExec()[0])
	}
	a, a2, c := init(1), init(1), init(2)
	require.Equal(t, a, a2)
	require.NotEqual(t, a, c)
}

func TestRNG_StreamsDiffer(t *testing.T) {
	require.Equal(t, run.RNG(1, "data").Uint64(), run.RNG(1, "data").Uint64())
	require.NotEqual(t, run.RNG(1, "data").Uint64(), run.RNG(1, "sample").Uint64())
}

func TestProvenance_Records(t *testing.T) {
	p := run.NewProvenance(expCfg{Seed: 3}, "seed=3", 3)
	require.NoError(t, p.Time("train", func() error { return nil }))
	p.Finish()
	require.Equal(t, wbtest.GoModVersion(t, "github.com/gomlx/gomlx"), run.ModuleVersion("github.com/gomlx/gomlx"))
	require.True(t, strings.HasPrefix(p.GoVersion, "go1."))
	require.NotEmpty(t, p.GitCommit)
	require.Contains(t, p.Timings, "train")
	require.False(t, p.End.Before(p.Start))
	require.Equal(t, run.CPUModel(), p.CPUModel)
	require.NotEmpty(t, p.CPUModel)
	require.InDelta(t, p.End.Sub(p.Start).Seconds(), p.WallSeconds, 1e-9, "wall seconds are End − Start")
}

func TestSelectPreset_AndEnvironment(t *testing.T) {
	mk := func(s string) func() string { return func() string { return s } }
	for name, want := range map[string]string{"tiny": "T", "small": "S", "": "S", "paper": "P"} {
		got, err := run.SelectPreset(name, mk("T"), mk("S"), mk("P"))
		require.NoError(t, err)
		require.Equal(t, want, got, name)
	}
	_, err := run.SelectPreset("huge", mk("T"), mk("S"), mk("P"))
	require.ErrorContains(t, err, `unknown preset "huge"`)

	for env, want := range map[string]string{"": "small", "tiny": "tiny", "small": "small", "paper": "paper"} {
		t.Setenv(run.PresetEnv, env)
		got, err := run.PresetName()
		require.NoError(t, err, env)
		require.Equal(t, want, got, env)
	}
	for _, bad := range []string{"huge", "Tiny", " small"} {
		t.Setenv(run.PresetEnv, bad)
		_, err := run.PresetName()
		require.ErrorContains(t, err, fmt.Sprintf("PROTOLAB_PRESET=%q is not a preset; set it to tiny, small or "+
			"paper", bad))
		_, err = run.FromEnv(func(name string) (string, error) {
			return run.SelectPreset(name, mk("T"), mk("S"), mk("P"))
		})
		require.ErrorContains(t, err, "PROTOLAB_PRESET")
	}
	t.Setenv(run.OutEnv, "/tmp/o")
	require.Equal(t, "/tmp/o/runs", run.OutRoot())
	t.Setenv(run.OutEnv, "")
	require.Equal(t, "runs", run.OutRoot())
}

// TestOverride_EmbeddedStructsArePromoted checks that the fields of an embedded struct without a JSON name are set
// and listed at the level of the struct embedding them, as encoding/json writes them, and that an outer field of
// the same name wins.
func TestOverride_EmbeddedStructsArePromoted(t *testing.T) {
	type base struct {
		Seed  uint64   `json:"seed"`
		Train trainCfg `json:"train"`
		Name  string   `json:"name"`
	}
	type study struct {
		base
		Name  string `json:"name"` // shadows base.Name
		Extra int    `json:"extra"`
	}
	var s study
	require.NoError(t, run.Override(&s, "seed=7; train.lr=0.5; name=outer; extra=2"))
	require.Equal(t, uint64(7), s.Seed)
	require.Equal(t, 0.5, s.Train.LR)
	require.Equal(t, "outer", s.Name)
	require.Equal(t, "", s.base.Name)
	require.Equal(t, []string{"extra", "name", "seed", "train.lr", "train.steps"}, run.Keys(&s))
	err := run.Override(&s, "base.seed=1")
	require.ErrorContains(t, err, `unknown key "base.seed"`)
	require.ErrorContains(t, err, "known: extra, name, seed, train")
}
