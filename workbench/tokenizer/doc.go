// Package tokenizer is a byte-level BPE (byte-pair encoding) tokenizer: train on a corpus with a target
// vocabulary size, encode, decode, save and load as JSON. Pure Go; no regexp. It is the tokenizer of
// docs/spec/protot.md §3 (byte-level BPE, V = 16,384, trained on the training split).
//
// # Ids
//
// A tokenizer with M merges and S special tokens has V = 256 + M + S ids:
//
//	0 .. 255            the bytes 0x00 .. 0xff
//	256 .. 256+M-1      merge r joins the pair merges[r] = (a, b) into id 256+r; a, b < 256+r
//	256+M .. V-1        the special tokens, in configuration order
//
// Every byte string is encodable, so there is no unknown token, and Decode(Encode(s)) == s for every s,
// valid UTF-8 or not. Special tokens are never produced by Encode from text (their names are encoded as
// ordinary bytes); get their ids with SpecialID and insert them yourself. They decode to their names.
//
// # Pre-tokenization
//
// With Config.Pretokenize = "gpt2" (the default), text is split into chunks and merges never cross a chunk
// boundary; the chunks concatenate back to the text exactly. Reading left to right, the next chunk is
//
//  1. a contraction suffix: 's 't 're 've 'm 'll 'd (lower case);
//  2. an optional single ' ' followed by a maximal run of letters (unicode letters and marks), of digits
//     (unicode numbers) or of other characters (anything else, including each invalid UTF-8 byte);
//  3. a maximal run of white space, except that when the run is followed by a non-space character and
//     ends with ' ', that ' ' is left out to lead the next chunk (rule 2).
//
// So "Hello  world's 42!\n" splits into "Hello", " ", " world", "'s", " 42", "!", "\n". This follows the
// GPT-2 pattern in spirit but is not byte-for-byte compatible with it. With "none", each text is one chunk.
//
// # Training
//
// Train counts the distinct chunks once (chunk -> frequency) and then repeats: pick the pair (a, b) with the
// highest count, ties to the lowest a, then the lowest b; add it as the next merge; replace its
// non-overlapping occurrences, scanned left to right, in every chunk containing it. The count of a pair is
//
//	count(a, b) = Σ over chunks c of freq(c) · #{i : c[i] = a, c[i+1] = b}
//
// (overlapping occurrences count: "aaa" holds (a, a) twice). Only the chunks containing the merged pair
// are touched: an index maps each pair to the chunks holding it, counts change by the difference between
// the pairs around each occurrence before and after the merge, and a max-heap with lazily discarded stale
// entries finds the next best pair. reference_test.go holds the naive trainer (full recount every step) that
// the fast one must match merge for merge. A merge costs time proportional to the total length of the chunks
// holding its pair, so chunks of megabytes (text with no spaces or punctuation, or mode "none" on long texts)
// train slowly; ordinary text keeps chunks short (BenchmarkTrain10MB times 10 MB of it to V = 4096).
//
// A pair becomes a merge only when its count is at least Config.MinPairCount (default 2). If the corpus
// cannot supply Config.NumMerges() such merges, Train fails with an error saying the vocabulary is larger
// than the data supports and giving the largest vocab_size it does support. An empty corpus is an error.
//
// # Encoding
//
// Encode splits the text into chunks and applies the merges within each chunk in rank order (repeatedly the
// lowest-rank pair present, all its occurrences left to right), which reproduces the training segmentation.
// Results for short chunks are kept in a bounded cache.
//
// # JSON format (version 1)
//
// Save and MarshalJSON write one object; Load and FromJSON reject unknown fields and check every rule below:
//
//	{
//	  "version": 1,                         // FormatVersion
//	  "vocab_size": 263,                    // = 256 + len(merges) + len(special_tokens)
//	  "pretokenize": "gpt2",                // "gpt2" or "none"
//	  "special_tokens": ["<|bos|>", "<|eos|>", "<|pad|>"],  // non-empty, distinct; ids 256+M ..
//	  "merges": [[32, 116], [104, 101], [256, 257], [101, 32]]  // merges[r] = [a, b], a, b < 256+r, no repeats
//	}
//
// The bytes all tokens decode to may total at most MaxVocabBytes (64 MiB): merges [[97,97],[256,256],[257,257],…]
// double a token's length each time, so 40 of them would claim a terabyte. MarshalJSON refuses a tokenizer over
// that limit, so every file Save writes loads again.
package tokenizer
