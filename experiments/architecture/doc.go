// Package architecture is the ProtoT architecture study (docs/spec/protot.md §3, §7.1, §7.6, §8, §9): the Prototype
// Transformer mixer against its baselines — causal attention with RoPE (LLaMA), DeltaNet and Mamba — in the same
// decoder (layers/decoder, trained as models/lm), at equal parameter count. It trains and compares
//
//   - perplexity of the mixers under each initialisation policy, with each mixer's learning rate searched on a
//     validation split, measured on test documents no choice read (the protocol below; RunCompare for one quick
//     comparison);
//   - a scaling sweep over width × training tokens, one curve per mixer (RunSweep);
//   - generation samples with distinct-n, repetition rate and their perplexity under the best model
//     (RunGeneration);
//   - downstream classification: a linear head on pooled hidden states, fine-tuned on sentence-label tasks of the
//     synthetic corpus or on GLUE-format TSV files (RunClassify, FineTune, TSVTask);
//
// and draws them (figures.go). Claims turns a stored result into the scorecard's rows. The throughput and decoding
// benchmarks of §7.2 are the study experiments/speed.
//
// # Protocol
//
// The protocol (the Small and Paper presets; issue #15 §4) is fixed in the preset before any result is read:
//
//  1. Learning rates. For every initialisation policy of Config.Inits (decoder.Config.Init: the spec's "pytorch"
//     first, GPT-2's "gpt2" as the second comparison) and every mixer, one model per value of Config.LRGrid (the
//     same grid for every mixer) is trained with the first seed on data.source; the value of lowest final loss on
//     the validation split (documents carved from the training corpus by lmdata, eval_batches batches) is the
//     mixer's learning rate (Tuning). A run stopped by a non-finite loss counts as diverged and is not chosen.
//  2. Comparison. Every mixer trains at its learning rate with every seed of Config.Seeds (the search's run is the
//     first seed's), for the same steps × batch (equal budgets) and at equal non-embedding parameters (below).
//     With shared_lr, a further comparison trains every mixer at train.lr, the spec's §3 recipe ("use the defaults
//     for all models").
//  3. Test data. The reported perplexity is on Config.Test: fresh documents of the synthetic grammar (seed
//     test.seed), tokenized by each model's tokenizer and cut into non-overlapping windows of T tokens (§7.1). No
//     choice reads them. A second test corpus (test.holdout_seed) is evaluated by the protocol presets only, once
//     their settings are frozen, as a check that the first was not worn out.
//  4. Training length. Every run records its validation loss every train.eval_every steps; Comparison.Ranking is
//     the mixers' order by mean validation loss at each of those evaluations, and Comparison.Settled says whether
//     the order at every evaluation of the last half of training (tokens ≥ half the final count) equals the final
//     one: the ranking has stopped moving when it holds.
//  5. Claims. Claims computes the rows from the stored result: the ratio of each mixer's test perplexity to
//     attention's, per seed (the two models of a seed share the data split and batch order), mean ± s.e., against
//     the ratio of the paper's two numbers (docs/spec/papers.md); and the paper's ranking of the four mixers. The
//     rules (RatioTol, TieTol, MinSeeds) are constants of claims.go.
//
// Quick (what a notebook computes when no protocol run is stored) and Tiny keep one seed, one policy and train.lr
// for every mixer: their comparisons answer no claim.
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
// A point (Point: mixer, corpus, init, learning rate, width, steps) and a seed make one model, described
// completely by the lm.Config ModelAt returns, trained by lm.LoadOrTrain under run.Out/models/ (a later call with
// the same config loads it; points shared by the search, the comparisons and the sweep are trained once). The
// study's Result is stored under run.Out/architecture/ by its config (LoadOrRun). With several seeds, a Score holds
// the mean and the standard error sd/√n (stats.MeanSE) of the validation and test losses and perplexities.
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
// The samples come from each mixer's first-seed model of the primary comparison (Result.TopModels); the judge is
// the one of them with the lowest validation loss (Result.BestModel). The reference row applies the same measures
// to the held-out documents' true continuations, cut to the same number of tokens.
//
// # Classification
//
// logits = Pool(decoder.Hidden(tokens), lengths)·W + b, with W [D, K] and b [K] zero-initialised under the
// "classifier" scope; Pool is the mean over the example's tokens or its last token (spec §7.6 pools the last
// token and fine-tunes everything; the Tiny, Quick and Small presets pool the mean, which a few dozen steps on a tiny
// model learn more easily). The loss is cross-entropy; FineTune trains a copy of the LM (Model.Fork), every weight
// or the head only. Synthetic tasks are the sentence labels (SentenceTasks: topic, gender, number, …) of a corpus
// generated with another seed, split by document; accuracy is reported with its binomial s.e. against the
// majority-class baseline.
package architecture
