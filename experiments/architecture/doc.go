// Package architecture is the ProtoT architecture study (docs/spec/protot.md §3, §7.1, §7.6, §8, §9): the Prototype
// Transformer mixer against its baselines — causal attention with RoPE (LLaMA), DeltaNet and Mamba — in the same
// decoder (layers/decoder, trained as models/lm), at equal parameter count. It trains and compares
//
//   - perplexity of the mixers on the synthetic concept corpus and on WordNet text (RunCompare);
//   - a scaling sweep over width × training tokens, one curve per mixer (RunSweep);
//   - generation samples with distinct-n, repetition rate and their perplexity under the best model of the sweep
//     (RunGeneration);
//   - downstream classification: a linear head on pooled hidden states, fine-tuned on sentence-label tasks of the
//     synthetic corpus or on GLUE-format TSV files (RunClassify, FineTune, TSVTask);
//
// and draws them (figures.go). The throughput and decoding benchmarks of §7.2 are the study experiments/speed.
//
// # Equal parameter count
//
// The first mixer of Config.Mixers (attention in the presets) is the reference. At each width, every other mixer
// keeps D, the depth L, the vocabulary and the (tied) embedding, and only its SwiGLU FFN width F is re-solved so
// that the non-embedding parameter count matches the reference's (lm.MatchParams; the rule and its bound are in
// models/lm's doc, "Equal parameter count"). Score.Match records the target, the achieved count and both F;
// match_params=false compares at equal width only.
//
// # Runs and caching
//
// A point is (mixer, corpus, width, steps, seed): one model, described completely by the lm.Config ModelFor
// returns, trained by lm.LoadOrTrain under run.Out/models/ (a later call with the same config loads it; points
// shared by the comparison and the sweep are trained once). The study's Result is stored under
// run.Out/architecture/ by its config (LoadOrRun). With several seeds, a Score holds the mean and the standard
// error sd/√n (stats.MeanSE) of the validation loss and perplexity.
//
// Within a run, the warmup scales with the run's steps; the data split and batch order follow the run's seed. The
// final perplexity is over EvalBatches fixed validation batches (non-overlapping windows of T tokens, §7.1).
//
// # Generation measures
//
// Over word n-grams (Words: split at white space) of the continuations, excluding the prompts:
//
//	distinct-n = |distinct n-grams over all samples| / |n-grams over all samples|     (DistinctN)
//	rep-n      = mean over samples of (1 − |distinct n-grams of the sample| / |n-grams of the sample|)  (RepetitionRate)
//	judge ppl  = exp( Σ NLL_judge(continuation tokens | EOS, prompt) / #continuation tokens )        (SpanPerplexity)
//
// The judge is the run with the lowest validation loss in the sweep. The reference row applies the same measures
// to the held-out documents' true continuations, cut to the same number of tokens.
//
// # Classification
//
// logits = Pool(decoder.Hidden(tokens), lengths)·W + b, with W [D, K] and b [K] zero-initialised under the
// "classifier" scope; Pool is the mean over the example's tokens or its last token (spec §7.6 pools the last
// token and fine-tunes everything; the Tiny and Small presets pool the mean, which a few dozen steps on a tiny
// model learn more easily). The loss is cross-entropy; FineTune trains a copy of the LM (Model.Fork), every weight
// or the head only. Synthetic tasks are the sentence labels (SentenceTasks: topic, gender, number, …) of a corpus
// generated with another seed, split by document; accuracy is reported with its binomial s.e. against the
// majority-class baseline.
package architecture
