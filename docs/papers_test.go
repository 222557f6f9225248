package docs

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

func TestPapers_ParsesTable(t *testing.T) {
	all, err := Papers()
	require.NoError(t, err)
	require.Greater(t, len(all), 100, "the table has one row per reported number")
	seen := map[string]bool{}
	perPaper := map[string]int{}
	for _, p := range all {
		require.Regexp(t, snakeCase, p.ID)
		require.False(t, seen[p.ID], "duplicate id %s", p.ID)
		seen[p.ID] = true
		require.True(t, strings.HasPrefix(p.ID, p.Paper+"_"), "%s: the id starts with its paper %q", p.ID, p.Paper)
		perPaper[p.Paper]++
		require.NotEmpty(t, p.Quantity, p.ID)
		require.NotEmpty(t, p.Setting, p.ID)
		require.NotEmpty(t, p.Provenance, p.ID)
		if p.HasValue() {
			v, err := strconv.ParseFloat(p.Text, 64)
			require.NoError(t, err, p.ID)
			require.Equal(t, v, p.Value, p.ID)
		} else {
			require.Zero(t, p.Value, p.ID)
			require.Empty(t, p.Uncertainty, "%s: an uncertainty without a value", p.ID)
		}
	}
	require.Len(t, perPaper, 3, "rows for protot, prism and fvec")

	// Papers returns a copy.
	all[0].Value = -1
	again, err := Papers()
	require.NoError(t, err)
	require.NotEqual(t, -1.0, again[0].Value)
}

// TestPapers_DefaultPerplexities pins the rows the brief names, as protot.md §8 writes them.
func TestPapers_DefaultPerplexities(t *testing.T) {
	for id, want := range map[string]float64{"protot_ppl_llama": 78.7, "protot_ppl_mamba": 86.0,
		"protot_ppl_deltanet": 90.4, "protot_ppl_protot": 90.5} {
		p, err := Paper(id)
		require.NoError(t, err)
		require.Equal(t, want, p.Value, id)
		require.Contains(t, p.Setting, "L6 D256", id)
	}
}

// TestPapers_SourcesNameSpecSections checks that every source names a spec file and, after it, sections (§N or §N.M)
// whose headings exist in that file; the first file named is the row's own paper's spec.
func TestPapers_SourcesNameSpecSections(t *testing.T) {
	all, err := Papers()
	require.NoError(t, err)
	for _, p := range all {
		refs := sourceRefs(p.Source)
		require.NotEmpty(t, refs, "%s: source %q names no spec section (want e.g. \"protot.md §8\")", p.ID, p.Source)
		require.Equal(t, paperSpecs[p.Paper], refs[0].file, "%s: source %q", p.ID, p.Source)
		for _, r := range refs {
			_, ok := specSections(t, r.file)[r.section]
			assert.True(t, ok, "%s: source %q: %s has no heading §%s", p.ID, p.Source, r.file, r.section)
		}
	}
}

// TestPapers_ValuesAppearInCitedSections guards against typos: the value as written (with the spec's "−" for a
// minus sign) and every number in the uncertainty occur, as whole numbers, in one of the sections the source cites.
// A value the table derives from the spec's numbers (provenance "derived from a and b") is checked through its
// inputs, which must occur there instead.
func TestPapers_ValuesAppearInCitedSections(t *testing.T) {
	all, err := Papers()
	require.NoError(t, err)
	for _, p := range all {
		var text strings.Builder
		for _, r := range sourceRefs(p.Source) {
			text.WriteString(specSections(t, r.file)[r.section])
		}
		number := regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)
		want := number.FindAllString(p.Uncertainty, -1)
		if inputs, ok := strings.CutPrefix(p.Provenance, "derived from "); ok {
			want = append(want, number.FindAllString(inputs, -1)...)
		} else if p.HasValue() {
			want = append(want, strings.Replace(p.Text, "-", "−", 1))
		}
		for _, num := range want {
			assert.True(t, containsNumber(text.String(), num), "%s: %q does not occur in %s", p.ID, num, p.Source)
		}
	}
}

func TestPaper_UnknownIDListsClosest(t *testing.T) {
	_, err := Paper("protot_ppl_lama")
	require.Error(t, err)
	require.Contains(t, err.Error(), `"protot_ppl_lama"`)
	require.Contains(t, err.Error(), "protot_ppl_llama")
}

func TestSpec_Names(t *testing.T) {
	require.Equal(t, []string{"function_vectors.md", "papers.md", "prism.md", "protot.md"}, SpecNames())
	for _, name := range []string{"protot", "protot.md"} {
		text, err := Spec(name)
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(text, "# Prototype Transformer"), name)
	}
	fv, err := Spec("fvec")
	require.NoError(t, err)
	fv2, err := Spec("function_vectors")
	require.NoError(t, err)
	require.Equal(t, fv, fv2)
	_, err = Spec("protot2")
	require.ErrorContains(t, err, "prism.md")
}

func TestParsePapers_Errors(t *testing.T) {
	header := "| " + strings.Join(columns, " | ") + " |\n|---|---|---|---|---|---|---|---|---|---|\n"
	row := func(id, paper, value string) string {
		return "| " + id + " | " + paper + " | c | q | " + value + " |  |  | s | protot.md §8 | paper |\n"
	}
	for _, tc := range []struct{ text, mention string }{
		{header + row("protot_a", "protot", "1.5") + row("protot_a", "protot", "2"), "already used"},
		{header + row("protot_a", "gpt", "1.5"), `paper "gpt"`},
		{header + row("protot_a", "protot", "−1.5"), "not a number"},
		{header + "| protot_a | protot | c |\n", "3 cells"},
		{strings.Replace(header, "setting", "settings", 1), `lacks column "setting"`},
		{"no table\n", "no table rows"},
	} {
		_, err := parsePapers(tc.text)
		require.ErrorContains(t, err, tc.mention)
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"protot_ppl_lama", "protot_ppl_llama", 1}} {
		require.Equal(t, tc.want, editDistance(tc.a, tc.b), "%q vs %q", tc.a, tc.b)
		require.Equal(t, tc.want, editDistance(tc.b, tc.a), "%q vs %q", tc.b, tc.a)
	}
}

// sourceRef is one "§N" reference of a source, with the spec file named before it.
type sourceRef struct{ file, section string }

var sourceToken = regexp.MustCompile(`([a-z_]+\.md)|§([0-9]+(?:\.[0-9]+)?)`)

// sourceRefs parses "protot.md §8 (protocol §7.1), v1 Table 9" into {protot.md 8} {protot.md 7.1}.
func sourceRefs(source string) []sourceRef {
	var refs []sourceRef
	file := ""
	for _, m := range sourceToken.FindAllStringSubmatch(source, -1) {
		switch {
		case m[1] != "":
			file = m[1]
		case file != "":
			refs = append(refs, sourceRef{file, m[2]})
		}
	}
	return refs
}

// sectionCache holds specSections' answers; the specs are embedded, so they never change.
var sectionCache = map[string]map[string]string{}

var heading = regexp.MustCompile(`^(#{2,4}) ([0-9]+(?:\.[0-9]+)*)\.? `)

// specSections maps the numbered headings of a spec ("## 8. Reported numbers" → "8", "### 7.1 Perplexity" → "7.1")
// to their text: the lines up to the next heading of the same or a higher level.
func specSections(t *testing.T, file string) map[string]string {
	t.Helper()
	if sections, ok := sectionCache[file]; ok {
		return sections
	}
	text, err := Spec(file)
	require.NoError(t, err)
	sections := map[string]string{}
	type open struct {
		level int
		num   string
	}
	var stack []open
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "#") {
			level := len(line) - len(strings.TrimLeft(line, "#"))
			for len(stack) > 0 && stack[len(stack)-1].level >= level {
				stack = stack[:len(stack)-1]
			}
			if m := heading.FindStringSubmatch(line); m != nil {
				stack = append(stack, open{level, m[2]})
				sections[m[2]] = ""
			}
		}
		for _, s := range stack {
			sections[s.num] += line + "\n"
		}
	}
	require.NotEmpty(t, sections, "%s has no numbered headings", file)
	sectionCache[file] = sections
	return sections
}

// containsNumber reports whether num occurs in text with no digit (or "digit.") right before it and no digit (or
// ".digit") right after it, so that "0.8" does not match inside "0.85" or "10.8".
func containsNumber(text, num string) bool {
	isDigit := func(b byte) bool { return b >= '0' && b <= '9' }
	for from := 0; ; {
		i := strings.Index(text[from:], num)
		if i < 0 {
			return false
		}
		i += from
		j := i + len(num)
		before := i > 0 && (isDigit(text[i-1]) || text[i-1] == '.' && i > 1 && isDigit(text[i-2]))
		after := j < len(text) && (isDigit(text[j]) || text[j] == '.' && j+1 < len(text) && isDigit(text[j+1]))
		if !before && !after {
			return true
		}
		from = i + 1
	}
}
