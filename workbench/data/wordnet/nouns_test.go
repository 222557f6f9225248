package wordnet

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// foodFixture writes the fixture database with six more noun synsets and the index.noun and noun.exc that order
// their senses: bread, loaf and berry are first a food; fish is first an animal and table first furniture, each with
// a second, food sense; "hot dog" is a food of two words; "apple" keeps the fixture's single food synset.
func foodFixture(t *testing.T) string {
	extra := []string{
		`13 n 01 bread 0 000 | food made from dough of flour or meal`,
		`13 n 02 loaf 0 berry 0 000 | a shaped mass of baked bread; a small fruit (a fixture synset of two lemmas)`,
		`05 n 01 fish 0 000 | any of various cold-blooded aquatic vertebrates`,
		`13 n 02 fish 0 table 0 000 | the flesh of fish used as food; food or meals in general`,
		`06 n 01 table 0 000 | a piece of furniture having a smooth flat top`,
		`13 n 01 hot_dog 0 000 | a frankfurter served hot on a bun`,
	}
	dir := writeFixture(t, func(file, content string) string {
		if file != "data.noun" {
			return content
		}
		for _, l := range extra {
			content += fmt.Sprintf("%08d %s  \n", len(content), l)
		}
		return content
	})
	db, err := Load(dir)
	require.NoError(t, err)
	// offsets returns the offsets of the noun synsets of lemma whose gloss starts with each prefix, in that order.
	offsets := func(lemma string, glosses ...string) string {
		var out []string
		for _, g := range glosses {
			for _, s := range db.Lookup(lemma) {
				if s.Type == 'n' && strings.HasPrefix(s.Definition, g) {
					out = append(out, fmt.Sprintf("%08d", s.Offset))
				}
			}
		}
		require.Len(t, out, len(glosses), lemma)
		return fmt.Sprintf("%d 1 @ %d %d %s", len(out), len(out), len(out), strings.Join(out, " "))
	}
	index := strings.Join([]string{
		"  1 This software and database is being provided to you, the LICENSEE, by  ",
		"apple n " + offsets("apple", "fruit"),
		"berry n " + offsets("berry", "a shaped"),
		"bread n " + offsets("bread", "food made"),
		"city n " + offsets("city", "a large"),
		"fish n " + offsets("fish", "any of", "the flesh"),
		"hot_dog n " + offsets("hot dog", "a frankfurter"),
		"loaf n " + offsets("loaf", "a shaped"),
		"table n " + offsets("table", "a piece", "the flesh"),
	}, "\n") + "\n"
	exc := "fishes fish\nloaves loaf\nmen man\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "index.noun"), []byte(index), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "noun.exc"), []byte(exc), 0o644))
	return dir
}

// TestSupersenseWords_FirstSenseRule is the rule on a hand case: a lemma whose first sense is a food belongs with its
// regular and irregular plurals (bread, breads; loaf, loafs, loaves; berry, berries; apple, apples); fish and table,
// first an animal and furniture, do not, though a later sense of each is a food; the two-word "hot dog" does not
// (keywords are single words); no capitalised form is listed.
func TestSupersenseWords_FirstSenseRule(t *testing.T) {
	db, err := Load(foodFixture(t))
	require.NoError(t, err)
	got, err := db.SupersenseWords("noun.food")
	require.NoError(t, err)
	require.Equal(t, []string{"apple", "apples", "berries", "berry", "bread", "breads", "loaf", "loafs", "loaves"}, got)
	loc, err := db.SupersenseWords("noun.location")
	require.NoError(t, err)
	require.Equal(t, []string{"cities", "city"}, loc)

	_, err = db.SupersenseWords("verb.consumption")
	require.ErrorContains(t, err, `"verb.consumption" is not a noun lexicographer file`)
	_, err = db.SupersenseWords("noun.snacks")
	require.ErrorContains(t, err, "noun.snacks")
	require.NoError(t, os.Remove(filepath.Join(db.Dir, "noun.exc")))
	_, err = db.SupersenseWords("noun.food")
	require.ErrorContains(t, err, "noun.exc")
	require.ErrorContains(t, err, "make wordnet")
}

func TestPlural(t *testing.T) {
	for w, want := range map[string]string{"bread": "breads", "glass": "glasses", "peach": "peaches", "dish": "dishes",
		"box": "boxes", "berry": "berries", "day": "days", "pie": "pies"} {
		require.Equal(t, want, plural(w), w)
	}
}

// TestSupersenseWords_RealWordNet is the rule on the installed WordNet 3.0 (`make wordnet`): bread, coffee and dinner
// are first a food; fish (first an animal) and table (first furniture) are not, though each has a food sense;
// loaves comes from noun.exc.
func TestSupersenseWords_RealWordNet(t *testing.T) {
	dir, err := Dir()
	if err != nil {
		t.Skipf("WordNet 3.0 database not installed, run `make wordnet` to enable this test: %v", err)
	}
	db, err := Load(dir)
	require.NoError(t, err)
	got, err := db.SupersenseWords("noun.food")
	require.NoError(t, err)
	for _, w := range []string{"bread", "breads", "coffee", "dinner", "loaves", "potatoes", "berries"} {
		require.Contains(t, got, w)
	}
	for _, w := range []string{"fish", "table", "course", "water", "Bread", "hot dog"} {
		require.NotContains(t, got, w)
	}
	require.Contains(t, db.Supersenses("fish"), "noun.food", "fish has a food sense, not first")
}
