package pair

import (
	"time"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/dictionary"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/naming"
)

// SAEConfig configures the ReLU sparse autoencoders ScoreUnits trains on the LLaMA block outputs
// (docs/spec/protot.md §7.3).
type SAEConfig struct {
	// Config is the dictionary of each layer (models/dictionary): model (layers/sae; width and seed are set per
	// layer; spec: F = 8·D, λ tuned to L0 ≈ 32 at D = 256), train (weight decay 0, layers/sae doc) and batch_size
	// (token vectors per step).
	dictionary.Config
	// Features is the number of features kept per layer for each selection rule (top variance, top firing
	// frequency, both measured on the selection text); 0 means the ProtoT model's num_prototypes (R), so that the
	// selected SAE kinds have as many units as the prototypes.
	Features int `json:"features"`
}

// Validate reports the first problem of c for block outputs of width D, naming its key.
func (c SAEConfig) Validate(D int) error {
	if err := c.Config.Validate(D); err != nil {
		return err
	}
	m := c.Model
	m.Width = D
	if c.Features < 0 || c.Features > m.NumFeatures() {
		return errors.Errorf("features=%d, want in [0, %d]", c.Features, m.NumFeatures())
	}
	return nil
}

// SAEStats describes the sparse autoencoder of one layer: trained on the block outputs of TrainTokens training
// tokens, measured on the evaluation tokens.
type SAEStats struct {
	Layer       int     `json:"layer"`
	Features    int     `json:"features"`     // dictionary size F
	TrainTokens int     `json:"train_tokens"` // training-split tokens it was trained on
	L0          float64 `json:"l0"`           // mean number of active features per evaluation token
	FVU         float64 `json:"fvu"`          // fraction of variance unexplained by the reconstruction
	Lambda      float64 `json:"lambda"`       // the L1 weight reached (adapted towards sae.model.target_l0)
	Dead        int     `json:"dead"`         // features that never fire on the evaluation tokens
	Seconds     float64 `json:"seconds"`      // training wall time
}

// streamSAE is the random stream of the SAEs (dictionary.Train), with the name it had in experiments/interp.
const streamSAE = "interp/sae"

// scoreSAE trains one SAE per LLaMA layer on the block outputs of texts.Train, selects its features on
// texts.Select (top variance, top firing frequency, and every feature that fires there) and scores them on
// texts.Eval, whose block outputs are lacts[residNames[l]]; R is the default number of features per rule.
func scoreSAE(llama *lm.Model, texts UnitTexts, lacts map[string][]float64, residNames []string,
	byKind map[string][]Unit, base []float64, R int, cfg UnitConfig) ([]SAEStats, error) {
	es, sc := texts.Eval, cfg.SAE
	features := sc.Features
	if features == 0 {
		features = R
	}
	runner, err := Runner(llama, residNames)
	if err != nil {
		return nil, err
	}
	train, _, err := collect(runner, texts.Train, es.T, cfg.BatchSize, residNames)
	if err != nil {
		return nil, errors.WithMessage(err, "pair: the SAE training activations")
	}
	sel, _, err := collect(runner, texts.Select.Seqs, es.T, cfg.BatchSize, residNames)
	if err != nil {
		return nil, errors.WithMessage(err, "pair: the SAE selection activations")
	}
	var out []SAEStats
	Ntrain, Nsel, N := len(texts.Train)*es.T, texts.Select.N(), es.N()
	for l, name := range residNames {
		D := len(lacts[name]) / N
		start := time.Now()
		dict, err := dictionary.Train(llama.Backend, train[name], Ntrain, D, sc.Config, cfg.Seed+uint64(l),
			streamSAE)
		if err != nil {
			return nil, errors.WithMessagef(err, "pair: SAE of layer %d", l)
		}
		seconds := time.Since(start).Seconds()
		selCodes, _, err := dict.Encode(sel[name], Nsel)
		if err != nil {
			return nil, errors.WithMessagef(err, "pair: SAE of layer %d on the selection text", l)
		}
		codes, ds, err := dict.Encode(lacts[name], N)
		if err != nil {
			return nil, errors.WithMessagef(err, "pair: SAE of layer %d on the evaluation text", l)
		}
		F := dict.F
		out = append(out, SAEStats{Layer: l, Features: F, TrainTokens: Ntrain, L0: ds.L0, FVU: ds.FVU,
			Lambda: ds.Lambda, Dead: ds.Dead, Seconds: seconds})
		for _, sel := range []struct {
			kind string
			k    int
			freq bool
		}{{KindSAEVariance, features, false}, {KindSAEFrequency, features, true}, {KindSAEAll, F, true}} {
			cols := naming.SelectFeatures(selCodes, F, sel.k, sel.freq)
			u, _ := scoreColumns(sel.kind, l, codes, F, cols, "F", es, base, cfg)
			byKind[sel.kind] = append(byKind[sel.kind], u...)
		}
	}
	return out, nil
}
