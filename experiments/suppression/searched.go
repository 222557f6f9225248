package suppression

import "github.com/protolab/protolab/workbench/run"

// Searched names the keys the protocol overrides (run.Searcher): with corpora set, the study runs on each corpus
// instead of data.source alone; with seeds set, one model is trained per seed of seeds, and the recipe's own seed is
// not used.
func (c Config) Searched() []run.Search {
	var out []run.Search
	if len(c.Corpora) > 0 {
		out = append(out, run.Search{Key: "data.source", Over: "corpora", How: "replaced by each of",
			Note: "every model is trained and evaluated on each corpus alone; set corpora=[] to run on data.source " +
				"only"})
	}
	return append(out, run.SeedsSearch(c.Seeds, "one model")...)
}
