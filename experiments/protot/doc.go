// Package protot is the ProtoT study (docs/spec/protot.md §3, §7.1, §7.6, §8, §9): the Prototype Transformer mixer
// against its baselines — causal attention with RoPE (LLaMA), DeltaNet and Mamba — in the same decoder
// (layers/decoder), at equal parameter count. It trains and compares
//
//   - perplexity of the mixers on the synthetic concept corpus and on WordNet text (RunCompare);
//   - a scaling sweep over width × training tokens, one curve per mixer (RunSweep);
//   - generation samples with distinct-n, repetition rate and their perplexity under the best model of the sweep
//     (RunGeneration);
//   - downstream classification: a linear head on pooled hidden states, fine-tuned on sentence-label tasks of the
//     synthetic corpus or on GLUE-format TSV files (RunClassify, FineTune, TSVTask);
//
// and draws them (figures.go). The throughput and decoding benchmarks of §7.2 live in bench.go.
//
// # Equal parameter count
//
// Mixers differ in size at equal width D: per block, attention has 4D² weights, ProtoT about 2D² + R·D, DeltaNet
// about 4D², Mamba about 6D². The first mixer of Config.Mixers (attention in the presets) is the reference. At
// each width, every other mixer keeps D, the depth L, the vocabulary and the (tied) embedding, and only its SwiGLU
// FFN width F is re-solved (MatchParams) so that the non-embedding parameter count P (everything but the V·D
// embedding and an untied head; NonEmbeddingParams) matches the reference's:
//
//	F = round((P_ref − P_0) / (3·D·L)),   P_0 = P of the mixer's model with no FFN weights,
//
// since each unit of F adds 3·D weights per block. Then |P − P_ref| ≤ 3·D·L/2 (MatchTolerance), a relative error of
// at most about 1/(8D) against the ≈ 12·D²·L parameters of the attention reference (0.4% at D = 32). Total counts
// match as well, because embeddings are identical. ParamMatch records the
// target, the achieved count and both F; results report them. match_params=false compares at equal width only.
//
// # Runs and caching
//
// A point is (mixer, corpus, width, steps, seed): one training run, described completely by a RunConfig. With
// Config.Out set, LoadOrTrain keeps each run in Out/runs/<mixer>-<corpus>-d<D>-s<steps>-seed<s>-<hash>/, the hash
// being that of the RunConfig's JSON: config.json, tokenizer.json, checkpoints/, weights.safetensors and
// result.json (RunResult). A later call with the same RunConfig loads result.json instead of training; a different
// config has a different hash, so it trains in its own folder; an interrupted run resumes from its checkpoints.
// Points shared by the comparison and the sweep are therefore trained once, and notebook cells (each a fresh
// process) load what earlier cells trained. Generation and classification results are cached the same way in
// Out/generation-<hash>.json and Out/classify-<hash>.json. With several seeds, a Score holds the mean and the
// standard error sd/√n (MeanSE) of the validation loss and perplexity.
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
package protot
