package robustness

import (
	"slices"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/pair"
	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
)

// Config configures the study. Start from a preset (Tiny, Small, Paper); change fields or apply run.Override.
type Config struct {
	// Config is the ProtoT model and its LLaMA baseline trained on each corpus (models/pair: seed, data, model,
	// match_params, train; JSON keys at the top level). The presets are experiments/interp's, so equal settings
	// share the trained runs under run.Out/models. The seed also seeds the prompt order and the perturbations.
	pair.Config
	// Corpora are the corpora the two models are trained and tested on. The first must be present; later ones
	// marked optional are skipped (with a note) when their data is not installed.
	Corpora []CorpusConfig `json:"corpora"`
	// Prompts is the number of held-out prompts per corpus, each perturbed once per kind; > 0.
	Prompts int `json:"prompts"`
	// MaxTokens caps a prompt's length in tokens (the EOS in front included); ≥ 4. Keep it ≤ data.seq_len so that
	// attention is not asked to extrapolate.
	MaxTokens int `json:"max_tokens"`
	// OverlapK is k of the top-k overlap and of the Spearman union; > 0. Spec §7.5: 10.
	OverlapK int `json:"overlap_k"`
	// Perturbations lists the kinds applied to every corpus (data.PerturbSwap, data.PerturbDrop,
	// data.PerturbInsert); data.PerturbSynonym is added on corpora with Synonyms.
	Perturbations []string `json:"perturbations"`
	// BatchSize is the number of prompt rows per forward pass; > 0.
	BatchSize int `json:"batch_size"`
	// EvalSeed chooses the documents the Brown corpus's prompts are cut from (lm.Model.FreshCorpus): an odd seed its
	// test split, an even one its held-out split (HeldBackEvalSeed, kept back); 0 its validation split. The other
	// corpora cut theirs from their validation split.
	EvalSeed uint64 `json:"eval_seed,omitempty"`
	// BrownDocs is the number of documents of that Brown split (its first, in corpus order) when corpora lists
	// "brown" and eval_seed is set; 1 to the split's size.
	BrownDocs int `json:"brown_docs,omitempty"`
}

// HeldBackEvalSeed is the eval_seed of the Brown prompts that no preset uses (even: the held-out split): it is kept
// untouched until the settings are frozen, then the protocol is rerun once with `--set eval_seed=1002`.
const HeldBackEvalSeed = 1002

// CorpusConfig is one corpus of the study.
type CorpusConfig struct {
	// Source is a data source of workbench/lmdata: "synthetic", "wordnet", "brown", or files.
	Source string `json:"source"`
	// Synonyms adds the data.PerturbSynonym perturbation, with WordNet's synonyms (it needs the WordNet database).
	Synonyms bool `json:"synonyms"`
	// Optional skips the corpus, with a note in the result, when its data is not installed.
	Optional bool `json:"optional"`
}

// Synthetic returns the synthetic concept corpus (typos only).
func Synthetic() CorpusConfig { return CorpusConfig{Source: lmdata.SourceSynthetic} }

// WordNet returns WordNet glosses with synonym perturbations; optional.
func WordNet() CorpusConfig {
	return CorpusConfig{Source: lmdata.SourceWordNet, Synonyms: true, Optional: true}
}

// Brown returns the Brown corpus with synonym perturbations; optional (it needs the corpus and WordNet). Its prompts
// are sentences of its evaluation split (eval_seed), several per document (pair.SentencePrompts).
func Brown() CorpusConfig {
	return CorpusConfig{Source: lmdata.SourceBrown, Synonyms: true, Optional: true}
}

// Tiny is seconds on one CPU core: the unit tests and the notebook smoke run use it. The models of pair.Tiny on the
// synthetic corpus, four prompts.
func Tiny() Config {
	c := Quick()
	c.Config = pair.Tiny()
	c.Corpora = []CorpusConfig{Synthetic()}
	c.Prompts = 4
	c.BatchSize = 8
	return c
}

// Quick is what a notebook computes when no protocol run is stored (protocol v1's Small), a few minutes of CPU time
// on a 2-core machine with the pure-Go backend (the models of pair.Small, as experiments/interp's Quick trains them):
// 48 prompts of at most 24 tokens on the synthetic corpus, and on WordNet glosses with synonyms when the database is
// installed (make wordnet).
func Quick() Config {
	return Config{Config: pair.Small(), Corpora: []CorpusConfig{Synthetic(), WordNet()}, Prompts: 48, MaxTokens: 24,
		OverlapK: 10, Perturbations: []string{data.PerturbSwap, data.PerturbDrop, data.PerturbInsert}, BatchSize: 32}
}

// Small is the study's protocol v2 (docs/PROTOCOL.md, "interp and robustness"; `protolab run robustness --preset
// small`): the models of pair.SmallV2, those experiments/interp's Small trains with its first seed, on the synthetic
// corpus, WordNet glosses and the Brown corpus, all three required; 48 prompts per corpus of at most 48 tokens
// (within the context of 64, so that a Brown sentence fits), the same typos (swap, drop, insert) everywhere and
// WordNet's synonyms on WordNet glosses and Brown. The synthetic and WordNet prompts are validation documents'
// prefixes, as in v1; the Brown prompts are sentences of its test split's 28 documents (eval_seed 1001, odd; 1002,
// the held-out split, is kept back). Protocol v1 (pair.Small, 24 tokens, no Brown) is Quick.
func Small() Config {
	c := Quick()
	c.Config = pair.SmallV2()
	c.Corpora = []CorpusConfig{Synthetic(), WordNet(), Brown()}
	c.Corpora[1].Optional, c.Corpora[2].Optional = false, false
	c.MaxTokens = 48
	c.EvalSeed, c.BrownDocs = 1001, 28
	return c
}

// Paper is the models of pair.Paper (docs/spec/protot.md §1, §3) with 500 prompts of at most 64 tokens and the
// spec's k = 10 (§7.5). Meant for a GPU with XLA.
func Paper() Config {
	c := Quick()
	c.Config = pair.Paper()
	c.Prompts = 500
	c.MaxTokens = 64
	c.BatchSize = 16
	return c
}

// Preset returns the named preset: "tiny", "small" (also "") or "paper".
func Preset(name string) (Config, error) { return run.SelectPreset(name, Tiny, Small, Paper) }

// Validate reports the first problem of the configuration, naming its key.
func (c Config) Validate() error {
	if err := pair.CheckCorpora(len(c.Corpora), func(i int) (string, bool) {
		return c.Corpora[i].Source, c.Corpora[i].Optional
	}); err != nil {
		return err
	}
	if err := c.Config.Validate(); err != nil {
		return err
	}
	switch {
	case c.Prompts <= 0:
		return errors.Errorf("prompts=%d, want > 0", c.Prompts)
	case c.MaxTokens < 4:
		return errors.Errorf("max_tokens=%d, want ≥ 4", c.MaxTokens)
	case c.OverlapK <= 0:
		return errors.Errorf("overlap_k=%d, want > 0", c.OverlapK)
	case c.BatchSize <= 0:
		return errors.Errorf("batch_size=%d, want > 0", c.BatchSize)
	}
	for _, cc := range c.Corpora {
		if cc.Source == lmdata.SourceBrown && c.EvalSeed != 0 && c.BrownDocs <= 0 {
			return errors.Errorf("brown_docs=%d with \"brown\" in corpora; want the number of documents of its "+
				"evaluation split to cut prompts from (> 0), or eval_seed=0", c.BrownDocs)
		}
	}
	typos := []string{data.PerturbSwap, data.PerturbDrop, data.PerturbInsert}
	for i, p := range c.Perturbations {
		if !slices.Contains(typos, p) {
			return errors.Errorf("perturbations[%d]=%q, want %q, %q or %q (synonyms come from corpora[].synonyms)", i,
				p, data.PerturbSwap, data.PerturbDrop, data.PerturbInsert)
		}
	}
	return nil
}
