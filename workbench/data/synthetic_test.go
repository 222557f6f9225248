package data

import (
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

func smallSynthetic(t *testing.T, numDocs int) (*Corpus, SyntheticConfig) {
	t.Helper()
	cfg := DefaultSyntheticConfig()
	cfg.NumDocs = numDocs
	c, err := Synthetic(cfg)
	require.NoError(t, err)
	return c, cfg
}

func TestSynthetic_DeterministicForSeed(t *testing.T) {
	a, cfg := smallSynthetic(t, 50)
	b, _ := smallSynthetic(t, 50)
	require.Equal(t, a, b, "same config must give the same corpus and labels")

	cfg.Seed++
	other, err := Synthetic(cfg)
	require.NoError(t, err)
	require.NotEqual(t, a.Texts, other.Texts, "another seed must give another corpus")

	// Document i depends only on (seed, i): a smaller corpus is a prefix.
	prefix, _ := smallSynthetic(t, 7)
	require.Equal(t, a.Texts[:7], prefix.Texts)
	require.Equal(t, a.Labels[:7], prefix.Labels)
}

func TestSynthetic_LabelsAreValid(t *testing.T) {
	c, cfg := smallSynthetic(t, 300)
	require.NoError(t, c.Validate())
	require.Equal(t, cfg.Concepts(), c.Concepts)
	for d, l := range c.Labels {
		text := c.Texts[d]
		nSent := len(l.Sentences)
		require.GreaterOrEqual(t, nSent, cfg.MinSentences)
		require.LessOrEqual(t, nSent, cfg.MaxSentences)
		var joined []string
		for _, s := range l.Sentences {
			sent := text[s.Start:s.End]
			require.True(t, unicode.IsUpper(rune(sent[0])), "doc %d sentence %q must start with a capital", d, sent)
			require.True(t, strings.HasSuffix(sent, "."), "doc %d sentence %q must end with a period", d, sent)
			joined = append(joined, sent)
		}
		require.Equal(t, text, strings.Join(joined, " "), "sentence spans must tile doc %d", d)
		for w := range l.Starts {
			word := text[l.Starts[w]:l.Ends[w]]
			require.NotContains(t, word, " ", "doc %d word %d", d, w)
		}
	}
}

// Gender, country and topic are document latents: every word that marks one of them must mark the document's value.
func TestSynthetic_DocumentLatentsAreConsistent(t *testing.T) {
	c, _ := smallSynthetic(t, 300)
	for d, l := range c.Labels {
		for _, ci := range []int{ConceptGender, ConceptCountry, ConceptTopic} {
			latent := l.InForce[ci][0]
			require.GreaterOrEqual(t, latent, int16(0))
			marked := 0
			for w := range l.Starts {
				require.Equal(t, latent, l.InForce[ci][w], "doc %d concept %d word %d", d, ci, w)
				if m := l.Marked[ci][w]; m >= 0 {
					marked++
					require.Equal(t, latent, m, "doc %d: word %q marks %s=%d, document has %d",
						d, c.Texts[d][l.Starts[w]:l.Ends[w]], c.Concepts[ci].Name, m, latent)
				}
			}
			if ci != ConceptTopic { // the introduction always names the referent and a city
				require.Positive(t, marked, "doc %d never marks %s", d, c.Concepts[ci].Name)
			}
		}
	}
}

func TestSynthetic_AgreementsAreMinimalPairs(t *testing.T) {
	c, cfg := smallSynthetic(t, 300)
	lex, err := synthLexicon()
	require.NoError(t, err)
	mainDistances := map[int]int{}
	for d, l := range c.Labels {
		text := c.Texts[d]
		for _, a := range l.Agreements {
			require.Contains(t, []int{ConceptNumber, ConceptGender}, a.Concept)
			require.Equal(t, int(a.Target-a.Controller), a.Distance)
			target := text[l.Starts[a.Target]:l.Ends[a.Target]]
			require.Equal(t, a.Value, l.Marked[a.Concept][a.Target], "doc %d: target %q", d, target)
			if ctrl := l.Marked[a.Concept][a.Controller]; ctrl >= 0 { // names do not mark number
				require.Equal(t, a.Value, ctrl, "doc %d: controller/target disagree", d)
			}
			alt, ok := lex[a.Alternative]
			require.True(t, ok, "alternative %q not in the lexicon", a.Alternative)
			require.Equal(t, 1-a.Value, alt[a.Concept], "alternative %q of %q must mark the other value", a.Alternative, target)
			if a.Concept == ConceptNumber {
				require.Equal(t, a.Value, l.InForce[ConceptNumber][a.Target])
			}
			if di := slices.Index(cfg.Distances, a.Distance); di >= 0 {
				require.Equal(t, int16(di), l.Marked[ConceptAgreement][a.Target])
			} else {
				require.Equal(t, int16(-1), l.Marked[ConceptAgreement][a.Target])
			}
		}
		// Each sentence's agreement label is in force on exactly distance+1 consecutive words. With 1 among the
		// distances every sentence has one: introductions and travel sentences at distance 1, the others at k.
		for _, s := range l.Sentences {
			di := s.Values[ConceptAgreement]
			require.GreaterOrEqual(t, di, int16(0), "doc %d sentence %q has no main agreement", d, text[s.Start:s.End])
			n := 0
			for w := range l.Starts {
				if l.Starts[w] >= s.Start && l.Ends[w] <= s.End && l.InForce[ConceptAgreement][w] == di {
					n++
				}
			}
			require.Equal(t, cfg.Distances[di]+1, n, "doc %d sentence %q", d, text[s.Start:s.End])
			mainDistances[cfg.Distances[di]]++
		}
	}
	for _, k := range cfg.Distances {
		require.Greater(t, mainDistances[k], 100, "distance %d is rarely produced: %v", k, mainDistances)
	}
}

func TestSynthetic_ConfigurableDistances(t *testing.T) {
	cfg := DefaultSyntheticConfig()
	cfg.NumDocs = 100
	cfg.Distances = []int{2, 7, MaxDistance}
	c, err := Synthetic(cfg)
	require.NoError(t, err)
	require.Equal(t, []string{"d2", "d7", "d32"}, c.Concepts[ConceptAgreement].Values)
	seen := map[int]bool{}
	for _, l := range c.Labels {
		for _, a := range l.Agreements {
			seen[a.Distance] = true
			if a.Concept == ConceptGender { // gender dependencies only come from the distance-k construction
				require.Contains(t, cfg.Distances, a.Distance)
			}
		}
	}
	for _, k := range cfg.Distances {
		require.True(t, seen[k], "no agreement at distance %d", k)
	}
}

// Every concept value occurs, and the document latents are near uniform (independent uniform draws).
func TestSynthetic_SentenceLabelsCoverAllValues(t *testing.T) {
	c, _ := smallSynthetic(t, 2000)
	for ci, k := range c.Concepts {
		counts := make([]int, len(k.Values))
		docCounts := make([]int, len(k.Values))
		for _, l := range c.Labels {
			for _, s := range l.Sentences {
				if v := s.Values[ci]; v >= 0 {
					counts[v]++
				}
			}
			if v := l.InForce[ci][0]; ci <= ConceptTopic {
				docCounts[v]++
			}
		}
		for v, n := range counts {
			require.Positive(t, n, "concept %s value %s never labels a sentence", k.Name, k.Values[v])
		}
		if ci <= ConceptTopic {
			// Binomial(2000, 1/V): stderr <= sqrt(2000/4) ≈ 22; allow 5 stderr.
			want := float64(len(c.Labels)) / float64(len(k.Values))
			for v, n := range docCounts {
				require.InDelta(t, want, float64(n), 5*22.4, "concept %s value %s", k.Name, k.Values[v])
			}
		}
	}
}

func TestSyntheticWords(t *testing.T) {
	female, err := SyntheticWords("gender", "female")
	require.NoError(t, err)
	for _, w := range []string{"she", "She", "her", "herself", "queen", "queens", "women", "Mary"} {
		require.Contains(t, female, w)
	}
	require.NotContains(t, female, "he")
	plural, err := SyntheticWords("number", "plural")
	require.NoError(t, err)
	require.Contains(t, plural, "queens")
	require.Contains(t, plural, "play")
	require.NotContains(t, plural, "plays")
	france, err := SyntheticWords("country", "France")
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"France", "French", "Paris", "Lyon", "Marseille", "Toulouse"}, france)

	_, err = SyntheticWords("agreement", "d1")
	require.ErrorContains(t, err, "not a lexical concept")
	_, err = SyntheticWords("colour", "red")
	require.ErrorContains(t, err, "colour")
	_, err = SyntheticWords("topic", "poetry")
	require.ErrorContains(t, err, "poetry")
}

func TestSyntheticLexicon_NoWordMarksTwoValues(t *testing.T) {
	_, err := buildLexicon()
	require.NoError(t, err)
}

func TestSyntheticConfig_Validate(t *testing.T) {
	require.NoError(t, DefaultSyntheticConfig().Validate())
	for name, tc := range map[string]struct {
		edit func(*SyntheticConfig)
		want string
	}{
		"no docs":        {func(c *SyntheticConfig) { c.NumDocs = 0 }, "num_docs=0"},
		"min > max":      {func(c *SyntheticConfig) { c.MinSentences, c.MaxSentences = 5, 4 }, "min_sentences=5"},
		"zero sentences": {func(c *SyntheticConfig) { c.MinSentences = 0 }, "min_sentences=0"},
		"no distances":   {func(c *SyntheticConfig) { c.Distances = nil }, "distances is empty"},
		"distance 0":     {func(c *SyntheticConfig) { c.Distances = []int{0} }, "distances[0]=0"},
		"distance big":   {func(c *SyntheticConfig) { c.Distances = []int{1, MaxDistance + 1} }, "distances[1]=33"},
		"duplicate":      {func(c *SyntheticConfig) { c.Distances = []int{4, 4} }, "listed twice"},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := DefaultSyntheticConfig()
			tc.edit(&cfg)
			_, err := Synthetic(cfg)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// BenchmarkSynthetic reports the generator's throughput in MB of text per second (labels included in the work).
func BenchmarkSynthetic(b *testing.B) {
	cfg := DefaultSyntheticConfig()
	c, err := Synthetic(cfg)
	require.NoError(b, err)
	b.SetBytes(c.NumBytes())
	b.ResetTimer()
	for range b.N {
		if _, err := Synthetic(cfg); err != nil {
			b.Fatal(err)
		}
	}
}
