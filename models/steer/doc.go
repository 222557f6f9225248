// Package steer holds what the sparse controllers of docs/spec/prism.md §9 need from a frozen model (models/lm):
// the multiple-choice tasks they are fitted on and, per task, the model's logits, final hidden states and, for a
// PRISM model, the active prototypes and their activations at every position that predicts an option token
// (Collect), turned into the controller problems of theory/steer: over prototype slices (PrototypeProblem, equation
// S1), over the features of a sparse autoencoder (FeatureProblem, with TrainDictionary for its basis) and over the
// vocabulary (BiasProblem, S6). The fitting and scoring are theory/steer's; experiments/steering runs the protocol.
//
// # Tasks
//
// The spec's four tasks are unknown; ours come from the labels of the synthetic concept corpus (BuildTasks, drawn
// from fresh documents, lm.Model.FreshCorpus): the verb form after a subject (number), the possessive after a
// referent (gender), a topic verb among verbs of other topics (topic) and a city among cities of other countries
// (country). An item is a document prefix and candidate next words; the correct one is the word the document has.
//
// The graph is layers/decoder's PrismHead (Hidden for the dense model, whose logits W z are then computed in float64
// from its head); rows are right-padded to the longest sequence of a batch, which causality keeps exact.
//
// Tests: the options follow the corpus's labels (tasks_test.go); the option scores at zero gain equal the model's
// own next-token log-probabilities, for the PRISM model (decoder.PrismLogits) and the dense one (decoder.Logits);
// γ = −1 on every SAE feature removes the features' slices; γ = −1 on Ω is layers/prism's zero-mode suppression
// (spec §10) (steer_test.go).
package steer
