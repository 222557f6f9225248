package tokenizer

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func chunksOf(s, mode string) []string {
	var out []string
	forEachChunk([]byte(s), mode, func(c []byte) { out = append(out, string(c)) })
	return out
}

func TestChunks_Examples(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"Hello  world's 42!\n", []string{"Hello", " ", " world", "'s", " 42", "!", "\n"}},
		{"don't stop", []string{"don", "'t", " stop"}},
		{"we'll they're I've", []string{"we", "'ll", " they", "'re", " I", "'ve"}},
		{"a\n\nb", []string{"a", "\n\n", "b"}},
		{"x \n y", []string{"x", " \n", " y"}},
		{"x\t y", []string{"x", "\t", " y"}},
		{"end  ", []string{"end", "  "}},
		{" ", []string{" "}},
		{"3.14 ...!?", []string{"3", ".", "14", " ...!?"}},
		{"héllo wörld über", []string{"héllo", " wörld", " über"}},
		{"日本語 テキスト", []string{"日本語", " テキスト"}},
		{"\xff\xfeab\x00", []string{"\xff\xfe", "ab", "\x00"}},
		{"x\u00a0y", []string{"x", "\u00a0", "y"}}, // NBSP is white space, but not ' '
		{"a1b2", []string{"a", "1", "b", "2"}},
		{"", nil},
	} {
		require.Equal(t, tc.want, chunksOf(tc.in, PretokenizeGPT2), "input %q", tc.in)
	}
	require.Equal(t, []string{"a b"}, chunksOf("a b", PretokenizeNone))
	require.Nil(t, chunksOf("", PretokenizeNone))
}

func TestChunks_Lossless(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("ab 1\n\t'.\xc3\xa9\xff\x80")
	for trial := 0; trial < 2000; trial++ {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			if rng.IntN(4) == 0 {
				b[i] = byte(rng.IntN(256))
			} else {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
		}
		var joined []byte
		forEachChunk(b, PretokenizeGPT2, func(c []byte) {
			require.NotEmpty(t, c)
			joined = append(joined, c...)
		})
		require.Equal(t, string(b), string(joined), "input %q", b)
	}
}
