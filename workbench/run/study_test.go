package run_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/pkg/errors"
	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/run"
)

type studyCfg struct {
	N    int    `json:"n"`
	Name string `json:"name"`
}

func (c studyCfg) Validate() error {
	if c.N < 0 {
		return errors.Errorf("n=%d, want ≥ 0", c.N)
	}
	return nil
}

type studyResult struct {
	Provenance *run.Provenance `json:"provenance"`
	Square     int             `json:"square"`
}

func TestLoadOrRun_StoresByConfigAndLoads(t *testing.T) {
	calls := 0
	compute := func(c studyCfg, prov *run.Provenance, o run.Options) (*studyResult, error) {
		calls++
		o.Logf("square", "computing %d", c.N)
		return &studyResult{Provenance: prov, Square: c.N * c.N}, nil
	}
	out := t.TempDir()
	var log bytes.Buffer
	opts := []run.Option{run.Out(out), run.Progress(&log), run.Overrides("n=3")}
	r, err := run.LoadOrRun("square", studyCfg{N: 3}, opts, compute)
	require.NoError(t, err)
	require.Equal(t, 9, r.Square)
	require.Equal(t, "n=3", r.Provenance.Overrides)
	require.False(t, r.Provenance.End.IsZero(), "the provenance is finished")
	files, err := filepath.Glob(filepath.Join(out, "square", "result-*.json"))
	require.NoError(t, err)
	require.Len(t, files, 1)

	r2, err := run.LoadOrRun("square", studyCfg{N: 3}, opts, compute)
	require.NoError(t, err)
	require.Equal(t, 1, calls, "the stored result is loaded")
	require.Equal(t, 9, r2.Square)
	require.Contains(t, log.String(), "square: loaded the stored result")

	got, ok, err := run.Stored[*studyResult]("square", studyCfg{N: 3}, opts...)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, 9, got.Square)
	_, ok, err = run.Stored[*studyResult]("square", studyCfg{N: 4}, opts...)
	require.NoError(t, err)
	require.False(t, ok, "nothing stored for another config")
	_, ok, _ = run.Stored[*studyResult]("square", studyCfg{N: 3})
	require.False(t, ok, "nothing stored in memory")

	_, err = run.LoadOrRun("square", studyCfg{N: 4}, opts, compute)
	require.NoError(t, err)
	require.Equal(t, 2, calls, "another config computes")
	_, err = run.Recompute("square", studyCfg{N: 3}, opts, compute)
	require.NoError(t, err)
	require.Equal(t, 3, calls, "Recompute never loads")

	_, err = run.LoadOrRun("square", studyCfg{N: -1}, opts, compute)
	require.ErrorContains(t, err, "square: n=-1")
	require.Equal(t, 3, calls, "an invalid config computes nothing")

	_, err = run.LoadOrRun("square", studyCfg{N: 5}, nil, compute) // no Out: in memory
	require.NoError(t, err)
	_, err = run.LoadOrRun("square", studyCfg{N: 5}, nil, compute)
	require.NoError(t, err)
	require.Equal(t, 5, calls)

	fail := func(studyCfg, *run.Provenance, run.Options) (*studyResult, error) { return nil, errors.New("boom") }
	_, err = run.LoadOrRun("square", studyCfg{N: 6}, opts, fail)
	require.ErrorContains(t, err, "square: boom")
	files, _ = filepath.Glob(filepath.Join(out, "square", "result-*.json"))
	require.Len(t, files, 2, "a failed study stores nothing")
}

func TestOptions_Defaults(t *testing.T) {
	o := run.NewOptions()
	require.Equal(t, "", o.Out)
	require.Equal(t, os.Stderr, o.Progress)
	require.NoError(t, o.Err())
	o.Metric(1, run.MetricTrainLoss, 2) // no OnMetric: ignored
	o.Logf("x", "nothing")

	ctx, cancel := context.WithCancel(context.Background())
	var got []run.Metric
	o = run.NewOptions(run.Progress(nil), run.Context(ctx), run.OnMetric(func(m run.Metric) { got = append(got, m) }))
	require.Nil(t, o.Progress)
	o.Metric(3, run.MetricValLoss, 1.5)
	require.Equal(t, []run.Metric{{Step: 3, Name: run.MetricValLoss, Value: 1.5}}, got)
	cancel()
	require.ErrorIs(t, o.Err(), context.Canceled)
	require.Equal(t, o.Out, run.NewOptions(run.With(o)).Out)
	require.ErrorIs(t, run.NewOptions(run.With(o)).Err(), context.Canceled)
}

func TestDiffKeys_NamesDifferingLeaves(t *testing.T) {
	type inner struct {
		LR    float64 `json:"lr"`
		Steps int     `json:"steps"`
	}
	type cfg struct {
		Train inner    `json:"train"`
		Tags  []string `json:"tags"`
		Name  string   `json:"name"`
	}
	a := cfg{Train: inner{LR: 0.1, Steps: 10}, Tags: []string{"x"}, Name: "a"}
	b := a
	d, err := run.DiffKeys(a, b)
	require.NoError(t, err)
	require.Empty(t, d)
	b.Train.Steps, b.Tags = 20, []string{"x", "y"}
	d, err = run.DiffKeys(a, b)
	require.NoError(t, err)
	require.Equal(t, []string{`tags: ["x"] → ["x","y"]`, "train.steps: 10 → 20"}, d)
	d, err = run.DiffKeys(map[string]int{"a": 1}, map[string]int{"b": 1})
	require.NoError(t, err)
	require.Equal(t, []string{"a: 1 → (absent)", "b: (absent) → 1"}, d)
}

func TestShowcase_PrefersTheStoredProtocolRun(t *testing.T) {
	calls := 0
	compute := func(c studyCfg, prov *run.Provenance, o run.Options) (*studyResult, error) {
		calls++
		return &studyResult{Provenance: prov, Square: c.N * c.N}, nil
	}
	var log bytes.Buffer
	opts := []run.Option{run.Out(t.TempDir()), run.Progress(&log)}
	full, quick := studyCfg{N: 10, Name: "small"}, studyCfg{N: 2, Name: "quick"}
	r, shown, err := run.Showcase("sq", full, quick, opts, compute)
	require.NoError(t, err)
	require.False(t, shown)
	require.Equal(t, 4, r.Square, "no protocol run stored: the quick run")
	require.Contains(t, log.String(), "showing the quick run")
	_, err = run.LoadOrRun("sq", full, opts, compute)
	require.NoError(t, err)
	log.Reset()
	r, shown, err = run.Showcase("sq", full, quick, opts, compute)
	require.NoError(t, err)
	require.True(t, shown)
	require.Equal(t, 100, r.Square)
	require.Contains(t, log.String(), "showing the stored protocol run")
	require.Equal(t, 2, calls, "the stored runs are loaded, not computed again")
}

// Notebook shows Showcase's choice at the Small preset and LoadOrRun of the named preset elsewhere; an unknown
// preset is the preset function's error.
func TestNotebook_FollowsThePresetVariable(t *testing.T) {
	compute := func(c studyCfg, prov *run.Provenance, o run.Options) (*studyResult, error) {
		return &studyResult{Provenance: prov, Square: c.N * c.N}, nil
	}
	tiny := func() studyCfg { return studyCfg{N: 1, Name: "tiny"} }
	small := func() studyCfg { return studyCfg{N: 10, Name: "small"} }
	quick := func() studyCfg { return studyCfg{N: 2, Name: "quick"} }
	preset := func(name string) (studyCfg, error) { return run.SelectPreset(name, tiny, small, small) }
	opts := []run.Option{run.Out(t.TempDir())}
	for _, c := range []struct {
		env  string
		want int
	}{{"tiny", 1}, {"small", 4}, {"", 4}, {"paper", 100}} {
		t.Setenv(run.PresetEnv, c.env)
		r, err := run.Notebook("sq", preset, small, quick, opts, compute)
		require.NoError(t, err, c.env)
		require.Equal(t, c.want, r.Square, "PROTOLAB_PRESET=%q", c.env)
	}
	// The paper preset (here the Small config) has now been stored: Small shows it, not the quick run.
	t.Setenv(run.PresetEnv, "small")
	r, err := run.Notebook("sq", preset, small, quick, opts, compute)
	require.NoError(t, err)
	require.Equal(t, 100, r.Square)
	t.Setenv(run.PresetEnv, "huge")
	_, err = run.Notebook("sq", preset, small, quick, opts, compute)
	require.ErrorContains(t, err, "huge")
}
