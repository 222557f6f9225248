package interp

import (
	"slices"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/pair"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/naming"
)

// Intervention kinds of intervene.sweeps (pair.InterveneWrite, …), for the figure builders and the notebook.
const (
	InterveneWrite  = pair.InterveneWrite
	InterveneRead   = pair.InterveneRead
	InterveneReinit = pair.InterveneReinit
)

// Config configures the study. Start from a preset (Tiny, Small, Paper); change fields or apply run.Override.
type Config struct {
	// Config is the ProtoT model and its LLaMA baseline trained on each corpus (models/pair: seed, data, model,
	// match_params, train; JSON keys at the top level). experiments/robustness embeds the same presets, so equal
	// settings share the trained runs under run.Out/models. The seed also seeds the null units.
	pair.Config
	// Seeds is the number of training seeds: the pair is trained and analysed once for each of seed, seed+1, …,
	// seed+seeds−1 (the weights, the train/validation split and the batch order change with it), and the claims
	// pool the seeds; ≥ 1. The figures show the first seed's analysis.
	Seeds int `json:"seeds"`
	// Corpora are the corpora the two models are trained and analysed on, each with its label scheme. The first
	// must be present; later ones marked optional are skipped (with a note) when their data is not installed.
	Corpora []CorpusConfig `json:"corpora"`
	// Eval selects the held-out tokens every analysis runs on and the naming and metric settings (doc.go).
	Eval EvalConfig `json:"eval"`
	// SAE configures the sparse autoencoders trained on the LLaMA residual stream.
	SAE SAEConfig `json:"sae"`
	// Intervene configures the mask and re-initialisation experiments.
	Intervene InterveneConfig `json:"intervene"`
}

// CorpusConfig is one corpus of the study and how its tokens are labelled.
type CorpusConfig struct {
	// Source is a data source of workbench/lmdata: "synthetic", "wordnet", "brown", or files.
	Source string `json:"source"`
	// Labels is naming.LabelsMarked, naming.LabelsInForce or naming.LabelsLexical (WordNet supersenses of the word;
	// needs the WordNet database and exactly one concept, "supersense"; doc.go, "Labels and metrics").
	Labels string `json:"labels"`
	// Concepts names the corpus concepts whose values are labels (e.g. gender, country, topic, number); empty
	// means all of them.
	Concepts []string `json:"concepts"`
	// Interventions runs the mask sweep on this corpus (its marked or lexical labels name the target words).
	Interventions bool `json:"interventions"`
	// Optional skips the corpus, with a note in the result, when its data is not installed.
	Optional bool `json:"optional"`
	// Seeds is the number of training seeds on this corpus, the first of the study's (seed, seed+1, …); 0 means all
	// of the study's seeds; at most seeds.
	Seeds int `json:"seeds,omitempty"`
}

// seeds returns the number of training seeds of corpus cc in a study of n seeds.
func (cc CorpusConfig) seeds(n int) int {
	if cc.Seeds == 0 {
		return n
	}
	return cc.Seeds
}

// EvalConfig selects the held-out tokens and sets the naming and metric parameters (doc.go, "Labels and metrics").
type EvalConfig struct {
	// Sequences is the number of evaluation sequences of T tokens every unit is scored on; > 0.
	Sequences int `json:"sequences"`
	// DataSeed is the generator seed of the fresh evaluation documents of the synthetic corpus: eval.docs documents
	// of data.synthetic with this seed, which no training run and no choice of settings saw. Every unit is scored,
	// and every held-out intervention effect measured, on them. 0 (and any corpus without a generator, such as
	// WordNet) evaluates on the second half of the model's validation split instead. HeldBackEvalSeed is kept for
	// the run with frozen settings.
	DataSeed uint64 `json:"data_seed"`
	// Docs is the number of fresh evaluation documents generated with DataSeed; > 0 when DataSeed is set.
	Docs int `json:"docs"`
	// BrownDocs is the number of documents of the Brown corpus's evaluation text (lm.Model.FreshCorpus with
	// DataSeed, in corpus order: an odd seed reads the test split, an even one the held-out split) when corpora
	// lists "brown" and DataSeed is set; 1 to the split's size.
	BrownDocs int `json:"brown_docs,omitempty"`
	// SelectSequences is the number of sequences of the selection split (the first half of the model's validation
	// split) on which SAE features are selected and prototypes named for the named-set masks; > 0.
	SelectSequences int `json:"select_sequences"`
	// BatchSize is the number of sequences per forward pass; > 0.
	BatchSize int `json:"batch_size"`
	// TokensPerUnit is K, the number of top-activating tokens per unit; > 0. Spec §7.3: 20.
	TokensPerUnit int `json:"tokens_per_unit"`
	// OnePerDoc keeps at most one top token per document (spec §7.3).
	OnePerDoc bool `json:"one_per_doc"`
	// Before and After are the context shown around a top token, in tokens; ≥ 0. Spec §7.3: 24 and 8.
	Before int `json:"before"`
	After  int `json:"after"`
	// MinPurity is the smallest purity of a unit's label for the unit to be named; in (0, 1].
	MinPurity float64 `json:"min_purity"`
	// Alpha is the significance level of the naming test (binomial tail against the label's base rate,
	// Bonferroni-corrected over labels); in (0, 1).
	Alpha float64 `json:"alpha"`
	// ThemeExcess is θ: a label with excess purity ≥ θ counts as one of a unit's themes; in (0, 1].
	ThemeExcess float64 `json:"theme_excess"`
	// NoneLabel gives the tokens without any concept label the label "none" (function words, punctuation), so
	// that a unit selecting them is scored as one theme rather than as none; it never counts as a concept.
	NoneLabel bool `json:"none_label"`
	// MinLabelCount drops labels carried by fewer evaluation tokens (too rare to name); ≥ 1.
	MinLabelCount int `json:"min_label_count"`
	// NullUnits is the number of null units (K random tokens each) of the null baseline; ≥ 1.
	NullUnits int `json:"null_units"`
	// DeadMass is the mass share m_k below which a prototype counts as dead; ≥ 0. Spec §6: 1e-6.
	DeadMass float64 `json:"dead_mass"`
	// DashboardTokens is the number of top tokens (by π and by ρ) listed per prototype in the dashboard table;
	// ≤ TokensPerUnit.
	DashboardTokens int `json:"dashboard_tokens"`
}

// SAEConfig configures the ReLU sparse autoencoders on the LLaMA model's block outputs (spec §7.3).
type SAEConfig struct {
	// Enabled trains one SAE per layer and scores its selected features as units.
	Enabled bool `json:"enabled"`
	// SAEConfig is the dictionary of each layer and the features kept per selection rule (models/pair: model,
	// train, batch_size, features); the presets scale the spec's L0 target down with the dictionary.
	pair.SAEConfig
	// TrainSequences is the number of training sequences (evenly spaced over the model's training stream) whose
	// LLaMA block outputs train each SAE; > 0. The SAE never sees the selection or evaluation tokens.
	TrainSequences int `json:"train_sequences"`
}

// InterveneConfig configures the interventions (spec §5, §7.4).
type InterveneConfig struct {
	// Sequences is the number of calibration sequences, drawn from the first half of the validation split (the
	// selection split), on which each target's prototype is selected; > 0.
	Sequences int `json:"sequences"`
	// HeldOut is the number of held-out sequences, drawn from the evaluation text (eval.data_seed: the fresh
	// documents, else the second half of the validation split), on which the selected prototypes' ΔProb and ΔPPL
	// are reported; > 0.
	HeldOut int `json:"held_out"`
	// InterveneConfig is the sweep (models/pair): min_occurrences, sweeps, reinit_seed, max_ppl_change (also the
	// masking claim's bound on the held-out |ΔPPL|) and min_prob_drop (the per-target pass flag; the masking
	// claim compares with the paper's number instead, Claims).
	pair.InterveneConfig
}

// Validate reports the first problem of the configuration, naming its key.
func (c Config) Validate() error {
	if err := pair.CheckCorpora(len(c.Corpora), func(i int) (string, bool) {
		return c.Corpora[i].Source, c.Corpora[i].Optional
	}); err != nil {
		return err
	}
	for i, cc := range c.Corpora {
		switch {
		case cc.Labels != naming.LabelsMarked && cc.Labels != naming.LabelsInForce && cc.Labels != naming.LabelsLexical:
			return errors.Errorf("corpora[%d].labels=%q, want %q, %q or %q", i, cc.Labels, naming.LabelsMarked,
				naming.LabelsInForce, naming.LabelsLexical)
		case cc.Labels == naming.LabelsLexical && len(cc.Concepts) != 1:
			return errors.Errorf("corpora[%d].labels=%q needs exactly one concept, got %v", i, naming.LabelsLexical,
				cc.Concepts)
		case cc.Interventions && cc.Labels == naming.LabelsInForce:
			return errors.Errorf("corpora[%d]: interventions need labels=%q or %q (they name the target words)", i,
				naming.LabelsMarked, naming.LabelsLexical)
		case cc.Seeds < 0 || cc.Seeds > c.Seeds:
			return errors.Errorf("corpora[%d].seeds=%d, want 0 (all) to seeds=%d", i, cc.Seeds, c.Seeds)
		case cc.Source == lmdata.SourceBrown && c.Eval.DataSeed != 0 && c.Eval.BrownDocs <= 0:
			return errors.Errorf("eval.brown_docs=%d with \"brown\" in corpora; want the number of documents of its "+
				"evaluation split to evaluate on (> 0), or eval.data_seed=0", c.Eval.BrownDocs)
		}
	}
	if err := c.Config.Validate(); err != nil {
		return err
	}
	if c.Seeds < 1 {
		return errors.Errorf("seeds=%d, want ≥ 1 (the number of training seeds; 3 or more for a claim)", c.Seeds)
	}
	e := c.Eval
	switch {
	case e.Sequences <= 0:
		return errors.Errorf("eval.sequences=%d, want > 0", e.Sequences)
	case e.DataSeed != 0 && e.Docs <= 0:
		return errors.Errorf("eval.docs=%d with eval.data_seed=%d, want > 0 (or eval.data_seed=0 to evaluate on the "+
			"validation split)", e.Docs, e.DataSeed)
	case e.SelectSequences <= 0:
		return errors.Errorf("eval.select_sequences=%d, want > 0", e.SelectSequences)
	case e.BatchSize <= 0:
		return errors.Errorf("eval.batch_size=%d, want > 0", e.BatchSize)
	case e.TokensPerUnit <= 0:
		return errors.Errorf("eval.tokens_per_unit=%d, want > 0", e.TokensPerUnit)
	case e.Before < 0 || e.After < 0:
		return errors.Errorf("eval.before=%d, eval.after=%d, want ≥ 0", e.Before, e.After)
	case !(e.MinPurity > 0 && e.MinPurity <= 1):
		return errors.Errorf("eval.min_purity=%g, want in (0, 1]", e.MinPurity)
	case !(e.Alpha > 0 && e.Alpha < 1):
		return errors.Errorf("eval.alpha=%g, want in (0, 1)", e.Alpha)
	case !(e.ThemeExcess > 0 && e.ThemeExcess <= 1):
		return errors.Errorf("eval.theme_excess=%g, want in (0, 1]", e.ThemeExcess)
	case e.MinLabelCount < 1:
		return errors.Errorf("eval.min_label_count=%d, want ≥ 1", e.MinLabelCount)
	case e.NullUnits < 1:
		return errors.Errorf("eval.null_units=%d, want ≥ 1", e.NullUnits)
	case !(e.DeadMass >= 0):
		return errors.Errorf("eval.dead_mass=%g, want ≥ 0", e.DeadMass)
	case e.DashboardTokens < 0 || e.DashboardTokens > e.TokensPerUnit:
		return errors.Errorf("eval.dashboard_tokens=%d, want in [0, tokens_per_unit=%d]", e.DashboardTokens,
			e.TokensPerUnit)
	}
	if s := c.SAE; s.Enabled {
		if err := s.SAEConfig.Validate(c.Model.Width); err != nil {
			return errors.WithMessage(err, "sae")
		}
		if s.TrainSequences <= 0 {
			return errors.Errorf("sae.train_sequences=%d, want > 0", s.TrainSequences)
		}
	}
	iv := c.Intervene
	switch {
	case iv.Sequences <= 0 || iv.HeldOut <= 0:
		return errors.Errorf("intervene.sequences=%d, intervene.held_out=%d, want > 0", iv.Sequences, iv.HeldOut)
	case iv.MinOccurrences < 1:
		return errors.Errorf("intervene.min_occurrences=%d, want ≥ 1", iv.MinOccurrences)
	case !slices.Contains(iv.Sweeps, InterveneWrite):
		return errors.Errorf("intervene.sweeps=%v, want it to contain %q", iv.Sweeps, InterveneWrite)
	case !(iv.MaxPPLChange > 0) || !(iv.MinProbDrop > 0 && iv.MinProbDrop < 1):
		return errors.Errorf("intervene.max_ppl_change=%g, intervene.min_prob_drop=%g, want > 0 and in (0, 1)",
			iv.MaxPPLChange, iv.MinProbDrop)
	}
	for i, k := range iv.Sweeps {
		if k != InterveneWrite && k != InterveneRead && k != InterveneReinit {
			return errors.Errorf("intervene.sweeps[%d]=%q, want %q, %q or %q", i, k, InterveneWrite, InterveneRead,
				InterveneReinit)
		}
	}
	return nil
}

// units returns the unit settings of pair.ScoreUnits (eval.* and sae.*), the null units and SAEs seeded by the
// pair's seed.
func (c Config) units() pair.UnitConfig {
	e := c.Eval
	u := pair.UnitConfig{TokensPerUnit: e.TokensPerUnit, OnePerDoc: e.OnePerDoc, Before: e.Before, After: e.After,
		Score:     naming.ScoreParams{MinPurity: e.MinPurity, Alpha: e.Alpha, ThemeExcess: e.ThemeExcess},
		NullUnits: e.NullUnits, DeadMass: e.DeadMass, DashboardTokens: e.DashboardTokens, BatchSize: e.BatchSize,
		Seed: c.Seed}
	if c.SAE.Enabled {
		u.SAE = &c.SAE.SAEConfig
	}
	return u
}
