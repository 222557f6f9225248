package pair

import (
	"fmt"
	"math"
	"slices"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/attention"
	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/protot"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/naming"
	"github.com/protolab/protolab/workbench/probe"
	"github.com/protolab/protolab/workbench/run"
)

// Unit kinds, the values of Unit.Kind and naming.KindSummary.Kind.
const (
	KindProtoPi      = "protot_pi"     // ProtoT prototype (ℓ, k), activation π[t, k]
	KindProtoRho     = "protot_rho"    // ProtoT prototype (ℓ, k), activation ρ[t, k]
	KindHeads        = "heads"         // LLaMA attention head (ℓ, h), activation ‖z[t, h]‖₂
	KindSAEVariance  = "sae_variance"  // SAE feature of the LLaMA block output, top-variance selection
	KindSAEFrequency = "sae_frequency" // SAE feature, top-frequency selection
	KindSAEAll       = "sae_all"       // every SAE feature that fires on the selection text (no selection rule)
	KindNull         = "null"          // K random tokens
)

// Kinds returns every unit kind in the order UnitAnalysis lists them.
func Kinds() []string {
	return []string{KindProtoPi, KindProtoRho, KindHeads, KindSAEVariance, KindSAEFrequency, KindSAEAll, KindNull}
}

// KindName returns the display name of a unit kind.
func KindName(kind string) string {
	switch kind {
	case KindProtoPi:
		return "ProtoT prototypes (π)"
	case KindProtoRho:
		return "ProtoT prototypes (ρ)"
	case KindHeads:
		return "LLaMA heads"
	case KindSAEVariance:
		return "LLaMA SAE (top variance)"
	case KindSAEFrequency:
		return "LLaMA SAE (top frequency)"
	case KindSAEAll:
		return "LLaMA SAE (all live features)"
	case KindNull:
		return "null model"
	}
	return kind
}

// Unit is one scored unit.
type Unit struct {
	Kind  string       `json:"kind"`
	Layer int          `json:"layer"` // -1 for null units
	Index int          `json:"index"` // prototype, head or feature index within the layer
	Name  string       `json:"name"`  // "L0 P3", "L1 H2", "L0 F117", "null 5"
	Score naming.Score `json:"score"`
}

// LabelCoverage tells, for one label, the unit of each kind named with it of highest purity.
type LabelCoverage struct {
	Label string  `json:"label"`
	Base  float64 `json:"base"`
	// Units[i] and Purity[i] belong to UnitAnalysis.Kinds[i]; "" and 0 when no unit of that kind has this name.
	Units  []string  `json:"units"`
	Purity []float64 `json:"purity"`
}

// UnitConfig sets how ScoreUnits names, scores and shows the units (workbench/naming; docs/spec/protot.md §6, §7.3).
type UnitConfig struct {
	TokensPerUnit   int                // K, the number of top-activating tokens per unit; > 0
	OnePerDoc       bool               // at most one top token per document
	Before, After   int                // the context shown around a top token, in tokens
	Score           naming.ScoreParams // when a unit is named, and θ of its themes
	NullUnits       int                // null units of K random tokens
	DeadMass        float64            // the mass share m_k below which a prototype is dead
	DashboardTokens int                // top contexts kept per prototype, by π and by ρ; ≤ TokensPerUnit
	BatchSize       int                // sequences per forward pass
	Seed            uint64             // seeds the null units and the SAEs
	SAE             *SAEConfig         // the SAEs on the LLaMA block outputs; nil: no SAE units
}

// UnitTexts are the token sets ScoreUnits reads: every unit is scored on Eval; the prototypes are named and the
// SAE features selected on Select; the SAEs train on the LLaMA block outputs of the Train sequences ([T+1] tokens
// each).
type UnitTexts struct {
	Eval, Select *naming.Text
	Train        [][]int32
}

// UnitAnalysis is every unit of the pair scored on one text: per kind a summary, every unit, the label coverage, the
// ProtoT prototype dashboards and layer statistics, and the SAEs.
type UnitAnalysis struct {
	// Kinds summarises each unit kind (Kinds(), those that ran) and Units lists every unit.
	Kinds []naming.KindSummary `json:"kinds"`
	Units []Unit               `json:"units"`
	// Coverage tells, per label, which unit of each kind is named with it.
	Coverage []LabelCoverage `json:"coverage"`
	// Prototypes are the ProtoT dashboards, layer-major; Layers the per-layer routing statistics.
	Prototypes []Prototype  `json:"prototypes"`
	Layers     []LayerStats `json:"layers"`
	SAE        []SAEStats   `json:"sae,omitempty"`
}

// Kind returns the summary of a unit kind, or nil.
func (ua *UnitAnalysis) Kind(kind string) *naming.KindSummary {
	for i := range ua.Kinds {
		if ua.Kinds[i].Kind == kind {
			return &ua.Kinds[i]
		}
	}
	return nil
}

// streamNull is the random stream (run.RNG) of the null units; it keeps the name it had in experiments/interp,
// where the analysis began, so that its presets reproduce their numbers.
const streamNull = "interp/null"

// ScoreUnits scores every unit kind of the pair on texts.Eval: the ProtoT prototypes by π and by ρ with their
// dashboards and layer statistics, the LLaMA heads by ‖z‖₂, the SAE features (cfg.SAE) and cfg.NullUnits null units.
// It also returns the prototypes named by π on texts.Select (label → (layer, k)), the named sets an intervention
// masks.
func ScoreUnits(proto, llama *lm.Model, texts UnitTexts, cfg UnitConfig) (*UnitAnalysis, map[string][][2]int,
	error) {
	es, ua := texts.Eval, &UnitAnalysis{}
	base := es.Tokens.BaseRates()
	L, R, T := proto.Config.Model.NumLayers, proto.Config.Model.ProtoT.NumPrototypes, es.T
	piNames := ProbeNames(L, protot.Scope+"."+protot.ProbePi)
	rhoNames := ProbeNames(L, protot.Scope+"."+protot.ProbeRho)
	both := append(slices.Clone(piNames), rhoNames...)
	runner, err := Runner(proto, both)
	if err != nil {
		return nil, nil, err
	}
	acts, _, err := collect(runner, es.Seqs, T, cfg.BatchSize, both)
	if err != nil {
		return nil, nil, err
	}
	named, err := selectionNames(runner, texts.Select, piNames, L, R, cfg)
	if err != nil {
		return nil, nil, err
	}
	byKind := map[string][]Unit{}
	for l := range L {
		pi, rho := acts[piNames[l]], acts[rhoNames[l]]
		wu, wtop := scoreColumns(KindProtoPi, l, pi, R, allColumns(R), "P", es, base, cfg)
		ru, rtop := scoreColumns(KindProtoRho, l, rho, R, allColumns(R), "P", es, base, cfg)
		byKind[KindProtoPi] = append(byKind[KindProtoPi], wu...)
		byKind[KindProtoRho] = append(byKind[KindProtoRho], ru...)
		if err := ua.dashboard(proto, l, [2][]float64{pi, rho}, [2][]Unit{wu, ru}, [2][][]int{wtop, rtop}, es,
			cfg); err != nil {
			return nil, nil, err
		}
	}

	LL := llama.Config.Model.NumLayers
	zNames := ProbeNames(LL, attention.Scope+"."+attention.ProbeZ)
	residNames := ProbeNames(LL, decoder.ProbeResidPost)
	names := zNames
	if cfg.SAE != nil {
		names = append(slices.Clone(zNames), residNames...)
	}
	runner, err = Runner(llama, names)
	if err != nil {
		return nil, nil, err
	}
	lacts, width, err := collect(runner, es.Seqs, T, cfg.BatchSize, names)
	if err != nil {
		return nil, nil, err
	}
	N, H := es.N(), llama.Config.Model.Attention.NumHeads
	for l := range LL {
		z := lacts[zNames[l]]
		Dh := width[zNames[l]] / H
		norms := make([]float64, N*H)
		for n := range N {
			for h := range H {
				s := 0.0
				for _, x := range z[(n*H+h)*Dh : (n*H+h+1)*Dh] {
					s += x * x
				}
				norms[n*H+h] = math.Sqrt(s)
			}
		}
		hu, _ := scoreColumns(KindHeads, l, norms, H, allColumns(H), "H", es, base, cfg)
		byKind[KindHeads] = append(byKind[KindHeads], hu...)
	}
	if cfg.SAE != nil {
		if ua.SAE, err = scoreSAE(llama, texts, lacts, residNames, byKind, base, R, cfg); err != nil {
			return nil, nil, err
		}
	}
	rng := run.RNG(cfg.Seed, streamNull)
	for i := range cfg.NullUnits {
		top := naming.NullTokens(es.Tokens.Doc, cfg.TokensPerUnit, cfg.OnePerDoc, rng)
		byKind[KindNull] = append(byKind[KindNull], Unit{Kind: KindNull, Layer: -1, Index: i,
			Name: fmt.Sprintf("null %d", i), Score: naming.ScoreUnit(top, es.Tokens, base, cfg.Score)})
	}
	for _, kind := range Kinds() {
		units, ok := byKind[kind]
		if !ok {
			continue
		}
		scores := make([]naming.Score, len(units))
		for i, u := range units {
			scores[i] = u.Score
		}
		ua.Kinds = append(ua.Kinds, naming.Summarize(kind, scores, es.Concepts()))
		ua.Units = append(ua.Units, units...)
	}
	for l, name := range es.Tokens.Names {
		if name == naming.NoneLabel {
			continue
		}
		lc := LabelCoverage{Label: name, Base: base[l], Units: make([]string, len(ua.Kinds)),
			Purity: make([]float64, len(ua.Kinds))}
		for i, k := range ua.Kinds {
			for _, u := range byKind[k.Kind] {
				if u.Score.Named && u.Score.Label == name && u.Score.Purity > lc.Purity[i] {
					lc.Units[i], lc.Purity[i] = u.Name, u.Score.Purity
				}
			}
		}
		ua.Coverage = append(ua.Coverage, lc)
	}
	return ua, named, nil
}

// scoreColumns scores every column of a row-major [N, F] matrix as a unit, returning the units and their top sets.
func scoreColumns(kind string, layer int, acts []float64, F int, cols []int, prefix string, es *naming.Text,
	base []float64, cfg UnitConfig) ([]Unit, [][]int) {
	var units []Unit
	var tops [][]int
	for _, f := range cols {
		top := naming.TopTokens(naming.Column(acts, F, f), es.Tokens.Doc, cfg.TokensPerUnit, cfg.OnePerDoc)
		units = append(units, Unit{Kind: kind, Layer: layer, Index: f, Name: fmt.Sprintf("L%d %s%d", layer, prefix, f),
			Score: naming.ScoreUnit(top, es.Tokens, base, cfg.Score)})
		tops = append(tops, top)
	}
	return units, tops
}

// allColumns returns 0, 1, …, F−1.
func allColumns(F int) []int {
	c := make([]int, F)
	for i := range c {
		c[i] = i
	}
	return c
}

// selectionNames scores the prototypes by π on the selection text and maps each label to the prototypes (layer, k)
// named with it; runner must keep the probes piNames.
func selectionNames(runner *probe.Runner, sel *naming.Text, piNames []string, L, R int, cfg UnitConfig) (
	map[string][][2]int, error) {
	acts, _, err := collect(runner, sel.Seqs, sel.T, cfg.BatchSize, piNames)
	if err != nil {
		return nil, errors.WithMessage(err, "pair: the selection text")
	}
	base := sel.Tokens.BaseRates()
	out := map[string][][2]int{}
	for l := range L {
		units, _ := scoreColumns(KindProtoPi, l, acts[piNames[l]], R, allColumns(R), "P", sel, base, cfg)
		for k, u := range units {
			if u.Score.Named {
				out[u.Score.Label] = append(out[u.Score.Label], [2]int{l, k})
			}
		}
	}
	return out, nil
}
