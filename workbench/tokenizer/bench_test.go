package tokenizer

import (
	"fmt"
	"sync"
	"testing"
)

// benchText is ~10 MB of English-like text, generated once.
var benchText = sync.OnceValue(func() string { return englishLike(10<<20, 2024) })

// BenchmarkTrain10MB trains DefaultConfig on ~10 MB of English-like text, with V = 4096 (the default)
// and V = 8192.
func BenchmarkTrain10MB(b *testing.B) {
	text := benchText()
	for _, v := range []int{4096, 8192} {
		b.Run(fmt.Sprintf("V=%d", v), func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.VocabSize = v
			b.SetBytes(int64(len(text)))
			for i := 0; i < b.N; i++ {
				if _, err := Train([]string{text}, cfg); err != nil {
					b.Fatalf("%+v", err)
				}
			}
		})
	}
}

// BenchmarkEncode encodes ~10 MB with a V = 4096 tokenizer trained on other text; MB/s is the throughput.
func BenchmarkEncode(b *testing.B) {
	tok, err := Train([]string{englishLike(2<<20, 1)}, DefaultConfig())
	if err != nil {
		b.Fatalf("%+v", err)
	}
	text := []byte(benchText())
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	var n int
	for i := 0; i < b.N; i++ {
		n = len(tok.EncodeBytes(text))
	}
	b.ReportMetric(float64(len(text))/float64(n), "bytes/token")
}
