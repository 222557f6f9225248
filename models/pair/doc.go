// Package pair is the model pair of the ProtoT interpretability studies (docs/spec/protot.md §7.3–7.5;
// experiments/interp and experiments/robustness): a ProtoT decoder and a LLaMA (attention) decoder of the same
// width, depth and vocabulary, trained on the same data with the same schedule, the baseline's FFN width chosen for
// an equal non-embedding parameter count (lm.MatchParams, with the ProtoT model as the reference).
//
// A study embeds Config (its JSON keys at the study's top level: seed, data, model, match_params, train) and starts
// from Tiny, Small or Paper, so two studies with equal settings ask models/lm for equal lm.Configs and share the
// trained runs under run.Out/models. Config.Models derives the two lm.Configs for a corpus and Config.LoadOrTrain
// gets the models; Summary describes a trained model for a result, Runner and ProbeNames read its activations.
package pair
