package run_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/store"
)

func TestResultPath_IsWhereLoadOrRunStores(t *testing.T) {
	out := t.TempDir()
	cfg := studyCfg{N: 3, Name: "a"}
	compute := func(c studyCfg, prov *run.Provenance, o run.Options) (*studyResult, error) {
		return &studyResult{Provenance: prov, Square: c.N * c.N}, nil
	}
	_, err := run.LoadOrRun("demo", cfg, []run.Option{run.Out(out), run.Progress(nil)}, compute)
	require.NoError(t, err)
	path, err := run.ResultPath(out, "demo", cfg)
	require.NoError(t, err)
	h, _, err := store.KeyHash(cfg)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(out, "demo", "result-"+h+".json"), path)
	require.FileExists(t, path)
	cfg.N = 4 // another setting, another file
	other, err := run.ResultPath(out, "demo", cfg)
	require.NoError(t, err)
	require.NotEqual(t, path, other)
}

func TestShowPath_RelativeToTheOutputRoot(t *testing.T) {
	out := t.TempDir()
	t.Setenv(run.OutEnv, out)
	require.Equal(t, filepath.Join("$PROTOLAB_OUT", "runs", "models", "x"),
		run.ShowPath(filepath.Join(out, "runs", "models", "x")))
	require.Equal(t, "$PROTOLAB_OUT", run.ShowPath(out))
	elsewhere := filepath.Join(filepath.Dir(out), "elsewhere-"+filepath.Base(out), "f.json")
	require.Equal(t, elsewhere, run.ShowPath(elsewhere)) // neither below $PROTOLAB_OUT nor the working directory
	t.Setenv(run.OutEnv, "")
	wd, err := os.Getwd()
	require.NoError(t, err)
	require.Equal(t, filepath.Join("a", "b"), run.ShowPath(filepath.Join(wd, "a", "b")))
}

func TestNotebookConfig_FollowsThePresetAndTheStoredProtocolRun(t *testing.T) {
	out := t.TempDir()
	opts := []run.Option{run.Out(out), run.Progress(nil)}
	full := func() studyCfg { return studyCfg{N: 10, Name: "full"} }
	quick := func() studyCfg { return studyCfg{N: 2, Name: "quick"} }
	preset := func(name string) (studyCfg, error) {
		return run.SelectPreset(name, func() studyCfg { return studyCfg{N: 1, Name: "tiny"} }, full,
			func() studyCfg { return studyCfg{N: 99, Name: "paper"} })
	}
	compute := func(c studyCfg, prov *run.Provenance, o run.Options) (*studyResult, error) {
		return &studyResult{Provenance: prov, Square: c.N * c.N}, nil
	}
	t.Setenv(run.PresetEnv, "tiny")
	cfg, err := run.NotebookConfig("demo", preset, full, quick, opts...)
	require.NoError(t, err)
	require.Equal(t, "tiny", cfg.Name)
	t.Setenv(run.PresetEnv, "")
	cfg, err = run.NotebookConfig("demo", preset, full, quick, opts...)
	require.NoError(t, err)
	require.Equal(t, "quick", cfg.Name) // no protocol run stored
	_, err = run.LoadOrRun("demo", full(), opts, compute)
	require.NoError(t, err)
	cfg, err = run.NotebookConfig("demo", preset, full, quick, opts...)
	require.NoError(t, err)
	require.Equal(t, "full", cfg.Name) // the stored protocol run, as run.Notebook shows it
	t.Setenv(run.PresetEnv, "huge")
	_, err = run.NotebookConfig("demo", preset, full, quick, opts...)
	require.ErrorContains(t, err, "PROTOLAB_PRESET")
}

func TestSettingsSummary_NamesTheChangesAndTheResult(t *testing.T) {
	out := t.TempDir()
	t.Setenv(run.OutEnv, out)
	t.Setenv(run.PresetEnv, "tiny")
	base := studyCfg{N: 1, Name: "tiny"}
	cfg := base
	cfg.N = 5
	got, err := run.SettingsSummary("demo", base, cfg, filepath.Join(out, "runs"))
	require.NoError(t, err)
	path, err := run.ResultPath(filepath.Join(out, "runs"), "demo", cfg)
	require.NoError(t, err)
	shown := run.ShowPath(path)
	require.True(t, strings.HasPrefix(shown, "$PROTOLAB_OUT/runs/demo/result-"), shown)
	require.Equal(t, "preset tiny; changed: n: 1 → 5\nevery key with its value: protolab keys demo --preset tiny\n"+
		"result: "+shown+" (not computed yet: the first cell below that needs it computes and stores it)\n", got)
	_, err = run.LoadOrRun("demo", cfg, []run.Option{run.Out(filepath.Join(out, "runs")), run.Progress(nil)},
		func(c studyCfg, prov *run.Provenance, o run.Options) (*studyResult, error) {
			return &studyResult{Provenance: prov}, nil
		})
	require.NoError(t, err)
	got, err = run.SettingsSummary("demo", base, base, filepath.Join(out, "runs"))
	require.NoError(t, err)
	require.Contains(t, got, "changed: none\n")
	require.Contains(t, got, "(not computed yet") // base's result is another file
	got, err = run.SettingsSummary("demo", base, cfg, filepath.Join(out, "runs"))
	require.NoError(t, err)
	require.Contains(t, got, "(stored: the cells below load it)")
}

// searchedCfg is a configuration whose protocol replaces lr by a search over grid when grid is set.
type searchedCfg struct {
	LR   float64   `json:"lr"`
	Grid []float64 `json:"grid"`
}

func (c searchedCfg) Searched() []run.Search {
	if len(c.Grid) == 0 {
		return nil
	}
	return []run.Search{{Key: "lr", Over: "grid", Note: "every run trains at the rate chosen on validation data; " +
		"set grid=[] to train at lr"}}
}

func (c searchedCfg) Validate() error { return nil }

// TestSettingsSummary_NamesSearchedKeys: a key the protocol searches over is named, with a warning when the user
// changed it; an empty grid switches the search off and the line goes.
func TestSettingsSummary_NamesSearchedKeys(t *testing.T) {
	out := t.TempDir()
	t.Setenv(run.OutEnv, out)
	t.Setenv(run.PresetEnv, "tiny")
	base := searchedCfg{LR: 1e-3, Grid: []float64{1e-3, 3e-3}}
	got, err := run.SettingsSummary("demo", base, base, out)
	require.NoError(t, err)
	require.Contains(t, got, "changed: none\nlr is searched over grid: every run trains at the rate chosen on "+
		"validation data; set grid=[] to train at lr\nevery key")
	require.NotContains(t, got, "you changed")
	cfg := base
	cfg.LR = 1e-2
	got, err = run.SettingsSummary("demo", base, cfg, out)
	require.NoError(t, err)
	require.Contains(t, got, "set grid=[] to train at lr (you changed lr: the searched runs do not use it)\n")
	cfg.Grid = nil
	got, err = run.SettingsSummary("demo", base, cfg, out)
	require.NoError(t, err)
	require.NotContains(t, got, "searched")
	require.Empty(t, run.SearchedOf(studyCfg{}))
}

func TestSeedsSearch(t *testing.T) {
	require.Empty(t, run.SeedsSearch(nil, "one model"))
	s := run.SeedsSearch([]uint64{1, 2, 3}, "one model")
	require.Len(t, s, 1)
	require.Equal(t, "seed", s[0].Key)
	require.Equal(t, "seeds", s[0].Over)
	require.True(t, strings.HasPrefix(s[0].Note, "one model per seed of seeds"), s[0].Note)
}
