package main

import (
	"bytes"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/store"
	"github.com/protolab/protolab/workbench/tokenizer"
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
	require.NoError(t, dispatch([]string{"train", "--preset", "tiny", "--set", "train.steps=99;train.eval_every=5",
		"--set", "train.steps=10;train.warmup_steps=2", "--out", dir}, &out))
	require.Contains(t, out.String(), "perplexity")
	var cfg lm.Config
	require.NoError(t, store.LoadJSON(filepath.Join(dir, lm.ConfigFile), &cfg))
	require.Equal(t, 10, cfg.Train.Steps, "the second --set's train.steps wins")
	require.Equal(t, 5, cfg.Train.EvalEvery, "the first --set is applied too")
	out.Reset()
	require.NoError(t, dispatch([]string{"eval", "--out", dir, "--batches", "2"}, &out))
	require.Contains(t, out.String(), `"perplexity"`)
	out.Reset()
	require.NoError(t, dispatch([]string{"generate", "--out", dir, "--prompt", "the", "--n", "2", "--tokens", "5"}, &out))
	require.Equal(t, 2, bytes.Count(out.Bytes(), []byte("\n")))

	// A tokenizer of another vocabulary in the folder: eval and generate refuse it, naming both sizes.
	tok, err := tokenizer.Train([]string{"the queen and the king went home"}, tokenizer.Config{VocabSize: 260,
		Pretokenize: tokenizer.PretokenizeGPT2, MinPairCount: 1})
	require.NoError(t, err)
	require.NoError(t, tok.Save(filepath.Join(dir, lm.TokenizerFile)))
	for _, args := range [][]string{{"eval", "--out", dir}, {"generate", "--out", dir, "--prompt", "the"}} {
		err := dispatch(args, &out)
		require.ErrorContains(t, err, "has 260 tokens", args[0])
		require.ErrorContains(t, err, fmt.Sprintf("model.vocab_size=%d", cfg.Model.VocabSize), args[0])
	}
}

func TestTrain_Errors(t *testing.T) {
	var out bytes.Buffer
	require.ErrorContains(t, dispatch([]string{"train", "--preset", "tiny"}, &out), "--out DIR is required")
	require.ErrorContains(t, dispatch([]string{"train", "--preset", "huge", "--out", t.TempDir()}, &out), `unknown preset "huge"`)
	require.ErrorContains(t, dispatch([]string{"train", "--preset", "tiny", "--set", "model.depth=3", "--out", t.TempDir()}, &out),
		`unknown key "model.depth"`)
	require.ErrorContains(t, dispatch([]string{"eval", "--out", t.TempDir()}, &out), "config.json")
	require.ErrorContains(t, dispatch([]string{"train", "--preset", "tiny", "--out", t.TempDir(), "stray"}, &out),
		"unexpected")
}

func TestKeys_ListsOverrides(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, dispatch([]string{"keys", "baseline", "--preset", "tiny"}, &out))
	require.Contains(t, out.String(), "model.num_layers=2\n")
	require.Contains(t, out.String(), "train.lr=")
	require.Contains(t, out.String(), "head=\"dense\"\n")
	for _, s := range studies {
		out.Reset()
		require.NoError(t, dispatch([]string{"keys", s.name, "--preset", "tiny"}, &out), s.name)
		require.Contains(t, out.String(), "=", s.name)
	}
	// The keys a protocol overrides are named after the assignments, as comments (run.Searcher).
	out.Reset()
	require.NoError(t, dispatch([]string{"keys", "architecture", "--preset", "small"}, &out))
	require.Contains(t, out.String(), "\n# train.lr is searched over lr_grid: ")
	out.Reset()
	require.NoError(t, dispatch([]string{"keys", "prismhead", "--preset", "small"}, &out))
	require.Contains(t, out.String(), "\n# train.lr is searched over tune.lrs: ")
	require.Contains(t, out.String(), "\n# seed is replaced by each of seeds: ")
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		require.True(t, strings.HasPrefix(line, "#") || strings.Contains(line, "="), line)
	}
	for _, name := range []string{"steering", "suppression"} {
		out.Reset()
		require.NoError(t, dispatch([]string{"keys", name, "--preset", "small"}, &out))
		require.Contains(t, out.String(), "\n# seed is replaced by each of seeds: ", name)
	}
	require.ErrorContains(t, dispatch([]string{"keys"}, &out), "name a study")
	require.ErrorContains(t, dispatch([]string{"keys", "nope"}, &out), `unknown study "nope"; studies: baseline`)
	require.ErrorContains(t, dispatch([]string{"keys", "baseline", "stray"}, &out), "unexpected")
}

// TestRun_EveryStudyAtTiny runs every study of the table at the Tiny preset through the CLI into one root folder,
// then again: the second run loads the stored result (the report is the same) instead of computing. Studies that
// analyse the same model train it once (the PRISM studies share theirs).
func TestRun_EveryStudyAtTiny(t *testing.T) {
	out := t.TempDir()
	for _, s := range studies {
		var first, second bytes.Buffer
		require.NoError(t, dispatch([]string{"run", s.name, "--preset", "tiny", "--out", out}, &first), s.name)
		require.Contains(t, first.String(), "\nresult in "+filepath.Join(out, s.name), s.name+": on a line of its own")
		_, path, ok := strings.Cut(first.String(), "result in ")
		require.True(t, ok)
		require.FileExists(t, strings.TrimSpace(path))
		require.NoError(t, dispatch([]string{"run", s.name, "--preset", "tiny", "--out", out}, &second), s.name)
		require.Equal(t, first.String(), second.String(), s.name)
	}
}

func TestRun_BaselineTinyAndErrors(t *testing.T) {
	out := t.TempDir()
	var buf bytes.Buffer
	require.NoError(t, dispatch([]string{"run", "baseline", "--preset", "tiny", "--set", "train.steps=10",
		"--out", out}, &buf))
	require.Contains(t, buf.String(), "perplexity")
	require.Contains(t, buf.String(), "result in "+filepath.Join(out, "baseline", "result-"))
	// `protolab run` makes results: a shipped result of the same configuration is not loaded, the study runs and
	// stores its own (`make reproduce` depends on it).
	t.Setenv(run.ResultsEnv, out)
	fresh := t.TempDir()
	require.NoError(t, dispatch([]string{"run", "baseline", "--preset", "tiny", "--set", "train.steps=10",
		"--out", fresh}, &buf))
	stored, err := filepath.Glob(filepath.Join(fresh, "baseline", "result-*.json"))
	require.NoError(t, err)
	require.Len(t, stored, 1, "computed and stored, not read from the shipped folder")
	require.ErrorContains(t, dispatch([]string{"run"}, &buf), "name a study")
	require.ErrorContains(t, dispatch([]string{"run", "nope"}, &buf), `unknown study "nope"`)
	require.ErrorContains(t, dispatch([]string{"run", "fvec", "--preset", "huge"}, &buf), `unknown preset "huge"`)
	require.ErrorContains(t, dispatch([]string{"run", "interp", "--preset", "tiny", "--set", "nope=1"}, &buf),
		`unknown key "nope"`)
	require.ErrorContains(t, dispatch([]string{"run", "speed", "--preset", "tiny", "--set", "mode=prefill"}, &buf),
		`mode="prefill"`)
	require.ErrorContains(t, dispatch([]string{"run", "baseline", "--preset", "tiny", "stray"}, &buf), "unexpected")
}

// TestBackend_DescribeAndCheck runs `protolab backend --check` on the go backend the tests use: the choice, the
// plugin search, and a computation checked against its known answer.
func TestBackend_DescribeAndCheck(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, dispatch([]string{"backend", "--check"}, &out))
	s := out.String()
	require.Contains(t, s, "backend: go:parallelism=-1\nwhy: set by GOMLX_BACKEND\n")
	require.Contains(t, s, "go backend matmul kernels: ")
	require.Contains(t, s, "PJRT plugins found (")
	require.Contains(t, s, "folders searched:\n")
	require.Regexp(t, `started: go:parallelism=-1 \(.*\), 1 device\(s\)`, s)
	require.Contains(t, s, "check: sum(ones(512,512)·ones(512,512)) = 1.3421773e+08, correct")
	require.ErrorContains(t, dispatch([]string{"backend", "--dir", "/tmp/x"}, &out), "--dir is for --install")
}
