package tokenizer

import (
	"reflect"
	"strconv"
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

// doublingMerges is the JSON of a tokenizer whose n merges each join the previous token with itself, so that the
// last token decodes to 2^n bytes: a file of about 8n bytes claiming exponential memory.
func doublingMerges(n int) string {
	var b strings.Builder
	b.WriteString(`{"version":1,"vocab_size":` + strconv.Itoa(NumBytes+n) +
		`,"pretokenize":"none","special_tokens":[],"merges":[[97,97]`)
	for r := 1; r < n; r++ {
		id := strconv.Itoa(NumBytes + r - 1)
		b.WriteString(",[" + id + "," + id + "]")
	}
	b.WriteString("]}")
	return b.String()
}

// craftedTokenizerFiles are hostile or damaged tokenizer files and a substring of each one's FromJSON error; they
// seed FuzzFromJSON.
var craftedTokenizerFiles = []struct{ name, json, want string }{
	{"doubling merges", doublingMerges(60), "over the 67108864-byte limit"},
	{"doubling merges at the limit", doublingMerges(26), "over the 67108864-byte limit"}, // 2^27 bytes in total
	{"merge id beyond int32", `{"version":1,"vocab_size":257,"pretokenize":"gpt2","special_tokens":[],` +
		`"merges":[[97,99999999999]]}`, "corrupt JSON"},
	{"merge id at max int32", `{"version":1,"vocab_size":257,"pretokenize":"gpt2","special_tokens":[],` +
		`"merges":[[97,2147483647]]}`, "refers to id 2147483647"},
	{"vocab_size huge", `{"version":1,"vocab_size":9223372036854775807,"pretokenize":"gpt2","special_tokens":[],` +
		`"merges":[]}`, "vocab_size=9223372036854775807"},
	{"vocab_size negative", `{"version":1,"vocab_size":-1,"pretokenize":"gpt2","special_tokens":[],"merges":[]}`,
		"vocab_size=-1"},
	{"empty pair", `{"version":1,"vocab_size":257,"pretokenize":"gpt2","special_tokens":[],"merges":[[]]}`,
		"has 0 ids"},
	{"null merge", `{"version":1,"vocab_size":257,"pretokenize":"gpt2","special_tokens":[],"merges":[null]}`,
		"has 0 ids"},
	{"merges not a list", `{"version":1,"vocab_size":256,"pretokenize":"gpt2","special_tokens":[],"merges":{}}`,
		"corrupt JSON"},
	{"special not a string", `{"version":1,"vocab_size":257,"pretokenize":"gpt2","special_tokens":[1],"merges":[]}`,
		"corrupt JSON"},
	{"null special list", `{"version":1,"vocab_size":300,"pretokenize":"gpt2","special_tokens":null,"merges":null}`,
		"vocab_size=300"},
	{"empty file", ``, "the file is empty"},
	{"whitespace only", " \n\t", "the file is empty"},
	{"null", `null`, "version=0"},
	{"truncated", `{"version":1,"vocab_size":256,"pretokenize":"gpt2","special_tokens":[],"merges":[[97,`, "corrupt JSON"},
	{"array", `[1,2]`, "corrupt JSON"},
	{"duplicate key", `{"version":1,"version":2,"vocab_size":256,"pretokenize":"gpt2","special_tokens":[],"merges":[]}`,
		"version=2"},
}

// TestFromJSON_Crafted checks that each crafted file is an error saying what is wrong, and that the doubling
// merges are rejected before their tokens are built (a full build of doublingMerges(60) would need 2^61 bytes).
func TestFromJSON_Crafted(t *testing.T) {
	for _, c := range craftedTokenizerFiles {
		tok, err := FromJSON([]byte(c.json))
		if err == nil {
			t.Errorf("%s: FromJSON succeeded (vocab %d)", c.name, tok.VocabSize())
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not mention %q", c.name, err, c.want)
		}
	}
}

// TestFromJSON_VocabBytesLimit checks the limit at its boundary: doublingMerges(8) decodes to 256 + 2 + 4 + … + 256
// = 766 bytes in total.
func TestFromJSON_VocabBytesLimit(t *testing.T) {
	defer func(old int64) { vocabBytesLimit = old }(vocabBytesLimit)
	vocabBytesLimit = 766
	tok, err := FromJSON([]byte(doublingMerges(8)))
	if err != nil {
		t.Fatalf("at the limit: %+v", err)
	}
	if got := len(tok.Decode([]int32{NumBytes + 7})); got != 256 {
		t.Errorf("the last merge decodes to %d bytes, want 256", got)
	}
	if _, err := tok.MarshalJSON(); err != nil {
		t.Errorf("MarshalJSON at the limit: %+v", err)
	}
	vocabBytesLimit = 765
	if _, err := FromJSON([]byte(doublingMerges(8))); err == nil || !strings.Contains(err.Error(), "765-byte limit") {
		t.Errorf("one byte over the limit: err = %v", err)
	}
	// MarshalJSON refuses what FromJSON would, so Save never writes a file that does not load.
	if _, err := tok.MarshalJSON(); err == nil || !strings.Contains(err.Error(), "MaxVocabBytes") {
		t.Errorf("MarshalJSON over the limit: err = %v", err)
	}
}

// FuzzFromJSON feeds arbitrary bytes to FromJSON: it must return a tokenizer or an error, never panic, and a
// tokenizer it returns must survive MarshalJSON → FromJSON unchanged and decode what it encodes.
func FuzzFromJSON(f *testing.F) {
	for _, mode := range []string{PretokenizeGPT2, PretokenizeNone} {
		data, err := trainedSmall(f, mode).MarshalJSON()
		if err != nil {
			f.Fatalf("%+v", err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"version":1,"vocab_size":259,"pretokenize":"gpt2","special_tokens":["<s>"],"merges":[[97,98],[256,99]]}`))
	for _, c := range craftedTokenizerFiles {
		f.Add([]byte(c.json))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tok, err := FromJSON(data)
		if err != nil {
			return
		}
		again, err := tok.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON of a loaded tokenizer: %+v", err)
		}
		tok2, err := FromJSON(again)
		if err != nil {
			t.Fatalf("reloading %s: %+v", again, err)
		}
		if !reflect.DeepEqual(tok.Merges(), tok2.Merges()) || !reflect.DeepEqual(tok.SpecialTokens(), tok2.SpecialTokens()) {
			t.Fatalf("round trip changed the tokenizer: %s", again)
		}
		text := []byte("ab abc\xff aab")
		got, err := tok.DecodeChecked(tok.EncodeBytes(text))
		if err != nil || string(got) != string(text) {
			t.Fatalf("Decode(Encode(%q)) = %q, %v", text, got, err)
		}
	})
}
