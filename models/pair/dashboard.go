package pair

import (
	"fmt"
	"math"
	"strings"

	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/protot"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/host"
	"github.com/protolab/protolab/workbench/naming"
	"github.com/protolab/protolab/workbench/stats"
)

// Prototype is the dashboard of one prototype (docs/spec/protot.md §6).
type Prototype struct {
	Layer int    `json:"layer"`
	K     int    `json:"k"`
	Name  string `json:"name"`
	// Beta is β_k = σ(γ_k) and HalfLife ln ½ / ln β_k, in tokens.
	Beta     float64 `json:"beta"`
	HalfLife float64 `json:"half_life"`
	// MassShare is m_k, the mean of π[t, k] over the evaluation tokens; Dead is m_k < UnitConfig.DeadMass.
	MassShare float64 `json:"mass_share"`
	Dead      bool    `json:"dead"`
	// MassByPos[t] is the mean of π[t, k] over the evaluation sequences at position t: [T].
	MassByPos []float64 `json:"mass_by_pos"`
	// Write and Read are the unit scores by π and by ρ; TopWrite and TopRead their top contexts.
	Write    naming.Score     `json:"write"`
	Read     naming.Score     `json:"read"`
	TopWrite []naming.Context `json:"top_write"`
	TopRead  []naming.Context `json:"top_read"`
}

// LayerStats are the routing diagnostics of one ProtoT layer (docs/spec/protot.md §6).
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

// ProtoName names prototype k of layer l: "L0 P3".
func ProtoName(l, k int) string { return fmt.Sprintf("L%d P%d", l, k) }

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

// dashboard appends the dashboards of layer l's prototypes and the layer's statistics to ua, from the routing
// acts = (π, ρ) of the evaluation text es (row-major [N, R]), their units and their top sets.
func (ua *UnitAnalysis) dashboard(proto *lm.Model, l int, acts [2][]float64, units [2][]Unit, tops [2][][]int,
	es *naming.Text, cfg UnitConfig) error {
	pi, rho := acts[0], acts[1]
	R, T, N := proto.Config.Model.ProtoT.NumPrototypes, es.T, es.N()
	scope := []string{decoder.BlockScope(l), protot.Scope}
	gamma, err := variable64(proto.Store, protot.VarDecayLogit, scope...)
	if err != nil {
		return err
	}
	alpha, err := variable64(proto.Store, protot.VarAlpha, scope...)
	if err != nil {
		return err
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
		pr := Prototype{Layer: l, K: k, Name: ProtoName(l, k), Beta: beta, HalfLife: halfLife,
			MassShare: mass[k], Dead: mass[k] < cfg.DeadMass, MassByPos: make([]float64, T), Write: units[0][k].Score,
			Read: units[1][k].Score, TopWrite: contexts(es, tops[0][k], pi, R, k, cfg),
			TopRead: contexts(es, tops[1][k], rho, R, k, cfg)}
		for n := range N {
			pr.MassByPos[n%T] += pi[n*R+k] / float64(S)
		}
		ua.Prototypes = append(ua.Prototypes, pr)
		ls.MaxShare = math.Max(ls.MaxShare, mass[k])
		if pr.Dead {
			ls.DeadFraction += 1 / float64(R)
		}
		ls.MeanHalfLife += pr.HalfLife / float64(R)
	}
	ls.Gini = stats.Gini(mass)
	ua.Layers = append(ua.Layers, ls)
	return nil
}

// contexts returns the first cfg.DashboardTokens top tokens in their contexts, with their activations (column f
// of a row-major [N, F] matrix) and labels.
func contexts(es *naming.Text, top []int, acts []float64, F, f int, cfg UnitConfig) []naming.Context {
	var out []naming.Context
	for _, i := range top[:min(cfg.DashboardTokens, len(top))] {
		c := es.Context(i, cfg.Before, cfg.After)
		c.Activation = acts[i*F+f]
		var ls []string
		for _, l := range es.Tokens.Of[i] {
			ls = append(ls, es.Tokens.Names[l])
		}
		c.Labels = strings.Join(ls, ",")
		out = append(out, c)
	}
	return out
}

// variable64 returns a variable of vars (by scope path elements and name) as float64 values.
func variable64(vars *model.Store, name string, scopes ...string) ([]float64, error) {
	path := model.JoinPath(append(append([]string{model.RootScopePath}, scopes...), name)...)
	v := vars.GetVariable(path)
	if v == nil {
		return nil, errors.Errorf("pair: no variable %s", path)
	}
	t, err := v.Value()
	if err != nil {
		return nil, errors.Wrapf(err, "pair: reading %s", v.Path())
	}
	out, err := host.Floats(t)
	return out, errors.WithMessagef(err, "pair: variable %s", v.Path())
}
