package data

import "github.com/pkg/errors"

// BatcherConfig configures a Batcher. Start from DefaultBatcherConfig.
type BatcherConfig struct {
	BatchSize int    `json:"batch_size"` // B; > 0 and at most the number of packed sequences
	Seed      uint64 `json:"seed"`       // seeds the per-epoch shuffle
	Shuffle   bool   `json:"shuffle"`    // false: sequences in stream order every epoch (evaluation)
}

// DefaultBatcherConfig returns batches of 16 sequences, shuffled every epoch with seed 1.
func DefaultBatcherConfig() BatcherConfig {
	return BatcherConfig{BatchSize: 16, Seed: 1, Shuffle: true}
}

// Cursor is the resumable position of a Batcher: save it with a checkpoint and pass it to SetCursor to continue
// exactly where the run stopped. NumSequences and BatchSize guard against restoring onto different data.
type Cursor struct {
	Epoch        int `json:"epoch"`         // completed epochs
	Position     int `json:"position"`      // sequences consumed in the current epoch (a multiple of BatchSize)
	NumSequences int `json:"num_sequences"` // of the Packed data the cursor belongs to
	BatchSize    int `json:"batch_size"`
}

// Batch is B training sequences. Tokens[b] holds T+1 tokens: inputs Tokens[b][:T], targets Tokens[b][1:].
type Batch struct {
	Tokens [][]int32 // [B][T+1], a fresh copy
	Index  []int     // [B] which packed sequence each row is (for attribution)
}

// Inputs returns views [B][T] of the input tokens.
func (b Batch) Inputs() [][]int32 {
	out := make([][]int32, len(b.Tokens))
	for i, row := range b.Tokens {
		out[i] = row[:len(row)-1]
	}
	return out
}

// Targets returns views [B][T] of the target tokens (inputs shifted by one).
func (b Batch) Targets() [][]int32 {
	out := make([][]int32, len(b.Tokens))
	for i, row := range b.Tokens {
		out[i] = row[1:]
	}
	return out
}

// Batcher yields batches from packed sequences forever, epoch after epoch. Each epoch visits
// ⌊N/B⌋·B sequences in an order that depends only on (Seed, epoch); the last partial batch is dropped.
// A Batcher is not safe for concurrent use.
type Batcher struct {
	data   *Packed
	cfg    BatcherConfig
	cursor Cursor
	perm   []int // order of the current epoch
}

// NewBatcher validates cfg against the data. It fails when BatchSize <= 0 or the data is too small for one batch.
func NewBatcher(p *Packed, cfg BatcherConfig) (*Batcher, error) {
	if p == nil {
		return nil, errors.New("NewBatcher: no packed data")
	}
	if cfg.BatchSize <= 0 {
		return nil, errors.Errorf("NewBatcher: batch_size=%d, want > 0", cfg.BatchSize)
	}
	n := p.NumSequences()
	if n < cfg.BatchSize {
		return nil, errors.Errorf("NewBatcher: corpus too small to make one batch: %d sequences of %d+1 tokens, batch_size=%d",
			n, p.SeqLen, cfg.BatchSize)
	}
	b := &Batcher{data: p, cfg: cfg, cursor: Cursor{NumSequences: n, BatchSize: cfg.BatchSize}}
	b.perm = b.order(0)
	return b, nil
}

// BatchesPerEpoch returns ⌊N/B⌋.
func (b *Batcher) BatchesPerEpoch() int { return b.cursor.NumSequences / b.cfg.BatchSize }

// Cursor returns the position of the next batch.
func (b *Batcher) Cursor() Cursor { return b.cursor }

// SetCursor moves to a saved position; the following batches are those an uninterrupted run would have seen.
func (b *Batcher) SetCursor(c Cursor) error {
	if c.NumSequences != b.cursor.NumSequences || c.BatchSize != b.cfg.BatchSize {
		return errors.Errorf("SetCursor: cursor is for %d sequences in batches of %d, batcher has %d in batches of %d",
			c.NumSequences, c.BatchSize, b.cursor.NumSequences, b.cfg.BatchSize)
	}
	if c.Epoch < 0 || c.Position < 0 || c.Position%b.cfg.BatchSize != 0 || c.Position > b.BatchesPerEpoch()*b.cfg.BatchSize {
		return errors.Errorf("SetCursor: epoch=%d, position=%d invalid for %d batches of %d per epoch",
			c.Epoch, c.Position, b.BatchesPerEpoch(), b.cfg.BatchSize)
	}
	if c.Epoch != b.cursor.Epoch {
		b.perm = b.order(c.Epoch)
	}
	b.cursor = c
	return nil
}

// Next returns the next batch and advances the cursor, starting a new epoch when the current one is used up.
func (b *Batcher) Next() Batch {
	bs := b.cfg.BatchSize
	if b.cursor.Position+bs > b.BatchesPerEpoch()*bs {
		b.cursor.Epoch++
		b.cursor.Position = 0
		b.perm = b.order(b.cursor.Epoch)
	}
	t1 := b.data.SeqLen + 1
	flat := make([]int32, bs*t1)
	out := Batch{Tokens: make([][]int32, bs), Index: make([]int, bs)}
	for r := range bs {
		idx := b.perm[b.cursor.Position+r]
		row := flat[r*t1 : (r+1)*t1]
		copy(row, b.data.Sequence(idx))
		out.Tokens[r], out.Index[r] = row, idx
	}
	b.cursor.Position += bs
	return out
}

// order returns the sequence order of an epoch.
func (b *Batcher) order(epoch int) []int {
	n := b.cursor.NumSequences
	if !b.cfg.Shuffle {
		p := make([]int, n)
		for i := range p {
			p[i] = i
		}
		return p
	}
	return newRNG(b.cfg.Seed, 0xba7c4, uint64(epoch)).permutation(n)
}
