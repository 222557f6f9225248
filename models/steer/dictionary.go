package steer

import (
	"github.com/protolab/protolab/models/dictionary"
	"github.com/protolab/protolab/models/lm"
)

// TrainDictionary trains the basis of an SAE controller: a dictionary (models/dictionary, configuration cfg for
// width D) on the final hidden states z_t of m's first batches training batches (never the items), seeded by m's
// seed and the random stream name stream. It returns the dictionary, its statistics on those rows and their number.
func TrainDictionary(m *lm.Model, cfg dictionary.Config, batches int, stream string) (*dictionary.Dictionary,
	dictionary.Stats, int, error) {
	train, err := m.TrainTensors(batches)
	if err != nil {
		return nil, dictionary.Stats{}, 0, err
	}
	hs, err := m.HeadStats(train)
	if err != nil {
		return nil, dictionary.Stats{}, 0, err
	}
	dict, err := dictionary.Train(m.Backend, hs.Z, hs.N, m.Config.Model.Width, cfg, m.Config.Seed, stream)
	if err != nil {
		return nil, dictionary.Stats{}, 0, err
	}
	_, st, err := dict.Encode(hs.Z, hs.N)
	if err != nil {
		return nil, dictionary.Stats{}, 0, err
	}
	return dict, st, hs.N, nil
}
