package lmdata

import "strings"

// FindCorpus returns the part of a study's result on corpus source: first (the result on the study's first corpus)
// or an element of others (the result on each further corpus), whichever name calls source, case-insensitively; nil
// when none does. A name "" is the synthetic corpus: results stored before protocol v2 (docs/PROTOCOL.md) name no
// corpus and ran on it.
func FindCorpus[T any](first *T, others []T, name func(*T) string, source string) *T {
	for i := -1; i < len(others); i++ {
		c := first
		if i >= 0 {
			c = &others[i]
		}
		n := name(c)
		if n == "" {
			n = SourceSynthetic
		}
		if strings.EqualFold(n, source) {
			return c
		}
	}
	return nil
}
