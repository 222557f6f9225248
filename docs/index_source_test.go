package docs

import (
	"regexp"
	"strings"
	"testing"
)

// declares reports whether the Go source src declares name: "Name" as a func, a method, a type, or a const or var
// (alone or in a grouped declaration); "Type.Name" as a method of Type or a field of the struct Type.
func declares(src, name string) bool {
	q := regexp.QuoteMeta
	if typ, member, ok := strings.Cut(name, "."); ok {
		method := regexp.MustCompile(`(?m)^func \((?:\w+\s+)?\*?` + q(typ) + `(?:\[[^\]]*\])?\)\s*` + q(member) + `[\[(]`)
		if method.MatchString(src) {
			return true
		}
		return structHasField(src, typ, member)
	}
	for _, re := range []string{
		`(?m)^func ` + q(name) + `[\[(]`,
		`(?m)^func \([^)]*\)\s*` + q(name) + `[\[(]`,
		`(?m)^type ` + q(name) + `\b`,
		`(?m)^(?:const|var) ` + q(name) + `\b`,
	} {
		if regexp.MustCompile(re).MatchString(src) {
			return true
		}
	}
	member := regexp.MustCompile(`(?m)^\s+(?:\w+\s*,\s*)*` + q(name) + `\b`)
	for _, block := range regexp.MustCompile(`(?ms)^(?:const|var|type) \((.*?)^\)`).FindAllStringSubmatch(src, -1) {
		if member.MatchString(block[1]) {
			return true
		}
	}
	return false
}

// structHasField reports whether src declares `type typ struct { … }` with a field named field.
func structHasField(src, typ, field string) bool {
	loc := regexp.MustCompile(`(?m)^type ` + regexp.QuoteMeta(typ) + `(?:\[[^\]]*\])? struct\s*\{`).FindStringIndex(src)
	if loc == nil {
		return false
	}
	depth, end := 1, len(src)
	for i := loc[1]; i < len(src); i++ {
		if src[i] == '{' {
			depth++
		} else if src[i] == '}' {
			if depth--; depth == 0 {
				end = i
				break
			}
		}
	}
	body := src[loc[1]:end]
	re := regexp.MustCompile(`(?m)(?:^|[{;])\s*(?:\w+\s*,\s*)*` + regexp.QuoteMeta(field) + `[\s,]`)
	return re.MatchString(body)
}

// linksBack reports whether doc names docs/spec/<file> and a section reference to it that holds section: the section
// itself, a parent of it, or a range "§a–§b" / "§a–b" around it. A § reference belongs to the spec file named last
// before it.
func linksBack(doc, file, section string) bool {
	// Join wrapped comment lines, so that a path broken after "docs/spec/" still reads as one.
	doc = strings.ReplaceAll(indexCommentBreak.ReplaceAllString(doc, " "), "docs/spec/ ", "docs/spec/")
	if !strings.Contains(doc, "docs/spec/"+file) {
		return false
	}
	key := sectionKey(section)
	current := ""
	for _, m := range indexSpecRef.FindAllStringSubmatch(doc, -1) {
		switch {
		case m[1] != "":
			current = m[1] + ".md"
		case current != file:
		case m[3] == "":
			if m[2] == section || sectionKey(m[2]) == [2]int{key[0], -1} {
				return true
			}
		default:
			lo, hi := sectionKey(m[2]), sectionKey(m[3])
			if hi[1] < 0 {
				hi[1] = 1 << 30 // "§6" as an upper end holds all of §6
			}
			if !sectionLess(section, m[2]) && (key[0] < hi[0] || key[0] == hi[0] && key[1] <= hi[1]) && lo[0] <= key[0] {
				return true
			}
		}
	}
	return false
}

// TestIndex_Helpers checks the declaration search and the back-link rule on hand-made cases.
func TestIndex_Helpers(t *testing.T) {
	src := "package p\n\nfunc Mix(x int) int { return x }\n\nfunc (c *Config) Dv(w int) int { return w }\n\n" +
		"func (m recurrentMixer[C]) Step() {}\n\ntype Config struct {\n\tNumerics string `json:\"numerics\"`\n" +
		"\tA, B int\n}\n\ntype Pair struct{ W1, W2 int }\n\nconst (\n\tFormDense = \"dense\" // Form A\n)\n\n" +
		"var KnownMixers = []string{}\n"
	for name, want := range map[string]bool{
		"Mix": true, "Dv": true, "Config": true, "Config.Dv": true, "Config.Numerics": true, "Config.B": true,
		"Pair.W2": true, "recurrentMixer.Step": true, "FormDense": true, "KnownMixers": true,
		"Mi": false, "Config.Mix": false, "Pair.W3": false, "FormChunked": false, "Numerics": false, "dense": false,
	} {
		if got := declares(src, name); got != want {
			t.Errorf("declares(%q) = %v, want %v", name, got, want)
		}
	}
	doc := "// as specified in docs/spec/protot.md §2–§6 and §7.3–7.5 (see docs/spec/prism.md §9), and protot.md §9.1.\n"
	for section, want := range map[string]bool{
		"2": true, "2.3": true, "6": true, "4.6": true, "7.4": true, "9.1": true,
		"1": false, "7": false, "7.1": false, "7.6": false, "9": false, "9.2": false,
	} {
		if got := linksBack(doc, "protot.md", section); got != want {
			t.Errorf("linksBack(§%s) = %v, want %v", section, got, want)
		}
	}
	if !linksBack(doc, "prism.md", "9") || linksBack(doc, "prism.md", "2") || linksBack(doc, "function_vectors.md", "2") {
		t.Error("linksBack: a § reference belongs to the spec file named last before it")
	}
	if !linksBack("// names and scores units (docs/spec/\n// protot.md §7.3, where a judge …)", "protot.md", "7.3") {
		t.Error("linksBack: a path wrapped after docs/spec/ is not recognised")
	}
	all, withBody := specHeadings("## 1. A\n\ntext\n\n## 2. B\n\n---\n\n### 2.1 C\nx\n## Where\n")
	if !all["1"] || !all["2"] || !all["2.1"] || !withBody["1"] || withBody["2"] || !withBody["2.1"] {
		t.Errorf("specHeadings: all=%v withBody=%v", all, withBody)
	}
}
