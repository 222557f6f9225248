// Package classify fine-tunes a trained language model (models/lm) as a sentence classifier and measures its
// accuracy: the GLUE-style downstream evaluation of docs/spec/protot.md §7.6, used by experiments/architecture.
//
// # Head
//
//	logits = Pool(decoder.Hidden(tokens), lengths)·W + b,   W [D, K], b [K]           (Logits)
//
// with K classes; W and b are zero-initialised under the scope HeadScope ("classifier": variables "weights" and
// "bias", beside the decoder's). Pool is the mean of the hidden states over the example's tokens (PoolMean) or the
// hidden state of its last token (PoolLast, the spec's choice). Each example is [EOS, its tokens], cut to
// Config.MaxTokens and padded with EOS.
//
// # Fine-tuning and accuracy
//
// The loss is the cross-entropy of the logits. FineTune trains a copy of the LM (lm.Model.Fork; the model itself is
// unchanged), every weight or, with Config.HeadOnly, the head alone, and reports the test accuracy p̂ with its
// binomial standard error √(p̂(1−p̂)/n) against the majority-class baseline (Task.Majority). FineTuneAll does it for
// every (model, task).
//
// # Tasks
//
// SentenceTasks derives one task per concept of a labelled synthetic corpus (topic, gender, number, …), splitting
// documents, not sentences, between training and test; TSVTask reads a GLUE-format task (tab-separated files with a
// header row, ReadTSV).
package classify
