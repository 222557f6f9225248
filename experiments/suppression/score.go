package suppression

import (
	mprism "github.com/protolab/protolab/models/prism"
	"github.com/protolab/protolab/workbench/stats"
)

// KeywordRates scores texts by keyword hits (doc.go, equation 7): rate is the mean over texts with at least one word
// of the fraction of their words that are keywords (mprism.SplitWords), rateSE its standard error; anyRate the
// fraction of texts with at least one keyword, anySE its standard error; words the total word count. A mean of no
// value and the error of fewer than two values are 0, so that results stay JSON-encodable.
func KeywordRates(texts, keywords []string) (rate, rateSE, anyRate, anySE float64, words int) {
	set := map[string]bool{}
	for _, k := range keywords {
		set[k] = true
	}
	var fr, anyHit []float64
	for _, t := range texts {
		ws := mprism.SplitWords(t)
		hits := 0
		for _, w := range ws {
			if set[w] {
				hits++
			}
		}
		words += len(ws)
		if hits > 0 {
			anyHit = append(anyHit, 1)
		} else {
			anyHit = append(anyHit, 0)
		}
		if len(ws) > 0 {
			fr = append(fr, float64(hits)/float64(len(ws)))
		}
	}
	rate, rateSE = stats.MeanSEOrZero(fr)
	anyRate, anySE = stats.MeanSEOrZero(anyHit)
	return rate, rateSE, anyRate, anySE, words
}
