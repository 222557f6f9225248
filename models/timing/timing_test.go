package timing

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/workbench/wbtest"
)

// tinyDecoder is a two-layer ProtoT decoder of width 16 over 32 tokens.
func tinyDecoder() decoder.Config {
	m := decoder.DefaultConfig()
	m.Mixer, m.VocabSize, m.Width, m.NumLayers, m.MaxLen = decoder.MixerProtoT, 32, 16, 2, 16
	m.ProtoT.NumPrototypes, m.ProtoT.ChunkSize = 4, 8
	return m
}

// TestTrain_TimesEveryStepAfterTheWarmup: three timed steps after one untimed one, their median and spread, a finite
// loss and the run's memory.
func TestTrain_TimesEveryStepAfterTheWarmup(t *testing.T) {
	m := tinyDecoder()
	require.NoError(t, m.Validate())
	res, err := Train(context.Background(), wbtest.Backend(t), m, 2, 8, Settings{Warmup: 1, Steps: 3, Seed: 1})
	require.NoError(t, err)
	require.Len(t, res.StepSeconds, 3)
	require.Equal(t, 3, res.Spread.N)
	require.InDelta(t, res.Spread.Median, res.TokensPerSec, 1e-9*res.TokensPerSec)
	require.Positive(t, res.Loss)
	require.GreaterOrEqual(t, res.PeakMB, res.BaseMB)
	require.False(t, res.Stopped)
	require.Positive(t, TrainBytes(m, 2, 8))
}

// TestDecode_StateIsTheShapesOfItsCapacity: the state size is decoder.StateShapes' at the capacity, and every timed
// step is kept.
func TestDecode_StateIsTheShapesOfItsCapacity(t *testing.T) {
	m := tinyDecoder()
	res, err := Decode(wbtest.Backend(t), m, 12, Settings{Warmup: 1, Steps: 4, Seed: 1})
	require.NoError(t, err)
	require.Len(t, res.StepMs, 4)
	require.Equal(t, 4, res.Spread.N)
	require.Positive(t, res.MsPerToken)
	cm, err := CostModel(m)
	require.NoError(t, err)
	require.Equal(t, cm.StateBytes(12, 1, m.DTypeOf().Size()), res.StateBytes)
}
