package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// This file checks the code index at the end of a spec: the section "## Where this spec lives in the code", one
// markdown table that takes a reader from a spec section to the Go identifiers that implement it and to the tests that
// check them (issue #14: from any equation to its code and test in at most three jumps). Its columns:
//
//	| § | defines | package | identifiers | file | tests |
//
//   - §: one numbered heading of the spec, "§N" or "§N.M"; rows follow the spec's order.
//   - defines: what the section defines (equation numbers, names), in words.
//   - package: the package path from the repository root in backquotes (`layers/protot`), or "—" when no code
//     implements the section; identifiers then starts with "not implemented:" (and says why) or, for a section that
//     only summarises others, "no code of its own:", and file and tests are "—".
//   - identifiers: backquoted names declared in file: `Mix` (func, type, const or var, also inside a grouped
//     declaration) or `Type.Name` (a method of Type, or a field of the struct Type).
//   - file: one markdown link [name.go](../../<package>/name.go), relative to docs/spec/.
//   - tests: groups "[x_test.go](../../<package>/x_test.go): `TestA`, `TestB`" separated by "; ", each name declared
//     in its group's file (test functions, and the float64 reference oracles the tests compare with).
//
// Every numbered heading with text of its own (not only subsections) needs at least one row. A package under
// layers/, theory/, workbench/ or models/ named in a row must link back: its package documentation names
// "docs/spec/<file>" and the row's section, a parent of it or a range that holds it ("§2–§6", "§7.3–7.5").
//
// The files are read from the working tree (../<package>/<file>, relative to this folder), so the test fails when
// code moves or a test is renamed without the index.

// indexHeading is the heading of the code index of a spec.
const indexHeading = "## Where this spec lives in the code"

// indexColumns are the header cells of the index table, in order.
var indexColumns = []string{"§", "defines", "package", "identifiers", "file", "tests"}

// indexedSpecs must have a code index: every spec of the project.
var indexedSpecs = []string{"protot.md", "prism.md", "function_vectors.md"}

// backLinkTrees are the top folders whose packages must name the spec sections they implement in their doc comment.
var backLinkTrees = []string{"layers/", "theory/", "workbench/", "models/"}

// noCode is the dash of the package, file and tests cells of a row without code.
const noCode = "—"

var (
	indexNumberedHeading = regexp.MustCompile(`^#{2,4} ([0-9]+(?:\.[0-9]+)*)\.? `)
	indexSection         = regexp.MustCompile(`^§([0-9]+(?:\.[0-9]+)?)$`)
	indexTicked          = regexp.MustCompile("`([^`]*)`")
	indexLink            = regexp.MustCompile(`\[([^\]]+)\]\(([^)]+)\)`)
	indexIdent           = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$`)
	indexCommentBreak    = regexp.MustCompile(`\n//[ \t]?`)
	indexSpecRef         = regexp.MustCompile(`(protot|prism|function_vectors)\.md|§§?\s?([0-9]+(?:\.[0-9]+)?)(?:\s*[–-]\s*§?([0-9]+(?:\.[0-9]+)?))?`)
)

// indexRow is one row of a code index table; line is its 1-based line in the spec.
type indexRow struct {
	line                                      int
	section, defines, pkg, idents, file, test string
}

// specHeadings returns the numbered headings of a spec's text and those with text of their own (a line that is not
// blank and not a rule "---" before the next heading of any level).
func specHeadings(text string) (all, withBody map[string]bool) {
	all, withBody = map[string]bool{}, map[string]bool{}
	current := ""
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "#") {
			current = ""
			if m := indexNumberedHeading.FindStringSubmatch(line); m != nil {
				current = m[1]
				all[current] = true
			}
			continue
		}
		if s := strings.TrimSpace(line); current != "" && s != "" && s != "---" {
			withBody[current] = true
		}
	}
	return all, withBody
}

// parseIndex returns the rows of the table under indexHeading, or ok = false when the spec has no such heading.
// Problems with the table's shape are reported through t.
func parseIndex(t *testing.T, file, text string) (rows []indexRow, ok bool) {
	t.Helper()
	lines := strings.Split(text, "\n")
	start := -1
	for i, line := range lines {
		if strings.TrimSpace(line) == indexHeading {
			if start >= 0 {
				t.Errorf("%s:%d: a second %q", file, i+1, indexHeading)
			}
			start = i
		}
	}
	if start < 0 {
		return nil, false
	}
	header := -1
	for i := start + 1; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "#") {
			break
		}
		if strings.HasPrefix(strings.TrimSpace(lines[i]), "|") {
			header = i
			break
		}
	}
	if header < 0 {
		t.Errorf("%s:%d: no table under %q", file, start+1, indexHeading)
		return nil, true
	}
	if got := splitRow(strings.TrimSpace(lines[header])); strings.Join(got, "|") != strings.Join(indexColumns, "|") {
		t.Errorf("%s:%d: header %q, want the columns %q", file, header+1, got, indexColumns)
		return nil, true
	}
	for i := header + 2; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|"); i++ {
		cells := splitRow(strings.TrimSpace(lines[i]))
		if len(cells) != len(indexColumns) {
			t.Errorf("%s:%d: %d cells, want %d", file, i+1, len(cells), len(indexColumns))
			continue
		}
		rows = append(rows, indexRow{line: i + 1, section: cells[0], defines: cells[1], pkg: cells[2],
			idents: cells[3], file: cells[4], test: cells[5]})
	}
	if len(rows) == 0 {
		t.Errorf("%s:%d: the code index has no rows", file, header+1)
	}
	return rows, true
}

// sectionKey orders "N" and "N.M"; a top-level section sorts before its subsections.
func sectionKey(s string) [2]int {
	major, minor, _ := strings.Cut(s, ".")
	a, _ := strconv.Atoi(major)
	b := -1
	if minor != "" {
		b, _ = strconv.Atoi(minor)
	}
	return [2]int{a, b}
}

func sectionLess(a, b string) bool {
	ka, kb := sectionKey(a), sectionKey(b)
	return ka[0] < kb[0] || ka[0] == kb[0] && ka[1] < kb[1]
}

// fromSpec resolves a link target written in docs/spec/<file> to a path relative to this folder (docs/).
func fromSpec(target string) string {
	return filepath.Clean(filepath.Join("spec", filepath.FromSlash(target)))
}

// inRepo returns the path, relative to this folder, of a path relative to the repository root.
func inRepo(path string) string { return filepath.Join("..", filepath.FromSlash(path)) }

// checkFileLink checks a markdown link [name](target) to a file of pkg and returns the file's text.
func checkFileLink(t *testing.T, where, pkg, name, target string) (string, bool) {
	t.Helper()
	want := inRepo(pkg + "/" + name)
	if fromSpec(target) != want {
		t.Errorf("%s: link [%s](%s) points to %s, want ../../%s/%s", where, name, target, fromSpec(target), pkg, name)
		return "", false
	}
	b, err := os.ReadFile(want)
	if err != nil {
		t.Errorf("%s: file %s/%s does not exist (%v)", where, pkg, name, err)
		return "", false
	}
	return string(b), true
}

// packageDoc returns the text of the file that holds pkg's package comment: doc.go, else the first file with a
// "// Package " line.
func packageDoc(pkg string) (string, error) {
	dir := inRepo(pkg)
	if b, err := os.ReadFile(filepath.Join(dir, "doc.go")); err == nil {
		return string(b), nil
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return "", err
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		if b, err := os.ReadFile(f); err == nil && regexp.MustCompile(`(?m)^// Package `).Match(b) {
			return string(b), nil
		}
	}
	return "", os.ErrNotExist
}

// checkRow checks one row of file's index against the spec's headings and the Go files it names.
func checkRow(t *testing.T, file string, r indexRow, headings map[string]bool) {
	t.Helper()
	where := file + ":" + strconv.Itoa(r.line)
	m := indexSection.FindStringSubmatch(r.section)
	if m == nil {
		t.Errorf("%s: section %q, want §N or §N.M", where, r.section)
		return
	}
	if !headings[m[1]] {
		t.Errorf("%s: %s is not a heading of %s", where, r.section, file)
	}
	if r.defines == "" {
		t.Errorf("%s: the defines cell is empty", where)
	}
	if r.pkg == noCode {
		if !strings.HasPrefix(r.idents, "not implemented: ") && !strings.HasPrefix(r.idents, "no code of its own: ") {
			t.Errorf("%s: a row without a package says \"not implemented: <why>\" or \"no code of its own: <where>\" "+
				"in the identifiers cell, got %q", where, r.idents)
		}
		if r.file != noCode || r.test != noCode {
			t.Errorf("%s: a row without a package has %q in the file and tests cells", where, noCode)
		}
		return
	}
	pm := indexTicked.FindStringSubmatch(r.pkg)
	if pm == nil || pm[0] != r.pkg {
		t.Errorf("%s: package cell %q, want one `path` or %q", where, r.pkg, noCode)
		return
	}
	pkg := pm[1]
	if st, err := os.Stat(inRepo(pkg)); err != nil || !st.IsDir() {
		t.Errorf("%s: package folder %s does not exist", where, pkg)
		return
	}

	// The file and its identifiers.
	links := indexLink.FindAllStringSubmatch(r.file, -1)
	if len(links) != 1 || links[0][0] != r.file {
		t.Errorf("%s: file cell %q, want one link [name.go](../../%s/name.go)", where, r.file, pkg)
	} else if src, ok := checkFileLink(t, where, pkg, links[0][1], links[0][2]); ok {
		idents := indexTicked.FindAllStringSubmatch(r.idents, -1)
		if len(idents) == 0 {
			t.Errorf("%s: no `identifier` in %q", where, r.idents)
		}
		for _, id := range idents {
			if !indexIdent.MatchString(id[1]) {
				t.Errorf("%s: %q is not an identifier (Name or Type.Name)", where, id[1])
			} else if !declares(src, id[1]) {
				t.Errorf("%s: %s is not declared in %s/%s", where, id[1], pkg, links[0][1])
			}
		}
	}

	// The tests, in groups "[file](link): `A`, `B`".
	groups := indexLink.FindAllStringSubmatchIndex(r.test, -1)
	if len(groups) == 0 {
		t.Errorf("%s: tests cell %q names no test file", where, r.test)
	}
	for i, g := range groups {
		name, target := r.test[g[2]:g[3]], r.test[g[4]:g[5]]
		end := len(r.test)
		if i+1 < len(groups) {
			end = groups[i+1][0]
		}
		names := indexTicked.FindAllStringSubmatch(r.test[g[1]:end], -1)
		if len(names) == 0 {
			t.Errorf("%s: test file %s names no `test`", where, name)
		}
		src, ok := checkFileLink(t, where, pkg, name, target)
		if !ok {
			continue
		}
		for _, n := range names {
			if !indexIdent.MatchString(n[1]) || !declares(src, n[1]) {
				t.Errorf("%s: %s is not declared in %s/%s", where, n[1], pkg, name)
			}
		}
	}

	// The back-link from the package's documentation.
	for _, tree := range backLinkTrees {
		if !strings.HasPrefix(pkg+"/", tree) {
			continue
		}
		doc, err := packageDoc(pkg)
		if err != nil {
			t.Errorf("%s: package %s has no package documentation", where, pkg)
		} else if !linksBack(doc, file, m[1]) {
			t.Errorf("%s: the package documentation of %s does not name docs/spec/%s %s (or a parent or range "+
				"holding it)", where, pkg, file, r.section)
		}
	}
}

// TestIndex_EntriesExist checks every code index: sections are headings of the spec and come in its order, every
// section with text of its own has a row, files exist, identifiers and tests are declared in the files named, and the
// packages link back.
func TestIndex_EntriesExist(t *testing.T) {
	for _, file := range SpecNames() {
		if file == PapersFile {
			continue
		}
		text, err := Spec(file)
		if err != nil {
			t.Fatal(err)
		}
		rows, ok := parseIndex(t, file, text)
		if !ok {
			for _, want := range indexedSpecs {
				if want == file {
					t.Errorf("%s has no %q section", file, indexHeading)
				}
			}
			continue
		}
		if !linksBack("// names and scores units (docs/spec/\n// protot.md §7.3, where a judge …)", "protot.md", "7.3") {
			t.Error("linksBack: a path wrapped after docs/spec/ is not recognised")
		}
		all, withBody := specHeadings(text)
		covered := map[string]bool{}
		prev := ""
		for _, r := range rows {
			checkRow(t, file, r, all)
			if m := indexSection.FindStringSubmatch(r.section); m != nil {
				covered[m[1]] = true
				if prev != "" && sectionLess(m[1], prev) {
					t.Errorf("%s:%d: %s after §%s: rows follow the spec's order", file, r.line, r.section, prev)
				}
				prev = m[1]
			}
		}
		for s := range withBody {
			if !covered[s] {
				t.Errorf("%s: §%s has text of its own but no row in the code index", file, s)
			}
		}
	}
}
