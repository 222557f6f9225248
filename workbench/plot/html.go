package plot

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/go-echarts/go-echarts/v2/render"
	"github.com/pkg/errors"
)

// Chart is any go-echarts chart (*charts.Line, *charts.Bar, *charts.HeatMap, *charts.Scatter, ...).
type Chart interface {
	RenderSnippet() render.ChartSnippet
}

// fragment is a chart rendered for embedding: its div and the script that draws it.
type fragment struct {
	id      string // DOM id of the chart div
	element string // <div class="container"><div class="item" id=…>
	script  string // <script> that calls echarts.init on the div, scoped in a function
	title   string // the option's title text, "" if none
	option  string // the option JSON as go-echarts rendered it
}

var (
	elementIDRe = regexp.MustCompile(`id="([^"]+)"`)
	sizeRe      = regexp.MustCompile(`width:\s*(\d+)px;\s*height:\s*(\d+)px`)
)

// renderFragment renders c with a fresh DOM id, so that showing the same chart twice (or two charts whose random
// go-echarts ids collide across GoNB cell processes) never makes two divs share an id. The go-echarts script
// declares `let goecharts_<id>` at top level; it is wrapped in a function so that re-running it on the
// same page is not a redeclaration error, and so that a missing library leaves a message in the div.
func renderFragment(c Chart) fragment {
	s := c.RenderSnippet()
	f := fragment{element: s.Element, script: s.Script, option: s.Option}
	if m := elementIDRe.FindStringSubmatch(s.Element); m != nil {
		f.id = "plot_" + randomHex(8)
		f.element = strings.ReplaceAll(f.element, m[1], f.id)
		f.script = strings.ReplaceAll(f.script, m[1], f.id)
	}
	f.script = scopeScript(f.script, f.id)
	var opt struct {
		Title struct {
			Text string `json:"text"`
		} `json:"title"`
	}
	if json.Unmarshal([]byte(s.Option), &opt) == nil {
		f.title = opt.Title.Text
	}
	return f
}

// size returns the chart's CSS size in pixels from its div style, or (0, 0).
func (f fragment) size() (int, int) {
	m := sizeRe.FindStringSubmatch(f.element)
	if m == nil {
		return 0, 0
	}
	return atoi(m[1]), atoi(m[2])
}

func atoi(s string) int {
	n := 0
	for _, r := range s {
		n = n*10 + int(r-'0')
	}
	return n
}

// scopeScript wraps the body of the <script> element in a function that first checks for echarts.
func scopeScript(script, id string) string {
	start := strings.Index(script, "<script")
	end := strings.LastIndex(script, "</script>")
	if start < 0 || end < 0 {
		return script
	}
	open := strings.Index(script[start:], ">")
	if open < 0 || start+open+1 > end {
		return script
	}
	body := script[start+open+1 : end]
	guard := `if (typeof echarts === "undefined") { var el = document.getElementById("` + id + `"); ` +
		`if (el) { el.textContent = "plot: the echarts library is not on this page: it is sent with the first chart of a ` +
		`kernel; call plot.ShowLibrary() in a cell above, or restart the kernel and run all cells"; } return; }`
	return `<script type="text/javascript">(function(){` + guard + body + "\n})();</script>"
}

// page returns a complete HTML document that shows the fragment offline: the echarts library is inlined
// (wrapped as in libraryScript), and extra (HTML, e.g. a script) is appended after the chart.
func page(f fragment, js []byte, extra string) []byte {
	title := f.title
	if title == "" {
		title = "chart"
	}
	var b strings.Builder
	b.Grow(len(js) + len(f.element) + len(f.script) + len(extra) + 1024)
	b.WriteString("<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>")
	b.WriteString(html.EscapeString(title))
	b.WriteString("</title>\n<style>\nbody { margin: 0; background: #ffffff; }\n" +
		".container { display: flex; justify-content: center; align-items: center; margin: 16px; }\n" +
		".item { margin: auto; }\n</style>\n")
	b.WriteString(libraryScript(js))
	b.WriteString("\n</head>\n<body>\n")
	b.WriteString(f.element)
	b.WriteString("\n")
	b.WriteString(f.script)
	b.WriteString("\n")
	b.WriteString(extra)
	b.WriteString("\n</body>\n</html>\n")
	return []byte(b.String())
}

// StandaloneHTML returns a self-contained HTML page for c, with the echarts library inlined; it opens
// offline in any browser.
func StandaloneHTML(c Chart) ([]byte, error) {
	js, err := EchartsJS()
	if err != nil {
		return nil, err
	}
	return page(renderFragment(c), js, ""), nil
}

// writeAtomic writes data to path through a temporary file in the same folder and a rename, creating the
// folder if needed.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return errors.Wrapf(err, "plot: creating folder %s", dir)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return errors.Wrapf(err, "plot: creating temporary file for %s", path)
	}
	name := tmp.Name()
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(name, 0o644)
	}
	if werr == nil {
		werr = os.Rename(name, path)
	}
	if werr != nil {
		_ = os.Remove(name)
		return errors.Wrapf(werr, "plot: writing %s", path)
	}
	return nil
}

// figureName returns a file name (without extension) for a chart: its title as a slug plus a short hash
// of its option, so distinct charts get distinct files and re-rendering the same chart overwrites its file.
func figureName(f fragment) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(f.title) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 60 {
			break
		}
	}
	slug := strings.TrimRight(b.String(), "-")
	if slug == "" {
		slug = "chart"
	}
	sum := sha256.Sum256([]byte(f.option))
	return slug + "-" + hex.EncodeToString(sum[:4])
}

// randomHex returns 2n random hex digits.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}
