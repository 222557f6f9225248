package suppression

import (
	"slices"
	"strings"
	"sync"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/data/brown"
	"github.com/protolab/protolab/workbench/data/wordnet"
	"github.com/protolab/protolab/workbench/lmdata"
)

// Sources returns the corpora the study runs on: Corpora, or {data.source} when Corpora is empty.
func (c Config) Sources() []string {
	if len(c.Corpora) == 0 {
		return []string{c.Data.Source}
	}
	return slices.Clone(c.Corpora)
}

// isBrown reports whether source names the Brown corpus (lmdata.SourceBrown, as lmdata matches it).
func isBrown(source string) bool { return strings.EqualFold(source, lmdata.SourceBrown) }

// isSynthetic reports whether source names the synthetic concept corpus.
func isSynthetic(source string) bool { return strings.EqualFold(source, lmdata.SourceSynthetic) }

// validateCorpora checks corpora: the first is data.source, none repeats, and each is the synthetic or the Brown
// corpus (the only ones with evaluation documents and a concept the study can define).
func (c Config) validateCorpora() error {
	for i, src := range c.Sources() {
		if !isSynthetic(src) && !isBrown(src) {
			return errors.Errorf("corpus %q: the study runs on the %q corpus (a concept of its labels) or the %q "+
				"corpus (a WordNet supersense), which have fresh evaluation documents; set data.source or corpora "+
				"to them", src, lmdata.SourceSynthetic, lmdata.SourceBrown)
		}
		if len(c.Corpora) == 0 {
			continue
		}
		if i == 0 && src != c.Data.Source {
			return errors.Errorf("corpora[0]=%q differs from data.source=%q: the first corpus is the configured "+
				"model's; set data.source=%q or put %q first", src, c.Data.Source, src, c.Data.Source)
		}
		if slices.IndexFunc(c.Corpora, func(s string) bool { return strings.EqualFold(s, src) }) != i {
			return errors.Errorf("corpora[%d]=%q repeats a corpus", i, src)
		}
	}
	return nil
}

// validateBrown checks what the Brown corpus needs when it is one of the corpora: a concept (suppress.supersense or
// suppress.keywords), brown_docs and prompt_words, and evaluation seeds whose parity names the right split: the
// protocol's prompt and text seeds odd (the test split), the held-back ones even (the held-out split).
func (c Config) validateBrown() error {
	if !slices.ContainsFunc(c.Sources(), isBrown) {
		return nil
	}
	s := c.Suppress
	switch {
	case len(s.Keywords) == 0 && s.Supersense == "":
		return errors.New("suppress.supersense is empty with the corpus \"brown\", which has no labels: name the " +
			"WordNet noun supersense whose words are the concept (e.g. noun.food), or give suppress.keywords")
	case s.Supersense != "" && (!strings.HasPrefix(s.Supersense, "noun.") ||
		!slices.Contains(wordnet.LexNames[:], s.Supersense)):
		return errors.Errorf("suppress.supersense=%q is not a WordNet noun supersense; want a noun.* entry of "+
			"wordnet.LexNames, e.g. noun.food", s.Supersense)
	case s.BrownDocs <= 0:
		return errors.Errorf("suppress.brown_docs=%d with the corpus \"brown\"; want the number of documents of each "+
			"Brown evaluation split that prompts and perplexity text come from (> 0; the test split has 28)",
			s.BrownDocs)
	case s.PromptWords <= 0:
		return errors.Errorf("suppress.prompt_words=%d with the corpus \"brown\"; want the words kept of each "+
			"prompt sentence (> 0)", s.PromptWords)
	}
	for _, p := range []struct {
		key  string
		seed uint64
		want brown.Split
	}{
		{"suppress.prompt_seed", s.PromptSeed, brown.Test}, {"suppress.text_seed", s.TextSeed, brown.Test},
		{"held_back.prompt_seed", c.HeldBack.PromptSeed, brown.Heldout},
		{"held_back.text_seed", c.HeldBack.TextSeed, brown.Heldout},
	} {
		if p.seed == 0 || lm.EvalSplitOf(p.seed) == p.want {
			continue
		}
		parity := "an odd"
		if p.want == brown.Heldout {
			parity = "an even"
		}
		return errors.Errorf("%s=%d reads the Brown %s split; on the Brown corpus it must read the %s split, "+
			"which %s seed reads (lm.EvalSplitOf): set %s seed", p.key, p.seed, lm.EvalSplitOf(p.seed), p.want,
			parity, parity)
	}
	return nil
}

// keywordsFor returns the concept's words on corpus source: suppress.keywords when given, else on the Brown corpus
// the words of suppress.supersense (supersenseWords) and on the synthetic corpus the words of concept=value
// (data.SyntheticWords).
func (s Settings) keywordsFor(source string) ([]string, error) {
	switch {
	case len(s.Keywords) > 0:
		return slices.Clone(s.Keywords), nil
	case isBrown(source):
		if s.Supersense == "" {
			return nil, errors.New("suppress.supersense is empty: the Brown corpus has no labels; name a WordNet " +
				"noun supersense (e.g. noun.food) or give suppress.keywords")
		}
		return supersenseWords(s.Supersense)
	}
	return data.SyntheticWords(s.Concept, s.Value)
}

// wordnetWords caches supersenseWords by WordNet folder and supersense: the database takes a moment to parse, and a
// study asks once per model.
var wordnetWords struct {
	sync.Mutex
	m map[[2]string][]string
}

// supersenseWords returns wordnet.DB.SupersenseWords(supersense) of the database wordnet.Dir finds (`make wordnet`
// or $PROTOLAB_WORDNET), loaded once per folder and supersense.
func supersenseWords(supersense string) ([]string, error) {
	dir, err := wordnet.Dir()
	if err != nil {
		return nil, errors.WithMessagef(err, "suppression: the concept %s needs WordNet", supersense)
	}
	wordnetWords.Lock()
	defer wordnetWords.Unlock()
	key := [2]string{dir, supersense}
	if w, ok := wordnetWords.m[key]; ok {
		return slices.Clone(w), nil
	}
	db, err := wordnet.Load(dir)
	if err != nil {
		return nil, err
	}
	w, err := db.SupersenseWords(supersense)
	if err != nil {
		return nil, err
	}
	if wordnetWords.m == nil {
		wordnetWords.m = map[[2]string][]string{}
	}
	wordnetWords.m[key] = w
	return slices.Clone(w), nil
}

// ConceptOn names the concept on corpus source, for reports and figures: "topic=food" on the synthetic corpus,
// "WordNet noun.food" on the Brown corpus, or "keywords" when suppress.keywords replaces both.
func (s Settings) ConceptOn(source string) string {
	switch {
	case len(s.Keywords) > 0:
		return "keywords"
	case isBrown(source):
		return "WordNet " + s.Supersense
	}
	return s.Concept + "=" + s.Value
}
