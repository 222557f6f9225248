package run_test

import (
	"testing"

	"github.com/pkg/errors"
	"github.com/protolab/protolab/workbench/run"
	"github.com/stretchr/testify/require"
)

// TestEntry: the four entry points store, load, recompute and pick the notebook's preset as the run functions they
// bind do.
func TestEntry(t *testing.T) {
	out := t.TempDir()
	calls := 0
	e := run.Entry[studyCfg, *studyResult]{
		Study:  "square",
		Preset: func(name string) (studyCfg, error) { return run.SelectPreset(name, tinyCfg, smallCfg, smallCfg) },
		Small:  smallCfg,
		Quick:  tinyCfg,
		Compute: func(c studyCfg, prov *run.Provenance, o run.Options) (*studyResult, error) {
			calls++
			return &studyResult{Provenance: prov, Square: c.N * c.N}, nil
		},
	}
	opts := []run.Option{run.Out(out), run.Progress(nil)}
	r, err := e.LoadOrRun(studyCfg{N: 3}, opts...)
	require.NoError(t, err)
	require.Equal(t, 9, r.Square)
	_, err = e.LoadOrRun(studyCfg{N: 3}, opts...)
	require.NoError(t, err)
	require.Equal(t, 1, calls, "the second LoadOrRun loads")
	_, err = e.Run(studyCfg{N: 3}, opts...)
	require.NoError(t, err)
	require.Equal(t, 2, calls, "Run recomputes")

	t.Setenv(run.PresetEnv, "small")
	cfg, err := e.NotebookConfig(opts...)
	require.NoError(t, err)
	require.Equal(t, tinyCfg(), cfg, "no stored protocol run: the quick preset")
	r, err = e.Notebook(opts...)
	require.NoError(t, err)
	require.Equal(t, 4, r.Square)
	_, err = e.LoadOrRun(smallCfg(), opts...)
	require.NoError(t, err)
	cfg, err = e.NotebookConfig(opts...)
	require.NoError(t, err)
	require.Equal(t, smallCfg(), cfg, "a stored protocol run is shown")
	t.Setenv(run.PresetEnv, "tiny")
	r, err = e.Notebook(opts...)
	require.NoError(t, err)
	require.Equal(t, 4, r.Square)
}

func tinyCfg() studyCfg  { return studyCfg{N: 2, Name: "tiny"} }
func smallCfg() studyCfg { return studyCfg{N: 5, Name: "small"} }

// TestEntry_Stored: the Stored hook runs after a result without error, and its error is the call's.
func TestEntry_Stored(t *testing.T) {
	out := t.TempDir()
	hooked := 0
	e := run.Entry[studyCfg, *studyResult]{Study: "square", Preset: nil, Small: smallCfg, Quick: tinyCfg,
		Compute: func(c studyCfg, prov *run.Provenance, o run.Options) (*studyResult, error) {
			return &studyResult{Provenance: prov, Square: c.N * c.N}, nil
		},
		Stored: func(o run.Options) error {
			hooked++
			require.Equal(t, out, o.Out)
			return nil
		}}
	opts := []run.Option{run.Out(out), run.Progress(nil)}
	_, err := e.LoadOrRun(studyCfg{N: 3}, opts...)
	require.NoError(t, err)
	_, err = e.Run(studyCfg{N: 3}, opts...)
	require.NoError(t, err)
	require.Equal(t, 2, hooked)
	_, err = e.LoadOrRun(studyCfg{N: -1}, opts...)
	require.Error(t, err)
	require.Equal(t, 2, hooked, "not after an error")
	e.Stored = func(run.Options) error { return errors.New("cleanup failed") }
	_, err = e.LoadOrRun(studyCfg{N: 3}, opts...)
	require.ErrorContains(t, err, "cleanup failed")
}

func TestEntry_FromEnv(t *testing.T) {
	e := run.Entry[studyCfg, *studyResult]{Study: "square", Small: smallCfg, Quick: tinyCfg,
		Preset: func(name string) (studyCfg, error) { return run.SelectPreset(name, tinyCfg, smallCfg, smallCfg) }}
	t.Setenv(run.PresetEnv, "tiny")
	cfg, err := e.FromEnv()
	require.NoError(t, err)
	require.Equal(t, tinyCfg(), cfg)
	t.Setenv(run.PresetEnv, "huge")
	_, err = e.FromEnv()
	require.Error(t, err)
}
