package run

import (
	"context"
	"fmt"
	"io"
	"os"
)

// Options are the settings every model and study function takes besides its Config: where results are stored, where
// progress goes, what override string made the config, and when to stop. A Config says what is computed; Options say
// how it is run, so they are never part of a cache key.
type Options struct {
	// Out is the root folder of stored models (Out/models/<name>-<hash>/) and study results (Out/<study>/); ""
	// keeps everything in memory.
	Out string
	// Shipped is the read-only root of the results the checkout ships (ShippedRoot(), by default): LoadOrRun,
	// Showcase and NotebookConfig read a study's result there when Out holds none for its configuration, and never
	// write there. "" reads none (`protolab run`, which makes results, and `make reproduce`).
	Shipped string
	// Progress receives training progress lines and one line per model or study trained, loaded or skipped; nil
	// silences them.
	Progress io.Writer
	// Overrides is the override string applied to the preset (run.Override syntax), recorded in provenance.
	Overrides string
	// Context interrupts long work: training checkpoints and returns the context's error.
	Context context.Context
	// OnMetric receives training metrics as they are logged (live plots); nil ignores them.
	OnMetric func(Metric)
}

// Metric is one logged training value: Name is MetricTrainLoss or MetricValLoss.
type Metric struct {
	Step  int     // optimizer updates completed
	Name  string  // what Value is
	Value float64 // nats per token for the losses
}

// Names of the metrics models report through OnMetric.
const (
	MetricTrainLoss = "train_loss" // the loss of one training batch, every train.log_every steps
	MetricValLoss   = "val_loss"   // the mean validation loss, every train.eval_every steps
)

// Option sets one field of Options.
type Option func(*Options)

// NewOptions returns the Options opts describe, starting from the defaults: in memory, the checkout's shipped
// results (ShippedRoot), progress to stderr, no overrides, a context that is never done.
func NewOptions(opts ...Option) Options {
	o := Options{Shipped: ShippedRoot(), Progress: os.Stderr, Context: context.Background()}
	for _, opt := range opts {
		opt(&o)
	}
	if o.Context == nil {
		o.Context = context.Background()
	}
	return o
}

// Out stores models and results under dir ("" keeps them in memory).
func Out(dir string) Option { return func(o *Options) { o.Out = dir } }

// Progress sends progress lines to w (default stderr); nil silences them.
func Progress(w io.Writer) Option { return func(o *Options) { o.Progress = w } }

// Overrides records the override string applied to the preset, for provenance.
func Overrides(s string) Option { return func(o *Options) { o.Overrides = s } }

// Context lets c interrupt the work: a done context stops training at the next step (after a checkpoint) and makes
// the call return c's error.
func Context(c context.Context) Option { return func(o *Options) { o.Context = c } }

// OnMetric calls fn with every training metric as it is logged.
func OnMetric(fn func(Metric)) Option { return func(o *Options) { o.OnMetric = fn } }

// With passes a whole Options value on: a study hands its own options to the models it trains with With(o).
func With(o Options) Option { return func(dst *Options) { *dst = o } }

// Logf writes one progress line, prefixed by "<who>: ", when Progress is set.
func (o Options) Logf(who, format string, args ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, who+": "+format+"\n", args...)
	}
}

// Metric reports one metric to OnMetric, when set.
func (o Options) Metric(step int, name string, value float64) {
	if o.OnMetric != nil {
		o.OnMetric(Metric{Step: step, Name: name, Value: value})
	}
}

// Err returns the context's error once it is done, else nil: long phases call it between units of work.
func (o Options) Err() error {
	if o.Context == nil {
		return nil
	}
	return o.Context.Err()
}
