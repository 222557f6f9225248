package parallel

import (
	"runtime"
	"sync"
)

// Do runs fn(0) … fn(n−1), at most workers at a time (workers ≤ 0 means GOMAXPROCS), handing out the indices in
// increasing order, so a caller that wants its most expensive jobs first lists them first. Every job runs, even after
// one fails; Do returns once all have returned, with the error of the lowest index that failed (nil if none). fn
// must be safe to call concurrently; it writes its results into slots of its own (out[i]), which keeps them in index
// order.
func Do(n, workers int, fn func(i int) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = fn(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
