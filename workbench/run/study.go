package run

import (
	"path/filepath"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/store"
)

// Config is what a study's configuration provides: a check that names the offending key.
type Config interface{ Validate() error }

// ResultName is the file name (without "-<hash>.json") of every stored study result.
const ResultName = "result"

// StudyDir returns the folder of a study's stored results under out: out/<study>.
func StudyDir(out, study string) string { return filepath.Join(out, study) }

// LoadOrRun is the study contract's storage: it returns the result stored for cfg in
// Options.Out/<study>/result-<hash>.json when that file records the same configuration, else the one shipped for it
// under Options.Shipped (Lookup; never written), and otherwise validates cfg, runs compute with a fresh Provenance
// (finished when compute returns) and, with Out set, stores the result there atomically. compute must put the
// provenance it is given into its result. With Out empty it always computes and stores nothing.
func LoadOrRun[C Config, R any](study string, cfg C, opts []Option, compute func(C, *Provenance, Options) (R, error)) (
	R, error) {
	return studyResult(study, cfg, opts, compute, true)
}

// Recompute is LoadOrRun without the loading: it always computes, and stores the result over one stored for the
// same configuration.
func Recompute[C Config, R any](study string, cfg C, opts []Option, compute func(C, *Provenance, Options) (R, error)) (
	R, error) {
	return studyResult(study, cfg, opts, compute, false)
}

func studyResult[C Config, R any](study string, cfg C, opts []Option, compute func(C, *Provenance, Options) (R, error),
	load bool) (R, error) {
	var zero R
	o := NewOptions(opts...)
	if err := cfg.Validate(); err != nil {
		return zero, errors.WithMessage(err, study)
	}
	dir := ""
	if o.Out != "" {
		dir = StudyDir(o.Out, study)
	}
	run := func() (R, error) {
		prov := NewProvenance(cfg, o.Overrides, 0)
		r, err := compute(cfg, prov, o)
		if err != nil {
			return r, errors.WithMessage(err, study)
		}
		prov.Finish()
		return r, nil
	}
	if load {
		if r, f, ok, err := Lookup[R](study, cfg, opts...); err != nil || ok {
			if ok && f.Shipped {
				o.Logf(study, "loaded the shipped result %s", RepoPath(f.Path))
			} else if ok {
				o.Logf(study, "loaded the stored result %s", ShowPath(f.Path))
			}
			return r, err
		}
	}
	return store.Compute(dir, ResultName, cfg, run)
}

// Stored returns the result stored for cfg under Options.Out/<study>/ and true, or false when there is none; it
// computes nothing and reads no shipped result (Lookup reads both).
func Stored[R any](study string, cfg any, opts ...Option) (R, bool, error) {
	o := NewOptions(opts...)
	var zero R
	if o.Out == "" {
		return zero, false, nil
	}
	return store.LoadCached[R](StudyDir(o.Out, study), ResultName, cfg)
}

// Showcase returns what `make run` and a notebook show of a study at the Small preset, in this order: the result
// stored for full (its protocol run) under Options.Out, the user's own (`make reproduce`, `protolab run <study>
// --preset small`); else the one shipped for full under Options.Shipped (the checkout's results/); else LoadOrRun of
// quick (the quicker run a notebook affords, computed or loaded). One progress line says which, and from what file.
// The bool reports whether a protocol run (the user's or the shipped one) was shown.
func Showcase[C Config, R any](study string, full, quick C, opts []Option, compute func(C, *Provenance, Options) (R,
	error)) (R, bool, error) {
	o := NewOptions(opts...)
	r, f, ok, err := Lookup[R](study, full, opts...)
	if err != nil {
		return r, false, err
	}
	switch {
	case ok && f.Shipped:
		o.Logf(study, "showing the shipped protocol run %s (Small preset; `protolab run %s --preset small` makes "+
			"your own)", RepoPath(f.Path), study)
		return r, true, nil
	case ok:
		o.Logf(study, "showing the stored protocol run %s (Small preset)", ShowPath(f.Path))
		return r, true, nil
	}
	o.Logf(study, "no protocol run stored or shipped (`protolab run %s --preset small` makes one): showing the "+
		"quick run", study)
	r, err = LoadOrRun(study, quick, opts, compute)
	return r, false, err
}

// Notebook returns what a study's notebook cells and `make run` show at the preset $PROTOLAB_PRESET names
// (PresetName): at the Small preset Showcase's choice between full (the protocol preset) and quick, at any other
// preset LoadOrRun of preset(name) (an unknown name is preset's error).
func Notebook[C Config, R any](study string, preset func(name string) (C, error), full, quick func() C, opts []Option,
	compute func(C, *Provenance, Options) (R, error)) (R, error) {
	name, err := PresetName()
	if err != nil {
		var zero R
		return zero, err
	}
	if name != "small" {
		cfg, err := preset(name)
		if err != nil {
			var zero R
			return zero, err
		}
		return LoadOrRun(study, cfg, opts, compute)
	}
	r, _, err := Showcase(study, full(), quick(), opts, compute)
	return r, err
}
