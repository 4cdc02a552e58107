// Package par runs index ranges on a small persistent pool of goroutines, without
// allocating per call, so that parallel steps of a balancer stay allocation-free.
//
// Results must never depend on how ranges are split among workers: callers that need
// randomness derive one stream per fixed-size chunk (see internal/rng), not per worker.
package par

import (
	"runtime"
	"sync"
)

type task struct {
	fn     func(lo, hi int)
	lo, hi int
	wg     *sync.WaitGroup
}

var (
	startOnce sync.Once
	tasks     chan task
)

func start() {
	tasks = make(chan task, 64)
	for i := 0; i < max(1, runtime.NumCPU()-1); i++ {
		go func() {
			for t := range tasks {
				t.fn(t.lo, t.hi)
				t.wg.Done()
			}
		}()
	}
}

// Workers returns how many workers a parallel loop over n items should use: 1 below
// minPer items per worker, else at most GOMAXPROCS.
func Workers(n, minPer int) int {
	w := runtime.GOMAXPROCS(0)
	if minPer > 0 {
		w = min(w, n/minPer)
	}
	return max(1, w)
}

// Group runs one parallel loop at a time. Its zero value is ready to use; keep one per
// balancer so that its WaitGroup is not allocated per call.
type Group struct {
	wg sync.WaitGroup
}

// For calls fn on contiguous ranges covering [0, n), using up to workers goroutines (the
// caller's included), and returns when all are done. fn must be safe to call
// concurrently on disjoint ranges. With workers ≤ 1 it is a plain call fn(0, n).
func (g *Group) For(n, workers int, fn func(lo, hi int)) {
	if workers <= 1 || n < 2 {
		fn(0, n)
		return
	}
	startOnce.Do(start)
	workers = min(workers, n)
	g.wg.Add(workers - 1)
	for w := 1; w < workers; w++ {
		tasks <- task{fn: fn, lo: n * w / workers, hi: n * (w + 1) / workers, wg: &g.wg}
	}
	fn(0, n/workers)
	g.wg.Wait()
}
