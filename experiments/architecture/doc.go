// Package architecture is the ProtoT architecture study (docs/spec/protot.md §3, §7.1, §7.6, §8, §9): the Prototype
// Transformer mixer against its baselines — causal attention with RoPE (LLaMA), DeltaNet and Mamba — in the same
// decoder (layers/decoder, trained as models/lm), at equal parameter count. It trains and compares
//
//   - perplexity of the mixers under each initialisation policy, with each mixer's learning rate searched on a
//     validation split, measured on test documents no choice read (the protocol below; RunCompare for one quick
//     comparison);
//   - a scaling sweep over width × training tokens, one curve per mixer (RunSweep);
//   - generation samples with distinct-n, repetition rate and their perplexity under the best model
//     (models/generation; RunGeneration);
//   - downstream classification: a linear head on pooled hidden states, fine-tuned on sentence-label tasks of the
//     synthetic corpus (models/classify; RunClassify) or on GLUE-format TSV files (classify.TSVTask);
//
// and draws them (figures.go). Claims turns a stored result into the scorecard's rows. The throughput and decoding
// benchmarks of §7.2 are the study experiments/speed.
//
// # Protocol
//
// The protocol (the Small and Paper presets; protocol v2 in docs/PROTOCOL.md) is fixed in the preset before any
// result is read. Each corpus of Config.Corpora (the synthetic corpus and the Brown corpus in Small) runs it alone:
//
//  1. Learning rates. For every initialisation policy of Config.Inits (decoder.Config.Init: the spec's "pytorch"
//     first; Paper adds GPT-2's "gpt2" as a second comparison) and every mixer, one model per value of
//     Config.LRGrid (the same grid for every mixer) is trained with the tuning seed (tune_seed, not a replicate);
//     the value of lowest final loss on the corpus's validation split (eval_batches batches) is the mixer's
//     learning rate on that corpus (Tuning, fit.SearchLR). A run stopped by a non-finite loss (fit.IsDiverged)
//     counts as diverged and is not chosen.
//  2. Comparison. Every mixer trains at its learning rate with every seed of Config.Seeds, for the same steps ×
//     batch (equal budgets) and at equal non-embedding parameters (below). With shared_lr, a further comparison
//     trains every mixer at train.lr, the spec's §3 recipe ("use the defaults for all models").
//  3. Test data. The reported perplexity is on Config.Test: fresh documents of the synthetic grammar (seed
//     test.seed), or the Brown test split (an even test.seed), tokenized by each model's tokenizer and cut into
//     non-overlapping windows of T tokens (§7.1; lm.Model.TestPerplexity). No choice reads them. A second test
//     set (test.holdout_seed: another synthetic seed, or the Brown held-out split) is evaluated by the protocol
//     presets only, once their settings are frozen, as a check that the first was not worn out.
//  4. Training length. Every run records its validation loss every train.eval_every steps; Comparison.Ranking is
//     the mixers' order by mean validation loss at each of those evaluations, and Comparison.Settled says whether
//     the order at every evaluation of the last half of training (tokens ≥ half the final count) equals the final
//     one: the ranking has stopped moving when it holds.
//  5. Claims. Claims computes the rows from the stored result: the ratio of each mixer's test perplexity to
//     attention's, per seed (the two models of a seed share the data split and batch order), mean ± s.e., against
//     the ratio of the paper's two numbers (docs/spec/papers.md); and the paper's ranking of the four mixers; one
//     set of rows per corpus. The rules (RatioTol, TieTol, MinSeeds) are constants of claims.go.
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
// study's Result is stored under run.Out/architecture/ by its config (Runs.LoadOrRun). With several seeds, a Score holds
// the mean and the standard error sd/√n (stats.MeanSE) of the validation and test losses and perplexities.
//
// Within a run, the warmup scales with the run's steps; the data split and batch order follow the run's seed. The
// final perplexity is over EvalBatches fixed validation batches (non-overlapping windows of T tokens, §7.1).
//
// # Generation and classification
//
// Generation and classification use each mixer's first-seed model of the primary comparison (Result.TopModels).
// The samples' measures (distinct-n, rep-n, their perplexity under a judge) are models/generation's; the judge is
// the model of lowest validation loss (Result.BestModel), and a reference row applies the measures to the held-out
// documents' true continuations. The classifier head, its fine-tuning (every weight, or the head only) and its
// accuracy against the majority class are models/classify's; its tasks are the sentence labels of a corpus
// generated with classify.synthetic.seed, split by document. Spec §7.6 pools the last token and fine-tunes
// everything (Paper); the Tiny, Quick and Small presets pool the mean (classify.DefaultConfig).
package architecture
