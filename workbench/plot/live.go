package plot

import (
	"math"
	"slices"
	"sync"
	"time"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/pkg/errors"
)

// DefaultLiveInterval is the default minimum time between two re-renders of a Live chart.
const DefaultLiveInterval = 500 * time.Millisecond

// Live is a line chart that grows while a training loop runs. In a GoNB notebook it re-renders in place
// (gonbui.UpdateHTML on one transient output), at most once per Interval, plus once more after a pause so
// the last point always shows; Done replaces it with a static chart that stays in the saved notebook.
// Outside a notebook Update and Record only keep the data and Done writes the HTML file like Display.
// Live is safe for concurrent use.
type Live struct {
	// Interval is the minimum time between two re-renders; set it before the first Update.
	Interval time.Duration

	mu        sync.Mutex
	title     string
	options   []Option
	names     []string // series order
	index     map[string]int
	xs, ys    [][]float64 // per series
	displayID string      // transient output id, "" until the first render
	last      time.Time   // time of the last render
	timer     *time.Timer // pending trailing render
	done      bool
	err       error // first render error, returned by Done
}

// NewLivePlot returns a live line chart with one series per name (more appear as Record sees new metrics).
// The options are those of Lines.
func NewLivePlot(title string, names []string, options ...Option) *Live {
	l := &Live{Interval: DefaultLiveInterval, title: title, options: options, index: map[string]int{}}
	for _, n := range names {
		l.seriesLocked(n)
	}
	return l
}

// seriesLocked returns the index of the named series, adding it if new.
func (l *Live) seriesLocked(name string) int {
	if i, ok := l.index[name]; ok {
		return i
	}
	l.index[name] = len(l.names)
	l.names = append(l.names, name)
	l.xs = append(l.xs, nil)
	l.ys = append(l.ys, nil)
	return len(l.names) - 1
}

// Update appends the point (x, ys[i]) to series i, in the order of the names given to NewLivePlot; NaN
// values are skipped, so series may be sampled at different x. It panics when given more values than
// there are series.
func (l *Live) Update(x float64, ys ...float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(ys) > len(l.names) {
		panic(errors.Errorf("plot.Live.Update(%q): %d values for %d series %q", l.title, len(ys), len(l.names), l.names))
	}
	for i, y := range ys {
		l.appendLocked(i, x, y)
	}
	l.refreshLocked()
}

// Record appends metrics[name] at x = step to the series of each name, creating series for new names in
// sorted order. Its signature is that of a training-loop callback: pass live.Record as
// func(step int, metrics map[string]float64).
func (l *Live) Record(step int, metrics map[string]float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	keys := make([]string, 0, len(metrics))
	for k := range metrics {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		l.appendLocked(l.seriesLocked(k), float64(step), metrics[k])
	}
	l.refreshLocked()
}

func (l *Live) appendLocked(i int, x, y float64) {
	if math.IsNaN(y) {
		return
	}
	l.xs[i] = append(l.xs[i], x)
	l.ys[i] = append(l.ys[i], y)
}

// Chart returns a static line chart of the data so far.
func (l *Live) Chart() *charts.Line {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.chartLocked()
}

func (l *Live) chartLocked(extra ...Option) *charts.Line {
	series := make([]Series, len(l.names))
	for i, n := range l.names {
		series[i] = Series{Name: n, X: slices.Clone(l.xs[i]), Y: slices.Clone(l.ys[i])}
	}
	return Lines(l.title, nil, series, append(slices.Clone(l.options), extra...)...)
}

// refreshLocked re-renders now if Interval has passed since the last render, else makes sure a render
// happens when it has.
func (l *Live) refreshLocked() {
	if l.done || !nb.active() {
		return
	}
	wait := l.Interval - time.Since(l.last)
	if wait <= 0 {
		l.renderLocked()
		return
	}
	if l.timer == nil {
		l.timer = time.AfterFunc(wait, func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.timer = nil
			if !l.done {
				l.renderLocked()
			}
		})
	}
}

// renderLocked replaces the transient output with the current chart.
func (l *Live) renderLocked() {
	l.last = time.Now()
	if err := ensureLibrary(); err != nil {
		if l.err == nil {
			l.err = err
		}
		return
	}
	if l.displayID == "" {
		l.displayID = "protolab_live_" + nb.uniqueID()
	}
	f := renderFragment(l.chartLocked(noAnimation()))
	nb.updateHTML(l.displayID, f.element+f.script)
}

// Done ends the live display: in a notebook it clears the transient output and shows the final chart with
// Display, so it stays in the saved notebook; elsewhere it writes the HTML file (see Display). It returns
// the first error met while rendering. Later calls do nothing and return nil.
func (l *Live) Done() error {
	l.mu.Lock()
	if l.done {
		l.mu.Unlock()
		return nil
	}
	l.done = true
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	if l.displayID != "" {
		nb.updateHTML(l.displayID, "")
	}
	chart, err := l.chartLocked(), l.err
	l.mu.Unlock()
	if err != nil {
		return err
	}
	return Display(chart)
}
