package pair

import (
	"math"

	"github.com/protolab/protolab/workbench/naming"
)

// Selectivity is, for one class of positions, the prototype whose write mask raises the class's loss most above
// the loss it adds elsewhere.
type Selectivity struct {
	Class     string
	Share     float64 // the class's fraction of the held-out positions
	Prototype string
	Loss      float64 // mean loss increase over the class's positions (nats)
	Outside   float64 // mean loss increase over every other position (nats): OutsideLoss(Share, Loss, PPL)
	PPL       float64 // the mask's held-out ΔPPL
	// Floor is ProbFloor of all the concept's target occurrences together: the lowest ΔProb within the perplexity
	// bound of a mask that lowers every value of the concept alike, provided it lowers the loss of no other position
	// (doc.go, "Interventions": an assumption, not a bound on what a mask can do).
	Floor float64
}

// OutsideLoss returns the mean loss increase over the positions outside a class that holds a fraction share of
// them, given its mean loss increase on the class and the ΔPPL over all positions: the mean over all positions is
// log(1 + ΔPPL), so outside = (log(1 + ΔPPL) − share·loss)/(1 − share); 0 when the class holds every position.
func OutsideLoss(share, loss, dPPL float64) float64 {
	if share >= 1 {
		return 0
	}
	return (math.Log1p(dPPL) - share*loss) / (1 - share)
}

// ClassSelectivity returns, per concept class (naming.ClassOther excluded), the prototype whose write mask raises the
// loss of the class's positions most above its loss increase on the other positions (Loss − Outside; a hub that
// costs every token alike scores 0).
func ClassSelectivity(iv *Intervention) []Selectivity {
	if iv == nil || len(iv.Sweeps) == 0 || len(iv.Sweeps[0].ClassLoss) == 0 {
		return nil
	}
	write := iv.Sweeps[0]
	var out []Selectivity
	for c, class := range iv.Classes {
		if class == naming.ClassOther {
			continue
		}
		var s Selectivity
		for p, row := range write.ClassLoss {
			x := Selectivity{Class: class, Share: iv.ClassShare[c], Prototype: iv.Prototypes[p], Loss: row[c],
				PPL: write.PPL[p]}
			x.Outside = OutsideLoss(x.Share, x.Loss, x.PPL)
			if p == 0 || x.Loss-x.Outside > s.Loss-s.Outside {
				s = x
			}
		}
		share := 0.0
		for _, e := range iv.Effects {
			if naming.ConceptOf(e.Target) == class {
				share += e.Share
			}
		}
		s.Floor = ProbFloor(share, iv.MaxPPLChange)
		out = append(out, s)
	}
	return out
}

// ClassLoss returns, per class of positions, the mean increase of the loss −log p from the log-probabilities base
// to lp over the class's positions (0 for an empty class).
func ClassLoss(base, lp []float64, classes [][]int) []float64 {
	out := make([]float64, len(classes))
	for c, ps := range classes {
		for _, n := range ps {
			out[c] += base[n] - lp[n]
		}
		if len(ps) > 0 {
			out[c] /= float64(len(ps))
		}
	}
	return out
}

// ProbFloor returns the most negative ΔProb that an intervention can give a target whose word occurrences are a
// fraction share of the scored positions while moving perplexity by less than maxPPL, under the assumption that it
// lowers the loss of no other position (doc.go, "Interventions"): (1 + maxPPL)^(−1/share) − 1. A mask that moves
// probability to competing words lowers their loss, and can go below it.
func ProbFloor(share, maxPPL float64) float64 {
	if share <= 0 {
		return -1
	}
	return math.Pow(1+maxPPL, -1/share) - 1
}
