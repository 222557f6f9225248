package run

import (
	"math/rand/v2"

	"github.com/gomlx/gomlx/pkg/ml/context"
)

// NewContext returns a gomlx context whose variable initialisers and in-graph random numbers are seeded from seed,
// so that the same seed gives the same initial weights on every run and backend.
func NewContext(seed uint64) *context.Context {
	ctx := context.New()
	ctx.SetParam(context.ParamInitialSeed, int64(seed))
	ctx.SetRNGStateFromSeed(int64(seed))
	return ctx
}

// RNG returns a deterministic Go random generator for a seed and a stream name, so that independent consumers (data
// shuffling, sampling, sweeps) draw independent streams from one run seed.
func RNG(seed uint64, stream string) *rand.Rand {
	h := uint64(14695981039346656037) // FNV-1a of the stream name
	for i := 0; i < len(stream); i++ {
		h ^= uint64(stream[i])
		h *= 1099511628211
	}
	return rand.New(rand.NewPCG(seed, h))
}
