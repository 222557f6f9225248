package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/experiments/architecture"
	"github.com/protolab/protolab/experiments/attribution"
	"github.com/protolab/protolab/experiments/baseline"
	"github.com/protolab/protolab/experiments/fvec"
	"github.com/protolab/protolab/experiments/interp"
	"github.com/protolab/protolab/experiments/prismhead"
	"github.com/protolab/protolab/experiments/robustness"
	"github.com/protolab/protolab/experiments/speed"
	"github.com/protolab/protolab/experiments/steering"
	"github.com/protolab/protolab/experiments/suppression"
	"github.com/protolab/protolab/workbench/plot"
	"github.com/protolab/protolab/workbench/run"
)

// figured is one study whose notebook figures `protolab figures` draws from a stored protocol result.
type figured struct {
	name string
	// figures loads the result of the study's Small preset stored under root and returns its figures (the study's
	// Figures, as its notebook exports them) with the result file; false when none is stored.
	figures func(root string) ([]plot.Figure, string, bool, error)
}

// figureEntry builds a figured study from its entry points and its figure builder.
func figureEntry[C run.Config, R any](e run.Entry[C, R], figures func(R) []plot.Figure) figured {
	return figured{name: e.Study, figures: func(root string) ([]plot.Figure, string, bool, error) {
		r, ok, err := run.Stored[R](e.Study, e.Small(), run.Out(root))
		if err != nil || !ok {
			return nil, "", false, err
		}
		path, err := run.ResultPath(root, e.Study, e.Small())
		return figures(r), path, true, err
	}}
}

// figureStudies lists the studies whose figures the notebooks export, in the order of the notebooks. The notebooks
// also show what needs more than a study's stored result (the live training plot, suppression's rule comparison,
// which runs other configurations); those are not drawn here.
var figureStudies = []figured{
	figureEntry(baseline.Runs, baseline.Figures),
	figureEntry(architecture.Runs, architecture.Figures),
	figureEntry(speed.Runs, speed.Figures),
	figureEntry(interp.Runs, interp.Figures),
	figureEntry(robustness.Runs, robustness.Figures),
	figureEntry(prismhead.Runs, prismhead.Figures),
	figureEntry(attribution.Runs, attribution.Figures),
	figureEntry(steering.Runs, steering.Figures),
	figureEntry(suppression.Runs, suppression.Figures),
	figureEntry(fvec.Runs, fvec.Figures),
}

// figureFormat is the one format the shipped figures are written in: small, text, diffable.
const figureFormat = ".svg"

func cmdFigures(args []string, stdout io.Writer) error {
	fs := newFlags("figures", "[--results DIR] [--dir DIR]", stdout)
	results := fs.String("results", run.ShippedRoot(), "root folder of the protocol results to draw (results/ of "+
		"the checkout: the shipped ones)")
	dir := fs.String("dir", "", "folder to write the SVG figures into (default: <results>/figures); an SVG there "+
		"that no result draws any more is removed")
	if _, err := parseArgs(fs, args); err != nil {
		return err
	}
	if *results == "" {
		return errors.New("figures: no results folder (not in a ProtoLab checkout): pass --results DIR")
	}
	if *dir == "" {
		*dir = filepath.Join(*results, "figures")
	}
	var figs []plot.Figure
	for _, s := range figureStudies {
		f, path, ok, err := s.figures(*results)
		if err != nil {
			return errors.WithMessagef(err, "figures: %s", s.name)
		}
		if !ok {
			fmt.Fprintf(stdout, "figures: %s: no stored result of its Small preset under %s; no figures\n", s.name,
				run.RepoPath(*results))
			continue
		}
		fmt.Fprintf(stdout, "figures: %s: %d figures from %s\n", s.name, len(f), run.RepoPath(path))
		figs = append(figs, f...)
	}
	written, err := plot.ExportFiguresTo(*dir, []string{figureFormat}, figs...)
	if err != nil {
		return errors.WithMessage(err, "figures")
	}
	removed, err := removeStale(*dir, written)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "figures: wrote %d SVG figures into %s", len(written), run.RepoPath(*dir))
	if len(removed) > 0 {
		fmt.Fprintf(stdout, "; removed %d no result draws any more: %s", len(removed), strings.Join(removed, ", "))
	}
	fmt.Fprintln(stdout)
	return nil
}

// removeStale removes the SVG files in dir that are not among written, and returns their names: the folder then
// holds exactly the figures of the results drawn.
func removeStale(dir string, written []string) ([]string, error) {
	keep := map[string]bool{}
	for _, p := range written {
		keep[filepath.Base(p)] = true
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, errors.Wrapf(err, "figures: reading %s", dir)
	}
	var removed []string
	for _, e := range entries {
		if e.Type().IsRegular() && filepath.Ext(e.Name()) == figureFormat && !keep[e.Name()] {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return removed, errors.Wrapf(err, "figures: removing the stale %s", e.Name())
			}
			removed = append(removed, e.Name())
		}
	}
	return removed, nil
}
