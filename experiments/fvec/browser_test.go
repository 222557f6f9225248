package fvec

import (
	"context"
	"testing"
	"time"

	"github.com/protolab/protolab/workbench/plot"
)

// TestFigures_RenderInBrowser draws every figure the notebook exports (Figures) of the Tiny result, and the
// patching lines, in headless Chromium and fails on a paging legend, clipped or overprinted text, an empty series or
// an unlabelled colour bar (plot.Rendering.Problems).
func TestFigures_RenderInBrowser(t *testing.T) {
	if err := plot.BrowserAvailable(); err != nil {
		t.Skipf("browser check: %v", err)
	}
	res, _ := tinyResult(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := plot.CheckRendered(ctx, append(plot.Charts(Figures(res)), PatchLines(res, "a"))...)
	if err != nil {
		t.Fatalf("%v", err)
	}
}
