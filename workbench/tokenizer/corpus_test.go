package tokenizer

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// englishLike returns about n bytes of deterministic English-like text: pseudo-words built from syllables,
// drawn with Zipf-like frequencies, in capitalised sentences with punctuation, numbers and paragraphs.
func englishLike(n int, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 0x70726f746f6c6162))
	syllables := strings.Fields("the an re in er on at en es or te of ed is it al ar st to nt ng se ha as ou " +
		"io le ve co me de hi ri ro ic ne ea ra ce li ch ll be ma si om ur ca el ta la ns di fo ho pe ec pr no")
	function := strings.Fields("the of and to in a is that for it as was with be by on not he this are or")
	const numWords = 6000
	words := make([]string, numWords)
	for i := range words {
		var sb strings.Builder
		for k := 1 + rng.IntN(4); k > 0; k-- {
			sb.WriteString(syllables[rng.IntN(len(syllables))])
		}
		words[i] = sb.String()
	}
	// Zipf-like weights 1/(rank+2), sampled through the cumulative sum.
	cum := make([]float64, numWords)
	total := 0.0
	for i := range cum {
		total += 1 / float64(i+2)
		cum[i] = total
	}
	pick := func() string {
		if rng.IntN(3) == 0 {
			return function[rng.IntN(len(function))]
		}
		x := rng.Float64() * total
		lo, hi := 0, numWords-1
		for lo < hi {
			mid := (lo + hi) / 2
			if cum[mid] < x {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		return words[lo]
	}
	var sb strings.Builder
	sb.Grow(n + 200)
	for sb.Len() < n {
		sentenceLen := 4 + rng.IntN(14)
		for i := 0; i < sentenceLen; i++ {
			w := pick()
			switch {
			case i == 0:
				w = strings.ToUpper(w[:1]) + w[1:]
			case rng.IntN(40) == 0:
				w = strconv.Itoa(int(math.Pow(10, rng.Float64()*4)))
			case rng.IntN(25) == 0:
				w += "'s"
			}
			if i > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(w)
			if i+1 < sentenceLen && rng.IntN(10) == 0 {
				sb.WriteByte(',')
			}
		}
		sb.WriteString([]string{".", ".", ".", "?", "!"}[rng.IntN(5)])
		if rng.IntN(6) == 0 {
			sb.WriteString("\n\n")
		} else {
			sb.WriteByte(' ')
		}
	}
	return sb.String()
}
