package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/store"
)

// shippedFolder returns the checkout's results/ folder.
func shippedFolder(t *testing.T) string {
	t.Helper()
	root, err := run.ModuleRoot()
	require.NoError(t, err)
	return filepath.Join(root, run.ShippedDir)
}

// The committed results/REPORT.md and REPORT.html are what `make results-report` writes from the shipped result
// files: regenerated here, byte for byte (no hand-edited scorecard, none left behind by a changed claim).
func TestResults_ReportIsGenerated(t *testing.T) {
	shipped := shippedFolder(t)
	tmp := t.TempDir()
	var buf bytes.Buffer
	require.NoError(t, dispatch([]string{"report", "--out", shipped, "--shipped", shipped, "--md",
		filepath.Join(tmp, "REPORT.md")}, &buf))
	for _, name := range []string{"REPORT.md", "REPORT.html"} {
		want, err := os.ReadFile(filepath.Join(shipped, name))
		if err != nil {
			t.Fatalf("results/%s is missing: run `make results-report` (%v)", name, err)
		}
		got, err := os.ReadFile(filepath.Join(tmp, name))
		require.NoError(t, err)
		if !bytes.Equal(want, got) {
			t.Fatalf("results/%s is stale or hand-edited: run `make results-report`", name)
		}
	}
}

// Size budget of results/ (results/README.md): under 20 MB in all, no file over 4 MB, a result file over 1 MB
// shipped gzip-compressed (result-<hash>.json.gz, which the result store reads in its place), no model weights.
const (
	shippedBudget   = 20 << 20
	shippedMaxFile  = 4 << 20
	shippedMaxPlain = 1 << 20
)

// results/ keeps to its size budget and ships no weights.
func TestResults_SizeBudget(t *testing.T) {
	problems, err := budgetProblems(shippedFolder(t))
	require.NoError(t, err)
	require.Empty(t, problems)
}

// budgetProblems lists how the folder dir breaks the budget of results/: each file of weights, each file over 4 MB,
// each uncompressed result file over 1 MB, each result shipped both plain and compressed, and a total over 20 MB.
func budgetProblems(dir string) ([]string, error) {
	var total int64
	var problems []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel := run.RepoPath(path)
		switch name := d.Name(); {
		case strings.HasSuffix(name, ".safetensors"):
			problems = append(problems, rel+": results/ ships no model weights (results/README.md); remove it")
		case info.Size() > shippedMaxFile:
			problems = append(problems, fmt.Sprintf("%s is %d bytes, over the 4 MB a shipped file may have "+
				"(results/README.md)", rel, info.Size()))
		case strings.HasSuffix(name, ".json") && info.Size() > shippedMaxPlain:
			problems = append(problems, fmt.Sprintf("%s is %d bytes, over the 1 MB a result file may have "+
				"uncompressed: ship it compressed (`gzip -9n %s`; results/README.md)", rel, info.Size(), rel))
		case strings.HasSuffix(name, ".json"+store.CompressedExt):
			if _, err := os.Stat(strings.TrimSuffix(path, store.CompressedExt)); err == nil {
				problems = append(problems, rel+" is shipped both compressed and plain; keep one")
			}
		}
		total += info.Size()
		return nil
	})
	if total > shippedBudget {
		problems = append(problems, fmt.Sprintf("results/ holds %d bytes, over its 20 MB budget (results/README.md)",
			total))
	}
	return problems, err
}

// budgetProblems names weights, a file over 4 MB, a plain result file over 1 MB, a result shipped twice and a folder
// over 20 MB; a folder within the budget has none.
func TestResults_BudgetProblems(t *testing.T) {
	write := func(dir, name string, size int) string {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), make([]byte, size), 0o644))
		return dir
	}
	ok := write(t.TempDir(), "a/result-1.json", 1<<20)
	write(ok, "b/result-2.json.gz", 4<<20)
	write(ok, "REPORT.md", 1000)
	problems, err := budgetProblems(ok)
	require.NoError(t, err)
	require.Empty(t, problems)
	big := t.TempDir()
	for i := range 21 {
		write(big, filepath.Join("s", fmt.Sprintf("result-%d.json", i)), 1<<20-1)
	}
	twice := write(t.TempDir(), "x/result-3.json", 10)
	write(twice, "x/result-3.json.gz", 10)
	for _, c := range []struct{ dir, want string }{
		{big, "over its 20 MB budget"},
		{write(t.TempDir(), "x/weights.safetensors", 10), "x/weights.safetensors: results/ ships no model weights"},
		{write(t.TempDir(), "x/result-2.json.gz", 4<<20+1), "result-2.json.gz is 4194305 bytes, over the 4 MB"},
		{write(t.TempDir(), "x/result-2.json", 1<<20+1), "result-2.json is 1048577 bytes, over the 1 MB a result " +
			"file may have uncompressed: ship it compressed (`gzip -9n"},
		{twice, "result-3.json.gz is shipped both compressed and plain"},
	} {
		problems, err := budgetProblems(c.dir)
		require.NoError(t, err)
		require.Len(t, problems, 1, c.want)
		require.Contains(t, problems[0], c.want)
	}
}
