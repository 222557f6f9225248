package tokenizer

import (
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// trainedSmall trains a tokenizer with 500 merges on English-like text plus trickyTexts.
func trainedSmall(t testing.TB, mode string) *Tokenizer {
	t.Helper()
	cfg := smallConfig(500)
	cfg.Pretokenize = mode
	tok, err := Train(append([]string{englishLike(60_000, 42)}, trickyTexts...), cfg)
	require.NoError(t, err)
	return tok
}

// referenceEncode encodes s chunk by chunk with referenceEncodeChunk.
func referenceEncode(tok *Tokenizer, s string) []int32 {
	ids := []int32{}
	forEachChunk([]byte(s), tok.pretokenize, func(c []byte) {
		ids = append(ids, referenceEncodeChunk(c, tok.merges)...)
	})
	return ids
}

// randomText mixes corpus words, long runs (longer than shortChunk) and random bytes.
func randomText(rng *rand.Rand, corpus string) string {
	var sb strings.Builder
	for k := rng.IntN(8); k >= 0; k-- {
		switch rng.IntN(4) {
		case 0:
			i := rng.IntN(len(corpus) - 200)
			sb.WriteString(corpus[i : i+1+rng.IntN(200)])
		case 1:
			sb.WriteString(strings.Repeat([]string{"ab", "a", " ", "the", "zz", "é"}[rng.IntN(6)], 1+rng.IntN(100)))
		case 2:
			for n := rng.IntN(20); n > 0; n-- {
				sb.WriteByte(byte(rng.IntN(256)))
			}
		default:
			sb.WriteString(trickyTexts[rng.IntN(len(trickyTexts))])
		}
	}
	return sb.String()
}

func TestEncode_MatchesReference(t *testing.T) {
	corpus := englishLike(20_000, 99)
	for _, mode := range []string{PretokenizeGPT2, PretokenizeNone} {
		tok := trainedSmall(t, mode)
		rng := rand.New(rand.NewPCG(3, 4))
		for trial := 0; trial < 300; trial++ {
			s := randomText(rng, corpus)
			require.Equal(t, referenceEncode(tok, s), tok.Encode(s), "mode %s, input %q", mode, s)
		}
	}
}

func TestEncode_CacheEviction(t *testing.T) {
	tok := trainedSmall(t, PretokenizeGPT2)
	defer func(n int) { maxCacheEntries = n }(maxCacheEntries)
	maxCacheEntries = 5
	rng := rand.New(rand.NewPCG(8, 9))
	corpus := englishLike(5_000, 17)
	for trial := 0; trial < 50; trial++ {
		s := randomText(rng, corpus)
		require.Equal(t, referenceEncode(tok, s), tok.Encode(s), "input %q", s)
		require.LessOrEqual(t, len(tok.cacheShort)+len(tok.cacheLong), 5)
	}
}

func TestMergeLong_MatchesMergeShort(t *testing.T) {
	tok := trainedSmall(t, PretokenizeGPT2)
	rng := rand.New(rand.NewPCG(5, 6))
	corpus := englishLike(10_000, 1)
	for trial := 0; trial < 500; trial++ {
		i := rng.IntN(len(corpus) - 300)
		chunk := []byte(corpus[i : i+2+rng.IntN(300)])
		short := make([]int32, len(chunk))
		for k, c := range chunk {
			short[k] = int32(c)
		}
		require.Equal(t, tok.mergeShort(short), tok.mergeLong(nil, chunk), "chunk %q", chunk)
	}
}

func TestEncode_Compresses(t *testing.T) {
	// Held-out text from the same distribution: 500 merges must leave well under one token per 2 bytes.
	tok := trainedSmall(t, PretokenizeGPT2)
	text := englishLike(20_000, 1234)
	ids := tok.Encode(text)
	require.Less(t, float64(len(ids)), 0.5*float64(len(text)))
}

func TestRoundTrip_Examples(t *testing.T) {
	tok := trainedSmall(t, PretokenizeGPT2)
	for _, s := range append([]string{
		"", " ", "\n", "Hello, world! The 42 dogs' bowls.", "\xff\xfe\x00\x80", "héllo 日本語 \u200b\u00a0",
		"<|eos|> is encoded as text", strings.Repeat("ab", 1000), strings.Repeat(" ", 300), englishLike(5000, 8),
	}, trickyTexts...) {
		ids := tok.Encode(s)
		require.Equal(t, s, tok.DecodeString(ids), "input %q", s)
		require.Equal(t, ids, tok.EncodeBytes([]byte(s)), "second (cached) encoding of %q", s)
		for _, id := range ids {
			require.False(t, tok.IsSpecial(id), "input %q", s)
		}
	}
}

func TestEncode_Concurrent(t *testing.T) {
	tok := trainedSmall(t, PretokenizeGPT2)
	texts := []string{englishLike(3000, 1), englishLike(3000, 2), englishLike(3000, 3), englishLike(3000, 4)}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for rep := 0; rep < 3; rep++ {
				s := texts[(g+rep)%len(texts)]
				if got := tok.DecodeString(tok.Encode(s)); got != s {
					t.Errorf("goroutine %d: round trip changed the text", g)
				}
			}
		}()
	}
	wg.Wait()
}

func TestSpecialTokens(t *testing.T) {
	tok := trainedSmall(t, PretokenizeGPT2)
	v := int32(tok.VocabSize())
	require.Equal(t, NumBytes+500+3, tok.VocabSize())
	for i, name := range []string{"<|bos|>", "<|eos|>", "<|pad|>"} {
		id, ok := tok.SpecialID(name)
		require.True(t, ok, name)
		require.Equal(t, v-3+int32(i), id, name)
		require.True(t, tok.IsSpecial(id))
		require.Equal(t, name, tok.DecodeString([]int32{id}))
		require.Equal(t, name, tok.Piece(id))
		require.NotContains(t, tok.Encode("x"+name+"y"), id)
	}
	_, ok := tok.SpecialID("<|unk|>")
	require.False(t, ok)
	require.False(t, tok.IsSpecial(v-4))
	require.False(t, tok.IsSpecial(v))
	require.Equal(t, []string{"<|bos|>", "<|eos|>", "<|pad|>"}, tok.SpecialTokens())
}

func TestDecode_InvalidIDs(t *testing.T) {
	tok := trainedSmall(t, PretokenizeGPT2)
	v := int32(tok.VocabSize())
	require.Equal(t, "a\uFFFDb\uFFFD", tok.DecodeString([]int32{'a', v, 'b', -1}))
	_, err := tok.DecodeChecked([]int32{'a', 'b', v})
	require.ErrorContains(t, err, "ids[2]=")
	require.ErrorContains(t, err, "outside the vocabulary [0, 759)")
	_, err = tok.DecodeChecked([]int32{-5})
	require.ErrorContains(t, err, "ids[0]=-5")
	got, err := tok.DecodeChecked(tok.Encode("fine"))
	require.NoError(t, err)
	require.Equal(t, "fine", string(got))
}

func TestPiece(t *testing.T) {
	tok := trainedSmall(t, PretokenizeGPT2)
	require.Equal(t, "a", tok.Piece('a'))
	require.Equal(t, " ", tok.Piece(' '))
	require.Equal(t, `\n`, tok.Piece('\n'))
	require.Equal(t, `\x00`, tok.Piece(0))
	require.Equal(t, `\xff`, tok.Piece(0xff))
	require.Equal(t, `\\`, tok.Piece('\\'))
	require.Equal(t, "<invalid:-1>", tok.Piece(-1))
	require.Equal(t, "<invalid:759>", tok.Piece(759))
	for id := int32(NumBytes); id < int32(NumBytes+tok.NumMerges()); id++ {
		b, ok := tok.TokenBytes(id)
		require.True(t, ok)
		m := tok.merges[id-NumBytes]
		require.Equal(t, string(tok.pieces[m[0]])+string(tok.pieces[m[1]]), string(b))
		if !strings.ContainsAny(string(b), "\\\n\t\r") && strings.ToValidUTF8(string(b), "") == string(b) {
			require.Equal(t, string(b), tok.Piece(id))
		}
	}
	_, ok := tok.TokenBytes(-1)
	require.False(t, ok)
	tok2, err := Train([]string{"é"}, Config{VocabSize: 257, Pretokenize: PretokenizeGPT2, MinPairCount: 1})
	require.NoError(t, err)
	require.Equal(t, "é", tok2.Piece(256))
	require.Equal(t, `\xc3`, tok2.Piece(0xc3))
	require.Equal(t, `\u200b`, func() string {
		tok3, err := Train([]string{"\u200b"}, Config{VocabSize: 258, Pretokenize: PretokenizeGPT2, MinPairCount: 1})
		require.NoError(t, err)
		return tok3.Piece(257)
	}())
}
