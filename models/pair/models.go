package pair

import (
	"fmt"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/eval"
	"github.com/protolab/protolab/workbench/plot"
	"github.com/protolab/protolab/workbench/run"
)

// LoadOrTrain returns the ProtoT model and the LLaMA baseline of corpus source (Models), each opened from
// run.Out/models when trained before and trained otherwise (lm.LoadOrTrain).
func (c Config) LoadOrTrain(source string, opts ...run.Option) (proto, llama *lm.Model, err error) {
	pc, lc, err := c.Models(source)
	if err != nil {
		return nil, nil, err
	}
	if proto, err = lm.LoadOrTrain(pc, opts...); err != nil {
		return nil, nil, err
	}
	if llama, err = lm.LoadOrTrain(lc, opts...); err != nil {
		return nil, nil, err
	}
	return proto, llama, nil
}

// Summary describes one trained model of a study.
type Summary struct {
	Name               string                `json:"name"`
	Mixer              string                `json:"mixer"`
	NumParams          int                   `json:"num_params"`
	NonEmbeddingParams int                   `json:"non_embedding_params"`
	FFNWidth           int                   `json:"ffn_width"`
	FinalLoss          float64               `json:"final_loss"` // last recorded training loss
	Val                eval.PerplexityResult `json:"val"`        // validation perplexity on train.eval_batches batches
	TrainSeconds       float64               `json:"train_seconds"`
	Dir                string                `json:"dir,omitempty"`
	Cached             bool                  `json:"cached"` // loaded from Dir rather than trained by this run
}

// NewSummary returns the Summary of a trained (or loaded) model.
func NewSummary(m *lm.Model) Summary {
	mc := m.Config.Model
	s := Summary{Name: m.Config.Name(), Mixer: mc.Mixer, NumParams: mc.NumParams(),
		NonEmbeddingParams: lm.NonEmbeddingParams(mc), FFNWidth: mc.FFNWidth(), Val: m.Result.Val, Dir: m.Dir,
		Cached: m.Cached}
	if h := m.Result.History; h != nil && len(h.Steps) > 0 {
		s.FinalLoss = h.Steps[len(h.Steps)-1].Loss
		s.TrainSeconds = h.Steps[len(h.Steps)-1].Elapsed
	}
	return s
}

// MixerName returns the display name of a mixer: "ProtoT", "LLaMA", or the mixer itself.
func MixerName(mixer string) string {
	switch mixer {
	case decoder.MixerProtoT:
		return "ProtoT"
	case decoder.MixerAttention:
		return "LLaMA"
	}
	return mixer
}

// ModelsTable lists trained models, models[i] those of corpus sources[i]: parameters, FFN width, validation
// perplexity, training time and whether they were loaded. It panics when the two lengths differ.
func ModelsTable(sources []string, models [][]Summary) *plot.Table {
	if len(sources) != len(models) {
		panic(fmt.Sprintf("pair.ModelsTable: %d sources for %d model lists", len(sources), len(models)))
	}
	t := &plot.Table{Title: "Trained models", Header: []string{"corpus", "model", "parameters", "non-embedding",
		"FFN width", "val ppl", "train s", "cached"}}
	for i, source := range sources {
		for _, m := range models[i] {
			t.Rows = append(t.Rows, []string{source, MixerName(m.Mixer), fmt.Sprint(m.NumParams),
				fmt.Sprint(m.NonEmbeddingParams), fmt.Sprint(m.FFNWidth), fmt.Sprintf("%.3f", m.Val.Perplexity),
				fmt.Sprintf("%.1f", m.TrainSeconds), fmt.Sprint(m.Cached)})
		}
	}
	return t
}

// ModelsTableOf is ModelsTable over a study's per-corpus results; of returns one result's corpus source and models.
func ModelsTableOf[T any](corpora []T, of func(T) (string, []Summary)) *plot.Table {
	sources, models := make([]string, len(corpora)), make([][]Summary, len(corpora))
	for i, c := range corpora {
		sources[i], models[i] = of(c)
	}
	return ModelsTable(sources, models)
}
