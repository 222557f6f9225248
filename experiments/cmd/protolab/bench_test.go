package main

import (
	"bytes"
	"flag"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/experiments/speed"
	"github.com/protolab/protolab/workbench/run"
)

func TestBench_TinyThroughputAndDecode(t *testing.T) {
	out := t.TempDir()
	var buf bytes.Buffer
	require.NoError(t, dispatch([]string{"bench", "throughput", "--preset", "tiny", "--mixers", "protot,attention",
		"--ctx", "16,32", "--set", "steps=1", "--out", out}, &buf))
	require.Contains(t, buf.String(), "tokens/cpu-s")
	require.Contains(t, buf.String(), "machine:")
	require.Contains(t, buf.String(), "results in "+out)
	cfg := speed.Tiny()
	cfg.Mode = speed.ModeThroughput
	cfg.Mixers, cfg.Contexts, cfg.Steps = []string{"protot", "attention"}, []int{16, 32}, 1
	res, ok, err := run.Stored[*speed.Result](speed.Study, cfg, run.Out(out))
	require.NoError(t, err)
	require.True(t, ok, "the result is stored where the notebook looks for it")
	require.Len(t, res.Throughput, 4)
	require.Equal(t, "protot", res.Throughput[0].Mixer)
	require.Equal(t, 32, res.Throughput[1].T)
	require.Len(t, res.Throughput[1].StepSeconds, 1)

	// Without --out the result goes under $PROTOLAB_OUT/runs, where notebook 10 looks for it.
	t.Setenv("PROTOLAB_OUT", t.TempDir())
	buf.Reset()
	require.NoError(t, dispatch([]string{"bench", "decode", "--preset", "tiny", "--mixers", "mamba", "--ctx", "8,40"}, &buf))
	require.Contains(t, buf.String(), "ms/token")
	require.Contains(t, buf.String(), "mamba")
	cfg = speed.Tiny()
	cfg.Mode, cfg.Mixers, cfg.Contexts = speed.ModeDecode, []string{"mamba"}, []int{8, 40}
	dec, ok, err := run.Stored[*speed.Result](speed.Study, cfg, run.Out(run.OutRoot()))
	require.NoError(t, err)
	require.True(t, ok)
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
