package fit

import (
	"fmt"
	"math"
	"slices"

	"github.com/pkg/errors"
)

// DivergedError is Train's error when a step's loss or gradient norm is not finite. Train stops before applying that
// step's update: the context holds the weights after step Step−1, and no checkpoint is written for step Step. Test
// for it with IsDiverged (it survives errors.WithMessage and fmt.Errorf("%w")), not by matching the message.
type DivergedError struct {
	Step           int     // the step whose loss or gradient norm was not finite
	Loss, GradNorm float64 // that step's values
}

func (e *DivergedError) Error() string {
	return fmt.Sprintf("fit.Train: step %d: loss=%g, gradient norm=%g: not finite; stopped without applying this "+
		"update (the context holds the weights after step %d; no checkpoint was written for step %d)",
		e.Step, e.Loss, e.GradNorm, e.Step-1, e.Step)
}

// IsDiverged reports whether err is, or wraps, a *DivergedError.
func IsDiverged(err error) bool {
	var d *DivergedError
	return errors.As(err, &d)
}

// Trial is one learning rate of a search: the validation loss of the run trained at LR, or Diverged when the run
// stopped with a DivergedError or ended with a loss that is not finite (Loss is then NaN).
type Trial struct {
	LR       float64
	Loss     float64
	Diverged bool
}

// SearchLR trains at every rate of lrs, in order, with train (which returns the run's validation loss), and chooses
// the rate of the lowest loss; ties go to the earlier rate and a diverged trial never wins. A train error that
// IsDiverged, or a loss that is not finite, marks that trial diverged and the search goes on; any other error stops
// the search. It returns every trial and the index of the chosen one, or an error naming the grid when every rate
// diverged (or lrs is empty).
func SearchLR(lrs []float64, train func(lr float64) (loss float64, err error)) ([]Trial, int, error) {
	trials := make([]Trial, 0, len(lrs))
	best := -1
	for _, lr := range lrs {
		loss, err := train(lr)
		if err != nil && !IsDiverged(err) {
			return trials, -1, err
		}
		t := Trial{LR: lr, Loss: loss}
		if err != nil || math.IsNaN(loss) || math.IsInf(loss, 0) {
			t = Trial{LR: lr, Loss: math.NaN(), Diverged: true}
		}
		trials = append(trials, t)
		if !t.Diverged && (best < 0 || t.Loss < trials[best].Loss) {
			best = len(trials) - 1
		}
	}
	if best < 0 {
		return trials, -1, errors.Errorf("fit.SearchLR: no learning rate of %v trained to a finite validation loss "+
			"(every run diverged); lower the grid", lrs)
	}
	return trials, best, nil
}

// AtEdge reports whether lr is the smallest or the largest rate of lrs: a search whose choice sits on an edge of its
// grid may have missed a better rate outside it.
func AtEdge(lrs []float64, lr float64) bool {
	return len(lrs) > 0 && (lr == slices.Min(lrs) || lr == slices.Max(lrs))
}
