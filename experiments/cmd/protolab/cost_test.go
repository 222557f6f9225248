package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/protolab/protolab/experiments/speed"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/store"
	"github.com/stretchr/testify/require"
)

// TestCost_PrintsEveryStudy checks that `protolab cost` prints one row per study with its notebook, the total and
// the rates in the header, with the assumed rate called an assumption.
func TestCost_PrintsEveryStudy(t *testing.T) {
	for _, preset := range []string{"tiny", "small", "paper"} {
		var buf bytes.Buffer
		require.NoError(t, dispatch([]string{"cost", "--preset", preset, "--rate", "2e14", "--cpu-rate", "5e9"}, &buf))
		out := buf.String()
		require.Contains(t, out, "at the "+preset+" preset")
		require.Contains(t, out,
			"200 TFLOP/s, an ASSUMED sustained rate (not a measurement), and at 5 GFLOP/s, given by --cpu-rate")
		require.Contains(t, out, "@ 5 GFLOP/s")
		for _, s := range studies {
			require.Regexp(t, regexp.MustCompile(`(?m)^\s*`+s.name+`\s+`+notebooks[s.name]+`\s+[1-9]`), out,
				"%s: a row with its notebook and a positive run count", s.name)
			require.Contains(t, out, "  "+s.name+": ", "%s: its notes", s.name)
		}
		require.Regexp(t, `(?m)^\s*total\s+[1-9]`, out)
	}
	var buf bytes.Buffer
	require.ErrorContains(t, dispatch([]string{"cost", "--rate", "0"}, &buf), "--rate=0")
	require.ErrorContains(t, dispatch([]string{"cost", "--cpu-rate", "-1"}, &buf), "--cpu-rate=-1")
}

// TestCost_CPURateFromTheStoredSpeedRun checks the CPU column's rate: the median over the stored speed protocol run's
// rows that ran of FLOPs per token × tokens/s (here 1, 3 and 8 GFLOP/s, a skipped row left out: 3 GFLOP/s, where
// the mean would be 4), and no CPU column when no run is stored.
func TestCost_CPURateFromTheStoredSpeedRun(t *testing.T) {
	out := t.TempDir()
	var buf bytes.Buffer
	require.NoError(t, dispatch([]string{"cost", "--preset", "tiny", "--out", out}, &buf))
	require.Contains(t, buf.String(), "No CPU column: no speed protocol run is stored under --out")
	require.NotContains(t, buf.String(), "GFLOP/s")

	rows := []speed.ThroughputRow{
		{Mixer: "protot", T: 256, TrainFLOPs: 1e6, TokensPerSec: 1000},
		{Mixer: "protot", T: 1024, TrainFLOPs: 2e6, TokensPerSec: 1500},
		{Mixer: "attention", T: 8192, Skipped: "memory", TrainFLOPs: 14e6},
		{Mixer: "attention", T: 256, TrainFLOPs: 1e6, TokensPerSec: 8000},
	}
	stored := speed.Result{Throughput: rows, Machine: speed.Machine{Backend: "go:parallelism=-1", NumCPU: 2}}
	_, err := store.Compute(run.StudyDir(out, speed.Study), run.ResultName, speed.Small(),
		func() (speed.Result, error) { return stored, nil })
	require.NoError(t, err)
	buf.Reset()
	require.NoError(t, dispatch([]string{"cost", "--preset", "tiny", "--out", out}, &buf))
	require.Contains(t, buf.String(), "and at 3 GFLOP/s, the median training rate of the 3 rows of the speed protocol run")
	require.Contains(t, buf.String(), "(backend go:parallelism=-1, 2 CPUs)")
}

// TestCost_NotebooksCallTheirStudies checks the notebook column against notebooks/*.ipynb: each names a notebook
// that calls the study's package.
func TestCost_NotebooksCallTheirStudies(t *testing.T) {
	for _, s := range studies {
		nb, ok := notebooks[s.name]
		require.True(t, ok, "study %s has no notebook", s.name)
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "notebooks", nb+".ipynb"))
		require.NoError(t, err)
		require.True(t, strings.Contains(string(b), s.name+"."), "%s.ipynb does not call %s", nb, s.name)
	}
}

func TestDuration_Units(t *testing.T) {
	require.Equal(t, "30 s", duration(30))
	require.Equal(t, "2 min", duration(120))
	require.Equal(t, "3 h", duration(3*3600))
	require.Equal(t, "2 days", duration(2*86400))
	require.Equal(t, "1.5 years", duration(1.5*365*86400))
	require.Equal(t, "1.31 G", count(1.31e9))
	require.Equal(t, "100 TFLOP/s", flopRate(1e14))
}
