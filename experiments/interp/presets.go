package interp

import (
	"github.com/protolab/protolab/layers/sae"
	"github.com/protolab/protolab/models/dictionary"
	"github.com/protolab/protolab/models/pair"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/naming"
	"github.com/protolab/protolab/workbench/run"
)

// Synthetic returns the synthetic concept corpus with its marked labels over the four lexical concepts, with
// interventions.
func Synthetic() CorpusConfig {
	return CorpusConfig{Source: lmdata.SourceSynthetic, Labels: naming.LabelsMarked,
		Concepts: []string{"gender", "country", "topic", "number"}, Interventions: true}
}

// WordNet returns WordNet glosses labelled by the supersenses WordNet lists for each word; optional.
func WordNet() CorpusConfig {
	return CorpusConfig{Source: lmdata.SourceWordNet, Labels: naming.LabelsLexical, Concepts: []string{"supersense"},
		Optional: true}
}

// Brown returns the Brown corpus labelled word by word by the supersenses WordNet lists for each word (doc.go,
// "Labels and metrics"), with interventions on those labels; optional (it needs the corpus and WordNet).
func Brown() CorpusConfig {
	return CorpusConfig{Source: lmdata.SourceBrown, Labels: naming.LabelsLexical, Concepts: []string{"supersense"},
		Interventions: true, Optional: true}
}

// HeldBackEvalSeed is the generator seed of a second set of fresh evaluation documents that no preset uses (on the
// Brown corpus, being even, its held-out split): it is kept untouched until the settings are frozen, then the
// protocol is rerun once with `--set eval.data_seed=<HeldBackEvalSeed>` to confirm its numbers on text nothing was
// ever chosen on.
const HeldBackEvalSeed = 1002

// evalDataSeed is the generator seed of the presets' fresh evaluation documents (eval.data_seed): the synthetic
// corpus the models train on uses seed 1, and no setting of this study was chosen on documents of this seed; being
// odd, it reads the Brown corpus's test split.
const evalDataSeed = 1001

// Tiny is seconds on one CPU core: the unit tests and the notebook smoke run use it. Synthetic corpus only, one
// training seed, no SAE dictionary search beyond a few steps.
func Tiny() Config {
	c := Quick()
	c.Config = pair.Tiny()
	c.Corpora = []CorpusConfig{Synthetic()}
	e, s, iv := &c.Eval, &c.SAE, &c.Intervene
	e.Sequences, e.Docs, e.SelectSequences, e.BatchSize = 16, 40, 16, 8
	e.TokensPerUnit, e.NullUnits, e.DashboardTokens, e.MinLabelCount = 5, 8, 3, 3
	s.Train.Steps, s.Train.WarmupSteps, s.Model.TargetL0, s.BatchSize, s.TrainSequences = 10, 2, 2, 64, 64
	iv.Sequences, iv.HeldOut, iv.MinOccurrences = 8, 8, 1
	iv.Sweeps = []string{InterveneWrite, InterveneRead, InterveneReinit}
	return c
}

// Quick is what a notebook computes at the Small preset when no protocol run is stored (Notebook): protocol v1's
// Small with one training seed, a few minutes of CPU time on a 2-core machine with the pure-Go backend. The models
// of pair.Small (two-layer models of width 32, R = 16 prototypes with the official routing temperatures, 4 heads,
// 500 steps of 16×32 tokens) on the synthetic corpus, scored on 128 sequences of fresh evaluation documents, with
// SAEs of 256 features trained on 1,024 training sequences; the same on WordNet glosses when the database is
// installed (make wordnet). One seed cannot support a claim: its scorecard rows say so (Claims).
func Quick() Config {
	sm := sae.DefaultConfig()
	sm.TargetL0 = 8 // F = 8·D = 256 features at D = 32
	st := fit.DefaultConfig()
	st.Steps, st.LR, st.WarmupSteps, st.WeightDecay, st.ClipNorm = 300, 3e-3, 20, 0, 0
	st.EvalEvery, st.EvalBatches, st.CheckpointEvery = 0, 1, 0
	return Config{
		Config:  pair.Small(),
		Seeds:   1,
		Corpora: []CorpusConfig{Synthetic(), WordNet()},
		Eval: EvalConfig{Sequences: 128, DataSeed: evalDataSeed, Docs: 400, SelectSequences: 128, BatchSize: 32,
			TokensPerUnit: 20, OnePerDoc: true, Before: 24, After: 8, MinPurity: 0.5, Alpha: 0.01, ThemeExcess: 0.25,
			NoneLabel: true, MinLabelCount: 20, NullUnits: 64, DeadMass: 1e-6, DashboardTokens: 8},
		SAE: SAEConfig{Enabled: true, SAEConfig: pair.SAEConfig{Config: dictionary.Config{Model: sm, Train: st,
			BatchSize: 256}}, TrainSequences: 1024},
		Intervene: InterveneConfig{Sequences: 128, HeldOut: 128, InterveneConfig: pair.InterveneConfig{
			MinOccurrences: 5, Sweeps: []string{InterveneWrite}, ReinitSeed: 7, MaxPPLChange: 0.01, MinProbDrop: 0.15}},
	}
}

// Small is the study's protocol v2 (docs/PROTOCOL.md, "interp and robustness"; doc.go, "Protocol"; `protolab run
// interp --preset small`): the pair of pair.SmallV2 (D = 32, L = 3, R = 32, 4 heads, T = 64, 1,500 steps of 16×64
// tokens) on three corpora: the synthetic corpus with five training seeds, WordNet glosses (as protocol v1 runs
// them) and the Brown corpus with three each (seeds 1–3). Each seed trains its own ProtoT model and LLaMA baseline
// (equal non-embedding size, the same data, schedule and budget) and is analysed alike: the SAEs train on training
// tokens, SAE features are selected, named prototype sets named and intervention prototypes chosen on the selection
// split (the first half of the validation split), and every unit is scored and every intervention effect measured
// on text no choice saw: fresh synthetic documents of generator seed 1001, and the Brown test split's 28 documents
// (1001 is odd); HeldBackEvalSeed (on Brown the held-out split) is kept back. The Brown words are labelled by their
// WordNet supersenses, as the WordNet glosses' are; the Brown interventions target those labels. The claims pool the
// seeds of a corpus, one set of rows per claimed corpus (Claims). The seeds and steps are the budget's: `protolab
// cost --preset small` estimates its compute. Protocol v1 (pair.Small, five seeds on the synthetic corpus and
// WordNet) is Small at commit 8706f7f.
//
// The protocol needs every corpus: WordNet and the Brown corpus are required here (a missing one is an error that
// names `make wordnet` or `make brown`), so that a stored protocol result never lacks one; Quick, which `make run`
// shows, skips WordNet when missing and leaves the Brown corpus out.
func Small() Config {
	c := Quick()
	c.Config = pair.SmallV2()
	c.Seeds = 5
	c.Eval.BrownDocs = 28
	c.Corpora = []CorpusConfig{Synthetic(), WordNet(), Brown()}
	for i := range c.Corpora[1:] {
		c.Corpora[1+i].Optional, c.Corpora[1+i].Seeds = false, 3
	}
	return c
}

// Paper is the paper's setting (docs/spec/protot.md §1, §3, §7.3): the models of pair.Paper (D = 256, L = 6, R = 32,
// 4 heads, T = 256, B = 32, AdamW at 6e-4, 20k steps) with three training seeds, K = 20 contexts of 24 + 8 tokens,
// SAEs of 8·D features. Meant for a GPU with XLA.
func Paper() Config {
	c := Small()
	c.Config = pair.Paper()
	c.Seeds = 3
	c.Corpora = []CorpusConfig{Synthetic(), WordNet()}
	c.Corpora[1].Optional = false
	e, s, iv := &c.Eval, &c.SAE, &c.Intervene
	e.BrownDocs = 0
	e.Sequences, e.Docs, e.SelectSequences, e.BatchSize, e.MinLabelCount, e.NullUnits = 2048, 10_000, 1024, 16, 50, 192
	s.Model, s.Train.Steps, s.BatchSize = sae.DefaultConfig(), 5000, 1024
	s.TrainSequences = 2048 // 524k tokens; the host holds their block outputs in float64
	iv.Sequences, iv.HeldOut, iv.MinOccurrences = 512, 512, 20
	iv.Sweeps = []string{InterveneWrite, InterveneRead, InterveneReinit}
	return c
}

// Preset returns the named preset: "tiny", "small" (also "") or "paper".
func Preset(name string) (Config, error) { return run.SelectPreset(name, Tiny, Small, Paper) }
