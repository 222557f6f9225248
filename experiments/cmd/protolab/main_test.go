package main

import (
	"bytes"
	"flag"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHelp_EveryCommand(t *testing.T) {
	for _, c := range commands {
		var out bytes.Buffer
		err := dispatch([]string{c.name, "--help"}, &out)
		require.ErrorIs(t, err, flag.ErrHelp, c.name)
		require.Contains(t, out.String(), "usage: protolab "+c.name, c.name)
	}
	var out bytes.Buffer
	require.NoError(t, dispatch([]string{"--help"}, &out))
	require.Contains(t, out.String(), "generate")
	require.ErrorContains(t, dispatch([]string{"frobnicate"}, &out), `unknown command "frobnicate"`)
}

func TestTrainEvalGenerate_Tiny(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	var out bytes.Buffer
	require.NoError(t, dispatch([]string{"train", "--preset", "tiny", "--set", "train.steps=10;train.eval_every=5;train.warmup_steps=2", "--out", dir}, &out))
	require.Contains(t, out.String(), "perplexity")
	out.Reset()
	require.NoError(t, dispatch([]string{"eval", "--out", dir, "--batches", "2"}, &out))
	require.Contains(t, out.String(), `"perplexity"`)
	out.Reset()
	require.NoError(t, dispatch([]string{"generate", "--out", dir, "--prompt", "the", "--n", "2", "--tokens", "5"}, &out))
	require.Equal(t, 2, bytes.Count(out.Bytes(), []byte("\n")))
}

func TestTrain_Errors(t *testing.T) {
	var out bytes.Buffer
	require.ErrorContains(t, dispatch([]string{"train", "--preset", "tiny"}, &out), "--out DIR is required")
	require.ErrorContains(t, dispatch([]string{"train", "--preset", "huge", "--out", t.TempDir()}, &out), `unknown preset "huge"`)
	require.ErrorContains(t, dispatch([]string{"train", "--preset", "tiny", "--set", "model.depth=3", "--out", t.TempDir()}, &out),
		`unknown key "model.depth"`)
	require.ErrorContains(t, dispatch([]string{"eval", "--out", t.TempDir()}, &out), "config.json")
}

func TestKeys_ListsOverrides(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, dispatch([]string{"keys", "--preset", "tiny"}, &out))
	require.Contains(t, out.String(), "model.num_layers=2\n")
	require.Contains(t, out.String(), "train.lr=")
}
