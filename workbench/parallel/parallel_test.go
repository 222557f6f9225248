package parallel

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestDo_ResultsInIndexOrder: every job runs once, each result lands in its own slot, and the results do not depend
// on the number of workers.
func TestDo_ResultsInIndexOrder(t *testing.T) {
	const n = 37
	var want []int
	for i := range n {
		want = append(want, i*i)
	}
	for _, workers := range []int{-1, 0, 1, 3, n, 2 * n} {
		out := make([]int, n)
		calls := make([]int32, n)
		if err := Do(n, workers, func(i int) error {
			atomic.AddInt32(&calls[i], 1)
			out[i] = i * i
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(out, want) {
			t.Errorf("workers=%d: results %v, want %v", workers, out, want)
		}
		for i, c := range calls {
			if c != 1 {
				t.Errorf("workers=%d: job %d ran %d times, want once", workers, i, c)
			}
		}
	}
	if err := Do(0, 4, func(int) error { t.Error("a job ran for n = 0"); return nil }); err != nil {
		t.Error(err)
	}
}

// TestDo_LowestFailingIndexWins: with several failing jobs Do returns the error of the lowest index, whichever
// finished first, and still runs every job.
func TestDo_LowestFailingIndexWins(t *testing.T) {
	var ran atomic.Int32
	err := Do(10, 4, func(i int) error {
		ran.Add(1)
		if i == 3 || i == 7 {
			if i == 3 {
				time.Sleep(20 * time.Millisecond) // job 7 fails first
			}
			return fmt.Errorf("job %d", i)
		}
		return nil
	})
	if err == nil || err.Error() != "job 3" {
		t.Errorf("Do returned %v, want the error of job 3", err)
	}
	if ran.Load() != 10 {
		t.Errorf("%d jobs ran, want all 10", ran.Load())
	}
	sentinel := errors.New("only")
	if err := Do(5, 1, func(i int) error {
		if i == 4 {
			return sentinel
		}
		return nil
	}); !errors.Is(err, sentinel) {
		t.Errorf("Do returned %v, want %v", err, sentinel)
	}
}

// TestDo_BoundsConcurrencyAndStartsInOrder: never more than workers jobs run at once, and one worker takes the jobs
// in index order.
func TestDo_BoundsConcurrencyAndStartsInOrder(t *testing.T) {
	var running, peak atomic.Int32
	if err := Do(20, 3, func(int) error {
		r := running.Add(1)
		for {
			p := peak.Load()
			if r <= p || peak.CompareAndSwap(p, r) {
				break
			}
		}
		time.Sleep(time.Millisecond)
		running.Add(-1)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if p := peak.Load(); p > 3 || p < 1 {
		t.Errorf("peak concurrency %d, want 1…3", p)
	}
	var mu sync.Mutex
	var order []int
	if err := Do(8, 1, func(i int) error {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, i)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(order, []int{0, 1, 2, 3, 4, 5, 6, 7}) {
		t.Errorf("one worker ran the jobs in the order %v, want 0…7", order)
	}
}
