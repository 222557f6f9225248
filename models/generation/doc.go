// Package generation samples continuations from trained language models (models/lm) and measures their quality,
// the stand-ins for the pairwise LLM-judge Elo of docs/spec/protot.md §7.6 that experiments/architecture reports.
//
// # Measures
//
// Over word n-grams (Words: split at white space, every EOSToken a word) of the continuations, excluding the
// prompts:
//
//	distinct-n = |distinct n-grams over all samples| / |n-grams over all samples|           (DistinctN)
//	rep-n      = mean over samples of (1 − |distinct n-grams of it| / |n-grams of it|)       (RepetitionRate)
//	judge ppl  = exp( Σ NLL_judge(continuation tokens | EOS, prompt) / #continuation tokens )  (SpanPerplexity)
//
// distinct-n is Li et al.'s (arXiv:1510.03055), rep-n Welleck et al.'s seq-rep-n (arXiv:1908.04319).
//
// # Protocol
//
// Measure takes the prompts from the judge's validation documents (Prompts: the first Config.PromptWords words of
// each), samples one continuation per prompt from every model (lm.Model.Generate with Config.Sample) and scores
// them; the reference row applies the same measures to the documents' true continuations, cut to the same number of
// tokens.
package generation
