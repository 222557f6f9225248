package architecture

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/eval"
)

// Tuning is the learning-rate search of one mixer under one init policy: one run per grid value with the first
// seed, on data.source, judged by its final loss on the validation split.
type Tuning struct {
	Source string    `json:"source"`
	Init   string    `json:"init"`
	Mixer  string    `json:"mixer"`
	Seed   uint64    `json:"seed"`
	LRs    []float64 `json:"lrs"`
	// Losses are the final validation losses (nats/token, eval_batches batches), per grid value; 0 where the run
	// diverged (Diverged).
	Losses   []float64 `json:"losses"`
	Diverged []bool    `json:"diverged"`
	Chosen   float64   `json:"chosen"` // the grid value of the lowest validation loss
	// AtEdge reports a choice at the grid's smallest or largest value: the best rate may lie outside the grid.
	AtEdge bool `json:"at_edge"`
}

// String formats the search as one line.
func (t Tuning) String() string {
	var parts []string
	for i, lr := range t.LRs {
		if t.Diverged[i] {
			parts = append(parts, fmt.Sprintf("%g: diverged", lr))
		} else {
			parts = append(parts, fmt.Sprintf("%g: %.4f", lr, t.Losses[i]))
		}
	}
	edge := ""
	if t.AtEdge {
		edge = " (at the grid's edge)"
	}
	return fmt.Sprintf("lr search %-9s init %-7s seed %d: %s → %g%s\n", t.Mixer, t.Init, t.Seed,
		strings.Join(parts, ", "), t.Chosen, edge)
}

// chooseLR returns the grid value of the lowest loss among the runs that did not diverge; false when all did.
// Ties keep the first (smaller) value.
func chooseLR(lrs, losses []float64, diverged []bool) (float64, bool) {
	best := -1
	for i := range lrs {
		if !diverged[i] && (best < 0 || losses[i] < losses[best]) {
			best = i
		}
	}
	if best < 0 {
		return 0, false
	}
	return lrs[best], true
}

// tune runs the learning-rate search of every (init, mixer) on data.source with the first seed.
func (tr *trainer) tune() ([]Tuning, error) {
	c := tr.cfg
	var out []Tuning
	for _, init := range c.Inits {
		for _, mixer := range c.Mixers {
			t := Tuning{Source: c.Data.Source, Init: init, Mixer: mixer, Seed: c.Seeds[0]}
			for _, lr := range c.LRGrid {
				m, _, diverged, err := tr.model(Point{Mixer: mixer, Source: c.Data.Source, Init: init, LR: lr,
					Width: c.Model.Width, Steps: c.Train.Steps}, c.Seeds[0])
				if err != nil {
					return nil, err
				}
				loss := 0.0
				if !diverged {
					loss = m.Result.Val.Loss
				}
				t.LRs, t.Losses, t.Diverged = append(t.LRs, lr), append(t.Losses, loss), append(t.Diverged, diverged)
			}
			chosen, ok := chooseLR(t.LRs, t.Losses, t.Diverged)
			if !ok {
				return nil, errors.Errorf("architecture: %s under init %s diverged at every learning rate of lr_grid "+
					"%v; lower the grid", mixer, init, c.LRGrid)
			}
			t.Chosen = chosen
			t.AtEdge = chosen == slices.Min(t.LRs) || chosen == slices.Max(t.LRs)
			tr.o.Logf(Study, "%s", strings.TrimSpace(t.String()))
			out = append(out, t)
		}
	}
	return out, nil
}

// TestPerplexity evaluates m on docs fresh documents of its synthetic corpus generated with seed
// (lm.Model.FreshCorpus): encoded with m's tokenizer, packed into non-overlapping windows of T tokens separated by
// the end-of-document token (docs/spec/protot.md §7.1), in batches of data.eval_batch_size windows, at most
// `batches` of them (0: all). It errors when m was not trained on the synthetic corpus or seed is its corpus seed.
func TestPerplexity(m *lm.Model, seed uint64, docs, batches int) (eval.PerplexityResult, error) {
	corpus, err := m.FreshCorpus(docs, seed)
	if err != nil {
		return eval.PerplexityResult{}, err
	}
	prep, err := m.Data()
	if err != nil {
		return eval.PerplexityResult{}, err
	}
	dc := m.Config.Data
	packed, err := data.Pack(prep.Encode(corpus.Texts), dc.SeqLen, prep.EOS)
	if err != nil {
		return eval.PerplexityResult{}, errors.WithMessagef(err, "architecture: packing the test corpus (seed %d, "+
			"%d documents; raise test.num_docs)", seed, docs)
	}
	bs := dc.EvalBatchSize
	if bs == 0 {
		bs = dc.BatchSize
	}
	b, err := data.NewBatcher(packed, data.BatcherConfig{BatchSize: min(bs, packed.NumSequences())})
	if err != nil {
		return eval.PerplexityResult{}, errors.WithMessage(err, "architecture: test batches")
	}
	n := b.BatchesPerEpoch()
	if batches > 0 {
		n = min(n, batches)
	}
	ts := make([]*tensors.Tensor, n)
	for i := range ts {
		ts[i] = tensors.FromValue(b.Next().Tokens)
	}
	r, err := m.Perplexity(ts)
	if err == nil && (math.IsNaN(r.Loss) || math.IsInf(r.Loss, 0)) {
		err = errors.Errorf("architecture: %s: test loss %g on seed %d", m.Config.Name(), r.Loss, seed)
	}
	return r, err
}
