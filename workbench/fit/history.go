package fit

// Metrics describes one training step.
type Metrics struct {
	Step         int     `json:"step"`           // updates completed, counting this one (1-based)
	Loss         float64 `json:"loss"`           // the batch's loss, before this update
	LR           float64 `json:"lr"`             // learning rate this update used
	GradNorm     float64 `json:"grad_norm"`      // global gradient norm, before clipping
	TokensPerSec float64 `json:"tokens_per_sec"` // this step's throughput (see TokensPerBatch)
	Elapsed      float64 `json:"elapsed_s"`      // training wall time so far, over all sessions of the run
}

// EvalMetrics describes one validation.
type EvalMetrics struct {
	Step       int     `json:"step"`       // updates completed when it ran
	Loss       float64 `json:"loss"`       // mean of the eval_batches batch losses
	Perplexity float64 `json:"perplexity"` // exp(Loss)
}

// History is the record of a run, plain data for JSON and plots. Steps holds every log_every-th step.
type History struct {
	Steps []Metrics     `json:"steps"`
	Evals []EvalMetrics `json:"evals"`
}

// Losses returns the recorded training losses, in step order.
func (h *History) Losses() []float64 {
	out := make([]float64, len(h.Steps))
	for i, m := range h.Steps {
		out[i] = m.Loss
	}
	return out
}
