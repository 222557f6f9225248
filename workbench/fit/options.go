package fit

import (
	stdctx "context"
	"io"
)

// options are Train's optional settings.
type options struct {
	dir            string
	goCtx          stdctx.Context
	onStep         []func(int, Metrics)
	onEval         []func(int, EvalMetrics)
	progress       io.Writer
	tokensPerBatch int
	noDecay        []string
	run            any
}

// Option changes one of Train's optional settings.
type Option func(*options)

// CheckpointDir makes Train write checkpoints into dir (created if missing) and resume from the newest one found
// there. Without it Train writes nothing.
func CheckpointDir(dir string) Option { return func(o *options) { o.dir = dir } }

// WithContext lets c interrupt training (a standard-library context, not a gomlx one): when c is done, Train
// finishes the step in flight, writes a checkpoint (with CheckpointDir), and returns an error wrapping c.Err().
func WithContext(c stdctx.Context) Option { return func(o *options) { o.goCtx = c } }

// OnStep calls fn after every log_every-th step, with the step's metrics (e.g. to plot live in a notebook).
func OnStep(fn func(step int, m Metrics)) Option {
	return func(o *options) { o.onStep = append(o.onStep, fn) }
}

// OnEval calls fn after each validation.
func OnEval(fn func(step int, e EvalMetrics)) Option {
	return func(o *options) { o.onEval = append(o.onEval, fn) }
}

// Progress sends the progress display to w instead of os.Stderr; nil turns it off.
func Progress(w io.Writer) Option { return func(o *options) { o.progress = w } }

// TokensPerBatch sets the tokens counted per batch for tokens/s; by default it is the number of elements of the
// batch's first tensor (B·T for token ids).
func TokensPerBatch(n int) Option { return func(o *options) { o.tokensPerBatch = n } }

// NoDecay adds path elements whose variables are not weight-decayed (Config.Decays' rule), as the model declares
// them: decoder.Config.NoDecay lists its norms, prototypes and Mamba's dt_proj and a_log. They add to
// Config.NoDecay, which holds the user's own additions.
func NoDecay(elements ...string) Option {
	return func(o *options) { o.noDecay = append(o.noDecay, elements...) }
}

// RunConfig records run (anything JSON-encodable: the model's whole configuration, its data, its seed) in every
// checkpoint, and makes Train refuse to resume from a checkpoint that recorded another one, naming the differing
// keys. Config alone covers only the optimisation; this catches a checkpoint folder reused by another model or data.
func RunConfig(run any) Option { return func(o *options) { o.run = run } }
