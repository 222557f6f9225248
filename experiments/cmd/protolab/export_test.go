package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/store"
)

func TestExport_WritesTheDocumentedLayout(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	var buf bytes.Buffer
	require.NoError(t, dispatch([]string{"train", "--preset", "tiny", "--set", "train.steps=6;train.eval_every=0;train.checkpoint_every=0", "--out", run}, &buf))
	to := filepath.Join(dir, "model.safetensors")
	buf.Reset()
	require.NoError(t, dispatch([]string{"export", "--out", run, "--to", to}, &buf))
	require.Contains(t, buf.String(), "exported "+run)

	shapes, meta, err := store.ReadHeader(to)
	require.NoError(t, err)
	require.Equal(t, lm.ExportFormat, meta[lm.ExportMetaFormat])
	var arch lm.Architecture
	require.NoError(t, json.Unmarshal([]byte(meta[lm.ExportMetaArchitecture]), &arch))
	m, err := lm.Open(run)
	require.NoError(t, err)
	require.Equal(t, lm.ArchitectureOf(m.Config), arch)
	D := m.Config.Model.Width
	require.Equal(t, []int{m.Config.Model.FFNWidth(), D}, shapes["block_00.ffn.up"].Dimensions, "[out, in]")
	require.NotEmpty(t, meta[lm.ExportMetaTokenizer])
}

func TestExport_FlagErrors(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"export", "--out", dir}, "--to FILE.safetensors are required"},
		{[]string{"export", "--to", filepath.Join(dir, "x.safetensors")}, "--out RUN_DIR"},
		{[]string{"export", "--out", dir, "--to", filepath.Join(dir, "x.pt")}, "ending in .safetensors"},
		{[]string{"export", "--out", dir, "--to", filepath.Join(dir, "x.safetensors")}, "is not a run folder"},
	} {
		require.ErrorContains(t, dispatch(c.args, &buf), c.want, "%v", c.args)
	}
}
