// Package interp is the interpretability study of the Prototype Transformer (docs/spec/protot.md §5, §6, §7.3, §7.4):
// it trains (or loads) the model pair of models/pair, a ProtoT decoder and a LLaMA (attention) decoder of equal
// non-embedding size, on the synthetic concept corpus (and on WordNet glosses when the database is installed), once
// per training seed, then
//
//   - builds a dashboard per prototype (layer ℓ, prototype k): the top-activating tokens with their context by the
//     write routing π and by the read routing ρ, the routing mass by position, β_k and its half-life, the mass
//     share m_k, dead status and the automatic label;
//   - names every unit without an outside judge, from the corpus's ground-truth word labels;
//   - scores disentanglement and coverage identically for every unit kind on the same evaluation tokens: ProtoT
//     prototypes (by π and by ρ), LLaMA attention heads (the L2 norm of the head output z before W_o), features of
//     ReLU sparse autoencoders on the LLaMA block outputs (R per layer selected by top variance and by top firing
//     frequency, and every live feature unselected) and a null model of random tokens;
//   - intervenes on prototypes (write mask, read mask, re-initialisation; one prototype or the set named with a
//     label) and measures ΔProb of each label's tokens and ΔPPL, as a full prototype × label sweep run on one
//     compiled executable;
//   - states the paper claims it tests as scorecard rows (Claims), computed from the stored result.
//
// The robustness protocol of spec §7.5 (typos and synonyms) is its own study, experiments/robustness, on the same
// two models.
//
// # Protocol
//
// Every choice is made on data that no reported number is measured on. Per corpus and training seed the study uses
//
//   - the training split (the models' own): the SAEs train on the LLaMA block outputs of sae.train_sequences
//     training sequences, never on the tokens they are scored on;
//   - the selection split, the first half of the model's validation split: SAE features are selected on it
//     (eval.select_sequences sequences), the named prototype sets of the interventions are named on it, and the
//     intervention prototypes are chosen on it (the calibration split, intervene.sequences sequences);
//   - the evaluation text: eval.docs fresh documents of the synthetic generator with seed eval.data_seed, which no
//     training run and no choice of settings saw, tokenized and packed as the models' data (for a corpus without a
//     generator, WordNet, or with eval.data_seed 0: the second half of the validation split). Every unit kind is
//     scored on eval.sequences of its sequences, and every intervention effect is measured on intervene.held_out of
//     them. HeldBackEvalSeed names a second set of fresh documents that no preset reads, kept for one confirmation
//     run once the settings are frozen.
//
// The study repeats this for `seeds` training seeds of the pair (seed, seed+1, …: weights, split and batch order
// change; the fresh evaluation documents stay the same), and the claims pool them. Both models of a pair have the
// same data, schedule and number of updates (pair.Config). Settings that depart from the spec's defaults and bear on
// the claims (the sharper initial routing of pair.Small's ProtoT, chosen on the validation split with no matching
// tuning of the baseline) are listed in Result.Departures and named in every claim's method.
//
// Unit counts: the prototypes are all L·R of them by π (and by ρ), unselected; the heads all L·H, unselected; each
// SAE selection keeps R features per layer (sae.features), so the selected SAE kinds have as many units as the
// prototypes but are the best R of F = 8·D by a rule measured on the selection split; the unselected SAE kind
// (every feature that fires on the selection split) gives the same treatment as prototypes and heads.
//
// # Claims
//
// Claims turns a stored result into scorecard rows (workbench/report), each with its rule fixed in code. A claim
// needs at least MinClaimSeeds training seeds; with fewer its row says it is not testable at the preset.
//
//   - Masking (protot_writemask_female_women, spec §7.4: the "female" prototype's mask on "women"). Per seed, the
//     (target, prototype) write mask with the most negative calibration ΔProb among those with calibration |ΔPPL| <
//     intervene.max_ppl_change is chosen on the calibration split (ChooseSelective); its ΔProb on the evaluation
//     text is the seed's value, or 0 when its held-out |ΔPPL| breaks the bound (MaskingEffect). Ours is the mean ±
//     s.e. over seeds, in percent; reproduced when ours + 2 s.e. ≤ the paper's number.
//   - Disentanglement (protot_disent_protot, _heads, _sae_var, _sae_freq, spec §8: the judge ranks prototypes above
//     SAE features above heads). The paper's scores are 1–10 judgements; ours is D ∈ [0, 1] below, so only the order
//     is compared. For each kind, the units of all seeds are pooled (PooledKindStats); D is averaged over the units
//     named with a concept label, because a unit whose top tokens all carry the label "none" (function words,
//     punctuation) has D = 1 without carrying a concept; the share of units labelled "none" is reported beside it.
//     Both come with 95% percentile bootstrap intervals over units (workbench/stats.MeanCI). Prototypes are more
//     disentangled than a kind when their interval lies entirely above the kind's; they are the most disentangled
//     kind when that holds for heads and both SAE selections.
//
// # Labels
//
// Every evaluation token carries a set of labels "concept=value". With labels "marked" (the synthetic corpus) a
// token carries the values its word itself expresses ("queens": gender=female, number=plural); with "in_force" the
// values in force in its context (the topic of its document, the supersense of the gloss it occurs in); with
// "lexical" (WordNet) the values a lexicon lists for its word: every supersense of the word in WordNet, so an
// ambiguous word carries several ("bank": noun.group, noun.artifact, …, verb.possession, …). A word split into
// several tokens gives its labels to each of them. With eval.none_label a token carrying no concept label
// (function words, punctuation, separators) carries the label "none", which is scored like any label (a unit that
// selects function words has one theme) but is never a concept: it counts neither in the fraction of labels named
// nor as an intervention target. Labels carried by fewer than eval.min_label_count evaluation tokens are dropped.
// The base rate b_ℓ is the fraction of evaluation tokens carrying label ℓ.
//
// # Metrics
//
// A unit is anything with one activation per token: a prototype's π[t,k] or ρ[t,k], a head's ‖z_t,h‖₂, an SAE
// feature's code. Units are named and scored by workbench/naming (its doc.go states the equations): the top set is
// the K = eval.top_k tokens of largest activation, at most one per document (eval.one_per_doc); a null unit's top
// set is K random tokens from K random documents. Against each label's base rate over the evaluation tokens, the
// unit gets its label (the most over-represented), coverage C, disentanglement D, its number of themes (θ =
// eval.theme_excess) and a Bonferroni-corrected binomial p-value (naming equations (1)–(8)); it is named when
// C ≥ eval.min_purity and the p-value ≤ eval.alpha. A unit kind reports the mean ± sd of C, D and the
// theme count over its units, the fraction of named units, the fraction of labels that name at least one of its
// units, and the fraction of concepts (gender, country, …) one of whose values does; the null model gives the chance
// level of each. These replace the LLM judge of spec §7.3 (label, disentanglement 1–10, coverage 1–10, number of
// themes) by counts against ground truth: higher C and D and fewer themes are better.
//
// # Interventions
//
// The interventions run on two disjoint sets of sequences: a calibration split (intervene.sequences sequences of the
// selection split), on which prototypes are selected, and a held-out split (intervene.held_out sequences of the
// evaluation text), on which every reported effect is measured. Nothing is selected on the held-out split.
//
// A target is a concept value ("country=Egypt"); its words are those the corpus marks with it (the synthetic
// lexicon: "Cairo", "Egypt", "Egyptian", …). Spec §7.4: an occurrence is a position whose gold continuation is such
// a word, and a word of several tokens is scored as the product of its teacher-forced token probabilities. With
// scored input positions n (each predicting the token after it), an occurrence is a pair (n, m): the target of n is
// the first token of a marked word of m tokens that ends within the sequence, and
//
//	p(word) = Π_{i<m} p(x_{n+i+1} | x_{≤n+i})
//	ΔProb(ℓ) = mean over occurrences of ℓ of (p′(word) − p(word))/p(word)
//	ΔPPL     = ppl′/ppl − 1, ppl = exp(−mean over all scored positions of log p)
//
// with p′ the probability under the intervention; ΔPPL is measured on the same split as ΔProb. Targets are the
// labels with at least intervene.min_occurrences occurrences in each split.
//
// The sweep intervenes on every prototype alone (L·R columns) for each kind: the write mask (spec §5: the
// prototype leaves the write softmax), the read mask (it leaves the read softmax) and re-initialisation (its row of
// P resampled as at init with intervene.reinit_seed). The write mask is the intervention of spec §7.4 and of the
// paper's table ("WriteMask"); the other two are reported beside it. Per target, on the calibration split:
//
//	best       = argmin_p ΔProb_cal(p, ℓ)
//	selective  = argmin_p ΔProb_cal(p, ℓ) over |ΔPPL_cal(p)| < intervene.max_ppl_change
//	control    = argmin_p mean_ℓ |ΔProb_cal(p, ℓ)|     (one neutral control for all targets)
//
// and their held-out effects are reported, with the spec §7.4 columns of the held-out sweep (Max ΔProb: largest
// magnitude over prototypes; Mean ΔProb; Max and Mean ΔPPL) and the effect of write-masking every prototype named
// with the target at once. A target passes when its selective prototype's held-out write ΔProb ≤
// −intervene.min_prob_drop with held-out |ΔPPL| < intervene.max_ppl_change. For comparison only, the table also
// gives the in-sample choice (the same argmin taken on the held-out split itself), which shows how much a
// selection on the evaluation data would flatter the result. Masks and prototypes are variables, so one compiled
// executable serves the whole sweep on both splits; Intervention.Builds records the number of graph builds (1).
//
// Each sweep also says where a prototype's perplexity change lands: the held-out positions fall into classes by
// the concept of their target token (one class per concept, a token with values of two concepts in both, and
// "other" for targets with no concept value), and Sweep.ClassLoss is the mean loss increase over each class's
// positions. A prototype that carries one concept costs that concept's tokens much more than the others
// (ClassSelectivity: per concept the prototype with the largest excess loss − outside, its loss outside the class
// recovered from its ΔPPL as (log(1 + ΔPPL) − share·loss)/(1 − share); a hub that costs every token alike has
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
// # Files
//
// With run.Out set: the two models of each corpus under run.Out/models/ (models/lm, shared with every study that asks
// for the same lm.Config, experiments/robustness among them) and the result under run.Out/interp/ (Result).
// LoadOrRun reuses the stored result when its config matches.
package interp
