package brown

import (
	"crypto/sha256"
	"encoding/binary"
)

// Split names one part of the fixed split (package doc, "The fixed split").
type Split string

// The four splits, by the hash bucket h = sha256("brown:"+id)[:8] as a big-endian uint64, modulo 100.
const (
	Train      Split = "train"      // h in [0, 80): training documents
	Validation Split = "validation" // h in [80, 90): the validation documents choices are made on
	Test       Split = "test"       // h in [90, 95): the test documents results are reported on
	Heldout    Split = "heldout"    // h in [95, 100): the held-back second evaluation set
)

// Splits returns the four splits in the order above.
func Splits() []Split { return []Split{Train, Validation, Test, Heldout} }

// SplitOf returns the split of document id; it depends on id only.
func SplitOf(id string) Split {
	sum := sha256.Sum256([]byte("brown:" + id))
	switch h := binary.BigEndian.Uint64(sum[:8]) % 100; {
	case h < 80:
		return Train
	case h < 90:
		return Validation
	case h < 95:
		return Test
	default:
		return Heldout
	}
}

// Select returns the documents of docs in split s, in their order.
func Select(docs []Document, s Split) []Document {
	var out []Document
	for _, d := range docs {
		if SplitOf(d.ID) == s {
			out = append(out, d)
		}
	}
	return out
}
