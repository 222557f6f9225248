package interp

import (
	"fmt"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/naming"
)

// splits are the token sets of one corpus and training seed (doc.go, "Protocol"): the SAE's training sequences;
// the selection split (the first half of the validation split) on which SAE features are selected, the named
// prototype sets named and the intervention prototypes calibrated; and the evaluation text (fresh documents, else
// the second half of the validation split) on which every unit is scored and every intervention effect reported.
type splits struct {
	train    [][]int32    // SAE training sequences [T+1], from the training split
	sel      *naming.Text // eval.select_sequences selection sequences
	eval     *naming.Text // eval.sequences evaluation sequences
	cal      *naming.Text // intervene.sequences calibration sequences (selection split, every label kept)
	held     *naming.Text // intervene.held_out held-out sequences (evaluation text, every label kept)
	evalText string       // CorpusResult.EvalText
}

// buildSplits builds the splits of one corpus (interventions' only when cc.Interventions); lexicon gives the labels
// of LabelsLexical.
func buildSplits(prep *lmdata.Prepared, cc CorpusConfig, cfg Config, lexicon func(string) []string) (*splits,
	error) {
	ec := cfg.Eval
	val := naming.Source{Name: cc.Source, Packed: prep.ValSeqs, Corpus: prep.Val, Tok: prep.Tokenizer}
	n := val.Packed.NumSequences()
	evalSrc, from, to := val, n/2, n
	sp := &splits{evalText: "the second half of the validation split"}
	if ec.DataSeed != 0 && cc.Source == lmdata.SourceSynthetic {
		fresh, err := freshSource(prep, cfg.Data.Synthetic, ec.DataSeed, ec.Docs)
		if err != nil {
			return nil, err
		}
		evalSrc, from, to = fresh, 0, fresh.Packed.NumSequences()
		sp.evalText = fmt.Sprintf("%d fresh documents of generator seed %d", ec.Docs, ec.DataSeed)
		if to < ec.Sequences || to < cfg.Intervene.HeldOut {
			return nil, errors.Errorf("interp: eval.docs=%d fresh documents make %d sequences; eval.sequences=%d and "+
				"intervene.held_out=%d need more: raise eval.docs", ec.Docs, to, ec.Sequences, cfg.Intervene.HeldOut)
		}
	}
	units := naming.Labelling{Kind: cc.Labels, Concepts: cc.Concepts, MinCount: ec.MinLabelCount, None: ec.NoneLabel,
		Lexicon: lexicon}
	var err error
	if sp.sel, err = naming.LabelText(val, units, 0, n/2, ec.SelectSequences); err != nil {
		return nil, errors.WithMessage(err, "interp: the selection split")
	}
	if sp.eval, err = naming.LabelText(evalSrc, units, from, to, ec.Sequences); err != nil {
		return nil, errors.WithMessage(err, "interp: the evaluation split")
	}
	if cfg.SAE.Enabled {
		sp.train = spaced(prep.TrainSeqs, cfg.SAE.TrainSequences)
	}
	if cc.Interventions {
		targets := naming.Labelling{Kind: cc.Labels, Concepts: cc.Concepts, MinCount: 1, None: ec.NoneLabel}
		if sp.cal, err = naming.LabelText(val, targets, 0, n/2, cfg.Intervene.Sequences); err != nil {
			return nil, errors.WithMessage(err, "interp: the calibration split")
		}
		if sp.held, err = naming.LabelText(evalSrc, targets, from, to, cfg.Intervene.HeldOut); err != nil {
			return nil, errors.WithMessage(err, "interp: the held-out split")
		}
	}
	return sp, nil
}

// freshSource generates `docs` synthetic documents with generator seed `seed` (the other settings of sc, so the
// same grammar and lexicon), tokenizes them with prep's tokenizer and packs them as prep packs its splits. The
// documents depend only on (seed, index), so no training or validation document of another seed is among them
// unless the grammar produces the same text.
func freshSource(prep *lmdata.Prepared, sc data.SyntheticConfig, seed uint64, docs int) (naming.Source, error) {
	sc.Seed, sc.NumDocs = seed, docs
	c, err := data.Synthetic(sc)
	if err != nil {
		return naming.Source{}, errors.WithMessage(err, "interp: the fresh evaluation documents (eval.data_seed, "+
			"eval.docs)")
	}
	p, err := data.Pack(prep.Encode(c.Texts), prep.Config.SeqLen, prep.EOS)
	if err != nil {
		return naming.Source{}, errors.WithMessagef(err, "interp: packing %d fresh evaluation documents (raise "+
			"eval.docs)", docs)
	}
	return naming.Source{Name: lmdata.SourceSynthetic, Packed: p, Corpus: c, Tok: prep.Tokenizer}, nil
}

// spaced returns n sequences of p ([T+1] tokens each), evenly spaced over its stream (all of them when it holds no
// more than n).
func spaced(p *data.Packed, n int) [][]int32 {
	S := min(n, p.NumSequences())
	stride := p.NumSequences() / max(1, S)
	out := make([][]int32, S)
	for s := range out {
		out[s] = p.Sequence(s * stride)
	}
	return out
}
