package interp

import (
	"github.com/protolab/protolab/layers/sae"
	"github.com/protolab/protolab/models/dictionary"
	"github.com/protolab/protolab/models/pair"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
)

// Synthetic returns the synthetic concept corpus with its marked labels over the four lexical concepts, with
// interventions.
func Synthetic() CorpusConfig {
	return CorpusConfig{Source: lmdata.SourceSynthetic, Labels: LabelsMarked,
		Concepts: []string{"gender", "country", "topic", "number"}, Interventions: true}
}

// WordNet returns WordNet glosses labelled by the supersenses WordNet lists for each word; optional.
func WordNet() CorpusConfig {
	return CorpusConfig{Source: lmdata.SourceWordNet, Labels: LabelsLexical, Concepts: []string{"supersense"},
		Optional: true}
}

// Tiny is seconds on one CPU core: the unit tests and the notebook smoke run use it. Synthetic corpus only, no SAE
// dictionary search beyond a few steps.
func Tiny() Config {
	c := Small()
	c.Config = pair.Tiny()
	c.Corpora = []CorpusConfig{Synthetic()}
	c.Eval.Sequences = 16
	c.Eval.BatchSize = 8
	c.Eval.TopK = 5
	c.Eval.NullUnits = 8
	c.Eval.DashboardTokens = 3
	c.Eval.MinLabelCount = 3
	c.SAE.Train.Steps = 10
	c.SAE.Train.WarmupSteps = 2
	c.SAE.Model.TargetL0 = 2
	c.SAE.BatchSize = 64
	c.Intervene.Sequences = 8
	c.Intervene.HeldOut = 8
	c.Intervene.MinOccurrences = 1
	c.Intervene.Sweeps = []string{InterveneWrite, InterveneRead, InterveneReinit}
	return c
}

// Small is a few minutes of CPU time on a 2-core machine with the pure-Go backend: the models of pair.Small
// (two-layer models of width 32, R = 16 prototypes with sharper initial routing, 4 heads, 500 steps of 16×32 tokens)
// on the synthetic corpus, analysed on 128 held-out sequences, with SAEs of 256 features; the same on WordNet
// glosses when the database is installed (make wordnet).
func Small() Config {
	sm := sae.DefaultConfig()
	sm.TargetL0 = 8 // F = 8·D = 256 features at D = 32
	st := fit.DefaultConfig()
	st.Steps = 300
	st.LR = 3e-3
	st.WarmupSteps = 20
	st.WeightDecay = 0
	st.ClipNorm = 0
	st.EvalEvery = 0
	st.EvalBatches = 1
	st.CheckpointEvery = 0
	return Config{
		Config:  pair.Small(),
		Corpora: []CorpusConfig{Synthetic(), WordNet()},
		Eval: EvalConfig{Sequences: 128, BatchSize: 32, TopK: 20, OnePerDoc: true, Before: 24, After: 8,
			MinPurity: 0.5, Alpha: 0.01, ThemeExcess: 0.25, NoneLabel: true, MinLabelCount: 20, NullUnits: 64, DeadMass: 1e-6,
			DashboardTokens: 8},
		SAE: SAEConfig{Enabled: true, Config: dictionary.Config{Model: sm, Train: st, BatchSize: 256}},
		Intervene: InterveneConfig{Sequences: 128, HeldOut: 128, MinOccurrences: 5, Sweeps: []string{InterveneWrite},
			ReinitSeed: 7, MaxPPLChange: 0.01, MinProbDrop: 0.15},
	}
}

// Paper is the paper's setting (docs/spec/protot.md §1, §3, §7.3): the models of pair.Paper (D = 256, L = 6, R = 32,
// 4 heads, T = 256, B = 32, AdamW at 6e-4, 20k steps), K = 20 contexts of 24 + 8 tokens, SAEs of 8·D features.
// Meant for a GPU with XLA.
func Paper() Config {
	c := Small()
	c.Config = pair.Paper()
	c.Eval.Sequences = 2048
	c.Eval.BatchSize = 16
	c.Eval.MinLabelCount = 50
	c.Eval.NullUnits = 192
	c.SAE.Model = sae.DefaultConfig()
	c.SAE.Train.Steps = 5000
	c.SAE.BatchSize = 1024
	c.Intervene.Sequences = 512
	c.Intervene.HeldOut = 512
	c.Intervene.MinOccurrences = 20
	c.Intervene.Sweeps = []string{InterveneWrite, InterveneRead, InterveneReinit}
	return c
}

// Preset returns the named preset: "tiny", "small" (also "") or "paper".
func Preset(name string) (Config, error) { return run.SelectPreset(name, Tiny, Small, Paper) }

// FromEnv returns the preset named by $PROTOLAB_PRESET (default small).
func FromEnv() (Config, error) { return Preset(run.PresetName()) }
