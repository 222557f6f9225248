package architecture

import (
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/models/lm"
)

// Point is one trained configuration of the study, trained once per seed: a mixer under an initialisation policy
// at a learning rate, on a source, at a width, for a number of steps.
type Point struct {
	Mixer  string  `json:"mixer"`
	Source string  `json:"source"`
	Init   string  `json:"init"`
	LR     float64 `json:"lr"`
	Width  int     `json:"width"`
	Steps  int     `json:"steps"`
}

// ModelFor returns the model of mixer trained on source at width w for `steps` steps with seed, under the primary
// init at train.lr: ModelAt of that point.
func (c Config) ModelFor(mixer, source string, w, steps int, seed uint64) (lm.Config, lm.ParamMatch, error) {
	return c.ModelAt(Point{Mixer: mixer, Source: source, Init: c.primaryInit(), LR: c.Train.LR, Width: w,
		Steps: steps}, seed)
}

// ModelAt returns the model of point p with seed: the study's data, model (matched by the equal-parameter rule when
// MatchParams is set, under p's init policy) and training settings at p's learning rate, with the warmup scaled by
// steps/train.steps, and its final perplexity over eval_batches validation batches.
func (c Config) ModelAt(p Point, seed uint64) (lm.Config, lm.ParamMatch, error) {
	m, match, err := c.modelFor(p.Mixer, p.Width)
	if err != nil {
		return lm.Config{}, match, err
	}
	m.Init = p.Init
	d := c.Data
	d.Source = p.Source
	t := c.Train
	t.Steps = p.Steps
	t.LR = p.LR
	t.WarmupSteps = min(p.Steps, (c.Train.WarmupSteps*p.Steps+c.Train.Steps/2)/c.Train.Steps)
	mc := lm.Config{Seed: seed, Data: d, Model: m, Head: lm.HeadDense, Train: t, EvalBatches: c.EvalBatches}
	return mc.Resolved(), match, nil
}

// primaryInit returns the first of Inits, the policy of the sweep, the top models and the main claims (the
// decoder's default when Inits is empty).
func (c Config) primaryInit() string {
	if len(c.Inits) == 0 {
		return decoder.InitPyTorch
	}
	return c.Inits[0]
}

// modelFor returns the model of mixer at width w, its FFN resized by the equal-parameter rule when MatchParams is
// set, and the match report.
func (c Config) modelFor(mixer string, w int) (decoder.Config, lm.ParamMatch, error) {
	ref := c.Model
	ref.Mixer = c.Mixers[0]
	ref.Width = w
	ref.VocabSize = c.Data.Tokenizer.VocabSize
	ref.FFNHidden = c.referenceFFN(w)
	if err := ref.Validate(); err != nil {
		return ref, lm.ParamMatch{}, errors.WithMessagef(err, "model (mixer %s, width %d)", ref.Mixer, w)
	}
	m := ref
	m.Mixer = mixer
	if !c.MatchParams {
		if err := m.Validate(); err != nil {
			return m, lm.ParamMatch{}, errors.WithMessagef(err, "model (mixer %s, width %d)", mixer, w)
		}
		return m, lm.ParamMatch{Reference: ref.Mixer, Target: lm.NonEmbeddingParams(ref),
			Achieved: lm.NonEmbeddingParams(m), FFNWidth: m.FFNWidth(), ReferenceFFNWidth: ref.FFNWidth()}, nil
	}
	return lm.MatchParams(ref, mixer)
}

// referenceFFN returns the reference model's FFN width at width w: ⌊FFNRatio·w/16⌋·16 when FFNRatio > 0, else
// model.ffn_hidden (0: the decoder's LLaMA rule).
func (c Config) referenceFFN(w int) int {
	if c.FFNRatio > 0 {
		return max(16, int(c.FFNRatio*float64(w)/16)*16)
	}
	return c.Model.FFNHidden
}
