package run_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/run"
)

// shippedFixture stores a result for cfg under a fresh folder laid out as results/ (root/<study>/result-<hash>.json)
// and returns the folder; its result's Square is marked (+1000) so that a test sees which folder a result came from.
func shippedFixture(t *testing.T, study string, cfg studyCfg) string {
	t.Helper()
	dir := t.TempDir()
	_, err := run.LoadOrRun(study, cfg, []run.Option{run.Out(dir), run.Shipped(""), run.Progress(nil)},
		func(c studyCfg, prov *run.Provenance, o run.Options) (*studyResult, error) {
			return &studyResult{Provenance: prov, Square: 1000 + c.N*c.N}, nil
		})
	require.NoError(t, err)
	return dir
}

// snapshot lists every file under dir with its size and modification time: what a test compares to show that
// nothing was written there.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files[path] = fmt.Sprint(info.ModTime(), info.Mode(), info.Size())
		return nil
	}))
	return files
}

// Showcase at the Small preset shows the user's protocol run over the shipped one over the quick run, saying which
// and from what file, and never writes into the shipped folder.
func TestShowcase_UsersOverShippedOverQuick(t *testing.T) {
	full, quick := studyCfg{N: 10, Name: "small"}, studyCfg{N: 2, Name: "quick"}
	calls := 0
	compute := func(c studyCfg, prov *run.Provenance, o run.Options) (*studyResult, error) {
		calls++
		return &studyResult{Provenance: prov, Square: c.N * c.N}, nil
	}
	shipped, out := shippedFixture(t, "sq", full), t.TempDir()
	before := snapshot(t, shipped)
	var log bytes.Buffer
	opts := []run.Option{run.Out(out), run.Shipped(shipped), run.Progress(&log)}

	// Nothing shipped: the quick run.
	r, shown, err := run.Showcase("sq", full, quick, []run.Option{run.Out(out), run.Shipped(t.TempDir()),
		run.Progress(&log)}, compute)
	require.NoError(t, err)
	require.False(t, shown)
	require.Equal(t, 4, r.Square)
	require.Contains(t, log.String(), "no protocol run stored or shipped")

	// Shipped, none of the user's: the shipped run, named relative to its folder's place.
	log.Reset()
	r, shown, err = run.Showcase("sq", full, quick, opts, compute)
	require.NoError(t, err)
	require.True(t, shown)
	require.Equal(t, 1100, r.Square, "the shipped result")
	path, err := run.ResultPath(shipped, "sq", full)
	require.NoError(t, err)
	require.Contains(t, log.String(), "showing the shipped protocol run "+run.RepoPath(path))
	require.Equal(t, 1, calls, "only the quick run was computed")

	// The notebook's cells: NotebookConfig starts from the protocol preset, LoadOrRun loads the shipped file, and
	// nothing is stored under Out for it.
	t.Setenv(run.PresetEnv, "small")
	cfg, err := run.NotebookConfig("sq", func(string) (studyCfg, error) { return full, nil },
		func() studyCfg { return full }, func() studyCfg { return quick }, opts...)
	require.NoError(t, err)
	require.Equal(t, full, cfg)
	log.Reset()
	r, err = run.LoadOrRun("sq", full, opts, compute)
	require.NoError(t, err)
	require.Equal(t, 1100, r.Square)
	require.Contains(t, log.String(), "loaded the shipped result")
	_, ok, err := run.Stored[*studyResult]("sq", full, run.Out(out))
	require.NoError(t, err)
	require.False(t, ok, "a shipped result is not copied into Out")

	// The user's own protocol run wins over the shipped one.
	_, err = run.Recompute("sq", full, opts, compute)
	require.NoError(t, err)
	log.Reset()
	r, shown, err = run.Showcase("sq", full, quick, opts, compute)
	require.NoError(t, err)
	require.True(t, shown)
	require.Equal(t, 100, r.Square, "the user's result")
	require.Contains(t, log.String(), "showing the stored protocol run")
	require.Equal(t, before, snapshot(t, shipped), "nothing was written into the shipped folder")

	// Shipped("") reads no shipped result: LoadOrRun computes (what `protolab run` and `make reproduce` need).
	out2 := t.TempDir()
	r, err = run.LoadOrRun("sq", full, []run.Option{run.Out(out2), run.Shipped(""), run.Progress(nil)}, compute)
	require.NoError(t, err)
	require.Equal(t, 100, r.Square)
	require.Equal(t, 3, calls)
	// In memory (no Out) nothing is read, shipped or not.
	r, err = run.LoadOrRun("sq", full, []run.Option{run.Shipped(shipped), run.Progress(nil)}, compute)
	require.NoError(t, err)
	require.Equal(t, 100, r.Square)
	require.Equal(t, 4, calls)
}

// ShippedRoot is $PROTOLAB_RESULTS when set, else results/ of the checkout (the default of Options.Shipped), and
// RepoPath names a file of the checkout relative to it.
func TestShippedRoot_AndRepoPath(t *testing.T) {
	root, err := run.ModuleRoot()
	require.NoError(t, err)
	t.Setenv(run.ResultsEnv, "")
	require.Equal(t, filepath.Join(root, "results"), run.ShippedRoot())
	require.Equal(t, run.ShippedRoot(), run.NewOptions().Shipped)
	require.Equal(t, "results/a/result-x.json", run.RepoPath(filepath.Join(root, "results", "a", "result-x.json")))
	outside := filepath.Join(filepath.Dir(root), "elsewhere-"+filepath.Base(root), "f.json")
	require.Equal(t, outside, run.RepoPath(outside))
	t.Setenv(run.ResultsEnv, "/srv/protolab-results")
	require.Equal(t, "/srv/protolab-results", run.ShippedRoot())
	t.Setenv(run.ResultsEnv, "")
	t.Setenv("PROTOLAB_ROOT", "")
	t.Chdir(os.TempDir())
	require.Equal(t, "", run.ShippedRoot(), "no checkout: nothing shipped")
}

// SettingsSummary says when the result of the settings is shipped with the checkout, naming the file.
func TestSettingsSummary_NamesAShippedResult(t *testing.T) {
	full := studyCfg{N: 7, Name: "small"}
	shipped := shippedFixture(t, "sq", full)
	t.Setenv(run.ResultsEnv, shipped)
	t.Setenv(run.PresetEnv, "small")
	summary, err := run.SettingsSummary("sq", full, full, t.TempDir())
	require.NoError(t, err)
	require.Contains(t, summary, "shipped with the checkout: the cells below load "+filepath.Join(shipped, "sq"))
}
