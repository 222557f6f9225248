package run

import (
	"fmt"
	"strings"
)

// Search names a key whose value a study's protocol replaces: Key (for example "train.lr") is set, run by run, from
// the values of Over (for example "lr_grid"), so changing Key alone does not change what those runs train with.
// Note says what the protocol does with the searched values and how to train at Key's own value instead.
type Search struct {
	Key  string // the dotted key that the protocol overrides
	Over string // the dotted key whose values it takes instead
	How  string // how Over's values replace Key's: "" means "searched over" (a search on validation data)
	Note string // one sentence: which runs use the searched values, and how to turn the search off
}

// Searcher is implemented by a study configuration whose protocol overrides some of its own keys (a learning-rate
// grid replacing train.lr, a seed list replacing seed). Searched returns the searches in effect for this
// configuration: an empty grid switches its search off and is not listed.
type Searcher interface {
	Searched() []Search
}

// SearchedOf returns cfg's searches in effect (nil when cfg is not a Searcher).
func SearchedOf(cfg any) []Search {
	if s, ok := cfg.(Searcher); ok {
		return s.Searched()
	}
	return nil
}

// SearchedLines returns one line per search in effect of cfg, as `protolab keys` and a notebook's settings cell
// print them: "train.lr is searched over lr_grid: <note>", "seed is replaced by each of seeds: <note>". Changed lists
// the keys the user changed (DiffKeys's "key: old → new" entries or bare keys); a search whose Key is among them gets
// a warning that the change does not reach the runs the search drives.
func SearchedLines(cfg any, changed []string) []string {
	var out []string
	for _, s := range SearchedOf(cfg) {
		how := s.How
		if how == "" {
			how = "searched over"
		}
		line := fmt.Sprintf("%s is %s %s: %s", s.Key, how, s.Over, s.Note)
		for _, c := range changed {
			if c == s.Key || strings.HasPrefix(c, s.Key+":") {
				line += fmt.Sprintf(" (you changed %s: the searched runs do not use it)", s.Key)
				break
			}
		}
		out = append(out, line)
	}
	return out
}

// SeedsSearch is the Search of a study that trains one model per seed of its `seeds` list instead of at the
// recipe's `seed` (none when the list is empty): what each seed trains is named by unit ("one model", "one
// replicate").
func SeedsSearch(seeds []uint64, unit string) []Search {
	if len(seeds) == 0 {
		return nil
	}
	return []Search{{Key: "seed", Over: "seeds", How: "replaced by each of",
		Note: unit + " per seed of seeds, the recipe's seed replaced; set seeds=[] to train the one seed `seed`"}}
}
