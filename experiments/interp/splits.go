package interp

import (
	"fmt"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/lm"
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

// buildSplits builds the splits of one corpus (interventions' only when cc.Interventions); fresh gives the model's
// evaluation documents (lm.Model.FreshCorpus) and lexicon the labels of LabelsLexical.
func buildSplits(prep *lmdata.Prepared, fresh func(docs int, seed uint64) (*data.Corpus, error), cc CorpusConfig,
	cfg Config, lexicon func(string) []string) (*splits, error) {
	ec := cfg.Eval
	val := naming.Source{Name: cc.Source, Packed: prep.ValSeqs, Corpus: prep.Val, Tok: prep.Tokenizer}
	n := val.Packed.NumSequences()
	evalSrc, from, to := val, n/2, n
	sp := &splits{evalText: "the second half of the validation split"}
	if docs, key := evalDocs(cc.Source, ec); ec.DataSeed != 0 && docs > 0 {
		c, err := fresh(docs, ec.DataSeed)
		if err != nil {
			return nil, errors.WithMessagef(err, "interp: the evaluation documents (eval.data_seed, %s)", key)
		}
		if evalSrc, err = freshSource(prep, c); err != nil {
			return nil, errors.WithMessagef(err, "interp: packing %d evaluation documents (raise %s)", docs, key)
		}
		from, to = 0, evalSrc.Packed.NumSequences()
		sp.evalText = fmt.Sprintf("%d fresh documents of generator seed %d", docs, ec.DataSeed)
		if cc.Source == lmdata.SourceBrown {
			sp.evalText = fmt.Sprintf("the first %d documents of the Brown %s split (seed %d)", docs,
				lm.EvalSplitOf(ec.DataSeed), ec.DataSeed)
		}
		if to < ec.Sequences || to < cfg.Intervene.HeldOut {
			return nil, errors.Errorf("interp: %s=%d evaluation documents make %d sequences; eval.sequences=%d and "+
				"intervene.held_out=%d need more: raise %s", key, docs, to, ec.Sequences, cfg.Intervene.HeldOut, key)
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
		targets := naming.Labelling{Kind: cc.Labels, Concepts: cc.Concepts, MinCount: 1, None: ec.NoneLabel,
			Lexicon: lexicon}
		if sp.cal, err = naming.LabelText(val, targets, 0, n/2, cfg.Intervene.Sequences); err != nil {
			return nil, errors.WithMessage(err, "interp: the calibration split")
		}
		if sp.held, err = naming.LabelText(evalSrc, targets, from, to, cfg.Intervene.HeldOut); err != nil {
			return nil, errors.WithMessage(err, "interp: the held-out split")
		}
	}
	return sp, nil
}

// evalDocs returns the number of evaluation documents of corpus source (eval.docs fresh synthetic documents,
// eval.brown_docs documents of a Brown evaluation split) and its key; 0 for a corpus without evaluation documents
// apart from its validation split (WordNet, files).
func evalDocs(source string, ec EvalConfig) (int, string) {
	switch source {
	case lmdata.SourceSynthetic:
		return ec.Docs, "eval.docs"
	case lmdata.SourceBrown:
		return ec.BrownDocs, "eval.brown_docs"
	}
	return 0, ""
}

// freshSource tokenizes the documents of c (lm.Model.FreshCorpus: fresh synthetic documents, or a Brown evaluation
// split, which no training or validation split holds) with prep's tokenizer and packs them as prep packs its
// splits.
func freshSource(prep *lmdata.Prepared, c *data.Corpus) (naming.Source, error) {
	p, err := data.Pack(prep.Encode(c.Texts), prep.Config.SeqLen, prep.EOS)
	if err != nil {
		return naming.Source{}, err
	}
	return naming.Source{Name: prep.Config.Source, Packed: p, Corpus: c, Tok: prep.Tokenizer}, nil
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
