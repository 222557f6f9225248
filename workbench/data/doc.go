// Package data provides the corpora, splits and batches of the workbench. It is data only: batches are plain Go
// slices, converted to tensors elsewhere.
//
// Corpora:
//   - Synthetic: the embedded default, a deterministic "concept corpus" of English-like documents whose latent
//     concepts (referent gender, country, topic, grammatical number, agreement at several distances) are known
//     for every word and returned as labels (DocLabels), with sentence-level labels for classification tasks and
//     minimal pairs (Agreement) for multiple-choice tasks. DocLabels.AlignTokens maps the word labels onto tokens.
//   - ReadText, ReadJSONL, ReadParquet and ReadFiles: user corpora (.txt, .jsonl, FineWeb-Edu .parquet). A .txt
//     file is cut into documents by SplitText: its blank-line-separated paragraphs, a paragraph longer than
//     TextChunkBytes (or a file with no blank line) cut into chunks of at most TextChunkBytes at line ends;
//     ReadConfig.TextSplit "file" keeps each file whole. A .jsonl line or a .parquet row is one document.
//   - FineWeb: downloads FineWeb-Edu sample shards from the Hugging Face hub (needs internet): the data of
//     docs/spec/protot.md §3.
//   - Sub-package wordnet: glosses and example sentences of WordNet 3.0 with supersense labels and synonyms.
//
// Perturbations: Perturb applies one meaning-preserving edit to one word of a text (an adjacent-letter swap, a
// dropped or an inserted letter, or a one-word synonym from a lexicon), never to its last word; LetterWords gives
// the words it chooses from. They stand in for the lexical benchmark of docs/spec/protot.md §7.5.
//
// Training data: Corpus.Split (seeded train/validation split of documents), Pack (token stream with an EOS
// after each document, cut into sequences of T+1 tokens with stride T) and Batcher (batches [B][T+1] with a
// seeded shuffle per epoch and a resumable Cursor).
//
// Shape letters: B batch, T tokens per sequence (inputs; a sequence holds T+1 tokens), N documents or tokens
// (stated per field), C concepts, W words of a document.
//
// All randomness comes from a splitmix64 stream owned by this package, so a seed gives the same corpus, split
// and batch order on every platform and Go release.
package data
