package fit

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"
)

// progressMode is how the progress display writes.
type progressMode int

const (
	modeInPlace progressMode = iota // rewrite one line with '\r' (terminals; Jupyter renders '\r' too)
	modeLines                       // a new line every interval (log files, CI)
)

// progress draws the progress line: step, loss, validation loss, throughput and ETA.
type progress struct {
	w        io.Writer
	mode     progressMode
	interval time.Duration
	now      func() time.Time
	last     time.Time // last draw
	width    int       // length of the last in-place line, to blank leftovers
}

// status is what one progress line shows.
type status struct {
	step, total  int
	loss, val    float64 // NaN: not known yet
	tokensPerSec float64
	eta          time.Duration // < 0: not known yet
}

// newProgress returns the display for w, or nil for a nil w. On a terminal it redraws in place every 0.2 s; in a
// GoNB notebook ($GONB_PIPE set) in place every second, which keeps saved notebooks small; anywhere else it prints a
// line every 5 s.
func newProgress(w io.Writer) *progress {
	if w == nil {
		return nil
	}
	p := &progress{w: w, mode: modeLines, interval: 5 * time.Second, now: time.Now}
	if f, ok := w.(*os.File); ok {
		if info, err := f.Stat(); err == nil && info.Mode()&os.ModeCharDevice != 0 {
			p.mode, p.interval = modeInPlace, 200*time.Millisecond
		}
	}
	if os.Getenv("GONB_PIPE") != "" {
		p.mode, p.interval = modeInPlace, time.Second
	}
	return p
}

// update draws s if the interval has passed since the last draw (always for the first).
func (p *progress) update(s status) {
	if p == nil {
		return
	}
	now := p.now()
	if !p.last.IsZero() && now.Sub(p.last) < p.interval {
		return
	}
	p.last = now
	p.draw(s)
}

// finish draws s and ends the line.
func (p *progress) finish(s status) {
	if p == nil {
		return
	}
	p.draw(s)
	if p.mode == modeInPlace {
		fmt.Fprintln(p.w)
	}
}

func (p *progress) draw(s status) {
	line := formatStatus(s)
	if p.mode == modeLines {
		fmt.Fprintln(p.w, line)
		return
	}
	pad := ""
	if n := len(line); n < p.width {
		pad = strings.Repeat(" ", p.width-n)
	}
	p.width = len(line)
	fmt.Fprint(p.w, "\r"+line+pad)
}

// formatStatus renders e.g. "fit  120/1000  12%  loss 3.4121  val 3.5013  12.3k tok/s  ETA 1m12s".
func formatStatus(s status) string {
	var b strings.Builder
	digits := len(fmt.Sprint(s.total))
	fmt.Fprintf(&b, "fit %*d/%d %3.0f%%", digits, s.step, s.total, 100*float64(s.step)/float64(max(1, s.total)))
	if !math.IsNaN(s.loss) {
		fmt.Fprintf(&b, "  loss %.4f", s.loss)
	}
	if !math.IsNaN(s.val) {
		fmt.Fprintf(&b, "  val %.4f", s.val)
	}
	if s.tokensPerSec > 0 {
		fmt.Fprintf(&b, "  %s tok/s", siRound(s.tokensPerSec))
	}
	if s.eta >= 0 {
		fmt.Fprintf(&b, "  ETA %s", s.eta.Round(time.Second))
	}
	return b.String()
}

// siRound writes x with three significant digits and a k/M/G suffix.
func siRound(x float64) string {
	for _, u := range []struct {
		f float64
		s string
	}{{1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if x >= u.f {
			return fmt.Sprintf("%.3g%s", x/u.f, u.s)
		}
	}
	return fmt.Sprintf("%.3g", x)
}
