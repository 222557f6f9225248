// Package interp is the interpretability study of the Prototype Transformer (docs/spec/protot.md §5, §6, §7.3, §7.4):
// it trains (or loads) the model pair of models/pair, a ProtoT decoder and a LLaMA (attention) decoder of equal
// non-embedding size, on the synthetic concept corpus (and on WordNet glosses when the database is installed), then
//
//   - builds a dashboard per prototype (layer ℓ, prototype k): the top-activating tokens with their context by the
//     write routing π and by the read routing ρ, the routing mass by position, β_k and its half-life, the mass
//     share m_k, dead status and the automatic label;
//   - names every unit without an outside judge, from the corpus's ground-truth word labels;
//   - scores disentanglement and coverage identically for four unit kinds on the same held-out tokens: ProtoT
//     prototypes (by π and by ρ), LLaMA attention heads (the L2 norm of the head output z before W_o), features of
//     ReLU sparse autoencoders on the LLaMA block outputs (R per layer, selected by top variance and by top firing
//     frequency) and a null model of random tokens;
//   - intervenes on prototypes (write mask, read mask, re-initialisation; one prototype or the set named with a
//     label) and measures ΔProb of each label's tokens and ΔPPL, as a full prototype × label sweep run on one
//     compiled executable.
//
// The robustness protocol of spec §7.5 (typos and synonyms) is its own study, experiments/robustness, on the same
// two models.
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
// The interventions run on two disjoint sets of validation sequences: a calibration split (intervene.sequences
// sequences from the first half of the validation stream), on which prototypes are selected, and a held-out split
// (intervene.held_out sequences from the second half), on which every reported effect is measured. Nothing is
// selected on the held-out split.
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
// The perplexity bound limits how far any intervention can lower a frequent target. ΔProb is a mean of ratios
// p′/p, which is at least their geometric mean, so ΔProb ≤ −δ needs the target's n word occurrences among the N
// scored positions to lose at least −n·log(1 − δ) nats between them. An intervention that lowers the loss of no
// other position then raises perplexity by at least (1 − δ)^(−n/N) − 1; within |ΔPPL| < m it cannot go below
//
//	floor = (1 + m)^(−N/n) − 1          (ProbFloor; TargetEffect.Floor)
//
// At m = 1% a target making up 5% of the positions has floor −18%, one making up 6.1% −15%, one making up 15% −6%.
// On the synthetic corpus at Small (held-out shares) number=singular (15%), number=plural (12%) and gender=female
// (6.8%) cannot reach −15% within the bound whatever the model; a country (0.5–1.2%) could reach −56% to −86%.
// A mask that lowers every value of a concept alike has the floor of all the concept's occurrences together
// (Selectivity.Floor): at Small country (6.7% of the positions) −13.8%, gender (11.6%) −8.2%, topic (19.4%) −5.0%,
// number (27.5%) −3.6%. So on this corpus a prototype that carries a whole concept and lowers its values alike
// cannot meet −15% at 1% on any of them; that takes a mask that singles out one value.
//
// ΔProb, a mean of ratios (spec §7.4), understates a mask that removes what the model knows: the occurrences the
// model got wrong gain by large factors and outweigh the many that lose. Measured on a 6-layer model (R = 32, 1,500
// steps; the comment of pair.Small): write-masking its country prototype L3 P12 costs country tokens 0.90 nats
// each (probability ×0.41) and every other token 0.003 nats on average; it lowers each country's mean word
// probability Σp′/Σp by 15–80%, yet ΔProb reads −19% to +2%, about half of the occurrences rising. The
// per-class losses (a geometric mean) show such a prototype for what it is.
//
// # Files
//
// With run.Out set: the two models of each corpus under run.Out/models/ (models/lm, shared with every study that asks
// for the same lm.Config, experiments/robustness among them) and the result under run.Out/interp/ (Result).
// LoadOrRun reuses the stored result when its config matches.
package interp
