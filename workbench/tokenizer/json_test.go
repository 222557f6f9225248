package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSaveLoad_RoundTrip(t *testing.T) {
	for _, mode := range []string{PretokenizeGPT2, PretokenizeNone} {
		tok := trainedSmall(t, mode)
		dir := t.TempDir()
		path := filepath.Join(dir, "tok.json")
		require.NoError(t, tok.Save(path))
		require.NoError(t, tok.Save(path)) // overwriting works too

		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Len(t, entries, 1, "no temporary file is left behind")

		var raw map[string]any
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, &raw))
		require.EqualValues(t, FormatVersion, raw["version"])
		require.EqualValues(t, tok.VocabSize(), raw["vocab_size"])
		require.Equal(t, mode, raw["pretokenize"])

		got, err := Load(path)
		require.NoError(t, err)
		require.Equal(t, tok.Merges(), got.Merges())
		require.Equal(t, tok.SpecialTokens(), got.SpecialTokens())
		require.Equal(t, tok.Pretokenize(), got.Pretokenize())
		require.Equal(t, tok.VocabSize(), got.VocabSize())
		s := englishLike(3000, 77) + string(trickyTexts[0])
		require.Equal(t, tok.Encode(s), got.Encode(s))
	}
}

func TestFromJSON_NoSpecialsNoMerges(t *testing.T) {
	tok, err := Train([]string{"x"}, Config{VocabSize: 256, Pretokenize: PretokenizeGPT2, MinPairCount: 2})
	require.NoError(t, err)
	data, err := tok.MarshalJSON()
	require.NoError(t, err)
	require.JSONEq(t, `{"version":1,"vocab_size":256,"pretokenize":"gpt2","special_tokens":[],"merges":[]}`, string(data))
	got, err := FromJSON(data)
	require.NoError(t, err)
	require.Equal(t, 256, got.VocabSize())
}

func TestLoad_Errors(t *testing.T) {
	dir := t.TempDir()
	_, err := Load(filepath.Join(dir, "missing.json"))
	require.ErrorContains(t, err, "missing.json")

	for _, tc := range []struct {
		name, json, want string
	}{
		{"corrupt", `{"version":1,"vocab_`, "corrupt JSON"},
		{"trailing", `{"version":1,"vocab_size":256,"pretokenize":"gpt2","special_tokens":[],"merges":[]} {}`, "trailing data"},
		{"unknown_field", `{"version":1,"vocab_size":256,"pretokenize":"gpt2","special_tokens":[],"merges":[],"extra":1}`, `unknown field "extra"`},
		{"version", `{"version":2,"vocab_size":256,"pretokenize":"gpt2","special_tokens":[],"merges":[]}`, "version=2, want 1"},
		{"no_version", `{"vocab_size":256,"pretokenize":"gpt2","special_tokens":[],"merges":[]}`, "version=0, want 1"},
		{"pretokenize", `{"version":1,"vocab_size":256,"pretokenize":"bert","special_tokens":[],"merges":[]}`, `pretokenize="bert"`},
		{"future_id", `{"version":1,"vocab_size":258,"pretokenize":"gpt2","special_tokens":[],"merges":[[97,98],[256,257]]}`, "merges[1]=[256,257] refers to id 257"},
		{"self_id", `{"version":1,"vocab_size":257,"pretokenize":"gpt2","special_tokens":[],"merges":[[256,98]]}`, "merges[0]=[256,98] refers to id 256"},
		{"negative_id", `{"version":1,"vocab_size":257,"pretokenize":"gpt2","special_tokens":[],"merges":[[97,-1]]}`, "refers to id -1"},
		{"repeat", `{"version":1,"vocab_size":258,"pretokenize":"gpt2","special_tokens":[],"merges":[[97,98],[97,98]]}`, "merges[1]=[97,98] repeats merges[0]"},
		{"vocab_size", `{"version":1,"vocab_size":300,"pretokenize":"gpt2","special_tokens":["<s>"],"merges":[[97,98]]}`, "vocab_size=300, but 256 bytes + 1 merges + 1 special tokens = 258"},
		{"dup_special", `{"version":1,"vocab_size":258,"pretokenize":"gpt2","special_tokens":["<s>","<s>"],"merges":[]}`, "duplicates special_tokens[0]"},
		{"empty_special", `{"version":1,"vocab_size":257,"pretokenize":"gpt2","special_tokens":[""],"merges":[]}`, "special_tokens[0] is empty"},
		{"bad_pair", `{"version":1,"vocab_size":257,"pretokenize":"gpt2","special_tokens":[],"merges":[[97,98,99]]}`, "merges[0]=[97 98 99] has 3 ids, want a pair"},
		{"not_int32", `{"version":1,"vocab_size":257,"pretokenize":"gpt2","special_tokens":[],"merges":[[97,4294967296]]}`, "corrupt JSON"},
	} {
		path := filepath.Join(dir, tc.name+".json")
		require.NoError(t, os.WriteFile(path, []byte(tc.json), 0o644))
		_, err := Load(path)
		require.ErrorContains(t, err, tc.want, tc.name)
		require.ErrorContains(t, err, path, tc.name)
	}
}

func TestSave_Errors(t *testing.T) {
	tok, err := Train([]string{"abab"}, Config{VocabSize: 257, Pretokenize: PretokenizeGPT2, MinPairCount: 2})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "no_such_dir", "tok.json")
	err = tok.Save(path)
	require.ErrorContains(t, err, path)
}
