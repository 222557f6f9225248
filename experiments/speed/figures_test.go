package speed

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/plot"
)

// TestBenchFigures_RenderInBrowser draws the benchmark figures of the sample result in headless Chromium and
// fails on a paging legend (which hid mamba in exported PNGs), clipped or overprinted text, or an empty series.
func TestBenchFigures_RenderInBrowser(t *testing.T) {
	if err := plot.BrowserAvailable(); err != nil {
		t.Skipf("browser check: %v", err)
	}
	res := benchSample()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	figs := Figures(res)
	require.NoError(t, plot.CheckFigures(figs))
	require.Len(t, figs, 3, "throughput, memory and decode: the sample has both kinds of rows")
	require.NoError(t, plot.CheckRendered(ctx, append(plot.Charts(figs), StateChart(res))...))
}
