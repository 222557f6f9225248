package docs

import (
	"embed"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/pkg/errors"
)

//go:embed spec/*.md
var specFS embed.FS

// PapersFile is the file, under spec/, that holds the table of the papers' numbers.
const PapersFile = "papers.md"

// paperSpecs maps each value of PaperNumber.Paper to the spec file of that paper.
var paperSpecs = map[string]string{
	"protot": "protot.md",
	"prism":  "prism.md",
	"fvec":   "function_vectors.md",
}

// PaperNumber is one row of spec/papers.md: a number that one of the three papers reports and the workbench
// measures, or a claim the spec states only in words (then Text is "" and HasValue is false).
type PaperNumber struct {
	ID          string  `json:"id"`                    // stable snake_case key, starting with Paper + "_"
	Paper       string  `json:"paper"`                 // "protot", "prism" or "fvec"; Spec(Paper) is its spec
	Claim       string  `json:"claim"`                 // the claim in short words
	Quantity    string  `json:"quantity"`              // what is measured
	Value       float64 `json:"value"`                 // the number; 0 when HasValue is false
	Text        string  `json:"text,omitempty"`        // the value as written in the table, e.g. "-16.60"; "" if none
	Uncertainty string  `json:"uncertainty,omitempty"` // as the spec gives it, e.g. "± 1.93 (sd over units)"
	Unit        string  `json:"unit,omitempty"`        // "" for dimensionless quantities
	Setting     string  `json:"setting"`               // model size, data and preset the number comes from
	Source      string  `json:"source"`                // spec file and section, then the paper table/figure cited
	Provenance  string  `json:"provenance"`            // the spec's label: "paper", "reported, unconfirmed", ...
}

// HasValue reports whether the row states a number (false for a claim stated only in words).
func (p PaperNumber) HasValue() bool { return p.Text != "" }

// columns are the table's header cells; the order in the file is free.
var columns = []string{"id", "paper", "claim", "quantity", "value", "uncertainty", "unit", "setting", "source",
	"provenance"}

var (
	papersOnce sync.Once
	papers     []PaperNumber
	papersErr  error
)

// Papers returns every row of spec/papers.md, in file order. The slice is a copy; changing it changes nothing here.
// The error names the line of a malformed row (unknown paper, duplicate id, a value that is not a number).
func Papers() ([]PaperNumber, error) {
	papersOnce.Do(func() {
		var text string
		if text, papersErr = Spec(PapersFile); papersErr == nil {
			papers, papersErr = parsePapers(text)
		}
	})
	if papersErr != nil {
		return nil, papersErr
	}
	return append([]PaperNumber(nil), papers...), nil
}

// Paper returns the row with the given id. For an unknown id the error lists the closest known ids.
func Paper(id string) (PaperNumber, error) {
	all, err := Papers()
	if err != nil {
		return PaperNumber{}, err
	}
	ids := make([]string, len(all))
	for i, p := range all {
		if p.ID == id {
			return p, nil
		}
		ids[i] = p.ID
	}
	return PaperNumber{}, errors.Errorf("docs.Paper: unknown id %q in spec/%s (closest: %s; docs.Papers() lists all "+
		"%d)", id, PapersFile, strings.Join(closest(id, ids, 5), ", "), len(ids))
}

// Spec returns the text of an embedded spec, named by file ("protot.md"), stem ("function_vectors") or paper key
// ("fvec"); PapersFile is also accepted. The error lists the known names.
func Spec(name string) (string, error) {
	file := name
	if f, ok := paperSpecs[name]; ok {
		file = f
	} else if !strings.HasSuffix(file, ".md") {
		file += ".md"
	}
	b, err := specFS.ReadFile(path.Join("spec", file))
	if err != nil {
		return "", errors.Errorf("docs.Spec: unknown spec %q (known: %s, or a paper key: protot, prism, fvec)", name,
			strings.Join(SpecNames(), ", "))
	}
	return string(b), nil
}

// SpecNames returns the file names of the embedded specs, PapersFile included, sorted.
func SpecNames() []string {
	entries, _ := fs.ReadDir(specFS, "spec") // the directory is embedded, so this cannot fail
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// parsePapers parses the one markdown table of papers.md: a header row naming the columns, a separator row, then
// one row per number.
func parsePapers(text string) ([]PaperNumber, error) {
	var (
		col  map[string]int // column name → cell index
		rows []PaperNumber
		seen = map[string]int{} // id → line
	)
	lines := strings.Split(text, "\n")
	for n, line := range lines {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			if col != nil && len(rows) > 0 && line != "" {
				break // text after the table
			}
			continue
		}
		lineNo := n + 1
		cells := splitRow(line)
		switch {
		case col == nil:
			var err error
			if col, err = headerColumns(cells); err != nil {
				return nil, errors.Wrapf(err, "spec/%s:%d", PapersFile, lineNo)
			}
			continue
		case strings.Trim(line, "|-: ") == "":
			continue // the separator row
		case len(cells) != len(col):
			return nil, errors.Errorf("spec/%s:%d: %d cells, want %d (a cell may not contain '|')", PapersFile,
				lineNo, len(cells), len(col))
		}
		get := func(name string) string { return cells[col[name]] }
		p := PaperNumber{ID: get("id"), Paper: get("paper"), Claim: get("claim"), Quantity: get("quantity"),
			Text: get("value"), Uncertainty: get("uncertainty"), Unit: get("unit"), Setting: get("setting"),
			Source: get("source"), Provenance: get("provenance")}
		if p.ID == "" || p.Claim == "" || p.Source == "" {
			return nil, errors.Errorf("spec/%s:%d: id, claim and source must not be empty", PapersFile, lineNo)
		}
		if _, ok := paperSpecs[p.Paper]; !ok {
			return nil, errors.Errorf("spec/%s:%d: %s: paper %q, want protot, prism or fvec", PapersFile, lineNo,
				p.ID, p.Paper)
		}
		if prev, ok := seen[p.ID]; ok {
			return nil, errors.Errorf("spec/%s:%d: id %q already used on line %d", PapersFile, lineNo, p.ID, prev)
		}
		seen[p.ID] = lineNo
		if p.Text != "" {
			v, err := strconv.ParseFloat(p.Text, 64)
			if err != nil {
				return nil, errors.Errorf("spec/%s:%d: %s: value %q is not a number (use an ASCII '-')", PapersFile,
					lineNo, p.ID, p.Text)
			}
			p.Value = v
		}
		rows = append(rows, p)
	}
	if len(rows) == 0 {
		return nil, errors.Errorf("spec/%s: no table rows", PapersFile)
	}
	return rows, nil
}

// splitRow returns the trimmed cells of a markdown table row "| a | b |".
func splitRow(line string) []string {
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	cells := strings.Split(line, "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

// headerColumns maps the header cells to their index; the header must name exactly the known columns.
func headerColumns(cells []string) (map[string]int, error) {
	col := map[string]int{}
	for i, c := range cells {
		col[c] = i
	}
	for _, c := range columns {
		if _, ok := col[c]; !ok {
			return nil, errors.Errorf("table header %q lacks column %q (want %s)", cells, c, strings.Join(columns, ", "))
		}
	}
	if len(col) != len(columns) || len(cells) != len(columns) {
		return nil, errors.Errorf("table header %q: want exactly the columns %s", cells, strings.Join(columns, ", "))
	}
	return col, nil
}

// closest returns up to n of ids ordered by edit distance to id (ties by name).
func closest(id string, ids []string, n int) []string {
	sorted := append([]string(nil), ids...)
	dist := make(map[string]int, len(ids))
	for _, s := range sorted {
		dist[s] = editDistance(id, s)
	}
	sort.Slice(sorted, func(i, j int) bool {
		if dist[sorted[i]] != dist[sorted[j]] {
			return dist[sorted[i]] < dist[sorted[j]]
		}
		return sorted[i] < sorted[j]
	})
	if len(sorted) > n {
		sorted = sorted[:n]
	}
	return sorted
}

// editDistance is the Levenshtein distance between a and b, in bytes (ids are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
