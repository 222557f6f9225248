package tokenizer

import (
	"strings"
	"testing"
)

// FuzzRoundTrip checks Decode(Encode(b)) == b for arbitrary bytes, for both pre-tokenization modes, and
// that Encode emits only non-special ids inside the vocabulary.
func FuzzRoundTrip(f *testing.F) {
	gpt2 := trainedSmall(f, PretokenizeGPT2)
	cfg := smallConfig(200)
	cfg.Pretokenize = PretokenizeNone
	none, err := Train(strings.Split(englishLike(20_000, 5), "."), cfg)
	if err != nil {
		f.Fatalf("%+v", err)
	}
	for _, s := range append([]string{
		"", " ", "\xff", "\xc3", "\xc3\xa9\xc3", "\xed\xa0\x80", "\x00\x01\x02 \t\r\n", "a\xffb\xfe c",
		"Hello, world! It's 2024.", "日本語のテキスト", "<|eos|>", strings.Repeat("ab", 100), englishLike(300, 3),
	}, trickyTexts...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, tok := range []*Tokenizer{gpt2, none} {
			ids := tok.EncodeBytes(b)
			for _, id := range ids {
				if id < 0 || int(id) >= tok.VocabSize() || tok.IsSpecial(id) {
					t.Fatalf("%s: Encode(%q) produced id %d", tok.Pretokenize(), b, id)
				}
			}
			got, err := tok.DecodeChecked(ids)
			if err != nil {
				t.Fatalf("%s: %+v", tok.Pretokenize(), err)
			}
			if string(got) != string(b) {
				t.Fatalf("%s: Decode(Encode(%q)) = %q", tok.Pretokenize(), b, got)
			}
		}
	})
}
