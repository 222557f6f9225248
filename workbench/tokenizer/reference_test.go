package tokenizer

// referenceMerges is the plain BPE trainer: every step recounts all adjacent pairs of all chunks from
// scratch, picks the highest count (ties: lowest a, then lowest b), stops when the best count is below
// minCount, and rewrites every chunk. chunks maps a chunk to its frequency.
func referenceMerges(chunks map[string]int64, numMerges int, minCount int64) [][2]int32 {
	type word struct {
		syms []int32
		freq int64
	}
	var words []word
	for c, f := range chunks {
		w := word{freq: f}
		for i := 0; i < len(c); i++ {
			w.syms = append(w.syms, int32(c[i]))
		}
		words = append(words, w)
	}
	var merges [][2]int32
	for len(merges) < numMerges {
		counts := map[[2]int32]int64{}
		for _, w := range words {
			for i := 0; i+1 < len(w.syms); i++ {
				counts[[2]int32{w.syms[i], w.syms[i+1]}] += w.freq
			}
		}
		var best [2]int32
		bestCount := int64(0)
		for p, n := range counts {
			if n > bestCount || (n == bestCount && (p[0] < best[0] || (p[0] == best[0] && p[1] < best[1]))) {
				best, bestCount = p, n
			}
		}
		if bestCount < minCount || bestCount == 0 {
			break
		}
		z := int32(256 + len(merges))
		merges = append(merges, best)
		for k := range words {
			words[k].syms = referenceApply(words[k].syms, best, z)
		}
	}
	return merges
}

// referenceApply replaces the occurrences of pair in s, scanned left to right without overlap, by z.
func referenceApply(s []int32, pair [2]int32, z int32) []int32 {
	var out []int32
	for i := 0; i < len(s); i++ {
		if i+1 < len(s) && s[i] == pair[0] && s[i+1] == pair[1] {
			out = append(out, z)
			i++
		} else {
			out = append(out, s[i])
		}
	}
	return out
}

// referenceEncodeChunk applies every merge, in the order learned, to the bytes of one chunk.
func referenceEncodeChunk(chunk []byte, merges [][2]int32) []int32 {
	s := make([]int32, len(chunk))
	for i, c := range chunk {
		s[i] = int32(c)
	}
	for r, m := range merges {
		s = referenceApply(s, m, int32(256+r))
	}
	return s
}

// referenceChunkCounts counts the chunks of texts with the package's pre-tokenizer.
func referenceChunkCounts(texts []string, mode string) map[string]int64 {
	counts := map[string]int64{}
	for _, s := range texts {
		forEachChunk([]byte(s), mode, func(c []byte) { counts[string(c)]++ })
	}
	return counts
}
