package architecture

import "github.com/protolab/protolab/workbench/run"

// Searched names the key the protocol overrides (run.Searcher): with lr_grid set, the comparisons train each
// (init, mixer) at the rate the search chose for it, not at train.lr.
func (c Config) Searched() []run.Search {
	if len(c.LRGrid) == 0 {
		return nil
	}
	return []run.Search{{Key: "train.lr", Over: "lr_grid", Note: "each mixer of a corpus's comparison trains at the " +
		"grid rate of lowest validation loss with the tuning seed on that corpus; train.lr trains only the sweep and " +
		"the shared_lr comparison; set lr_grid=[] to train every run at train.lr"}}
}
