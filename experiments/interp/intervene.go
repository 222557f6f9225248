package interp

import (
	"fmt"
	"math"
	"slices"

	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/protot"
	"github.com/protolab/protolab/models/lm"
)

// Intervention kinds (spec §5): each acts on one prototype (or a set) of one layer.
const (
	InterveneWrite  = "write"  // write mask: the prototype receives no write mass
	InterveneRead   = "read"   // read mask: the prototype is not read
	InterveneReinit = "reinit" // its row of P is resampled as at initialisation
)

// Sweep is the effect of intervening on each prototype alone, for every target, on the held-out split (Prob,
// PPL) and on the calibration split the prototypes are selected on (CalProb, CalPPL).
type Sweep struct {
	Kind string `json:"kind"`
	// Prob[p][j] is the held-out ΔProb of target j when prototype p (Intervention.Prototypes) is intervened on.
	Prob [][]float64 `json:"prob"`
	// PPL[p] is the held-out ΔPPL of prototype p's intervention.
	PPL     []float64   `json:"ppl"`
	CalProb [][]float64 `json:"cal_prob"`
	CalPPL  []float64   `json:"cal_ppl"`
	// ClassLoss[p][c] is the held-out mean loss increase (nats per position) of prototype p's intervention over
	// the positions of class c (Intervention.Classes): where its perplexity change lands.
	ClassLoss [][]float64 `json:"class_loss"`
}

// TargetEffect summarises the interventions for one target (spec §7.4). Prototypes are selected on the
// calibration split and every reported effect is measured on the held-out split.
type TargetEffect struct {
	Target         string  `json:"target"`
	Occurrences    int     `json:"occurrences"`     // held-out word occurrences
	CalOccurrences int     `json:"cal_occurrences"` // calibration word occurrences
	BaseProb       float64 `json:"base_prob"`       // mean held-out word probability without intervention
	// Share is the held-out occurrences' fraction of the scored positions; Floor = ProbFloor(Share,
	// intervene.max_ppl_change), the lowest ΔProb an intervention can reach within the perplexity bound if it lowers
	// the loss of no other position. A mask of one concept value moves probability to the competing values and
	// lowers the loss where those are the target, so Floor does not bound what such a mask can do (doc.go).
	Share float64 `json:"share"`
	Floor float64 `json:"floor"`
	// MaxProb is the held-out write-mask ΔProb of largest magnitude over prototypes, MeanProb its mean; MaxPPL and
	// MeanPPL likewise for ΔPPL (spec §7.4 columns).
	MaxProb  float64 `json:"max_prob"`
	MeanProb float64 `json:"mean_prob"`
	MaxPPL   float64 `json:"max_ppl"`
	MeanPPL  float64 `json:"mean_ppl"`
	// Best is the prototype whose write mask lowers the target most on the calibration split; its held-out
	// effects under each intervention kind (ΔProb and ΔPPL, indexed like Intervention.Kinds).
	Best     string    `json:"best"`
	BestProb []float64 `json:"best_prob"`
	BestPPL  []float64 `json:"best_ppl"`
	// Selective is the prototype lowering the target most on the calibration split among those whose write
	// mask moves calibration perplexity by less than intervene.max_ppl_change ("" when none); SelectiveProb and
	// SelectivePPL its held-out write effect, SelectiveCalProb its calibration ΔProb.
	Selective        string  `json:"selective"`
	SelectiveProb    float64 `json:"selective_prob"`
	SelectivePPL     float64 `json:"selective_ppl"`
	SelectiveCalProb float64 `json:"selective_cal_prob"`
	// InSample is the prototype a selection on the held-out split itself would pick (most negative held-out
	// write ΔProb with held-out |ΔPPL| < max_ppl_change), with its held-out effect: an optimistic reference that
	// shows the selection bias, never the reported figure.
	InSample     string  `json:"in_sample"`
	InSampleProb float64 `json:"in_sample_prob"`
	InSamplePPL  float64 `json:"in_sample_ppl"`
	// Named lists the prototypes named with the target (by π, on the selection split); NamedProb and NamedPPL are
	// the held-out effect of write-masking all of them at once (zero when Named is empty or would mask a whole
	// layer).
	Named     []string `json:"named"`
	NamedProb float64  `json:"named_prob"`
	NamedPPL  float64  `json:"named_ppl"`
	// ControlProb is the target's held-out write ΔProb of the neutral control prototype (Intervention.Control).
	ControlProb float64 `json:"control_prob"`
	// Pass: the Selective prototype's held-out write mask lowers the target by at least intervene.min_prob_drop
	// with held-out |ΔPPL| below intervene.max_ppl_change.
	Pass bool `json:"pass"`
}

// Intervention is the intervention study of a ProtoT model.
type Intervention struct {
	Prototypes []string `json:"prototypes"` // "L0 P3", layer-major
	Targets    []string `json:"targets"`
	Kinds      []string `json:"kinds"`
	Sweeps     []Sweep  `json:"sweeps"` // one per kind of intervene.sweeps: every prototype × every target
	// BasePPL and Tokens are the held-out perplexity and number of scored positions; CalTokens the calibration's.
	BasePPL   float64 `json:"base_ppl"`
	Tokens    int     `json:"tokens"`
	CalTokens int     `json:"cal_tokens"`
	// MaxPPLChange is the perplexity bound of the selection and of the floors (intervene.max_ppl_change).
	MaxPPLChange float64 `json:"max_ppl_change"`
	// Classes partitions the held-out positions by the concept of their target token: one class per concept whose
	// values label the split (a token with values of several concepts is in each of their classes), and
	// ClassOther for targets carrying none; ClassShare is each class's fraction of the positions.
	Classes    []string  `json:"classes"`
	ClassShare []float64 `json:"class_share"`
	// Control is the neutral control: the prototype with the smallest mean |write ΔProb| over targets on the
	// calibration split; ControlPPL its held-out ΔPPL.
	Control    string         `json:"control"`
	ControlPPL float64        `json:"control_ppl"`
	Effects    []TargetEffect `json:"effects"`
	// Builds is the number of times the scoring graph was built over the whole study: 1 means one compiled
	// executable served every intervention.
	Builds int `json:"builds"`
	// Passed counts the targets whose Pass holds; InSamplePassed those whose InSample prototype would reach
	// min_prob_drop (selection on the evaluation data: a reference, not the target).
	Passed         int `json:"passed"`
	InSamplePassed int `json:"in_sample_passed"`
}

// protoName names prototype k of layer l.
func protoName(l, k int) string { return fmt.Sprintf("L%d P%d", l, k) }

// intervene sweeps every prototype of m (a ProtoT model) with each kind of ic.Sweeps on the calibration split
// cal and the held-out split held, selects per target the best prototypes on cal, measures them (and the other
// kinds, and the named-set masks) on held, and summarises per target. named maps a label to the prototypes
// (layer, k) named with it on the selection split.
func intervene(m *lm.Model, cal, held *evalSet, ic InterveneConfig, batchSize int, named map[string][][2]int) (
	*Intervention, error) {
	cfg := m.Config.Model
	L, R := cfg.NumLayers, cfg.ProtoT.NumPrototypes
	calB, heldB := cal.batches(len(cal.seqs), batchSize), held.batches(len(held.seqs), batchSize)
	if len(calB) > 0 && len(heldB) > 0 && !slices.Equal(calB[0].Shape().Dimensions, heldB[0].Shape().Dimensions) {
		// One executable for both splits: score the held-out split in batches of the calibration's shape.
		heldB = held.batches(len(held.seqs), calB[0].Shape().Dimensions[0])
	}
	sc, err := newScorer(m, calB)
	if err != nil {
		return nil, err
	}
	if len(heldB) == 0 {
		return nil, errors.New("interp: no held-out batches to score interventions on")
	}
	block := func(l int) *model.Scope { return m.Store.Scope(decoder.BlockScope(l)) }
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
	score := func() (calLP, heldLP []float64, err error) {
		if calLP, err = sc.logProbs(calB); err != nil {
			return nil, nil, err
		}
		heldLP, err = sc.logProbs(heldB)
		return calLP, heldLP, err
	}
	baseCal, baseHeld, err := score()
	if err != nil {
		return nil, err
	}
	// Positions are row-major over each split's scored sequences, like its evaluation set (whole batches only).
	trim := func(occ []Occurrence, n int) []Occurrence {
		var out []Occurrence
		for _, o := range occ {
			if o.Pos+o.Len <= n {
				out = append(out, o)
			}
		}
		return out
	}
	calOcc, heldOcc := wordOccurrences(cal), wordOccurrences(held)
	iv := &Intervention{Kinds: []string{InterveneWrite, InterveneRead, InterveneReinit}, Tokens: len(baseHeld),
		CalTokens: len(baseCal), MaxPPLChange: ic.MaxPPLChange}
	var occC, occH [][]Occurrence
	for l, name := range held.tokens.Names {
		c := slices.Index(cal.tokens.Names, name)
		if name == NoneLabel || c < 0 {
			continue
		}
		oc, oh := trim(calOcc[c], len(baseCal)), trim(heldOcc[l], len(baseHeld))
		if len(oc) >= ic.MinOccurrences && len(oh) >= ic.MinOccurrences {
			iv.Targets = append(iv.Targets, name)
			occC, occH = append(occC, oc), append(occH, oh)
		}
	}
	if len(iv.Targets) == 0 {
		return nil, errors.Errorf("interp: no label occurs %d times as a next word in both the calibration (%d "+
			"positions) and the held-out split (%d positions)", ic.MinOccurrences, len(baseCal), len(baseHeld))
	}
	meanLP := 0.0
	for _, x := range baseHeld {
		meanLP += x
	}
	iv.BasePPL = math.Exp(-meanLP / float64(len(baseHeld)))

	var classPos [][]int
	iv.Classes, iv.ClassShare, classPos = positionClasses(held, len(baseHeld))
	type effect struct {
		prob, calProb []float64
		ppl, calPPL   float64
		classLoss     []float64
	}
	measure := func(kind string, byLayer map[int][]int) (effect, error) {
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
			r, err := applyIntervention(m, kind, l, ks, ic.ReinitSeed)
			if err != nil {
				if uerr := undo(); uerr != nil {
					return effect{}, uerr
				}
				return effect{}, err
			}
			restores = append(restores, r)
		}
		lc, lh, err := score()
		if uerr := undo(); err == nil {
			err = uerr
		}
		if err != nil {
			return effect{}, err
		}
		var e effect
		e.calProb, e.calPPL = Effect(baseCal, lc, occC)
		e.prob, e.ppl = Effect(baseHeld, lh, occH)
		e.classLoss = ClassLoss(baseHeld, lh, classPos)
		return e, nil
	}
	for l := range L {
		for k := range R {
			iv.Prototypes = append(iv.Prototypes, protoName(l, k))
		}
	}
	single := map[string]map[int]effect{} // by kind, by prototype index p = l·R + k
	get := func(kind string, p int) (effect, error) {
		if e, ok := single[kind][p]; ok {
			return e, nil
		}
		e, err := measure(kind, map[int][]int{p / R: {p % R}})
		if err != nil {
			return effect{}, errors.WithMessagef(err, "interp: %s intervention on %s", kind, iv.Prototypes[p])
		}
		if single[kind] == nil {
			single[kind] = map[int]effect{}
		}
		single[kind][p] = e
		return e, nil
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
			sw.Prob, sw.PPL = append(sw.Prob, e.prob), append(sw.PPL, e.ppl)
			sw.CalProb, sw.CalPPL = append(sw.CalProb, e.calProb), append(sw.CalPPL, e.calPPL)
			sw.ClassLoss = append(sw.ClassLoss, e.classLoss)
		}
		iv.Sweeps = append(iv.Sweeps, sw)
	}
	write := iv.Sweeps[0]
	// Neutral control: smallest mean |ΔProb| over targets under the write mask, on the calibration split.
	control, controlScore := 0, math.Inf(1)
	for p, row := range write.CalProb {
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
		te := TargetEffect{Target: target, Occurrences: len(occH[j]), CalOccurrences: len(occC[j]),
			BaseProb: wordProb(baseHeld, occH[j]), ControlProb: write.Prob[control][j],
			Share: float64(len(occH[j])) / float64(len(baseHeld))}
		te.Floor = ProbFloor(te.Share, ic.MaxPPLChange)
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
		}
		best, selective := SelectPrototype(write.CalProb, write.CalPPL, j, ic.MaxPPLChange)
		_, inSample := SelectPrototype(write.Prob, write.PPL, j, ic.MaxPPLChange)
		te.Best = iv.Prototypes[best]
		for _, kind := range iv.Kinds {
			e, err := get(kind, best)
			if err != nil {
				return nil, err
			}
			te.BestProb = append(te.BestProb, e.prob[j])
			te.BestPPL = append(te.BestPPL, e.ppl)
		}
		if selective >= 0 {
			te.Selective = iv.Prototypes[selective]
			te.SelectiveProb, te.SelectivePPL = write.Prob[selective][j], write.PPL[selective]
			te.SelectiveCalProb = write.CalProb[selective][j]
			te.Pass = te.SelectiveProb <= -ic.MinProbDrop && math.Abs(te.SelectivePPL) < ic.MaxPPLChange
		}
		if inSample >= 0 {
			te.InSample = iv.Prototypes[inSample]
			te.InSampleProb, te.InSamplePPL = write.Prob[inSample][j], write.PPL[inSample]
			if te.InSampleProb <= -ic.MinProbDrop {
				iv.InSamplePassed++
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
			if wholeLayer(byLayer, R) {
				te.Named = append(te.Named, "(a whole layer: not masked)")
			} else {
				e, err := measure(InterveneWrite, byLayer)
				if err != nil {
					return nil, errors.WithMessagef(err, "interp: masking the prototypes named %s", target)
				}
				te.NamedProb, te.NamedPPL = e.prob[j], e.ppl
			}
		}
		iv.Effects = append(iv.Effects, te)
	}
	iv.Builds = sc.builds
	return iv, clearAll()
}

// wholeLayer reports whether the set covers every prototype of some layer (masking it is invalid, spec §5).
func wholeLayer(byLayer map[int][]int, R int) bool {
	for _, ks := range byLayer {
		seen := map[int]bool{}
		for _, k := range ks {
			seen[k] = true
		}
		if len(seen) == R {
			return true
		}
	}
	return false
}

// SelectPrototype picks, for target j of a sweep (prob[p][j] the ΔProb and ppl[p] the ΔPPL of prototype p), the
// prototype with the most negative ΔProb (best) and the one with the most negative ΔProb among those with
// |ΔPPL| < maxPPL (selective; −1 when none). Ties go to the lower index. Called with the calibration sweep, it is
// the selection; the held-out sweep only measures what it selected.
func SelectPrototype(prob [][]float64, ppl []float64, j int, maxPPL float64) (best, selective int) {
	best, selective = 0, -1
	for p := range prob {
		x := prob[p][j]
		if x < prob[best][j] {
			best = p
		}
		if math.Abs(ppl[p]) < maxPPL && (selective < 0 || x < prob[selective][j]) {
			selective = p
		}
	}
	return best, selective
}
