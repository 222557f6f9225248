package interp

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/attention"
	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/protot"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/models/pair"
	"github.com/protolab/protolab/workbench/host"
	"github.com/protolab/protolab/workbench/naming"
	"github.com/protolab/protolab/workbench/probe"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/stats"
)

// Unit kinds, the values of Unit.Kind and KindSummary.Kind.
const (
	KindProtoPi      = "protot_pi"     // ProtoT prototype (ℓ, k), activation π[t, k]
	KindProtoRho     = "protot_rho"    // ProtoT prototype (ℓ, k), activation ρ[t, k]
	KindHeads        = "heads"         // LLaMA attention head (ℓ, h), activation ‖z[t, h]‖₂
	KindSAEVariance  = "sae_variance"  // SAE feature of the LLaMA block output, top-variance selection
	KindSAEFrequency = "sae_frequency" // SAE feature, top-frequency selection
	KindSAEAll       = "sae_all"       // every SAE feature that fires on the selection split (no selection rule)
	KindNull         = "null"          // K random tokens
)

// Unit is one scored unit.
type Unit struct {
	Kind  string       `json:"kind"`
	Layer int          `json:"layer"` // -1 for null units
	Index int          `json:"index"` // prototype, head or feature index within the layer
	Name  string       `json:"name"`  // "L0 P3", "L1 H2", "L0 F117", "null 5"
	Score naming.Score `json:"score"`
}

// Prototype is the dashboard of one prototype (spec §6).
type Prototype struct {
	Layer int    `json:"layer"`
	K     int    `json:"k"`
	Name  string `json:"name"`
	// Beta is β_k = σ(γ_k) and HalfLife ln ½ / ln β_k, in tokens.
	Beta     float64 `json:"beta"`
	HalfLife float64 `json:"half_life"`
	// MassShare is m_k, the mean of π[t, k] over the evaluation tokens; Dead is m_k < eval.dead_mass.
	MassShare float64 `json:"mass_share"`
	Dead      bool    `json:"dead"`
	// MassByPos[t] is the mean of π[t, k] over the evaluation sequences at position t: [T].
	MassByPos []float64 `json:"mass_by_pos"`
	// Write and Read are the unit scores by π and by ρ; TopWrite and TopRead their top contexts.
	Write    naming.Score `json:"write"`
	Read     naming.Score `json:"read"`
	TopWrite []Context    `json:"top_write"`
	TopRead  []Context    `json:"top_read"`
}

// LayerStats are the routing diagnostics of one ProtoT layer (spec §6).
type LayerStats struct {
	Layer        int     `json:"layer"`
	Alpha        float64 `json:"alpha"`         // output gate α
	Gini         float64 `json:"gini"`          // Gini coefficient of the mass shares m
	MaxShare     float64 `json:"max_share"`     // max_k m_k
	DeadFraction float64 `json:"dead_fraction"` // #{k : m_k < dead_mass}/R
	Top1Mean     float64 `json:"top1_mean"`     // mean over tokens of max_k π
	MeanHalfLife float64 `json:"mean_half_life"`
	ReadWriteJS  float64 `json:"read_write_js"` // mean over tokens of JS(π_t ‖ ρ_t)
}

// LabelCoverage tells, for one label, the unit of each kind named with it of highest purity.
type LabelCoverage struct {
	Label string  `json:"label"`
	Base  float64 `json:"base"`
	// Units[i] and Purity[i] belong to CorpusResult.Kinds[i]; "" and 0 when no unit of that kind has this name.
	Units  []string  `json:"units"`
	Purity []float64 `json:"purity"`
}

// collect runs the runner over sequences of T inputs (each [T+1] or longer; its first T tokens are the inputs) in
// batches of B (the last batch padded with copies of its last row, so one executable serves all) and returns each
// probe as a row-major [N, F] matrix over the N = len(seqs)·T input tokens, F the product of its axes after [B, T].
func collect(r *probe.Runner, seqs [][]int32, T, B int, names []string) (map[string][]float64, map[string]int,
	error) {
	S := len(seqs)
	B = min(B, S)
	acts := map[string][]float64{}
	width := map[string]int{}
	for from := 0; from < S; from += B {
		to := min(from+B, S)
		rows := make([][]int32, B)
		for i := range rows {
			rows[i] = seqs[min(from+i, to-1)][:T]
		}
		c, err := r.Run(tensors.FromValue(rows))
		if err != nil {
			return nil, nil, errors.WithMessagef(err, "interp: probing sequences %d–%d", from, to)
		}
		for _, name := range names {
			vals, dims, err := c.Float64(name)
			if err != nil {
				return nil, nil, err
			}
			if len(dims) < 2 || dims[0] != B || dims[1] != T {
				return nil, nil, errors.Errorf("interp: probe %s has dims %v, want [%d, %d, ...]", name, dims, B, T)
			}
			F := len(vals) / (B * T)
			width[name] = F
			acts[name] = append(acts[name], vals[:(to-from)*T*F]...)
		}
	}
	return acts, width, nil
}

// variable64 returns a variable of vars (by scope path elements and name) as float64 values.
func variable64(vars *model.Store, name string, scopes ...string) ([]float64, error) {
	path := model.JoinPath(append(append([]string{model.RootScopePath}, scopes...), name)...)
	v := vars.GetVariable(path)
	if v == nil {
		return nil, errors.Errorf("interp: no variable %s", path)
	}
	t, err := v.Value()
	if err != nil {
		return nil, errors.Wrapf(err, "interp: reading %s", v.Path())
	}
	out, err := host.Floats(t)
	return out, errors.WithMessagef(err, "interp: variable %s", v.Path())
}

// HalfLife returns ln ½ / ln β, the number of tokens after which a write has lost half its weight; +Inf for β ≥ 1
// and 0 for β ≤ 0.
func HalfLife(beta float64) float64 {
	switch {
	case beta >= 1:
		return math.Inf(1)
	case beta <= 0:
		return 0
	}
	return math.Log(0.5) / math.Log(beta)
}

// scoreColumns scores every column of a row-major [N, F] matrix as a unit, returning the units and their top sets.
func scoreColumns(kind string, layer int, acts []float64, F int, cols []int, prefix string, es *evalSet,
	base []float64, ec EvalConfig) ([]Unit, [][]int) {
	p := naming.ScoreParams{MinPurity: ec.MinPurity, Alpha: ec.Alpha, ThemeExcess: ec.ThemeExcess}
	var units []Unit
	var tops [][]int
	for _, f := range cols {
		top := naming.TopTokens(naming.Column(acts, F, f), es.tokens.Doc, ec.TopK, ec.OnePerDoc)
		units = append(units, Unit{Kind: kind, Layer: layer, Index: f, Name: fmt.Sprintf("L%d %s%d", layer, prefix, f),
			Score: naming.ScoreUnit(top, es.tokens, base, p)})
		tops = append(tops, top)
	}
	return units, tops
}

// contexts returns the contexts of top tokens with their activations (column f of a row-major [N, F] matrix).
func contexts(es *evalSet, top []int, acts []float64, F, f int, ec EvalConfig, n int) []Context {
	var out []Context
	for _, i := range top[:min(n, len(top))] {
		c := es.context(i, ec.Before, ec.After)
		c.Activation = acts[i*F+f]
		var ls []string
		for _, l := range es.tokens.Of[i] {
			ls = append(ls, es.tokens.Names[l])
		}
		c.Labels = strings.Join(ls, ",")
		out = append(out, c)
	}
	return out
}

// analyzeUnits fills the units, kinds, coverage, prototype dashboards and layer statistics of cr, every unit scored
// on the evaluation split; it returns the prototypes named by π on the selection split (label → (layer, k)), the
// named sets the interventions mask.
func analyzeUnits(cr *CorpusResult, cfg Config, proto, llama *lm.Model, sp *splits, o run.Options) (
	map[string][][2]int, error) {
	ec, es := cfg.Eval, sp.eval
	base := es.tokens.BaseRates()
	L, R, T := proto.Config.Model.NumLayers, proto.Config.Model.ProtoT.NumPrototypes, es.T
	piNames := pair.ProbeNames(L, protot.Scope+"."+protot.ProbePi)
	rhoNames := pair.ProbeNames(L, protot.Scope+"."+protot.ProbeRho)
	both := append(slices.Clone(piNames), rhoNames...)
	runner, err := pair.Runner(proto, both)
	if err != nil {
		return nil, err
	}
	acts, _, err := collect(runner, es.seqs, T, ec.BatchSize, both)
	if err != nil {
		return nil, err
	}
	named, err := selectionNames(runner, sp.sel, piNames, L, R, ec)
	if err != nil {
		return nil, err
	}
	N := es.N()
	byKind := map[string][]Unit{}
	for l := range L {
		pi, rho := acts[piNames[l]], acts[rhoNames[l]]
		wu, wtop := scoreColumns(KindProtoPi, l, pi, R, allColumns(R), "P", es, base, ec)
		ru, rtop := scoreColumns(KindProtoRho, l, rho, R, allColumns(R), "P", es, base, ec)
		byKind[KindProtoPi] = append(byKind[KindProtoPi], wu...)
		byKind[KindProtoRho] = append(byKind[KindProtoRho], ru...)
		scope := []string{decoder.BlockScope(l), protot.Scope}
		gamma, err := variable64(proto.Store, protot.VarDecayLogit, scope...)
		if err != nil {
			return nil, err
		}
		alpha, err := variable64(proto.Store, protot.VarAlpha, scope...)
		if err != nil {
			return nil, err
		}
		ls := LayerStats{Layer: l, Alpha: alpha[0]}
		mass := make([]float64, R)
		for n := range N {
			top1 := 0.0
			for k := range R {
				mass[k] += pi[n*R+k] / float64(N)
				top1 = math.Max(top1, pi[n*R+k])
			}
			ls.Top1Mean += top1 / float64(N)
			ls.ReadWriteJS += stats.JensenShannon(pi[n*R:(n+1)*R], rho[n*R:(n+1)*R]) / float64(N)
		}
		S := N / T
		for k := range R {
			// ln β = −softplus(−γ): the half-life ln 2 / softplus(−γ) stays finite where β rounds to 1.
			beta, halfLife := 1/(1+math.Exp(-gamma[k])), math.Ln2/math.Log1p(math.Exp(-gamma[k]))
			pr := Prototype{Layer: l, K: k, Name: protoName(l, k), Beta: beta, HalfLife: halfLife,
				MassShare: mass[k], Dead: mass[k] < ec.DeadMass, MassByPos: make([]float64, T), Write: wu[k].Score,
				Read: ru[k].Score, TopWrite: contexts(es, wtop[k], pi, R, k, ec, ec.DashboardTokens),
				TopRead: contexts(es, rtop[k], rho, R, k, ec, ec.DashboardTokens)}
			for n := range N {
				pr.MassByPos[n%T] += pi[n*R+k] / float64(S)
			}
			cr.Prototypes = append(cr.Prototypes, pr)
			ls.MaxShare = math.Max(ls.MaxShare, mass[k])
			if pr.Dead {
				ls.DeadFraction += 1 / float64(R)
			}
			ls.MeanHalfLife += pr.HalfLife / float64(R)
		}
		ls.Gini = stats.Gini(mass)
		cr.Layers = append(cr.Layers, ls)
	}
	o.Logf(Study, "%s (seed %d): scored %d prototypes", cr.Source, cfg.Seed, L*R)

	LL := llama.Config.Model.NumLayers
	zNames := pair.ProbeNames(LL, attention.Scope+"."+attention.ProbeZ)
	residNames := pair.ProbeNames(LL, decoder.ProbeResidPost)
	names := zNames
	if cfg.SAE.Enabled {
		names = append(slices.Clone(zNames), residNames...)
	}
	runner, err = pair.Runner(llama, names)
	if err != nil {
		return nil, err
	}
	lacts, width, err := collect(runner, es.seqs, T, ec.BatchSize, names)
	if err != nil {
		return nil, err
	}
	H := llama.Config.Model.Attention.NumHeads
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
		hu, _ := scoreColumns(KindHeads, l, norms, H, allColumns(H), "H", es, base, ec)
		byKind[KindHeads] = append(byKind[KindHeads], hu...)
	}
	if cfg.SAE.Enabled {
		if err := analyzeSAE(cr, cfg, llama, sp, lacts, residNames, byKind, base, o); err != nil {
			return nil, err
		}
	}
	rng := run.RNG(cfg.Seed, "interp/null")
	p := naming.ScoreParams{MinPurity: ec.MinPurity, Alpha: ec.Alpha, ThemeExcess: ec.ThemeExcess}
	for i := range ec.NullUnits {
		top := naming.NullTokens(es.tokens.Doc, ec.TopK, ec.OnePerDoc, rng)
		byKind[KindNull] = append(byKind[KindNull], Unit{Kind: KindNull, Layer: -1, Index: i,
			Name: fmt.Sprintf("null %d", i), Score: naming.ScoreUnit(top, es.tokens, base, p)})
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
		cr.Kinds = append(cr.Kinds, naming.Summarize(kind, scores, es.concepts()))
		cr.Units = append(cr.Units, units...)
	}
	for l, name := range es.tokens.Names {
		if name == NoneLabel {
			continue
		}
		lc := LabelCoverage{Label: name, Base: base[l], Units: make([]string, len(cr.Kinds)),
			Purity: make([]float64, len(cr.Kinds))}
		for i, k := range cr.Kinds {
			for _, u := range byKind[k.Kind] {
				if u.Score.Named && u.Score.Label == name && u.Score.Purity > lc.Purity[i] {
					lc.Units[i], lc.Purity[i] = u.Name, u.Score.Purity
				}
			}
		}
		cr.Coverage = append(cr.Coverage, lc)
	}
	return named, nil
}

// Kinds returns every unit kind in the order results list them.
func Kinds() []string {
	return []string{KindProtoPi, KindProtoRho, KindHeads, KindSAEVariance, KindSAEFrequency, KindSAEAll, KindNull}
}

// allColumns returns 0, 1, …, F−1.
func allColumns(F int) []int {
	c := make([]int, F)
	for i := range c {
		c[i] = i
	}
	return c
}

// selectionNames scores the prototypes by π on the selection split and maps each label to the prototypes (layer, k)
// named with it; runner must keep the probes piNames.
func selectionNames(runner *probe.Runner, sel *evalSet, piNames []string, L, R int, ec EvalConfig) (
	map[string][][2]int, error) {
	acts, _, err := collect(runner, sel.seqs, sel.T, ec.BatchSize, piNames)
	if err != nil {
		return nil, errors.WithMessage(err, "interp: the selection split")
	}
	base := sel.tokens.BaseRates()
	out := map[string][][2]int{}
	for l := range L {
		units, _ := scoreColumns(KindProtoPi, l, acts[piNames[l]], R, allColumns(R), "P", sel, base, ec)
		for k, u := range units {
			if u.Score.Named {
				out[u.Score.Label] = append(out[u.Score.Label], [2]int{l, k})
			}
		}
	}
	return out, nil
}
