package icl

import (
	"github.com/protolab/protolab/layers/linattn"
	"github.com/protolab/protolab/theory/prior"
	"github.com/protolab/protolab/workbench/fit"
)

// ValidationChunk is the largest number of contexts per validation batch: a validation set of more contexts must
// split into equal chunks of at most this many (Train returns an error otherwise).
const ValidationChunk = 500

// Data configures the training contexts of spec §2 that every model of a study shares; a study embeds it in its
// data settings (its JSON keys are then data.tokens, data.label_noise, data.batch, data.shared_tokens).
type Data struct {
	// Tokens is N, the context length; it sets the measurement noise τ² ∝ 1/N. Spec: 128.
	Tokens int `json:"tokens"`
	// LabelNoise is s. Spec: 0.1.
	LabelNoise float64 `json:"label_noise"`
	// Batch is the number of fresh contexts per training step, the same for every model. Spec §5: 512.
	Batch int `json:"batch"`
	// SharedTokens draws one x_{1:N} per training step for all Batch contexts (θ and label noise stay independent
	// per context; GenerateShared), for every model alike: the key MLPs of B then run once per step instead of once
	// per context. Validation and test contexts always have their own tokens. Spec §2 (independent tokens): false.
	SharedTokens bool `json:"shared_tokens"`
}

// Config is everything Train needs to fit one model.
type Config struct {
	// Model is the model: its kind, M (Measurements) and widths.
	Model linattn.Config
	// Train is the optimiser and schedule; Train sets its Seed to Seed and, with a validation set, its
	// EvalBatches.
	Train fit.Config
	// Data says how the training contexts are drawn; Prior is the prior θ is drawn from.
	Data  Data
	Prior prior.Prior
	// Seed seeds the weights (run.NewStore) and the training stream (Stream.Seed).
	Seed uint64
}
