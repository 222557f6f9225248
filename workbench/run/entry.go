package run

// Entry is a study's entry points, bound once to its name, presets and computation: every study exports one (as
// `Runs`), so the CLI, the notebooks and the tests call the same four methods of every study instead of a copy of
// them per study.
type Entry[C Config, R any] struct {
	Study   string                                   // the name results are stored under (Options.Out/<Study>/)
	Preset  func(name string) (C, error)             // the preset of a name ("tiny", "small", "paper", …)
	Small   func() C                                 // the protocol preset
	Quick   func() C                                 // what a notebook computes at the Small preset without a run
	Compute func(C, *Provenance, Options) (R, error) // the study itself; it puts the provenance into its result
	// Stored, when set, runs after each entry point has a result without error (computed or loaded): for a study
	// that keeps files beside its results until they are stored (fvec's progress folders). Its error is the call's.
	Stored func(o Options) error
}

// after runs e.Stored once r is there.
func (e Entry[C, R]) after(r R, err error, opts []Option) (R, error) {
	if err != nil || e.Stored == nil {
		return r, err
	}
	return r, e.Stored(NewOptions(opts...))
}

// LoadOrRun returns the result stored for cfg under Options.Out, or runs the study (run.LoadOrRun).
func (e Entry[C, R]) LoadOrRun(cfg C, opts ...Option) (R, error) {
	r, err := LoadOrRun(e.Study, cfg, opts, e.Compute)
	return e.after(r, err, opts)
}

// Run runs the study even when a result is stored, and stores it over that one (run.Recompute). Models the study
// trains are stored under Options.Out/models and loaded, not trained again.
func (e Entry[C, R]) Run(cfg C, opts ...Option) (R, error) {
	r, err := Recompute(e.Study, cfg, opts, e.Compute)
	return e.after(r, err, opts)
}

// Notebook returns what the study's notebook shows at the preset $PROTOLAB_PRESET names (run.Notebook): at the Small
// preset the stored protocol run when there is one, else the Quick run (loaded, or run); at another preset
// LoadOrRun of that preset.
func (e Entry[C, R]) Notebook(opts ...Option) (R, error) {
	r, err := Notebook(e.Study, e.Preset, e.Small, e.Quick, opts, e.Compute)
	return e.after(r, err, opts)
}

// NotebookConfig returns the configuration Notebook shows (run.NotebookConfig): a notebook's settings cell starts
// from it.
func (e Entry[C, R]) NotebookConfig(opts ...Option) (C, error) {
	return NotebookConfig(e.Study, e.Preset, e.Small, e.Quick, opts...)
}

// FromEnv returns the preset $PROTOLAB_PRESET names (run.FromEnv; default "small"), as notebooks and `make run`
// select it.
func (e Entry[C, R]) FromEnv() (C, error) { return FromEnv(e.Preset) }
