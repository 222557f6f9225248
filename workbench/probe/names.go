package probe

import (
	"fmt"
	"slices"
	"strings"
)

// head returns at most n leading elements of s, with "…" appended when some were left out.
func head(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(slices.Clone(s[:n]), "…")
}

// nearNames describes the names closest to name by edit distance, for error messages.
func nearNames(name string, names []string) string {
	if len(names) == 0 {
		return "no probes were emitted"
	}
	sorted := slices.Clone(names)
	slices.SortStableFunc(sorted, func(a, b string) int { return editDistance(name, a) - editDistance(name, b) })
	return fmt.Sprintf("nearest: %s; %d probes in all", strings.Join(head(sorted, 5), ", "), len(names))
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
