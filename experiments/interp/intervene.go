package interp

import (
	"fmt"
	"math"
	"slices"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/protot"
)

// Intervention kinds (spec §5): each acts on one prototype (or a set) of one layer.
const (
	InterveneWrite  = "write"  // write mask: the prototype receives no write mass
	InterveneRead   = "read"   // read mask: the prototype is not read
	InterveneReinit = "reinit" // its row of P is resampled as at initialisation
)

// scorer evaluates the log-probability of every target token of fixed batches with the model's current variable
// values. The executable is compiled once: masks and prototypes are variables, so interventions change its inputs,
// not its graph; builds counts the graph constructions, which stays 1 over a whole sweep.
type scorer struct {
	exec    *context.Exec
	batches []*tensors.Tensor // [B, T+1] int32, all of one shape
	builds  int
}

func newScorer(m *Model, batches []*tensors.Tensor) (*scorer, error) {
	if len(batches) == 0 {
		return nil, errors.New("interp: no batches to score interventions on")
	}
	cfg := m.Config.Model
	s := &scorer{batches: batches}
	var err error
	s.exec, err = context.NewExec(m.Backend, m.Ctx.Reuse(), func(ctx *context.Context, batch *graph.Node) *graph.Node {
		s.builds++
		return graph.ConvertDType(graph.Neg(decoder.TokenLosses(ctx, cfg, batch)), dtypes.Float64)
	})
	return s, errors.Wrap(err, "interp: building the intervention executable")
}

// logProbs returns log p(target) of every input position of the batches, row-major: [N_batches·B·T].
func (s *scorer) logProbs() ([]float64, error) {
	var out []float64
	for i, b := range s.batches {
		res, err := s.exec.Exec(b)
		if err != nil {
			return nil, errors.Wrapf(err, "interp: scoring batch %d", i)
		}
		out = append(out, tensors.MustCopyFlatData[float64](res[0])...)
	}
	return out, nil
}

// Effect compares a log-probability vector with the baseline: ΔProb per target (mean over its occurrences of
// p′/p − 1) and ΔPPL (ppl′/ppl − 1 over all positions).
func Effect(base, lp []float64, occurrences [][]int) (dProb []float64, dPPL float64) {
	dProb = make([]float64, len(occurrences))
	for j, occ := range occurrences {
		for _, n := range occ {
			dProb[j] += math.Exp(lp[n]-base[n]) - 1
		}
		if len(occ) > 0 {
			dProb[j] /= float64(len(occ))
		}
	}
	sb, sl := 0.0, 0.0
	for n := range base {
		sb += base[n]
		sl += lp[n]
	}
	// ppl = exp(−mean log p), so ppl′/ppl = exp((Σ log p − Σ log p′)/N).
	return dProb, math.Expm1((sb - sl) / float64(len(base)))
}

// Sweep is the effect of intervening on each prototype alone, for every target.
type Sweep struct {
	Kind string `json:"kind"`
	// Prob[p][j] is ΔProb of target j when prototype p (Intervention.Prototypes) is intervened on.
	Prob [][]float64 `json:"prob"`
	// PPL[p] is ΔPPL of prototype p's intervention.
	PPL []float64 `json:"ppl"`
}

// TargetEffect summarises the interventions for one target (spec §7.4).
type TargetEffect struct {
	Target      string  `json:"target"`
	Occurrences int     `json:"occurrences"`
	BaseProb    float64 `json:"base_prob"` // mean p of the target tokens without intervention
	// MaxProb is the write-mask ΔProb of largest magnitude over prototypes, MeanProb its mean; MaxPPL and MeanPPL
	// likewise for ΔPPL (spec §7.4 columns).
	MaxProb  float64 `json:"max_prob"`
	MeanProb float64 `json:"mean_prob"`
	MaxPPL   float64 `json:"max_ppl"`
	MeanPPL  float64 `json:"mean_ppl"`
	// Best is the prototype whose write mask lowers the target most; its effects under each intervention kind
	// (ΔProb and ΔPPL, indexed like Intervention.Kinds).
	Best     string    `json:"best"`
	BestProb []float64 `json:"best_prob"`
	BestPPL  []float64 `json:"best_ppl"`
	// Selective is the prototype lowering the target most among those whose write mask moves perplexity by less
	// than intervene.max_ppl_change ("" when none); its write effect.
	Selective     string  `json:"selective"`
	SelectiveProb float64 `json:"selective_prob"`
	SelectivePPL  float64 `json:"selective_ppl"`
	// Named lists the prototypes named with the target (by π); NamedProb and NamedPPL are the effect of write-masking
	// all of them at once (zero when Named is empty or would mask a whole layer).
	Named     []string `json:"named"`
	NamedProb float64  `json:"named_prob"`
	NamedPPL  float64  `json:"named_ppl"`
	// ControlProb is the target's write ΔProb of the neutral control prototype (Intervention.Control).
	ControlProb float64 `json:"control_prob"`
	// Pass: Best's write mask lowers the target by at least intervene.min_prob_drop with |ΔPPL| below
	// intervene.max_ppl_change.
	Pass bool `json:"pass"`
}

// Intervention is the intervention study of a ProtoT model.
type Intervention struct {
	Prototypes []string `json:"prototypes"` // "L0 P3", layer-major
	Targets    []string `json:"targets"`
	Kinds      []string `json:"kinds"`
	Sweeps     []Sweep  `json:"sweeps"` // one per kind of intervene.sweeps: every prototype × every target
	BasePPL    float64  `json:"base_ppl"`
	Tokens     int      `json:"tokens"` // scored positions
	// Control is the neutral control: the prototype with the smallest mean |write ΔProb| over targets; ControlPPL
	// its ΔPPL.
	Control    string         `json:"control"`
	ControlPPL float64        `json:"control_ppl"`
	Effects    []TargetEffect `json:"effects"`
	// Builds is the number of times the scoring graph was built over the whole study: 1 means one compiled
	// executable served every intervention.
	Builds int `json:"builds"`
	// Passed counts the targets whose Pass holds; SelectivePassed those whose Selective prototype lowers the target
	// by at least min_prob_drop.
	Passed          int `json:"passed"`
	SelectivePassed int `json:"selective_passed"`
}

// protoName names prototype k of layer l.
func protoName(l, k int) string { return fmt.Sprintf("L%d P%d", l, k) }

// intervene sweeps every prototype of m (a ProtoT model) with each kind of ic.Sweeps on the evaluation batches,
// measures the other kinds on each target's best prototype and the named-set masks, and summarises per target. named maps a label to the prototypes (layer, k) named with it.
func intervene(m *Model, es *evalSet, ic InterveneConfig, batchSize int, named map[string][][2]int) (*Intervention,
	error) {
	cfg := m.Config.Model
	L, R := cfg.NumLayers, cfg.ProtoT.NumPrototypes
	batches := es.batches(ic.Sequences, batchSize)
	sc, err := newScorer(m, batches)
	if err != nil {
		return nil, err
	}
	block := func(l int) *context.Context { return m.Ctx.In(decoder.BlockScope(l)) }
	clearAll := func() error {
		for l := range L {
			if err := protot.ClearMasks(block(l), cfg.ProtoT, l); err != nil {
				return err
			}
		}
		return nil
	}
	if err := clearAll(); err != nil {
		return nil, err
	}
	base, err := sc.logProbs()
	if err != nil {
		return nil, err
	}
	// Targets: labels with enough occurrences as the next token of a scored position. Scored position n of the
	// batches is input n of the evaluation set (both row-major over the same sequences).
	N := len(base)
	iv := &Intervention{Kinds: []string{InterveneWrite, InterveneRead, InterveneReinit}, Tokens: N}
	var occ [][]int
	for l, name := range es.tokens.Names {
		if name == NoneLabel {
			continue
		}
		var o []int
		for n := range N {
			for _, x := range es.next[n] {
				if int(x) == l {
					o = append(o, n)
				}
			}
		}
		if len(o) >= ic.MinOccurrences {
			iv.Targets = append(iv.Targets, name)
			occ = append(occ, o)
		}
	}
	if len(iv.Targets) == 0 {
		return nil, errors.Errorf("interp: no label occurs %d times as a next token in %d positions", ic.MinOccurrences, N)
	}
	meanLP := 0.0
	for _, x := range base {
		meanLP += x
	}
	iv.BasePPL = math.Exp(-meanLP / float64(N))

	apply := func(kind string, l int, ks []int) (restore func() error, err error) {
		switch kind {
		case InterveneWrite, InterveneRead:
			mask := make([]float64, R)
			for k := range mask {
				mask[k] = 1
			}
			for _, k := range ks {
				mask[k] = 0
			}
			w, r := mask, []float64(nil)
			if kind == InterveneRead {
				w, r = nil, mask
			}
			if err := protot.SetMasks(block(l), cfg.ProtoT, l, w, r); err != nil {
				return nil, err
			}
			return func() error { return protot.ClearMasks(block(l), cfg.ProtoT, l) }, nil
		case InterveneReinit:
			v := block(l).In(protot.Scope).GetVariable(protot.VarPrototypes)
			if v == nil {
				return nil, errors.Errorf("interp: layer %d has no %s variable", l, protot.VarPrototypes)
			}
			old, err := v.Value()
			if err != nil {
				return nil, errors.Wrapf(err, "interp: reading %s", v.ScopeAndName())
			}
			saved, err := old.LocalClone()
			if err != nil {
				return nil, errors.Wrapf(err, "interp: copying %s", v.ScopeAndName())
			}
			for _, k := range ks {
				if err := protot.ReinitPrototype(block(l), k, ic.ReinitSeed); err != nil {
					return nil, err
				}
			}
			return func() error { return errors.Wrapf(v.SetValue(saved), "interp: restoring %s", v.ScopeAndName()) },
				nil
		}
		return nil, errors.Errorf("interp: unknown intervention %q", kind)
	}
	measure := func(kind string, l int, ks []int) ([]float64, float64, error) {
		restore, err := apply(kind, l, ks)
		if err != nil {
			return nil, 0, err
		}
		lp, err := sc.logProbs()
		if rerr := restore(); err == nil {
			err = rerr
		}
		if err != nil {
			return nil, 0, err
		}
		dp, dppl := Effect(base, lp, occ)
		return dp, dppl, nil
	}
	for l := range L {
		for k := range R {
			iv.Prototypes = append(iv.Prototypes, protoName(l, k))
		}
	}
	type effect struct {
		prob []float64
		ppl  float64
	}
	single := map[string]map[int]effect{} // by kind, by prototype index p = l·R + k
	get := func(kind string, p int) (effect, error) {
		if e, ok := single[kind][p]; ok {
			return e, nil
		}
		dp, dppl, err := measure(kind, p/R, []int{p % R})
		if err != nil {
			return effect{}, errors.WithMessagef(err, "interp: %s intervention on %s", kind, iv.Prototypes[p])
		}
		if single[kind] == nil {
			single[kind] = map[int]effect{}
		}
		single[kind][p] = effect{dp, dppl}
		return single[kind][p], nil
	}
	for _, kind := range iv.Kinds {
		if !slices.Contains(ic.Sweeps, kind) {
			continue
		}
		sw := Sweep{Kind: kind}
		for p := range iv.Prototypes {
			e, err := get(kind, p)
			if err != nil {
				return nil, err
			}
			sw.Prob = append(sw.Prob, e.prob)
			sw.PPL = append(sw.PPL, e.ppl)
		}
		iv.Sweeps = append(iv.Sweeps, sw)
	}
	write := iv.Sweeps[0]
	// Neutral control: smallest mean |ΔProb| over targets under the write mask.
	control, controlScore := 0, math.Inf(1)
	for p, row := range write.Prob {
		s := 0.0
		for _, x := range row {
			s += math.Abs(x)
		}
		if s < controlScore {
			control, controlScore = p, s
		}
	}
	iv.Control, iv.ControlPPL = iv.Prototypes[control], write.PPL[control]
	P := len(iv.Prototypes)
	for j, target := range iv.Targets {
		te := TargetEffect{Target: target, Occurrences: len(occ[j]), ControlProb: write.Prob[control][j]}
		for _, n := range occ[j] {
			te.BaseProb += math.Exp(base[n])
		}
		te.BaseProb /= float64(len(occ[j]))
		best, selective := 0, -1
		for p := range P {
			x, y := write.Prob[p][j], write.PPL[p]
			te.MeanProb += x / float64(P)
			te.MeanPPL += y / float64(P)
			if math.Abs(x) > math.Abs(te.MaxProb) {
				te.MaxProb = x
			}
			if math.Abs(y) > math.Abs(te.MaxPPL) {
				te.MaxPPL = y
			}
			if x < write.Prob[best][j] {
				best = p
			}
			if math.Abs(y) < ic.MaxPPLChange && (selective < 0 || x < write.Prob[selective][j]) {
				selective = p
			}
		}
		te.Best = iv.Prototypes[best]
		for _, kind := range iv.Kinds {
			e, err := get(kind, best)
			if err != nil {
				return nil, err
			}
			te.BestProb = append(te.BestProb, e.prob[j])
			te.BestPPL = append(te.BestPPL, e.ppl)
		}
		te.Pass = te.BestProb[0] <= -ic.MinProbDrop && math.Abs(te.BestPPL[0]) < ic.MaxPPLChange
		if selective >= 0 {
			te.Selective = iv.Prototypes[selective]
			te.SelectiveProb, te.SelectivePPL = write.Prob[selective][j], write.PPL[selective]
			if te.SelectiveProb <= -ic.MinProbDrop {
				iv.SelectivePassed++
			}
		}
		if te.Pass {
			iv.Passed++
		}
		if set := named[target]; len(set) > 0 {
			byLayer := map[int][]int{}
			for _, lk := range set {
				te.Named = append(te.Named, protoName(lk[0], lk[1]))
				byLayer[lk[0]] = append(byLayer[lk[0]], lk[1])
			}
			if dp, dppl, err := measureSet(apply, sc, base, occ, byLayer); err == nil {
				te.NamedProb, te.NamedPPL = dp[j], dppl
			} else if errors.Cause(err) != errWholeLayer {
				return nil, err
			}
		}
		iv.Effects = append(iv.Effects, te)
	}
	iv.Builds = sc.builds
	return iv, clearAll()
}

// errWholeLayer marks a named set that covers every prototype of a layer (masking it is invalid, spec §5).
var errWholeLayer = errors.New("the set covers a whole layer")

// measureSet write-masks several prototypes of several layers at once and returns the effect.
func measureSet(apply func(kind string, l int, ks []int) (func() error, error), sc *scorer, base []float64,
	occ [][]int, byLayer map[int][]int) ([]float64, float64, error) {
	var restores []func() error
	undo := func() error {
		var first error
		for _, r := range restores {
			if err := r(); err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	for l, ks := range byLayer {
		r, err := apply(InterveneWrite, l, ks)
		if err != nil {
			if uerr := undo(); uerr != nil {
				return nil, 0, uerr
			}
			return nil, 0, errWholeLayer
		}
		restores = append(restores, r)
	}
	lp, err := sc.logProbs()
	if uerr := undo(); err == nil {
		err = uerr
	}
	if err != nil {
		return nil, 0, err
	}
	dp, dppl := Effect(base, lp, occ)
	return dp, dppl, nil
}
