// Package pair is the model pair of the ProtoT interpretability studies (docs/spec/protot.md §5–7.5;
// experiments/interp and experiments/robustness) and what those studies measure on it: a ProtoT decoder and a LLaMA
// (attention) decoder of the same width, depth and vocabulary, trained on the same data with the same schedule, the
// baseline's FFN width chosen for an equal non-embedding parameter count (lm.MatchParams, with the ProtoT model as
// the reference).
//
// A study embeds Config (its JSON keys at the study's top level: seed, data, model, match_params, train) and starts
// from Tiny, Small or Paper, so two studies with equal settings ask models/lm for equal lm.Configs and share the
// trained runs under run.Out/models. Config.Models derives the two lm.Configs for a corpus and Config.LoadOrTrain
// gets the models; Summary describes a trained model for a result, Runner and ProbeNames read its activations.
//
// # Units (units.go, dashboard.go, sae.go)
//
// A unit is anything with one activation per token: a prototype's π[t,k] or ρ[t,k], a LLaMA head's ‖z_t,h‖₂ (the
// head output before W_o), a feature of a ReLU sparse autoencoder trained on the LLaMA block outputs. ScoreUnits
// scores every kind on the same labelled evaluation text (naming.Text): the prototypes all L·R of them by π and by
// ρ, the heads all L·H, the SAE features selected per layer on a separate selection text (the top SAEConfig.Features
// by variance and by firing frequency, and every feature that fires there, unselected), and null units. Units are
// named and scored by workbench/naming (its doc.go states the equations): the top set is the K =
// UnitConfig.TokensPerUnit tokens of largest activation, at most one per document (OnePerDoc); a null unit's top set
// is K random tokens from K random documents. Against each label's base rate over the evaluation tokens, the unit
// gets its label (the most over-represented), coverage C, disentanglement D, its number of themes and a
// Bonferroni-corrected binomial p-value (naming equations (1)–(8)); it is named when C and the p-value pass
// UnitConfig.Score. A unit kind reports the mean ± sd of C, D and the theme count over its units, the fraction of
// named units, the fraction of labels that name at least one of its units, and the fraction of concepts (gender,
// country, …) one of whose values does; the null model gives the chance level of each. These replace the LLM judge
// of spec §7.3 (label, disentanglement 1–10, coverage 1–10, number of themes) by counts against ground truth: higher
// C and D and fewer themes are better.
//
// Each prototype also gets a dashboard (spec §6, Prototype): its top contexts by π and by ρ, the routing mass by
// position, β_k = σ(γ_k) and its half-life ln ½ / ln β_k, the mass share m_k (the mean of π[t, k]) and dead status
// (m_k < UnitConfig.DeadMass); each layer its routing statistics (LayerStats: α, the Gini coefficient and maximum of
// m, the dead fraction, the mean top-1 routing weight and the read/write JS divergence).
//
// # Interventions (intervene.go, sweep.go, scoring.go, selectivity.go)
//
// Intervene runs on two disjoint texts: a calibration text, on which prototypes are selected, and a held-out text,
// on which every reported effect is measured. Nothing is selected on the held-out text.
//
// A target is a concept value ("country=Egypt"); its words are those the corpus marks with it (the synthetic
// lexicon: "Cairo", "Egypt", "Egyptian", …). Spec §7.4: an occurrence is a position whose gold continuation is such
// a word, and a word of several tokens is scored as the product of its teacher-forced token probabilities. With
// scored input positions n (each predicting the token after it), an occurrence is a pair (n, m): the target of n is
// the first token of a marked word of m tokens that ends within the sequence (naming.Text.WordOccurrences), and
//
//	p(word) = Π_{i<m} p(x_{n+i+1} | x_{≤n+i})
//	ΔProb(ℓ) = mean over occurrences of ℓ of (p′(word) − p(word))/p(word)
//	ΔPPL     = ppl′/ppl − 1, ppl = exp(−mean over all scored positions of log p)
//
// with p′ the probability under the intervention (Effect); ΔPPL is measured on the same text as ΔProb. Targets are
// the labels with at least InterveneConfig.MinOccurrences occurrences in each text.
//
// The sweep intervenes on every prototype alone (L·R columns) for each kind: the write mask (spec §5: the
// prototype leaves the write softmax), the read mask (it leaves the read softmax) and re-initialisation (its row of
// P resampled as at init with InterveneConfig.ReinitSeed). The write mask is the intervention of spec §7.4 and of
// the paper's table ("WriteMask"); the other two are reported beside it. Per target, on the calibration text
// (SelectPrototype):
//
//	best       = argmin_p ΔProb_cal(p, ℓ)
//	selective  = argmin_p ΔProb_cal(p, ℓ) over |ΔPPL_cal(p)| < InterveneConfig.MaxPPLChange
//	control    = argmin_p mean_ℓ |ΔProb_cal(p, ℓ)|     (one neutral control for all targets)
//
// and their held-out effects are reported, with the spec §7.4 columns of the held-out sweep (Max ΔProb: largest
// magnitude over prototypes; Mean ΔProb; Max and Mean ΔPPL) and the effect of write-masking every prototype named
// with the target at once. A target passes when its selective prototype's held-out write ΔProb ≤
// −InterveneConfig.MinProbDrop with held-out |ΔPPL| < MaxPPLChange. For comparison only, the summary also gives the
// in-sample choice (the same argmin taken on the held-out text itself), which shows how much a selection on the
// evaluation data would flatter the result. Masks and prototypes are variables, so one compiled executable serves
// the whole sweep on both texts; Intervention.Builds records the number of graph builds (1).
//
// Each sweep also says where a prototype's perplexity change lands: the held-out positions fall into classes by
// the concept of their target token (naming.Text.Classes: one class per concept, a token with values of two
// concepts in both, and "other" for targets with no concept value), and Sweep.ClassLoss is the mean loss increase
// over each class's positions. A prototype that carries one concept costs that concept's tokens much more than the
// others (ClassSelectivity: per concept the prototype with the largest excess loss − outside, its loss outside the
// class recovered from its ΔPPL as (log(1 + ΔPPL) − share·loss)/(1 − share); a hub that costs every token alike has
// excess 0).
//
// The floor (ProbFloor) says how far a mask could lower a frequent target within the perplexity bound if it lowered
// the loss of no other position. ΔProb is a mean of ratios p′/p, which is at least their geometric mean, so ΔProb ≤
// −δ needs the target's n word occurrences among the N scored positions to lose at least −n·log(1 − δ) nats between
// them. If no other position's loss falls, perplexity then rises by at least (1 − δ)^(−n/N) − 1, and within |ΔPPL| <
// m ΔProb cannot go below
//
//	floor = (1 + m)^(−N/n) − 1          (ProbFloor; TargetEffect.Floor)
//
// (at m = 1%: −18% for a target holding 5% of the positions, −6% for one holding 15%). The assumption fails for the
// masks it is meant for: masking one value of a concept moves probability to the competing values and lowers the
// loss where those are the target, which pays for part of the increase. So the floor is a reference for a mask that
// spares every other token, not a bound on what a single-value prototype can do; a concept-wide mask that lowers
// every value alike comes closer to the assumption (Selectivity.Floor takes all the concept's occurrences together).
//
// ΔProb, a mean of ratios (spec §7.4), weighs the occurrences the model got wrong most: those gain by large factors
// under a mask that removes what the model knows, so a mask that costs a concept's tokens many nats can still read a
// small ΔProb. The per-class losses (Sweep.ClassLoss, a geometric mean over each class's positions) are reported
// beside it for that reason.
//
// # Robustness (robustness.go)
//
// MeasureRobustness perturbs prompts (Prompts: held-out document prefixes that end just before the last word of a
// sentence; SentencePrompts, for a corpus of few long documents such as the Brown corpus's evaluation splits: a
// sentence's words but its last, several per document) once per kind (data.Perturb) and compares the next-token
// distributions p (original) and p′ (perturbed) at the prompt's last position, with k = RobustnessConfig.OverlapK:
//
//	JS         JS(p ‖ p′) = ½ KL(p ‖ m) + ½ KL(p′ ‖ m), m = ½(p + p′), natural log   (stats.JensenShannon; ↓ robust)
//	overlap    |top_k(p) ∩ top_k(p′)| / k                                          (naming.TopKOverlap; ↑ robust)
//	Spearman   ρ of p and p′ over top_k(p) ∪ top_k(p′), 0 where undefined           (naming.SpearmanTopK; ↑ robust)
//	top-1      [argmax p = argmax p′]                                              (naming.Top1Agree; ↑ robust)
//
// each reported as mean ± sd over the pairs of a kind. For ProtoT the routing change is, per layer ℓ, JS(π̄ ‖ π̄′)
// of the position-averaged write routing π̄ = (1/n) Σ_t π_t of the two prompts (n tokens each, the EOS included), and
// likewise for the read routing ρ. Rows are right-padded with EOS: the models are causal, so padding after the last
// position changes nothing before it.
package pair
