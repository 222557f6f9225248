package steering

import "github.com/protolab/protolab/workbench/run"

// Searched names the key the protocol overrides (run.Searcher): with seeds set, one model is trained per seed of
// seeds, and the recipe's own seed is not used.
func (c Config) Searched() []run.Search {
	if len(c.Seeds) == 0 {
		return nil
	}
	return []run.Search{{Key: "seed", Over: "seeds", How: "replaced by each of",
		Note: "one model per seed of seeds, the recipe's seed " +
			"replaced; set seeds=[] to train the one seed `seed`"}}
}
