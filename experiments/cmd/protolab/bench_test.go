package main

import (
	"bytes"
	"flag"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/experiments/protot"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/store"
)

func TestBench_TinyThroughputAndDecode(t *testing.T) {
	out := filepath.Join(t.TempDir(), "tp.json")
	var buf bytes.Buffer
	require.NoError(t, dispatch([]string{"bench", "throughput", "--preset", "tiny", "--mixers", "protot,attention",
		"--ctx", "16,32", "--set", "steps=1", "--out", out}, &buf))
	require.Contains(t, buf.String(), "tokens/cpu-s")
	require.Contains(t, buf.String(), "machine:")
	var res protot.BenchResult
	require.NoError(t, store.LoadJSON(out, &res))
	require.Len(t, res.Throughput, 4)
	require.Equal(t, "protot", res.Throughput[0].Mixer)
	require.Equal(t, 32, res.Throughput[1].T)
	require.Len(t, res.Throughput[1].StepSeconds, 1)

	// Without --out the result goes where notebook 10 looks for it.
	t.Setenv("PROTOLAB_OUT", t.TempDir())
	buf.Reset()
	require.NoError(t, dispatch([]string{"bench", "decode", "--preset", "tiny", "--mixers", "mamba", "--ctx", "8,40"}, &buf))
	require.Contains(t, buf.String(), "ms/token")
	require.Contains(t, buf.String(), "mamba")
	dec, err := protot.LoadBench(protot.BenchFile(run.OutDir("protot"), "decode", "tiny"), "decode")
	require.NoError(t, err)
	require.Len(t, dec.Decode, 2)
}

func TestBench_Errors(t *testing.T) {
	var buf bytes.Buffer
	require.ErrorIs(t, dispatch([]string{"bench", "--help"}, &buf), flag.ErrHelp)
	require.Contains(t, buf.String(), "throughput|decode")
	require.ErrorContains(t, dispatch([]string{"bench"}, &buf), "throughput or decode")
	require.ErrorContains(t, dispatch([]string{"bench", "prefill"}, &buf), `unknown mode "prefill"`)
	require.ErrorContains(t, dispatch([]string{"bench", "decode", "--ctx", "8,x"}, &buf), "not an integer")
	require.ErrorContains(t, dispatch([]string{"bench", "decode", "--preset", "tiny", "--mixers", "lstm"}, &buf), "lstm")
	require.ErrorContains(t, dispatch([]string{"bench", "decode", "--preset", "tiny", "--set", "depth=2"}, &buf),
		`unknown key "depth"`)
	require.ErrorContains(t, dispatch([]string{"bench", "decode", "--preset", "tiny", "extra"}, &buf), "unexpected")
}
