package data

import (
	"iter"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/gomlx/go-huggingface/hub"
	"github.com/pkg/errors"
)

// FineWebConfig configures the FineWeb-Edu sample download. Start from DefaultFineWebConfig.
type FineWebConfig struct {
	Repo      string     `json:"repo"`       // Hugging Face dataset id
	Subset    string     `json:"subset"`     // folder of parquet shards inside the dataset, e.g. "sample/10BT"
	NumShards int        `json:"num_shards"` // > 0; the first shards in sorted name order (each about 2 GB)
	CacheDir  string     `json:"cache_dir"`  // "" means the shared Hugging Face cache (~/.cache/huggingface/hub)
	Read      ReadConfig `json:"read"`       // column and limits applied while reading the shards
	Verbose   bool       `json:"verbose"`    // print download progress
}

// DefaultFineWebConfig returns one shard of FineWeb-Edu's 10B-token sample, reading at most 100 MB of text.
func DefaultFineWebConfig() FineWebConfig {
	return FineWebConfig{Repo: "HuggingFaceFW/fineweb-edu", Subset: "sample/10BT", NumShards: 1,
		Read: ReadConfig{Field: "text", MaxBytes: 100 << 20}}
}

// HubRepo is the part of a Hugging Face repository the downloader uses; *hub.Repo implements it, tests
// substitute a local fake.
type HubRepo interface {
	IterFileNames() iter.Seq2[string, error]
	DownloadFiles(repoFiles ...string) (downloadedPaths []string, err error)
}

// NewFineWebRepo returns the dataset repository of cfg, authenticated with $HF_TOKEN when set.
func NewFineWebRepo(cfg FineWebConfig) *hub.Repo {
	r := hub.New(cfg.Repo).WithType(hub.RepoTypeDataset).WithAuth(os.Getenv("HF_TOKEN"))
	if cfg.CacheDir != "" {
		r = r.WithCacheDir(cfg.CacheDir)
	}
	r.Verbosity = 0
	if cfg.Verbose {
		r.Verbosity = 1
	}
	return r.WithProgressBar(cfg.Verbose)
}

// FineWeb downloads cfg.NumShards parquet shards of FineWeb-Edu (cached: a second call reads the local copies)
// and reads them. It needs internet access to huggingface.co; offline it fails with an error saying so.
func FineWeb(cfg FineWebConfig) (*Corpus, error) {
	return FineWebFrom(NewFineWebRepo(cfg), cfg)
}

// FineWebFrom is FineWeb with an explicit repository.
func FineWebFrom(repo HubRepo, cfg FineWebConfig) (*Corpus, error) {
	paths, err := FineWebShards(repo, cfg)
	if err != nil {
		return nil, err
	}
	c := &Corpus{Source: cfg.Repo + "/" + cfg.Subset}
	lim := &limiter{cfg: cfg.Read}
	for _, p := range paths {
		if lim.full() {
			break
		}
		if err := readParquet(p, cfg.Read.field(), c, lim); err != nil {
			return nil, err
		}
	}
	if err := c.Validate(); err != nil {
		return nil, errors.WithMessagef(err, "FineWeb shards %v", paths)
	}
	return c, nil
}

// FineWebShards lists the parquet files under cfg.Subset in repo, downloads the first cfg.NumShards (sorted by
// name) and returns their local paths.
func FineWebShards(repo HubRepo, cfg FineWebConfig) ([]string, error) {
	if cfg.NumShards <= 0 {
		return nil, errors.Errorf("FineWeb: num_shards=%d, want > 0", cfg.NumShards)
	}
	if err := cfg.Read.Validate(); err != nil {
		return nil, err
	}
	prefix := strings.Trim(cfg.Subset, "/") + "/"
	var shards []string
	subsets := map[string]bool{}
	for name, err := range repo.IterFileNames() {
		if err != nil {
			return nil, errors.Wrapf(err, "listing the files of dataset %q (needs internet access to huggingface.co)", cfg.Repo)
		}
		if !strings.HasSuffix(name, ".parquet") {
			continue
		}
		if strings.HasPrefix(name, prefix) {
			shards = append(shards, name)
		} else {
			subsets[path.Dir(name)] = true
		}
	}
	if len(shards) == 0 {
		var known []string
		for s := range subsets {
			known = append(known, s)
		}
		slices.Sort(known)
		if len(known) > 20 {
			known = append(known[:20], "...")
		}
		return nil, errors.Errorf("dataset %q has no parquet files under %q (folders with parquet files: %v)",
			cfg.Repo, prefix, known)
	}
	slices.Sort(shards)
	if len(shards) > cfg.NumShards {
		shards = shards[:cfg.NumShards]
	}
	paths, err := repo.DownloadFiles(shards...)
	if err != nil {
		return nil, errors.Wrapf(err, "downloading %v from dataset %q (needs internet access to huggingface.co)", shards, cfg.Repo)
	}
	return paths, nil
}
