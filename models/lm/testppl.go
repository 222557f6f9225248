package lm

import (
	"math"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/eval"
	"github.com/protolab/protolab/workbench/run"
)

// TestPerplexity evaluates m on docs documents it never saw, chosen by seed (FreshCorpus: its synthetic corpus
// generated with seed, or the Brown corpus's test or heldout split by the seed's parity): encoded with m's
// tokenizer, packed into non-overlapping windows of T tokens separated by the end-of-document token
// (docs/spec/protot.md §7.1), in batches of data.eval_batch_size windows (data.batch_size when 0; fewer when the
// corpus has fewer windows), at most `batches` of them (0: all). It errors where FreshCorpus does (another source,
// the synthetic corpus's own seed, more Brown documents than the split holds), when the documents fill no window,
// or when the loss is not finite.
func (m *Model) TestPerplexity(seed uint64, docs, batches int) (eval.PerplexityResult, error) {
	corpus, err := m.FreshCorpus(docs, seed)
	if err != nil {
		return eval.PerplexityResult{}, err
	}
	prep, err := m.Data()
	if err != nil {
		return eval.PerplexityResult{}, err
	}
	packed, err := data.Pack(prep.Encode(corpus.Texts), m.Config.Data.SeqLen, prep.EOS)
	if err != nil {
		return eval.PerplexityResult{}, errors.WithMessagef(err, "lm.Model.TestPerplexity: packing the test corpus "+
			"(seed %d, %d documents; raise the number of documents)", seed, docs)
	}
	// The test corpus takes the validation split's place in a copy of the prepared data, so it is batched exactly
	// like the validation split (lmdata.Prepared.ValTensors).
	test := *prep
	test.Val, test.ValSeqs = corpus, packed
	ts, err := test.ValTensors(batches)
	if err != nil {
		return eval.PerplexityResult{}, errors.WithMessage(err, "lm.Model.TestPerplexity: test batches")
	}
	r, err := m.Perplexity(ts)
	if err == nil && (math.IsNaN(r.Loss) || math.IsInf(r.Loss, 0)) {
		err = errors.Errorf("lm.Model.TestPerplexity: %s: test loss %g on seed %d", m.Config.Name(), r.Loss, seed)
	}
	return r, err
}

// TestCost is the forward cost of TestPerplexity over `batches` batches of data.eval_batch_size windows of T tokens
// (run.Cost's conventions), for a study's Cost; 0 batches (all) is not counted.
func (c Config) TestCost(batches int) run.Cost {
	eb := c.Data.EvalBatchSize
	if eb == 0 {
		eb = c.Data.BatchSize
	}
	T := c.Data.SeqLen
	return run.Eval(int64(batches)*int64(eb*T), decoder.FLOPsPerToken(c.Model, T))
}
