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
	require.NoError(t, plot.CheckRendered(ctx, ThroughputChart(res), DecodeChart(res), MemoryChart(res), StateChart(res)))
}
