package steering

import "github.com/protolab/protolab/workbench/run"

// Searched names the key the protocol overrides (run.Searcher): with seeds set, one model is trained per seed of
// seeds, and the recipe's own seed is not used.
func (c Config) Searched() []run.Search { return run.SeedsSearch(c.Seeds, "one model") }
