package data

import (
	"iter"
	"path/filepath"
	"testing"

	"github.com/pkg/errors"
	"github.com/stretchr/testify/require"
)

// fakeHub serves a file listing and "downloads" from a local folder.
type fakeHub struct {
	names     []string
	dir       string
	listErr   error
	requested []string
}

func (h *fakeHub) IterFileNames() iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		if h.listErr != nil {
			yield("", h.listErr)
			return
		}
		for _, n := range h.names {
			if !yield(n, nil) {
				return
			}
		}
	}
}

func (h *fakeHub) DownloadFiles(files ...string) ([]string, error) {
	h.requested = append(h.requested, files...)
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = filepath.Join(h.dir, filepath.FromSlash(f))
	}
	return out, nil
}

func TestFineWebFrom_DownloadsAndReadsShards(t *testing.T) {
	dir := t.TempDir()
	writeParquet(t, filepath.Join(dir, "sample/10BT/000_00000.parquet"), []string{"doc a", "doc b", "doc c", "doc d"})
	writeParquet(t, filepath.Join(dir, "sample/10BT/001_00000.parquet"), []string{"doc e"})
	h := &fakeHub{dir: dir, names: []string{
		"README.md", "sample/100BT/000_00000.parquet", "sample/10BT/001_00000.parquet",
		"sample/10BT/002_00000.parquet", "sample/10BT/000_00000.parquet", "data/CC-MAIN-2024-10/000_00000.parquet",
	}}
	cfg := DefaultFineWebConfig()
	cfg.NumShards = 2
	c, err := FineWebFrom(h, cfg)
	require.NoError(t, err)
	require.Equal(t, []string{"sample/10BT/000_00000.parquet", "sample/10BT/001_00000.parquet"}, h.requested)
	require.Equal(t, []string{"doc a", "doc b", "doc c", "doc d", "doc e"}, c.Texts)

	h.requested = nil
	cfg.NumShards = 1
	cfg.Read.MaxDocs = 2
	c, err = FineWebFrom(h, cfg)
	require.NoError(t, err)
	require.Equal(t, []string{"sample/10BT/000_00000.parquet"}, h.requested)
	require.Equal(t, []string{"doc a", "doc b"}, c.Texts)
}

func TestFineWebFrom_Errors(t *testing.T) {
	h := &fakeHub{names: []string{"sample/10BT/000_00000.parquet", "data/CC-MAIN-2024-10/000_00000.parquet"}, dir: t.TempDir()}
	cfg := DefaultFineWebConfig()
	cfg.Subset = "sample/350BT"
	_, err := FineWebFrom(h, cfg)
	require.ErrorContains(t, err, `no parquet files under "sample/350BT/"`)
	require.ErrorContains(t, err, "sample/10BT")

	cfg = DefaultFineWebConfig()
	cfg.NumShards = 0
	_, err = FineWebFrom(h, cfg)
	require.ErrorContains(t, err, "num_shards=0")

	_, err = FineWebFrom(&fakeHub{listErr: errors.New("dial tcp: no such host")}, DefaultFineWebConfig())
	require.ErrorContains(t, err, "needs internet access")
	require.ErrorContains(t, err, "no such host")

	// The listed shard is missing on disk (a failed download): the error names the file.
	_, err = FineWebFrom(h, DefaultFineWebConfig())
	require.ErrorContains(t, err, "000_00000.parquet")
}

// The real hub client, pointed at a closed local port, must fail with a clear offline error.
func TestFineWeb_Offline(t *testing.T) {
	t.Setenv("HF_ENDPOINT", "http://127.0.0.1:1")
	cfg := DefaultFineWebConfig()
	cfg.CacheDir = t.TempDir()
	_, err := FineWeb(cfg)
	require.ErrorContains(t, err, "needs internet access to huggingface.co")
}
