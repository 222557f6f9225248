package pair

import (
	"math"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/protot"
	"github.com/protolab/protolab/models/lm"
)

// Intervention kinds (docs/spec/protot.md §5): each acts on one prototype (or a set) of one layer.
const (
	InterveneWrite  = "write"  // write mask: the prototype receives no write mass
	InterveneRead   = "read"   // read mask: the prototype is not read
	InterveneReinit = "reinit" // its row of P is resampled as at initialisation
)

// InterveneConfig configures Intervene (docs/spec/protot.md §5, §7.4).
type InterveneConfig struct {
	// MinOccurrences drops targets with fewer word occurrences in either split; ≥ 1.
	MinOccurrences int `json:"min_occurrences"`
	// Sweeps lists the intervention kinds applied to every prototype alone (a prototype × target matrix each);
	// must contain InterveneWrite. The other kinds are measured on each target's best prototype only.
	Sweeps []string `json:"sweeps"`
	// ReinitSeed seeds the re-initialised prototype rows (spec §5).
	ReinitSeed uint64 `json:"reinit_seed"`
	// MaxPPLChange is the bound on |ΔPPL| of a selective mask: the selection keeps masks with calibration |ΔPPL|
	// below it (experiments/interp's masking claim also holds the held-out |ΔPPL| to it).
	MaxPPLChange float64 `json:"max_ppl_change"`
	// MinProbDrop is the held-out ΔProb (as a positive fraction, 0.15 = −15%) a target's selective prototype must
	// reach for TargetEffect.Pass, a per-target flag of the tables.
	MinProbDrop float64 `json:"min_prob_drop"`
}

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

// TargetEffect summarises the interventions for one target (docs/spec/protot.md §7.4). Prototypes are selected on the
// calibration split and every reported effect is measured on the held-out split.
type TargetEffect struct {
	Target         string  `json:"target"`
	Occurrences    int     `json:"occurrences"`     // held-out word occurrences
	CalOccurrences int     `json:"cal_occurrences"` // calibration word occurrences
	BaseProb       float64 `json:"base_prob"`       // mean held-out word probability without intervention
	// Share is the held-out occurrences' fraction of the scored positions; Floor = ProbFloor(Share, MaxPPLChange),
	// the lowest ΔProb an intervention can reach within the perplexity bound if it lowers the loss of no other
	// position. A mask of one concept value moves probability to the competing values and lowers the loss where
	// those are the target, so Floor does not bound what such a mask can do (doc.go, "Interventions").
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
	// mask moves calibration perplexity by less than MaxPPLChange ("" when none); SelectiveProb and SelectivePPL
	// its held-out write effect, SelectiveCalProb its calibration ΔProb.
	Selective        string  `json:"selective"`
	SelectiveProb    float64 `json:"selective_prob"`
	SelectivePPL     float64 `json:"selective_ppl"`
	SelectiveCalProb float64 `json:"selective_cal_prob"`
	// InSample is the prototype a selection on the held-out split itself would pick (most negative held-out
	// write ΔProb with held-out |ΔPPL| < MaxPPLChange), with its held-out effect: an optimistic reference that
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
	// Pass: the Selective prototype's held-out write mask lowers the target by at least MinProbDrop with held-out
	// |ΔPPL| below MaxPPLChange.
	Pass bool `json:"pass"`
}

// Intervention is the intervention sweep of a ProtoT model and its summary per target (Intervene).
type Intervention struct {
	Prototypes []string `json:"prototypes"` // "L0 P3", layer-major
	Targets    []string `json:"targets"`
	Kinds      []string `json:"kinds"`
	Sweeps     []Sweep  `json:"sweeps"` // one per kind of InterveneConfig.Sweeps: every prototype × every target
	// BasePPL and Tokens are the held-out perplexity and number of scored positions; CalTokens the calibration's.
	BasePPL   float64 `json:"base_ppl"`
	Tokens    int     `json:"tokens"`
	CalTokens int     `json:"cal_tokens"`
	// MaxPPLChange is the perplexity bound of the selection and of the floors (InterveneConfig.MaxPPLChange).
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
	// Builds is the number of times the scoring graph was built over the whole sweep: 1 means one compiled
	// executable served every intervention.
	Builds int `json:"builds"`
	// Passed counts the targets whose Pass holds; InSamplePassed those whose InSample prototype would reach
	// MinProbDrop (selection on the evaluation data: a reference, not the target).
	Passed         int `json:"passed"`
	InSamplePassed int `json:"in_sample_passed"`
}

// wholeLayer reports whether the set covers every prototype of some layer (masking it is invalid,
// docs/spec/protot.md §5).
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

// applyIntervention applies one intervention kind (InterveneWrite, InterveneRead, InterveneReinit) to the prototypes
// ks of layer l of m, a ProtoT model, and returns the function that undoes it: masks are cleared, re-initialised
// rows restored from a copy of P. Re-initialised rows are drawn with reinitSeed (protot.ReinitPrototype).
func applyIntervention(m *lm.Model, kind string, l int, ks []int, reinitSeed uint64) (restore func() error, err error) {
	pc := m.Config.Model.ProtoT
	block := m.Store.Scope(decoder.BlockScope(l))
	switch kind {
	case InterveneWrite, InterveneRead:
		mask := make([]float64, pc.NumPrototypes)
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
		if err := protot.SetMasks(block, pc, l, w, r); err != nil {
			return nil, err
		}
		return func() error { return protot.ClearMasks(block, pc, l) }, nil
	case InterveneReinit:
		v := block.At(protot.Scope).GetVariable(protot.VarPrototypes)
		if v == nil {
			return nil, errors.Errorf("pair: layer %d has no %s variable", l, protot.VarPrototypes)
		}
		old, err := v.Value()
		if err != nil {
			return nil, errors.Wrapf(err, "pair: reading %s", v.Path())
		}
		saved, err := old.LocalClone()
		if err != nil {
			return nil, errors.Wrapf(err, "pair: copying %s", v.Path())
		}
		for _, k := range ks {
			if err := protot.ReinitPrototype(block, k, reinitSeed); err != nil {
				return nil, err
			}
		}
		return func() error { return errors.Wrapf(v.SetValue(saved), "pair: restoring %s", v.Path()) }, nil
	}
	return nil, errors.Errorf("pair: unknown intervention %q", kind)
}
