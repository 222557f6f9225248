package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// Character classes of the GPT-2-like pre-tokenizer.
const (
	clsOther  uint8 = iota // punctuation, symbols, control bytes, invalid UTF-8
	clsLetter              // unicode letters and combining marks
	clsDigit               // unicode numbers
	clsSpace               // unicode white space
)

// asciiClass is the class of each ASCII byte; bytes >= 0x80 are decoded as UTF-8 instead.
var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := 0; c < utf8.RuneSelf; c++ {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
			t[c] = clsLetter
		case '0' <= c && c <= '9':
			t[c] = clsDigit
		case c == ' ', c == '\t', c == '\n', c == '\v', c == '\f', c == '\r':
			t[c] = clsSpace
		default:
			t[c] = clsOther
		}
	}
	return t
}()

// classAt returns the class and byte length of the character starting at b[i]; i < len(b).
// An invalid UTF-8 byte is one character of class clsOther.
func classAt(b []byte, i int) (cls uint8, size int) {
	if c := b[i]; c < utf8.RuneSelf {
		return asciiClass[c], 1
	}
	r, size := utf8.DecodeRune(b[i:])
	switch {
	case r == utf8.RuneError && size <= 1:
		return clsOther, 1
	case unicode.IsLetter(r), unicode.IsMark(r):
		return clsLetter, size
	case unicode.IsNumber(r):
		return clsDigit, size
	case unicode.IsSpace(r):
		return clsSpace, size
	}
	return clsOther, size
}

// runEnd returns the end of the run of class cls that starts at i.
func runEnd(b []byte, i int, cls uint8) int {
	for i < len(b) {
		c, n := classAt(b, i)
		if c != cls {
			break
		}
		i += n
	}
	return i
}

// contractionLen returns the length of an English contraction suffix ('s 't 're 've 'm 'll 'd) at the
// start of b, or 0.
func contractionLen(b []byte) int {
	if len(b) < 2 || b[0] != '\'' {
		return 0
	}
	switch b[1] {
	case 's', 't', 'm', 'd':
		return 2
	case 'r', 'v':
		if len(b) >= 3 && b[2] == 'e' {
			return 3
		}
	case 'l':
		if len(b) >= 3 && b[2] == 'l' {
			return 3
		}
	}
	return 0
}

// chunkLen returns the length (> 0) of the first pre-tokenization chunk of b; len(b) > 0.
// The chunks are, in order of precedence: a contraction suffix; an optional single leading space followed by
// a run of letters, of digits or of other characters; a whitespace run (when the run is followed by a
// non-space character and ends with ' ', that last space is left to lead the next chunk).
func chunkLen(b []byte) int {
	if n := contractionLen(b); n > 0 {
		return n
	}
	cls, n := classAt(b, 0)
	if cls != clsSpace {
		return runEnd(b, n, cls)
	}
	last, end := 0, n // last: start of the last whitespace character of the run
	for end < len(b) {
		c, m := classAt(b, end)
		if c != clsSpace {
			break
		}
		last = end
		end += m
	}
	if end == len(b) || b[last] != ' ' {
		return end
	}
	if last > 0 {
		return last
	}
	// A single ' ' leads the following run of letters, digits or other characters.
	next, m := classAt(b, 1)
	return runEnd(b, 1+m, next)
}

// forEachChunk calls fn for each chunk of b under the given mode; the chunks concatenate to b.
func forEachChunk(b []byte, mode string, fn func(chunk []byte)) {
	if mode == PretokenizeNone {
		if len(b) > 0 {
			fn(b)
		}
		return
	}
	for len(b) > 0 {
		n := chunkLen(b)
		fn(b[:n])
		b = b[n:]
	}
}
