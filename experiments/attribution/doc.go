// Package attribution is the training-data attribution study of D. Ley, G. Nguyen, H. Lakkaraju, J. Adebayo,
// "Prototype Language Models", arXiv:2607.00510 (docs/spec/prism.md §6–§8): does ranking the training sequences of
// a PRISM model (models/lm) from cached prototype-space statistics predict counterfactual retraining, agree with the
// full prototype-space reference and with EK-FAC, and run faster at equal memory? The methods, their graph passes,
// caches and cost model are models/prism's (its doc.go has equations 1–9 and the table of methods); the study
// chooses the models, queries and settings, runs the methods in a fixed order, and scores and summarises them.
//
// # Measures
//
// Per model and method, on the validation queries (spec §8):
//
//	(9)  LDS = mean_q Spearman_m(Σ_{s∈S_m} I(q, s), −L_q(θ_m))     θ_m retrained from scratch on the subset S_m
//	(10) Overlap@k = |TopK(method) ∩ TopK(reference)| / k           for each k of overlap_k
//
// The LDS is the ground truth: its retrained models (prism.Attributor.Retrain) share no computation with any method.
// The overlap with the reference is a secondary column: the reference is itself an approximation of the same
// prototype-space influence. Spearman with the reference is taken over the union of both top-100 sets.
//
// # Speed and memory
//
// Every query of the prototype-space methods and of the reference is timed, one by one after a warm-up query
// (median and quartiles). EK-FAC on the blocks and on P is timed end to end on timed_queries queries at the memory of
// the default method (spec §8, "matched memory"). The speed-up is EK-FAC's median over prism's, per model. The cost
// model (prism.NewCostModel) is evaluated at this run's scale and at the Paper preset's (K = 4096 > direct_max_k,
// so the full-curvature methods are costed with CG at the iteration count measured on this run's curvature); the
// scorecard shows it as a model, not a measurement.
//
// # Uncertainty
//
// Settings.ModelSeeds models per corpus (same data and recipe, seeds seed, seed+1, …) are each attributed and scored.
// Every interval is a 95% percentile interval of a two-stage bootstrap over the models of one corpus: models
// resampled, then queries (and for the LDS the retrained subsets) within each; standard errors over models are
// reported beside it (summary.go).
//
// # Corpora
//
// The study runs on each corpus of attribution.corpora in turn (empty: data.source alone), each run complete and
// independent of the others: its models are trained with data.source set to the corpus, attributed over that
// corpus's training set, queried with its validation sequences, retrained for its LDS, and summarised over its own
// models (Result.Corpus). The protocol (the Small preset, protocol v2 of docs/PROTOCOL.md) runs the synthetic corpus
// and the Brown corpus; the Brown models train on the first attribution.brown_train_docs documents of its training
// split, about as many sequences as the synthetic training set, so that the recipe's updates cover their training
// set, and each LDS retraining its subset, as on the synthetic corpus (the whole split is many times larger: 400
// updates would see a small part of it, and most attributed sequences would be ones no model trained on). Claims has
// a row per claim and corpus; the Brown rows keep the papers.md ids and say "Brown" in their claim and method.
// Protocol v1 was the Small preset at commit 8706f7f: the synthetic corpus only, 16 retrained models per attributed
// model.
//
// # Running
//
// AttributeModel runs every method on one model in this order: the cached methods, the reference, EK-FAC on the
// blocks (with the gradient dot product), EK-FAC on P, the conditioning and CG count, the LDS; then the overlaps.
// Runs.LoadOrRun trains (or loads) the models of each corpus, attributes each, summarises them per corpus and
// evaluates the cost model, storing the result under run.Out/attribution/; Claims turns a stored result into scorecard
// rows; the charts show the first corpus (Result.Corpus selects another). RunSweep repeats the prototype-space part
// over clustering weights λ_1 = λ_2 on the first corpus (spec §8, "Conditioning sweep").
package attribution
