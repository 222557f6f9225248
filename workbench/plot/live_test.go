package plot

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// liveSeries returns name → points of the Live chart's option.
func liveSeries(t *testing.T, l *Live) map[string][][]any {
	t.Helper()
	out := map[string][][]any{}
	for _, s := range list(t, optionOf(t, l.Chart()), "series") {
		out[s["name"].(string)] = points(t, s)
	}
	return out
}

func TestLive_OutsideNotebookKeepsDataAndDoneWritesFile(t *testing.T) {
	fakeAssets(t, "/*fake echarts*/")
	out := t.TempDir()
	t.Setenv(OutEnv, out)
	l := NewLivePlot("training", []string{"train", "valid"}, AxisNames("step", "loss"))
	l.Update(0, 3.0, 3.1)
	l.Update(1, 2.5) // valid not measured at this step
	l.Update(2, 2.0, math.NaN())
	var callback func(step int, metrics map[string]float64) = l.Record
	callback(3, map[string]float64{"valid": 2.2, "train": 1.8, "lr": 0.001})

	s := liveSeries(t, l)
	require.Equal(t, [][]any{{0.0, 3.0}, {1.0, 2.5}, {2.0, 2.0}, {3.0, 1.8}}, s["train"])
	require.Equal(t, [][]any{{0.0, 3.1}, {3.0, 2.2}}, s["valid"])
	require.Equal(t, [][]any{{3.0, 0.001}}, s["lr"], "Record adds series for new metrics")
	require.Panics(t, func() { l.Update(4, 1, 2, 3, 4) }, "more values than series")

	entries, _ := os.ReadDir(out)
	require.Empty(t, entries, "nothing is written before Done")
	require.NoError(t, l.Done())
	entries, _ = os.ReadDir(out)
	require.Len(t, entries, 1)
	b, err := os.ReadFile(filepath.Join(out, entries[0].Name()))
	require.NoError(t, err)
	require.Contains(t, string(b), `"valid"`)
	require.NoError(t, l.Done(), "Done twice is harmless")
}

func TestLive_InNotebookThrottlesAndFinishesWithStaticChart(t *testing.T) {
	fakeAssets(t, "/*fake echarts*/")
	fake := inNotebook(t)
	l := NewLivePlot("loss", []string{"train"})
	l.Interval = time.Hour // only the first update renders before Done
	for i := range 20 {
		l.Update(float64(i), 1/float64(i+1))
	}
	displays, updates := fake.snapshot()
	require.Len(t, displays, 1, "the library, once")
	require.Contains(t, displays[0], "/*fake echarts*/")
	require.Len(t, updates, 1, "throttled: one render within the interval")
	require.Equal(t, "protolab_live_u1", updates[0][0])
	require.Contains(t, updates[0][1], "echarts.init(")
	require.Contains(t, updates[0][1], `"animation":false`)

	require.NoError(t, l.Done())
	displays, updates = fake.snapshot()
	require.Len(t, updates, 2)
	require.Equal(t, [2]string{"protolab_live_u1", ""}, updates[1], "the transient output is cleared")
	require.Len(t, displays, 2, "the final chart is a normal output")
	require.Contains(t, displays[1], "[19,0.05]", "the final chart has the last point")
	require.NotContains(t, updates[0][1], "[19,0.05]")
	l.Update(20, 0.01)
	_, updates = fake.snapshot()
	require.Len(t, updates, 2, "no render after Done")
}

func TestLive_InNotebookRendersEveryUpdateWithoutThrottle(t *testing.T) {
	fakeAssets(t, "/*fake echarts*/")
	fake := inNotebook(t)
	l := NewLivePlot("loss", nil)
	l.Interval = 0
	for i := range 5 {
		l.Record(i, map[string]float64{"train": float64(10 - i)})
	}
	_, updates := fake.snapshot()
	require.Len(t, updates, 5)
	for _, u := range updates {
		require.Equal(t, updates[0][0], u[0], "all renders go to one output")
	}
	require.NoError(t, l.Done())
}

func TestLive_TrailingRenderShowsLastPoint(t *testing.T) {
	fakeAssets(t, "/*fake echarts*/")
	fake := inNotebook(t)
	l := NewLivePlot("loss", []string{"train"})
	l.Interval = 20 * time.Millisecond
	l.Update(0, 1)
	l.Update(1, 0.123456) // within the interval: deferred, not dropped
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, updates := fake.snapshot()
		if len(updates) >= 2 && strings.Contains(updates[len(updates)-1][1], "0.123456") {
			break
		}
		require.True(t, time.Now().Before(deadline), "the deferred render never came: %d updates", len(updates))
		time.Sleep(10 * time.Millisecond)
	}
	require.NoError(t, l.Done())
}
