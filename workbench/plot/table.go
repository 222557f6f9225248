package plot

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"html"
	"strings"

	"github.com/go-echarts/go-echarts/v2/render"
)

// Table is a titled table of strings: the figure of a result that is best read as numbers. It implements Chart
// (RenderSnippet renders an HTML table, no script), so Display and Export (.html) show it like any chart; String
// renders it as aligned text for reports and logs. Rows may be shorter than Header.
type Table struct {
	Title  string
	Header []string
	Rows   [][]string
	Note   string // a line under the table
}

// RenderSnippet returns the table as an HTML element; Option carries the title (for file names) and a digest of
// the content.
func (t *Table) RenderSnippet() render.ChartSnippet {
	var b strings.Builder
	b.WriteString(`<div class="container"><div class="item" id="table_` + t.digest() + `">`)
	b.WriteString(`<table style="border-collapse:collapse;font:12px sans-serif">`)
	if t.Title != "" {
		b.WriteString(`<caption style="font-weight:bold;padding:4px">` + html.EscapeString(t.Title) + `</caption>`)
	}
	cell := func(tag, s string) {
		b.WriteString("<" + tag + ` style="border:1px solid #ccc;padding:2px 6px;text-align:left;white-space:pre">`)
		b.WriteString(html.EscapeString(s) + "</" + tag + ">")
	}
	b.WriteString("<tr>")
	for _, h := range t.Header {
		cell("th", h)
	}
	b.WriteString("</tr>")
	for _, row := range t.Rows {
		b.WriteString("<tr>")
		for _, c := range row {
			cell("td", c)
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</table>")
	if t.Note != "" {
		b.WriteString(`<div style="font:11px sans-serif;color:#555">` + html.EscapeString(t.Note) + "</div>")
	}
	b.WriteString("</div></div>")
	opt, _ := json.Marshal(map[string]any{"title": map[string]string{"text": t.Title}, "table": t.digest()})
	return render.ChartSnippet{Element: b.String(), Option: string(opt)}
}

// digest returns a short hash of the table's content.
func (t *Table) digest() string {
	b, _ := json.Marshal(t) // strings only: always encodes
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

// String renders the table as text with aligned columns (display width counted in runes).
func (t *Table) String() string {
	widths := make([]int, len(t.Header))
	all := append([][]string{t.Header}, t.Rows...)
	for _, row := range all {
		for i, c := range row {
			if i < len(widths) {
				widths[i] = max(widths[i], len([]rune(c)))
			}
		}
	}
	var b strings.Builder
	if t.Title != "" {
		b.WriteString(t.Title + "\n")
	}
	for _, row := range all {
		for i, c := range row {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(c)
			if i < len(widths) && i < len(row)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-len([]rune(c))))
			}
		}
		b.WriteString("\n")
	}
	if t.Note != "" {
		b.WriteString(t.Note + "\n")
	}
	return b.String()
}
