package tokenizer

import (
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

// smallConfig asks for numMerges merges with the default specials.
func smallConfig(numMerges int) Config {
	cfg := DefaultConfig()
	cfg.VocabSize = NumBytes + numMerges + len(cfg.SpecialTokens)
	return cfg
}

// trickyTexts exercise overlapping pairs, unicode, invalid UTF-8 and long runs.
var trickyTexts = []string{
	"aaaaaaa aaaa aaa aa", "abababab abab aba", "zzz\tzzz\t\tzzz", "héllo héllo wörld wörld",
	"\xff\xfe\xff\xfe\xff", "1111 2222 1111", "----====----====", "  indented\n    more\n",
}

func TestTrain_WikipediaExample(t *testing.T) {
	// "aaabdaaabac": (a,a) has count 4; then (Z,a) and (a,b) tie at 2 and the lower ids (a,b) win; then
	// (Z,Y) has count 2 and every other pair count 1.
	cfg := Config{VocabSize: 259, Pretokenize: PretokenizeGPT2, MinPairCount: 2}
	tok, err := Train([]string{"aaabdaaabac"}, cfg)
	require.NoError(t, err)
	require.Equal(t, [][2]int32{{'a', 'a'}, {'a', 'b'}, {256, 257}}, tok.Merges())
	require.Equal(t, []int32{258, 'd', 258, 'a', 'c'}, tok.Encode("aaabdaaabac"))

	cfg.VocabSize = 260
	_, err = Train([]string{"aaabdaaabac"}, cfg)
	require.ErrorContains(t, err, "vocabulary larger than the data supports")
	require.ErrorContains(t, err, "vocab_size=260 needs 4 merges")
	require.ErrorContains(t, err, "supports only 3 merges")
	require.ErrorContains(t, err, "largest vocab_size it supports is 259")

	cfg.MinPairCount = 1 // now (a,c), (d,258), ... can merge as well
	tok, err = Train([]string{"aaabdaaabac"}, cfg)
	require.NoError(t, err)
	require.Equal(t, 260, tok.VocabSize())
}

func TestTrain_MatchesReference(t *testing.T) {
	texts := append([]string{englishLike(30_000, 7)}, trickyTexts...)
	for _, tc := range []struct {
		name      string
		mode      string
		numMerges int
		minCount  int
	}{
		{"gpt2", PretokenizeGPT2, 400, 2},
		{"gpt2_min1", PretokenizeGPT2, 250, 1},
		{"gpt2_min5", PretokenizeGPT2, 300, 5},
		{"none", PretokenizeNone, 150, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := texts
			if tc.mode == PretokenizeNone {
				in = append(strings.Split(englishLike(4000, 3), " "), trickyTexts...)
			}
			cfg := smallConfig(tc.numMerges)
			cfg.Pretokenize, cfg.MinPairCount = tc.mode, tc.minCount
			tok, err := Train(in, cfg)
			require.NoError(t, err)
			want := referenceMerges(referenceChunkCounts(in, tc.mode), tc.numMerges, int64(tc.minCount))
			require.Len(t, want, tc.numMerges)
			require.Equal(t, want, tok.Merges())
		})
	}
}

func TestTrain_Deterministic(t *testing.T) {
	texts := []string{englishLike(20_000, 11), englishLike(5_000, 12)}
	a, err := Train(texts, smallConfig(300))
	require.NoError(t, err)
	b, err := Train(texts, smallConfig(300))
	require.NoError(t, err)
	require.Equal(t, a.Merges(), b.Merges())
}

func TestTrain_TextsAreBoundaries(t *testing.T) {
	// "ab" split over two texts never forms the pair (a, b).
	cfg := Config{VocabSize: 257, Pretokenize: PretokenizeNone, MinPairCount: 1}
	_, err := Train([]string{"a", "b", "a", "b"}, cfg)
	require.ErrorContains(t, err, "larger than the data supports")
	tok, err := Train([]string{"ab"}, cfg)
	require.NoError(t, err)
	require.Equal(t, [][2]int32{{'a', 'b'}}, tok.Merges())
}

func TestTrainSeq_MatchesTrain(t *testing.T) {
	texts := append([]string{englishLike(10_000, 9)}, trickyTexts...)
	want, err := Train(texts, smallConfig(200))
	require.NoError(t, err)
	got, err := TrainSeq(func(yield func(string) bool) {
		for _, s := range texts {
			if !yield(s) {
				return
			}
		}
	}, smallConfig(200))
	require.NoError(t, err)
	require.Equal(t, want.Merges(), got.Merges())
}

func TestTrainReader_MatchesTrain(t *testing.T) {
	text := englishLike(20_000, 5) + "\n  x\n\ny\n" + strings.Join(trickyTexts, "\n")
	want, err := Train([]string{text}, smallConfig(300))
	require.NoError(t, err)
	defer func(n int) { readerBlockSize = n }(readerBlockSize)
	for _, size := range []int{1, 7, 1000, 1 << 20} {
		readerBlockSize = size
		got, err := TrainReader(iotest.OneByteReader(strings.NewReader(text)), smallConfig(300))
		require.NoError(t, err, "block size %d", size)
		require.Equal(t, want.Merges(), got.Merges(), "block size %d", size)
	}
}

func TestSafeCut(t *testing.T) {
	require.Equal(t, 0, safeCut([]byte("no newline")))
	require.Equal(t, 0, safeCut([]byte("a\n \nb\n")[:4])) // "a\n \n": every '\n' is followed by space or the end
	require.Equal(t, 2, safeCut([]byte("a\nb\n\n")))
	require.Equal(t, 5, safeCut([]byte("a\nb\n\nc d")))
	require.Equal(t, 0, safeCut([]byte("a\n\xc2\xa0"))) // a non-ASCII byte may start a unicode space
}

func TestTrain_Progress(t *testing.T) {
	cfg := smallConfig(50)
	var calls []int
	cfg.Progress = func(done, total int) {
		require.Equal(t, 50, total)
		calls = append(calls, done)
	}
	_, err := Train([]string{englishLike(5000, 1)}, cfg)
	require.NoError(t, err)
	require.Len(t, calls, 50)
	for i, d := range calls {
		require.Equal(t, i+1, d)
	}
}

func TestTrain_NoMerges(t *testing.T) {
	tok, err := Train([]string{"x"}, smallConfig(0))
	require.NoError(t, err)
	require.Equal(t, NumBytes+3, tok.VocabSize())
	require.Equal(t, []int32{'x', 'y'}, tok.Encode("xy"))
}

func TestTrain_Errors(t *testing.T) {
	_, err := Train(nil, smallConfig(10))
	require.ErrorContains(t, err, "empty corpus")
	_, err = Train([]string{"", ""}, smallConfig(10))
	require.ErrorContains(t, err, "empty corpus")
	_, err = TrainReader(strings.NewReader(""), smallConfig(10))
	require.ErrorContains(t, err, "empty corpus")
	_, err = TrainReader(iotest.ErrReader(iotest.ErrTimeout), smallConfig(10))
	require.ErrorContains(t, err, "reading the corpus")

	_, err = Train([]string{"abcabc abcabc"}, smallConfig(1000))
	require.ErrorContains(t, err, "vocabulary larger than the data supports")
	require.ErrorContains(t, err, "vocab_size=1259 needs 1000 merges")

	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.VocabSize = 258 }, "vocab_size=258 is smaller than 256 bytes + 3 special tokens = 259"},
		{func(c *Config) { c.SpecialTokens = []string{"<a>", ""} }, "special_tokens[1] is empty"},
		{func(c *Config) { c.SpecialTokens = []string{"<a>", "<b>", "<a>"} }, `special_tokens[2]="<a>" duplicates special_tokens[0]`},
		{func(c *Config) { c.Pretokenize = "regexp" }, `pretokenize="regexp"`},
		{func(c *Config) { c.Pretokenize = "" }, `pretokenize=""`},
		{func(c *Config) { c.MinPairCount = 0 }, "min_pair_count=0"},
		{func(c *Config) { c.VocabSize = 1 << 40 }, "does not fit in int32"},
	} {
		cfg := DefaultConfig()
		tc.edit(&cfg)
		require.ErrorContains(t, cfg.Validate(), tc.want)
		_, err := Train([]string{"text"}, cfg)
		require.ErrorContains(t, err, tc.want)
		_, err = TrainReader(strings.NewReader("text"), cfg)
		require.ErrorContains(t, err, tc.want)
	}
	require.NoError(t, DefaultConfig().Validate())
}
