package run

import (
	"math/rand/v2"

	"github.com/gomlx/gomlx/ml/model"
)

// NewStore returns a gomlx model store whose variable initialisers and in-graph random numbers are seeded from seed,
// so that the same seed gives the same initial weights on every run and backend.
func NewStore(seed uint64) *model.Store {
	s := model.NewStore()
	s.SetParam(model.ParamInitialSeed, int64(seed))
	if err := s.SetRNGStateFromSeed(int64(seed)); err != nil {
		panic(err) // gomlx fails only for a state shape it defines itself
	}
	return s
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
