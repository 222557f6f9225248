package main

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// requireEmpty checks that dir holds nothing: the command failed before any work.
func requireEmpty(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "a command that failed on its arguments wrote into %s", dir)
}

// TestArgs_StrayWordIsAnErrorInEveryCommand gives every command a word it does not take, before flags that would
// otherwise go unread: each fails naming the word, before any work.
func TestArgs_StrayWordIsAnErrorInEveryCommand(t *testing.T) {
	out := t.TempDir()
	cases := map[string][]string{
		"train":     {"--preset", "tiny", "stray", "--out", out},
		"eval":      {"--out", out, "stray", "--batches", "1"},
		"generate":  {"--out", out, "--prompt", "The", "stray", "--n", "2"}, // an unquoted "The stray"
		"keys":      {"baseline", "stray", "--preset", "tiny"},
		"run":       {"baseline", "--preset", "tiny", "stray", "--out", out},
		"bench":     {"decode", "stray", "--preset", "tiny", "--out", out},
		"backend":   {"stray", "--check"},
		"attribute": {"--query", "q", "stray", "--out", out},
		"report":    {"stray", "--out", out},
		"figures":   {"stray", "--results", out},
		"export":    {"--out", out, "stray", "--to", out + "/x.safetensors"},
		"cost":      {"--preset", "tiny", "stray", "--rate", "1e12"},
		"launch":    {"--devices", "0", "stray", "--", "touch", out + "/ran", ":::", "a"},
	}
	for _, c := range commands {
		args, ok := cases[c.name]
		require.True(t, ok, "command %s has no stray-word case", c.name)
		var buf bytes.Buffer
		err := dispatch(append([]string{c.name}, args...), &buf)
		require.ErrorContains(t, err, c.name+`: unexpected argument "stray"`, c.name)
		require.ErrorContains(t, err, "quote a flag value that has spaces", c.name)
	}
	var buf bytes.Buffer
	require.ErrorContains(t, dispatch([]string{"keys", "baseline", "a", "b"}, &buf),
		`keys: unexpected arguments "a", "b" (keys takes <study> and flags`)
	requireEmpty(t, out)
}

// TestArgs_FlagsAfterTheStudyOrBeforeIt checks that flags are read wherever the positional word stands.
func TestArgs_FlagsAfterTheStudyOrBeforeIt(t *testing.T) {
	for _, args := range [][]string{{"keys", "--preset", "tiny", "baseline"}, {"keys", "baseline", "--preset", "tiny"},
		{"keys", "--preset", "tiny", "--", "baseline"}} {
		var buf bytes.Buffer
		require.NoError(t, dispatch(args, &buf), "%q", args)
		require.Contains(t, buf.String(), "model.num_layers=2\n", "%q: the Tiny preset's value", args)
	}
	var buf bytes.Buffer
	require.NoError(t, dispatch([]string{"keys", "baseline", "--preset", "tiny"}, &buf))
	require.Contains(t, buf.String(), "\ndata.read.text_split=\"\"\n", "a key JSON omits shows its zero value")
	require.NotRegexp(t, `(?m)=$`, buf.String(), "every line is a valid --set assignment")
	require.ErrorContains(t, dispatch([]string{"run", "--preset", "tiny"}, &buf), "run: name a study")
	require.ErrorContains(t, dispatch([]string{"bench", "--preset", "tiny"}, &buf), "bench: name the mode")
	require.ErrorContains(t, dispatch([]string{"bench", "--preset", "tiny", "prefill"}, &buf),
		`unknown mode "prefill"`)
}

// TestSet_RepeatedFlagsAreMergedInOrder checks that every --set is applied, in order, a later value of a key winning.
func TestSet_RepeatedFlagsAreMergedInOrder(t *testing.T) {
	fs := newFlags("train", "", &bytes.Buffer{})
	set := newSetFlag(fs, "", "")
	_, err := parseArgs(fs, []string{"--set", "train.steps=5;train.lr=1e-3", "--set", "train.steps=7;seed=4"})
	require.NoError(t, err)
	require.Equal(t, "train.steps=5;train.lr=1e-3;train.steps=7;seed=4", set.String())
	cfg, err := baselineConfig("tiny", set.String())
	require.NoError(t, err)
	require.Equal(t, 7, cfg.Train.Steps)
	require.Equal(t, 1e-3, cfg.Train.LR)
	require.Equal(t, uint64(4), cfg.Seed)

	// The first --set is not dropped: its unknown key fails every command that takes --set, before any work.
	out := t.TempDir()
	for _, args := range [][]string{
		{"train", "--preset", "tiny", "--set", "nope=1", "--set", "train.steps=3", "--out", out},
		{"run", "baseline", "--preset", "tiny", "--set", "nope=1", "--set", "train.steps=3", "--out", out},
		{"bench", "decode", "--preset", "tiny", "--set", "nope=1", "--set", "steps=1", "--out", out},
		{"attribute", "--query", "q", "--preset", "tiny", "--set", "nope=1", "--set", "seed=2", "--out", out},
	} {
		var buf bytes.Buffer
		require.ErrorContains(t, dispatch(args, &buf), `unknown key "nope"`, "%q", args)
	}
	requireEmpty(t, out)
	var help bytes.Buffer
	require.ErrorIs(t, dispatch([]string{"train", "--help"}, &help), flag.ErrHelp)
	require.Contains(t, help.String(), "repeatable: every --set is applied in order, a later value of a key wins")
}

// TestFlags_CheckedBeforeAnyWork gives each command an invalid flag together with a folder it would read or write:
// the flag's error comes first (the folder is not even opened), naming the flag.
func TestFlags_CheckedBeforeAnyWork(t *testing.T) {
	missing := t.TempDir() + "/no-run-here"
	out := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"eval", "--out", missing, "--batches", "-1"}, "eval: --batches=-1, want ≥ 0"},
		{[]string{"generate", "--out", missing, "--prompt", "x", "--tokens", "0"}, "generate: --tokens=0, want > 0"},
		{[]string{"generate", "--out", missing, "--prompt", "x", "--temperature", "-1"}, "generate: --temperature=-1"},
		{[]string{"generate", "--out", missing, "--prompt", "x", "--temperature", "NaN"}, "--temperature=NaN"},
		{[]string{"generate", "--out", missing, "--prompt", "x", "--top-k", "-2"}, "generate: --top-k=-2, want ≥ 0"},
		{[]string{"attribute", "--query", "q", "--method", "bogus", "--preset", "tiny", "--out", out},
			`attribute: unknown method "bogus"; want one of prism`},
		{[]string{"attribute", "--compare", "--method", "ekfac", "--out", out}, "--method applies to --query"},
		{[]string{"attribute", "--compare", "--top", "3", "--method", "prism", "--out", out},
			"--method and --top apply to --query"},
		{[]string{"run", "baseline", "--preset", "tiny", "--set", "train.steps=0", "--out", out}, "steps=0"},
		{[]string{"train", "--preset", "tiny", "--set", "data.read.text_split=lines", "--out", out},
			`data.read: read config: text_split="lines"`},
		{[]string{"bench", "decode", "--preset", "tiny", "--ctx", "8,x", "--out", out}, "not an integer"},
	} {
		var buf bytes.Buffer
		require.ErrorContains(t, dispatch(c.args, &buf), c.want, "%q", c.args)
	}
	require.NoDirExists(t, missing)
	requireEmpty(t, out)
}
