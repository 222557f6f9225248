package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/experiments/steering"
	"github.com/protolab/protolab/workbench/plot"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/store"
)

// steeringResult is a hand-made steering result with five training seeds whose prototype controller gains gain
// points (s.e. 0.5), its three rivals about 0.3 points (differences to the prototype controller of s.e. 0.3).
func steeringResult(gain float64) *steering.Result {
	iv := func(mean, se float64) steering.Interval {
		t := 2.776445 // t_{0.975, 4}
		return steering.Interval{Mean: mean / 100, SE: se / 100, Lo: (mean - t*se) / 100, Hi: (mean + t*se) / 100,
			N: 5}
	}
	return &steering.Result{Config: steering.Small().Settings(), Summaries: []steering.Summary{
		{Controller: steering.ControllerPrototype, Gain: iv(gain, 0.5)},
		{Controller: steering.ControllerSAE, Gain: iv(0.3, 0.4), VsPrototype: iv(gain-0.3, 0.3)},
		{Controller: steering.ControllerSAEPrism, Gain: iv(0.3, 0.5), VsPrototype: iv(gain-0.3, 0.3)},
		{Controller: steering.ControllerBias, Gain: iv(0.3, 0.5), VsPrototype: iv(gain-0.3, 0.3)},
	}}
}

// storeResult stores r as the steering result of cfg under the run root root, as `protolab run` would, and returns
// its file.
func storeResult(t *testing.T, root string, cfg steering.Config, r *steering.Result) string {
	t.Helper()
	dir := run.StudyDir(root, steering.Study)
	_, err := store.Compute(dir, run.ResultName, cfg, func() (*steering.Result, error) { return r, nil })
	require.NoError(t, err)
	path, err := run.ResultPath(root, steering.Study, cfg)
	require.NoError(t, err)
	return path
}

// A checkout (PROTOLAB_ROOT) whose results/ ships a protocol result, and whose out/runs holds only a quick run:
// `protolab report` of out/runs (what `make run` writes) is byte for byte the report of results/ (what `make
// results-report` writes), its rows read from the shipped file named relative to the checkout; a protocol run of
// the user's own then wins over the shipped one.
func TestReport_ShippedScorecardIsByteIdentical(t *testing.T) {
	root := t.TempDir()
	t.Setenv("PROTOLAB_ROOT", root)
	t.Setenv(run.ResultsEnv, "")
	shipped, out := filepath.Join(root, "results"), filepath.Join(root, "out", "runs")
	storeResult(t, shipped, steering.Small(), steeringResult(2))
	storeResult(t, out, steering.Quick(), steeringResult(9))

	var buf bytes.Buffer
	require.NoError(t, dispatch([]string{"report", "--out", shipped, "--shipped", shipped, "--md",
		filepath.Join(shipped, "REPORT.md")}, &buf))
	require.NoError(t, dispatch([]string{"report", "--out", out, "--md", filepath.Join(root, "out", "REPORT.md")},
		&buf)) // --shipped defaults to the checkout's results/
	for _, name := range []string{"REPORT.md", "REPORT.html"} {
		a, err := os.ReadFile(filepath.Join(shipped, name))
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(root, "out", name))
		require.NoError(t, err)
		require.Equal(t, string(a), string(b), name)
	}
	md, err := os.ReadFile(filepath.Join(shipped, "REPORT.md"))
	require.NoError(t, err)
	h := strings.TrimSuffix(filepath.Base(storeResult(t, shipped, steering.Small(), steeringResult(2))), ".json")
	require.Contains(t, string(md), "| small | ")
	require.Contains(t, string(md), "| results/steering/"+h+".json |", "the shipped file, relative to the checkout")
	require.NotContains(t, string(md), root, "no absolute path")
	require.NotContains(t, string(md), "out/runs")

	rows, err := scorecardRows(out, shipped)
	require.NoError(t, err)
	mine := storeResult(t, out, steering.Small(), steeringResult(2.5))
	rows2, err := scorecardRows(out, shipped)
	require.NoError(t, err)
	for i := range rows {
		if rows[i].Study == steering.Study {
			require.Equal(t, "results/steering/"+h+".json", rows[i].From)
			require.Equal(t, run.RepoPath(mine), rows2[i].From, "the user's protocol run wins")
			require.Equal(t, "out/runs/steering/"+h+".json", rows2[i].From)
		}
	}
}

// A shipped result over 1 MB is shipped gzip-compressed (results/README.md): the report reads it in place of the
// plain file, with the same rows, and names the compressed file.
func TestReport_ShippedCompressedResult(t *testing.T) {
	root := t.TempDir()
	t.Setenv("PROTOLAB_ROOT", root)
	t.Setenv(run.ResultsEnv, "")
	shipped := filepath.Join(root, "results")
	plain := storeResult(t, shipped, steering.Small(), steeringResult(2))
	before, err := scorecardRows(filepath.Join(root, "out", "runs"), shipped)
	require.NoError(t, err)

	data, err := os.ReadFile(plain)
	require.NoError(t, err)
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	_, err = zw.Write(data)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(plain+store.CompressedExt, zb.Bytes(), 0o644))
	require.NoError(t, os.Remove(plain))
	after, err := scorecardRows(filepath.Join(root, "out", "runs"), shipped)
	require.NoError(t, err)
	require.Len(t, after, len(before))
	n := 0
	for i := range after {
		if after[i].Study == steering.Study {
			n++
			require.Equal(t, run.RepoPath(plain)+store.CompressedExt, after[i].From)
			require.Equal(t, before[i].Verdict, after[i].Verdict)
			require.Equal(t, before[i].Claim.Ours, after[i].Claim.Ours)
		}
	}
	require.NotZero(t, n)
}

// `protolab report --compare DIR`: the scorecard of --out alone beside DIR's, row by row. An equal rerun agrees
// (exit 0); a rerun whose prototype gain moved beyond the shipped spread differs (an error naming the count), and the
// table is printed and written to COMPARE.md either way; --shipped with --compare is refused.
func TestReport_CompareWithTheShippedResults(t *testing.T) {
	root := t.TempDir()
	t.Setenv("PROTOLAB_ROOT", root)
	shipped, fresh := filepath.Join(root, "results"), filepath.Join(root, "out", "runs")
	storeResult(t, shipped, steering.Small(), steeringResult(2))
	storeResult(t, fresh, steering.Small(), steeringResult(2.1))
	md := filepath.Join(root, "out", "REPORT.md")
	var buf bytes.Buffer
	require.NoError(t, dispatch([]string{"report", "--out", fresh, "--compare", shipped, "--md", md}, &buf))
	compare, err := os.ReadFile(filepath.Join(root, "out", "COMPARE.md"))
	require.NoError(t, err)
	require.Contains(t, buf.String(), string(compare), "the table is printed")
	require.Contains(t, string(compare), "beside the same claim of the scorecard of out/runs (new)")
	require.Contains(t, string(compare), "| steering | prism_steer_gain_mc4 | ")
	require.Contains(t, string(compare), "| reproduced → reproduced | agrees |")
	require.Contains(t, string(compare), "| not run → not run | missing: not run for the shipped scorecard |")
	require.Contains(t, buf.String(), "report --compare: no claim differs from "+shipped)

	storeResult(t, fresh, steering.Small(), steeringResult(4)) // 2 points above: 2 shipped spreads of about 1
	buf.Reset()
	err = dispatch([]string{"report", "--out", fresh, "--compare", shipped, "--md", md}, &buf)
	require.ErrorContains(t, err, "claims differ from "+shipped+" or changed their verdict")
	compare, err = os.ReadFile(filepath.Join(root, "out", "COMPARE.md"))
	require.NoError(t, err)
	require.Contains(t, string(compare), "| 2 ± 1.4 points | 4 ± 1.4 points | reproduced → reproduced | differs: 1.4 "+
		"shipped spreads |")

	err = dispatch([]string{"report", "--out", fresh, "--compare", shipped, "--shipped", shipped, "--md", md}, &buf)
	require.ErrorContains(t, err, "drop --shipped")
}

// `protolab figures` draws the notebooks' figures of the protocol results under --results as SVG files into
// <results>/figures, names each study without a result, and removes an SVG that no result draws any more.
func TestFigures_SVGOfTheShippedResults(t *testing.T) {
	if err := plot.BrowserAvailable(); err != nil {
		t.Skipf("needs Chromium for SVG export (`make setup-chromium` installs it): %v", err)
	}
	results := t.TempDir()
	storeResult(t, results, steering.Small(), steeringResult(2))
	storeResult(t, results, steering.Quick(), steeringResult(9)) // not the protocol: not drawn
	figures := filepath.Join(results, "figures")
	require.NoError(t, os.MkdirAll(figures, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(figures, "gone.svg"), []byte("<svg/>"), 0o644))
	var buf bytes.Buffer
	require.NoError(t, dispatch([]string{"figures", "--results", results}, &buf))
	var want []string
	for _, f := range steering.Figures(steeringResult(2)) {
		want = append(want, f.Name+".svg")
	}
	entries, err := os.ReadDir(figures)
	require.NoError(t, err)
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
		svg, err := os.ReadFile(filepath.Join(figures, e.Name()))
		require.NoError(t, err)
		require.Contains(t, string(svg), "<svg", e.Name())
	}
	require.ElementsMatch(t, want, got, "the steering figures, SVG only; the stale one removed")
	require.Contains(t, buf.String(), "figures: architecture: no stored result of its Small preset")
	require.Contains(t, buf.String(), fmt.Sprintf("figures: steering: %d figures from ", len(want)))
	require.Contains(t, buf.String(), "removed 1 no result draws any more: gone.svg")
}
