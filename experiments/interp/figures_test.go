package interp

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/models/pair"
	"github.com/protolab/protolab/workbench/plot"
)

// TestFigures_RenderInBrowser draws the heatmaps and bars of a hand-made result with 16 prototypes (they were 8
// rows squeezed into 184 px) in headless Chromium: each row is at least one label tall, no text leaves the canvas
// or overprints another, and every colour bar is labelled.
func TestFigures_RenderInBrowser(t *testing.T) {
	c := &CorpusResult{Source: "synthetic", Intervene: &pair.Intervention{
		Targets: []string{"king", "queen", "river", "stone", "she", "he"}, Classes: []string{"gender", "place", "other"}}}
	for p := range 16 {
		name := fmt.Sprintf("L%d P%d", p/8, p%8)
		pos := make([]float64, 12)
		for i := range pos {
			pos[i] = 0.1 + 0.05*math.Sin(float64(p+i))
		}
		c.Prototypes = append(c.Prototypes, pair.Prototype{Layer: p / 8, Name: name, HalfLife: float64(p + 1),
			MassShare: 0.06, MassByPos: pos})
		c.Intervene.Prototypes = append(c.Intervene.Prototypes, name)
	}
	sw := pair.Sweep{Kind: InterveneWrite}
	for p := range 16 {
		sw.Prob = append(sw.Prob, []float64{-0.2 * float64(p%3), 0.01, 0, 0.03, -0.5, 0.1})
		sw.ClassLoss = append(sw.ClassLoss, []float64{1e-3 * float64(p), 2e-4, -1e-4})
	}
	c.Intervene.Sweeps = []pair.Sweep{sw}
	res := &Result{Corpora: []*CorpusResult{c}}
	hm := InterventionHeatmap(res, "synthetic", InterveneWrite)
	if err := plot.BrowserAvailable(); err != nil {
		t.Skipf("browser check: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rs, err := plot.Inspect(ctx, hm, RoutingMassHeatmap(res, "synthetic", 0), ClassLossHeatmap(res, "synthetic"),
		PrototypeBars(res, "synthetic"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, rs[0].Height, 16*plot.HeatmapRowHeight, "16 rows of at least plot.HeatmapRowHeight px")
	for _, r := range rs {
		require.Empty(t, r.Problems(), "chart %q", r.Title)
	}
}
