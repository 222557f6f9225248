package pair

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/sae"
	"github.com/protolab/protolab/models/dictionary"
	"github.com/protolab/protolab/workbench/fit"
)

// TestSAEConfig_Validate: features may go from 0 (R per rule) up to the dictionary's F at the given width; the
// dictionary's own problems are reported too.
func TestSAEConfig_Validate(t *testing.T) {
	m := sae.DefaultConfig()
	c := SAEConfig{Config: dictionary.Config{Model: m, Train: fit.DefaultConfig(), BatchSize: 8}}
	require.NoError(t, c.Validate(16))
	m.Width = 16
	c.Features = m.NumFeatures()
	require.NoError(t, c.Validate(16))
	c.Features++
	require.ErrorContains(t, c.Validate(16), "features=")
	c.Features = -1
	require.ErrorContains(t, c.Validate(16), "features=")
	c.Features, c.BatchSize = 0, 0
	require.ErrorContains(t, c.Validate(16), "batch_size")
}
