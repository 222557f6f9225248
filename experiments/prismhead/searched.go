package prismhead

import "github.com/protolab/protolab/workbench/run"

// Searched names the keys the protocol overrides (run.Searcher): with tune.lrs set, every model trains at its kind's
// tuned rate, not at train.lr; with corpora set, the protocol runs on each corpus instead of data.source alone; the
// replicates train one model per seed of seeds.
func (c Config) Searched() []run.Search {
	var out []run.Search
	if len(c.Tune.LRs) > 0 {
		out = append(out, run.Search{Key: "train.lr", Over: "tune.lrs", Note: "the dense and the PRISM models each " +
			"train at the grid rate of lowest validation loss on tune.seed; set tune.lrs=[] to train both at train.lr"})
	}
	if len(c.Corpora) > 0 {
		out = append(out, run.Search{Key: "data.source", Over: "corpora", How: "replaced by each of",
			Note: "the whole protocol (tuning, replicates, evaluation) runs on each corpus alone; set corpora=[] to " +
				"run on data.source only"})
	}
	// seeds[0] must equal seed (Validate): the first replicate is the configured model.
	return append(out, run.SeedsSearch(c.Seeds, "one replicate")...)
}
