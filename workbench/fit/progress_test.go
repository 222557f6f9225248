package fit

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

func TestFormatStatus(t *testing.T) {
	s := status{step: 120, total: 1000, loss: 3.41213, val: 3.50131, tokensPerSec: 12345, eta: 72 * time.Second}
	if got, want := formatStatus(s), "fit  120/1000  12%  loss 3.4121  val 3.5013  12.3k tok/s  ETA 1m12s"; got != want {
		t.Errorf("formatStatus = %q, want %q", got, want)
	}
	s = status{step: 1, total: 10, loss: math.NaN(), val: math.NaN(), eta: -1}
	if got, want := formatStatus(s), "fit  1/10  10%"; got != want {
		t.Errorf("formatStatus (nothing known) = %q, want %q", got, want)
	}
}

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestProgress_Throttling(t *testing.T) {
	st := status{step: 1, total: 3, loss: 1, val: math.NaN(), eta: -1}
	clock := &fakeClock{t: time.Unix(1000, 0)}

	var lines bytes.Buffer
	p := &progress{w: &lines, mode: modeLines, interval: 5 * time.Second, now: clock.now}
	p.update(st) // first: drawn
	clock.t = clock.t.Add(time.Second)
	p.update(st) // within the interval: skipped
	clock.t = clock.t.Add(5 * time.Second)
	p.update(st) // drawn
	p.finish(st) // always drawn
	if n := strings.Count(lines.String(), "\n"); n != 3 || strings.Contains(lines.String(), "\r") {
		t.Errorf("line mode wrote %q, want 3 plain lines", lines.String())
	}

	var inPlace bytes.Buffer
	p = &progress{w: &inPlace, mode: modeInPlace, interval: 0, now: clock.now}
	p.update(status{step: 1, total: 3, loss: 1.5, val: 2.5, eta: -1})
	p.update(status{step: 2, total: 3, loss: 1, val: math.NaN(), eta: -1}) // shorter: padded over the old one
	p.finish(status{step: 3, total: 3, loss: 1, val: math.NaN(), eta: -1})
	parts := strings.Split(strings.TrimSuffix(inPlace.String(), "\n"), "\r")
	if len(parts) != 4 || parts[0] != "" || len(parts[2]) != len(parts[1]) || !strings.HasSuffix(inPlace.String(), "\n") {
		t.Errorf("in-place mode wrote %q", inPlace.String())
	}
}

func TestTrain_ProgressAndLogEvery(t *testing.T) {
	t.Setenv("GONB_PIPE", "")
	cfg := testConfig()
	cfg.LogEvery = 5
	var buf bytes.Buffer
	var called []int
	r := trainTest(t, cfg, nil, Progress(&buf), OnStep(func(step int, _ Metrics) { called = append(called, step) }))
	if r.err != nil {
		t.Fatalf("%+v", r.err)
	}
	var steps []int
	for _, m := range r.hist.Steps {
		steps = append(steps, m.Step)
		if !(m.TokensPerSec > 0) || !(m.Elapsed > 0) {
			t.Errorf("step %d: tokens/s %g, elapsed %g; want > 0", m.Step, m.TokensPerSec, m.Elapsed)
		}
	}
	if want := []int{5, 10, 12}; !equalInts(steps, want) || !equalInts(called, want) {
		t.Errorf("recorded steps %v, OnStep calls %v; want %v", steps, called, want)
	}
	out := strings.Split(strings.TrimSpace(buf.String()), "\n")
	last := out[len(out)-1]
	if !strings.HasPrefix(last, "fit 12/12 100%  loss ") || !strings.Contains(last, "  val ") {
		t.Errorf("progress output %q; last line %q", buf.String(), last)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestNewProgress_Modes(t *testing.T) {
	if newProgress(nil) != nil {
		t.Errorf("newProgress(nil) is not nil")
	}
	var buf bytes.Buffer
	t.Setenv("GONB_PIPE", "")
	if p := newProgress(&buf); p.mode != modeLines || p.interval != 5*time.Second {
		t.Errorf("plain writer: mode %d every %s, want lines every 5s", p.mode, p.interval)
	}
	t.Setenv("GONB_PIPE", "/tmp/gonb_pipe")
	if p := newProgress(&buf); p.mode != modeInPlace || p.interval != time.Second {
		t.Errorf("GoNB: mode %d every %s, want in place every 1s", p.mode, p.interval)
	}
}
