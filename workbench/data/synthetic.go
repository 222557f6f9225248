package data

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/pkg/errors"
)

// Concept indices of the synthetic corpus, in SyntheticConfig.Concepts order.
const (
	ConceptGender    = iota // the document referent's gender: male, female
	ConceptCountry          // the country the document is set in (its cities, name and demonym)
	ConceptTopic            // sport, food, music, science, art, farming
	ConceptNumber           // grammatical number of the sentence's subject: singular, plural
	ConceptAgreement        // distance class of an agreement dependency: "d1", "d4", ... (SyntheticConfig.Distances)
	numSynthConcepts
)

// MaxDistance is the largest agreement distance (in words) the synthetic grammar can realise.
const MaxDistance = 32

// SyntheticConfig configures the synthetic concept corpus. Start from DefaultSyntheticConfig.
type SyntheticConfig struct {
	Seed         uint64 `json:"seed"`          // same seed, same corpus (on every platform and Go release)
	NumDocs      int    `json:"num_docs"`      // > 0
	MinSentences int    `json:"min_sentences"` // sentences per document, >= 1 (the first introduces the referent)
	MaxSentences int    `json:"max_sentences"` // >= MinSentences
	Distances    []int  `json:"distances"`     // agreement distances in words, distinct, each in [1, MaxDistance]
}

// DefaultSyntheticConfig returns the default synthetic corpus: 2000 documents of 4–8 sentences (about 0.58 MB,
// 112k words), agreement at distances 1, 4 and 12 words.
func DefaultSyntheticConfig() SyntheticConfig {
	return SyntheticConfig{Seed: 1, NumDocs: 2000, MinSentences: 4, MaxSentences: 8, Distances: []int{1, 4, 12}}
}

// Validate reports the first invalid field.
func (c SyntheticConfig) Validate() error {
	if c.NumDocs <= 0 {
		return errors.Errorf("synthetic corpus: num_docs=%d, want > 0", c.NumDocs)
	}
	if c.MinSentences < 1 || c.MaxSentences < c.MinSentences {
		return errors.Errorf("synthetic corpus: min_sentences=%d, max_sentences=%d, want 1 <= min <= max",
			c.MinSentences, c.MaxSentences)
	}
	if len(c.Distances) == 0 {
		return errors.New("synthetic corpus: distances is empty, want at least one agreement distance")
	}
	for i, d := range c.Distances {
		if d < 1 || d > MaxDistance {
			return errors.Errorf("synthetic corpus: distances[%d]=%d, want in [1, %d]", i, d, MaxDistance)
		}
		if slices.Index(c.Distances, d) != i {
			return errors.Errorf("synthetic corpus: distance %d listed twice", d)
		}
	}
	return nil
}

// Concepts returns the label schema of the synthetic corpus, indexed by ConceptGender ... ConceptAgreement.
func (c SyntheticConfig) Concepts() []Concept {
	out := make([]Concept, numSynthConcepts)
	out[ConceptGender] = Concept{Name: "gender", Values: slices.Clone(genderValues)}
	out[ConceptCountry] = Concept{Name: "country"}
	for _, k := range countries {
		out[ConceptCountry].Values = append(out[ConceptCountry].Values, k.name)
	}
	out[ConceptTopic] = Concept{Name: "topic"}
	for _, t := range topics {
		out[ConceptTopic].Values = append(out[ConceptTopic].Values, t.name)
	}
	out[ConceptNumber] = Concept{Name: "number", Values: slices.Clone(numberValues)}
	out[ConceptAgreement] = Concept{Name: "agreement"}
	for _, d := range c.Distances {
		out[ConceptAgreement].Values = append(out[ConceptAgreement].Values, fmt.Sprintf("d%d", d))
	}
	return out
}

// Synthetic generates the synthetic concept corpus.
//
// Each document has latent variables drawn independently and uniformly: a referent (gender, name, a gendered
// role noun), a country and a topic. Its first sentence introduces the referent ("Mary is a queen from Lyon.");
// the others are drawn from three constructions, each with an agreement distance k drawn from cfg.Distances:
//   - number agreement: a subject (singular or plural), exactly k-1 filler words, then a verb that agrees with
//     it ("The chefs from Lyon in the evening often bake the cake.");
//   - gender agreement: the referent, then a possessive or reflexive exactly k words later that agrees with
//     its gender ("She bakes in the morning for her friends.");
//   - travel: the referent visits another city of the same country, or people of that country act on the topic.
//
// Labels (see DocLabels): gender, country and topic are document latents, in force on every word; number is in
// force over each sentence (its subject's number); agreement is in force from the controller to the target of
// each sentence's main dependency. Marked labels depend only on the word (SyntheticWords lists them); the
// agreement concept is marked on every agreement target whose distance is one of cfg.Distances.
// Every dependency, with the wrong form of its target, is listed in DocLabels.Agreements.
//
// Document i depends only on (cfg.Seed, i) and the sentence settings, so a smaller NumDocs gives a prefix.
func Synthetic(cfg SyntheticConfig) (*Corpus, error) {
	return SyntheticContext(context.Background(), cfg)
}

// SyntheticContext is Synthetic that stops between documents once ctx is done and then returns ctx's error.
func SyntheticContext(ctx context.Context, cfg SyntheticConfig) (*Corpus, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	lex, err := synthLexicon()
	if err != nil {
		return nil, err
	}
	c := &Corpus{
		Source:   fmt.Sprintf("synthetic(seed=%d, docs=%d)", cfg.Seed, cfg.NumDocs),
		Texts:    make([]string, cfg.NumDocs),
		Labels:   make([]DocLabels, cfg.NumDocs),
		Concepts: cfg.Concepts(),
	}
	workers := min(runtime.GOMAXPROCS(0), cfg.NumDocs)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < cfg.NumDocs && ctx.Err() == nil; i += workers {
				g := docGen{cfg: &cfg, lex: lex, r: newRNG(cfg.Seed, uint64(i))}
				c.Texts[i], c.Labels[i] = g.document()
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, errors.WithMessage(err, "data.Synthetic")
	}
	return c, nil
}

// lexMarks are the Marked labels of one word, indexed by concept (-1: not marked).
type lexMarks [numSynthConcepts]int16

var noMarks = lexMarks{-1, -1, -1, -1, -1}

// synthLexicon maps every word form of the synthetic grammar to the concept values it marks.
var synthLexicon = sync.OnceValues(buildLexicon)

func buildLexicon() (map[string]lexMarks, error) {
	lex := make(map[string]lexMarks)
	var conflict error
	add := func(w string, c int, v int) {
		m, ok := lex[w]
		if !ok {
			m = noMarks
		}
		if m[c] >= 0 && m[c] != int16(v) && conflict == nil {
			conflict = errors.Errorf("synthetic lexicon: word %q marks concept %d with both %d and %d", w, c, m[c], v)
		}
		m[c] = int16(v)
		lex[w] = m
	}
	for g := range 2 {
		for _, w := range []string{pronounSubj[g], capitalize(pronounSubj[g]), pronounRefl[g]} {
			add(w, ConceptGender, g)
			add(w, ConceptNumber, singular)
		}
		add(pronounPoss[g], ConceptGender, g)
		add(capitalize(pronounPoss[g]), ConceptGender, g)
		for i := range roles {
			add(roles[i][g], ConceptGender, g)
			add(roles[i][g], ConceptNumber, singular)
			add(rolesPlural[i][g], ConceptGender, g)
			add(rolesPlural[i][g], ConceptNumber, plural)
		}
		for _, n := range names[g] {
			add(n, ConceptGender, g)
		}
	}
	for _, w := range companions {
		add(w, ConceptNumber, plural)
	}
	for ci, k := range countries {
		add(k.name, ConceptCountry, ci)
		add(k.demonym, ConceptCountry, ci)
		for _, city := range k.cities {
			add(city, ConceptCountry, ci)
		}
	}
	for ti, t := range topics {
		for _, pair := range append(slices.Clone(t.agents), t.verbs...) {
			for num, w := range pair {
				add(w, ConceptTopic, ti)
				add(w, ConceptNumber, num)
			}
		}
		for _, n := range t.things {
			add(n.sg, ConceptTopic, ti)
			if n.pl != "" {
				add(n.sg, ConceptNumber, singular)
				add(n.pl, ConceptTopic, ti)
				add(n.pl, ConceptNumber, plural)
			}
		}
		for _, p := range t.places {
			add(p, ConceptTopic, ti)
		}
	}
	for _, pair := range append(slices.Clone(travelVerbs), copula) {
		for num, w := range pair {
			add(w, ConceptNumber, num)
		}
	}
	return lex, conflict
}

// SyntheticWords lists the word forms that mark the given value of a concept in the synthetic corpus (as they
// appear in text, sentence-initial capitals included), sorted. The agreement concept is not lexical: it returns
// an error, as do unknown names.
func SyntheticWords(concept, value string) ([]string, error) {
	schema := DefaultSyntheticConfig().Concepts()
	ci := slices.IndexFunc(schema, func(k Concept) bool { return k.Name == concept })
	if ci < 0 || ci == ConceptAgreement {
		return nil, errors.Errorf("SyntheticWords: concept %q is not a lexical concept of the synthetic corpus", concept)
	}
	vi := slices.Index(schema[ci].Values, value)
	if vi < 0 {
		return nil, errors.Errorf("SyntheticWords: concept %q has no value %q (has %v)", concept, value, schema[ci].Values)
	}
	lex, err := synthLexicon()
	if err != nil {
		return nil, err
	}
	var out []string
	for w, m := range lex {
		if m[ci] == int16(vi) {
			out = append(out, w)
		}
	}
	slices.Sort(out)
	return out, nil
}

func capitalize(w string) string {
	if w == "" || w[0] < 'a' || w[0] > 'z' {
		return w
	}
	return string(w[0]-'a'+'A') + w[1:]
}

// article returns "a" or "an" for the following word.
func article(next string) string {
	switch next[0] {
	case 'a', 'e', 'i', 'o', 'u':
		return "an"
	}
	return "a"
}
