package brown

import (
	"strings"

	"github.com/pkg/errors"
)

// token is one word/tag of Form C.
type token struct{ word, tag string }

// Parse renders the Form C text src of document id as a Document (package doc, "Plain text"). It errors when id is
// not a corpus file name, when a token is not of the form word/tag (non-empty word and tag), or when src holds no
// token.
func Parse(id string, src []byte) (Document, error) { return parse(id, id, src) }

// parse is Parse naming the file `name` in its errors.
func parse(name, id string, src []byte) (Document, error) {
	g, ok := GenreOf(id)
	if !ok {
		return Document{}, errors.Errorf("brown: %s: %q is not a corpus file name (c, a genre letter, a sample "+
			"number: ca01 … cr09)", name, id)
	}
	d := Document{ID: id, Genre: g.Letter}
	var paras []paragraph
	var cur paragraph
	flush := func() {
		if len(cur.toks) > 0 {
			paras = append(paras, cur)
			cur = paragraph{}
		}
	}
	for n, line := range strings.Split(string(src), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			flush()
			continue
		}
		sentence := make([]token, len(fields))
		headline := true
		for i, f := range fields {
			k := strings.LastIndexByte(f, '/')
			if k <= 0 || k == len(f)-1 {
				return Document{}, errors.Errorf("brown: %s line %d: token %q is not word/tag; the file is corrupt: "+
					"run `make brown` to reinstall the corpus", name, n+1, f)
			}
			t := token{word: f[:k], tag: f[k+1:]}
			sentence[i] = t
			headline = headline && strings.Contains(t.tag, "-hl")
			if hasAlnum(t.word) {
				d.Words++
			}
		}
		if headline {
			flush()
			paras = append(paras, paragraph{toks: sentence, starts: []int{0}})
			continue
		}
		cur.starts = append(cur.starts, len(cur.toks))
		cur.toks = append(cur.toks, sentence...)
	}
	flush()
	if len(paras) == 0 {
		return Document{}, errors.Errorf("brown: %s holds no word/tag token (empty or truncated); run `make brown` "+
			"to reinstall the corpus", name)
	}
	var b strings.Builder
	depth := 0
	for i, p := range paras {
		if i > 0 {
			b.WriteByte('\n')
		}
		d.Sentences = append(d.Sentences, renderParagraph(&b, p, &depth)...)
	}
	d.Text = b.String()
	return d, nil
}

// paragraph is the tokens of one paragraph and the index of each of its sentences' first token.
type paragraph struct {
	toks   []token
	starts []int
}

// doubled are the tokens Form C repeats where the text has one (package doc).
var doubled = map[string]bool{";": true, "?": true, "!": true, ":": true, ",": true, "(": true}

// renderParagraph writes the paragraph's tokens as plain text (package doc, "Plain text") and returns the byte
// span in b of each of its sentences that wrote anything (Document.Sentences). depth counts the parentheses open
// so far in the document.
func renderParagraph(b *strings.Builder, p paragraph, depth *int) [][2]int32 {
	prev := ""          // the previous word written
	glue := true        // no space before the next word (paragraph start, after an opening mark)
	singleOpen := false // a lone ' opened a quote in this paragraph
	var spans [][2]int32
	sentence := -1 // the sentence of the last token written
	for i, t := range p.toks {
		w := t.word
		switch {
		case doubled[w] && w == prev,
			w == ")" && prev == ")" && *depth == 0,
			w == "." && strings.HasSuffix(prev, "."),
			w == "''" && len(prev) > 2 && strings.HasSuffix(prev, "''"):
			continue
		}
		out, before, after := w, true, true
		switch w {
		case "``":
			out, after = `"`, false
		case "''":
			out, before = `"`, false
		case "'":
			if singleOpen {
				before = false
			} else {
				after = false
			}
			singleOpen = !singleOpen
		case ",", ".", ";", ":", "!", "?":
			before = false
		case ")", "]":
			before = false
			if *depth > 0 {
				*depth--
			}
		case "(", "[":
			after = false
			*depth++
		default:
			out = strings.ReplaceAll(w, "''", `"`)
		}
		if before && !glue {
			b.WriteByte(' ')
		}
		if s := sentenceOf(p.starts, i); s != sentence {
			spans = append(spans, [2]int32{int32(b.Len()), 0})
			sentence = s
		}
		b.WriteString(out)
		spans[len(spans)-1][1] = int32(b.Len())
		glue, prev = !after, w
	}
	return spans
}

// sentenceOf returns the sentence of token i, given each sentence's first token in increasing order.
func sentenceOf(starts []int, i int) int {
	s := 0
	for s+1 < len(starts) && starts[s+1] <= i {
		s++
	}
	return s
}

func hasAlnum(s string) bool {
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return true
		}
	}
	return false
}
