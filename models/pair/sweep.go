package pair

import (
	"math"
	"slices"

	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/protot"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/naming"
)

// Intervene sweeps every prototype of m (a ProtoT model) with each kind of ic.Sweeps on the calibration text cal
// and the held-out text held (scored in batches of batchSize sequences), selects per target the best prototypes on
// cal, measures them (and the other kinds, and the named-set masks) on held, and summarises per target (doc.go,
// "Interventions"). named maps a label to the prototypes (layer, k) named with it on a selection text
// (ScoreUnits). It clears every mask before the sweep and after a sweep that succeeds.
func Intervene(m *lm.Model, cal, held *naming.Text, ic InterveneConfig, batchSize int, named map[string][][2]int) (
	*Intervention, error) {
	cfg := m.Config.Model
	L, R := cfg.NumLayers, cfg.ProtoT.NumPrototypes
	calB, heldB := batches(cal, len(cal.Seqs), batchSize), batches(held, len(held.Seqs), batchSize)
	if len(calB) > 0 && len(heldB) > 0 && !slices.Equal(calB[0].Shape().Dimensions, heldB[0].Shape().Dimensions) {
		// One executable for both splits: score the held-out split in batches of the calibration's shape.
		heldB = batches(held, len(held.Seqs), calB[0].Shape().Dimensions[0])
	}
	sc, err := newScorer(m, calB)
	if err != nil {
		return nil, err
	}
	if len(heldB) == 0 {
		return nil, errors.New("pair: no held-out batches to score interventions on")
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
	trim := func(occ []naming.Occurrence, n int) []naming.Occurrence {
		var out []naming.Occurrence
		for _, o := range occ {
			if o.Pos+o.Len <= n {
				out = append(out, o)
			}
		}
		return out
	}
	calOcc, heldOcc := cal.WordOccurrences(), held.WordOccurrences()
	iv := &Intervention{Kinds: []string{InterveneWrite, InterveneRead, InterveneReinit}, Tokens: len(baseHeld),
		CalTokens: len(baseCal), MaxPPLChange: ic.MaxPPLChange}
	var occC, occH [][]naming.Occurrence
	for l, name := range held.Tokens.Names {
		c := slices.Index(cal.Tokens.Names, name)
		if name == naming.NoneLabel || c < 0 {
			continue
		}
		oc, oh := trim(calOcc[c], len(baseCal)), trim(heldOcc[l], len(baseHeld))
		if len(oc) >= ic.MinOccurrences && len(oh) >= ic.MinOccurrences {
			iv.Targets = append(iv.Targets, name)
			occC, occH = append(occC, oc), append(occH, oh)
		}
	}
	if len(iv.Targets) == 0 {
		return nil, errors.Errorf("pair: no label occurs %d times as a next word in both the calibration (%d "+
			"positions) and the held-out split (%d positions)", ic.MinOccurrences, len(baseCal), len(baseHeld))
	}
	meanLP := 0.0
	for _, x := range baseHeld {
		meanLP += x
	}
	iv.BasePPL = math.Exp(-meanLP / float64(len(baseHeld)))

	var classPos [][]int
	iv.Classes, iv.ClassShare, classPos = held.Classes(len(baseHeld))
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
			iv.Prototypes = append(iv.Prototypes, ProtoName(l, k))
		}
	}
	single := map[string]map[int]effect{} // by kind, by prototype index p = l·R + k
	get := func(kind string, p int) (effect, error) {
		if e, ok := single[kind][p]; ok {
			return e, nil
		}
		e, err := measure(kind, map[int][]int{p / R: {p % R}})
		if err != nil {
			return effect{}, errors.WithMessagef(err, "pair: %s intervention on %s", kind, iv.Prototypes[p])
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
				te.Named = append(te.Named, ProtoName(lk[0], lk[1]))
				byLayer[lk[0]] = append(byLayer[lk[0]], lk[1])
			}
			if wholeLayer(byLayer, R) {
				te.Named = append(te.Named, "(a whole layer: not masked)")
			} else {
				e, err := measure(InterveneWrite, byLayer)
				if err != nil {
					return nil, errors.WithMessagef(err, "pair: masking the prototypes named %s", target)
				}
				te.NamedProb, te.NamedPPL = e.prob[j], e.ppl
			}
		}
		iv.Effects = append(iv.Effects, te)
	}
	iv.Builds = sc.builds
	return iv, clearAll()
}
