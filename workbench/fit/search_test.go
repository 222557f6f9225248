package fit

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/pkg/errors"
)

func TestIsDiverged_ThroughWrapping(t *testing.T) {
	d := &DivergedError{Step: 3, Loss: math.NaN(), GradNorm: 1}
	for _, err := range []error{d, errors.WithMessage(d, "training m"), fmt.Errorf("outer: %w", d)} {
		if !IsDiverged(err) {
			t.Errorf("IsDiverged(%v) = false", err)
		}
	}
	if IsDiverged(errors.New("loss not finite")) {
		t.Error("IsDiverged matched an error by its text")
	}
	if msg := d.Error(); !strings.Contains(msg, "step 3") || !strings.Contains(msg, "weights after step 2") {
		t.Errorf("message %q does not name the step and the weights kept", msg)
	}
}

func TestSearchLR(t *testing.T) {
	losses := map[float64]float64{1e-3: 2.0, 3e-3: 1.5, 1e-2: 1.5, 3e-2: math.Inf(1)}
	train := func(lr float64) (float64, error) {
		if lr == 1e-1 {
			return 0, errors.WithMessage(&DivergedError{Step: 2, Loss: math.NaN()}, "lr 0.1")
		}
		return losses[lr], nil
	}
	trials, best, err := SearchLR([]float64{1e-3, 3e-3, 1e-2, 3e-2, 1e-1}, train)
	if err != nil {
		t.Fatal(err)
	}
	if best != 1 || trials[best].LR != 3e-3 {
		t.Errorf("chose trial %d, want 1 (lowest loss, ties to the earlier rate)", best)
	}
	for i, want := range []bool{false, false, false, true, true} {
		if trials[i].Diverged != want {
			t.Errorf("trial %d (lr %g): diverged %v, want %v", i, trials[i].LR, trials[i].Diverged, want)
		}
	}
	if !math.IsNaN(trials[4].Loss) {
		t.Errorf("diverged trial loss %g, want NaN", trials[4].Loss)
	}

	_, _, err = SearchLR([]float64{3e-2, 1e-1}, train)
	if err == nil || !strings.Contains(err.Error(), "lower the grid") {
		t.Errorf("all diverged: err %v, want one saying to lower the grid", err)
	}
	other := errors.New("disk full")
	if _, _, err := SearchLR([]float64{1e-3}, func(float64) (float64, error) { return 0, other }); !errors.Is(err, other) {
		t.Errorf("a non-divergence error: got %v, want it returned", err)
	}
	if _, _, err := SearchLR(nil, train); err == nil {
		t.Error("empty grid: no error")
	}
}

func TestAtEdge(t *testing.T) {
	g := []float64{1e-3, 3e-3, 1e-2}
	if !AtEdge(g, 1e-3) || !AtEdge(g, 1e-2) || AtEdge(g, 3e-3) || AtEdge(nil, 1) {
		t.Error("AtEdge wrong")
	}
}
