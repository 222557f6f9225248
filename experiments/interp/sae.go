package interp

import (
	"time"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/dictionary"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/models/pair"
	"github.com/protolab/protolab/workbench/naming"
	"github.com/protolab/protolab/workbench/run"
)

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

// analyzeSAE trains one SAE per LLaMA layer on the block outputs of the training sequences, selects its features on
// the selection split (top variance, top firing frequency, and every feature that fires there) and scores them on
// the evaluation split, whose block outputs are lacts[residNames[l]].
func analyzeSAE(cr *CorpusResult, cfg Config, llama *lm.Model, sp *splits, lacts map[string][]float64,
	residNames []string, byKind map[string][]Unit, base []float64, o run.Options) error {
	ec, es := cfg.Eval, sp.eval
	features := cfg.SAE.Features
	if features == 0 {
		features = cfg.Model.ProtoT.NumPrototypes
	}
	runner, err := pair.Runner(llama, residNames)
	if err != nil {
		return err
	}
	train, _, err := collect(runner, sp.train, es.T, ec.BatchSize, residNames)
	if err != nil {
		return errors.WithMessage(err, "interp: the SAE training activations")
	}
	sel, _, err := collect(runner, sp.sel.seqs, es.T, ec.BatchSize, residNames)
	if err != nil {
		return errors.WithMessage(err, "interp: the SAE selection activations")
	}
	Ntrain, Nsel, N := len(sp.train)*es.T, sp.sel.N(), es.N()
	for l, name := range residNames {
		D := len(lacts[name]) / N
		start := time.Now()
		dict, err := dictionary.Train(llama.Backend, train[name], Ntrain, D, cfg.SAE.Config, cfg.Seed+uint64(l),
			"interp/sae")
		if err != nil {
			return errors.WithMessagef(err, "interp: SAE of layer %d", l)
		}
		seconds := time.Since(start).Seconds()
		selCodes, _, err := dict.Encode(sel[name], Nsel)
		if err != nil {
			return errors.WithMessagef(err, "interp: SAE of layer %d on the selection split", l)
		}
		codes, ds, err := dict.Encode(lacts[name], N)
		if err != nil {
			return errors.WithMessagef(err, "interp: SAE of layer %d on the evaluation split", l)
		}
		F := dict.F
		cr.SAE = append(cr.SAE, SAEStats{Layer: l, Features: F, TrainTokens: Ntrain, L0: ds.L0, FVU: ds.FVU,
			Lambda: ds.Lambda, Dead: ds.Dead, Seconds: seconds})
		for _, sel := range []struct {
			kind string
			k    int
			freq bool
		}{{KindSAEVariance, features, false}, {KindSAEFrequency, features, true}, {KindSAEAll, F, true}} {
			cols := naming.SelectFeatures(selCodes, F, sel.k, sel.freq)
			u, _ := scoreColumns(sel.kind, l, codes, F, cols, "F", es, base, ec)
			byKind[sel.kind] = append(byKind[sel.kind], u...)
		}
	}
	o.Logf(Study, "%s (seed %d): trained %d SAEs on %d training tokens each", cr.Source, cfg.Seed, len(residNames),
		Ntrain)
	return nil
}
