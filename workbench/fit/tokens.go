package fit

import (
	"encoding/json"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/data"
)

// TokenBatches adapts a data.Batcher of packed token sequences to Batches: each batch is one int32 tensor
// [B, T+1] (inputs batch[:, :T], targets batch[:, 1:]), and State/Restore save the batcher's cursor as JSON.
type TokenBatches struct {
	b *data.Batcher
}

// NewTokenBatches wraps b; it returns an error for a nil batcher.
func NewTokenBatches(b *data.Batcher) (*TokenBatches, error) {
	if b == nil {
		return nil, errors.New("fit.NewTokenBatches: nil batcher")
	}
	return &TokenBatches{b: b}, nil
}

// Next returns the next batch as [B, T+1] int32.
func (tb *TokenBatches) Next() ([]*tensors.Tensor, error) {
	batch := tb.b.Next()
	return []*tensors.Tensor{tensors.FromValue(batch.Tokens)}, nil
}

// State returns the batcher's cursor as JSON.
func (tb *TokenBatches) State() ([]byte, error) { return json.Marshal(tb.b.Cursor()) }

// Restore moves the batcher to a cursor returned by State; a cursor of other data or another batch size is an error.
func (tb *TokenBatches) Restore(state []byte) error {
	var c data.Cursor
	if err := json.Unmarshal(state, &c); err != nil {
		return errors.Wrap(err, "fit.TokenBatches.Restore: corrupt cursor")
	}
	return errors.Wrap(tb.b.SetCursor(c), "fit.TokenBatches.Restore")
}
