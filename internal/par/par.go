// Package par runs index ranges on a small persistent pool of goroutines, without
// allocating per call, so that parallel steps of a balancer stay allocation-free.
//
// Results must never depend on how ranges are split among workers: callers that need
// randomness derive one stream per fixed-size chunk (see internal/rng), not per worker.
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// task is one range of one loop; g is the loop's Group.
type task struct {
	fn     func(lo, hi int)
	lo, hi int
	g      *Group
}

// run executes the range and signals the loop's caller after its last range.
func (t task) run() {
	t.fn(t.lo, t.hi)
	if t.g.pending.Add(-1) == 0 {
		t.g.done <- struct{}{}
	}
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
				t.run()
			}
		}()
	}
}

// Workers returns how many workers a parallel loop over n items should use: 1 below
// minPer items per worker, else at most GOMAXPROCS.
func Workers(n, minPer int) int {
	if minPer > 0 && n < 2*minPer {
		return 1 // small loops skip GOMAXPROCS, which takes a lock
	}
	w := runtime.GOMAXPROCS(0)
	if minPer > 0 {
		w = min(w, n/minPer)
	}
	return max(1, w)
}

// Group runs one parallel loop at a time. Its zero value is ready to use; keep one per
// balancer so that its set-up is not repeated (and not allocated) per call.
type Group struct {
	pending atomic.Int32  // ranges handed out and not yet finished
	done    chan struct{} // receives once when pending drops to 0
}

// For calls fn on contiguous ranges covering [0, n), using up to workers goroutines (the
// caller's included), and returns when all are done. fn must be safe to call
// concurrently on disjoint ranges. With workers ≤ 1 it is a plain call fn(0, n).
//
// While it waits, the caller runs queued ranges itself (of this loop or any other), so
// fn may call For on another Group without deadlocking the pool, and a full queue never
// blocks: the range runs in the caller instead.
func (g *Group) For(n, workers int, fn func(lo, hi int)) {
	if workers <= 1 || n < 2 {
		fn(0, n)
		return
	}
	startOnce.Do(start)
	if g.done == nil {
		g.done = make(chan struct{}, 1)
	}
	workers = min(workers, n)
	g.pending.Store(int32(workers - 1))
	for w := 1; w < workers; w++ {
		t := task{fn: fn, lo: n * w / workers, hi: n * (w + 1) / workers, g: g}
		select {
		case tasks <- t:
		default:
			t.run()
		}
	}
	fn(0, n/workers)
	for {
		select {
		case <-g.done:
			return
		case t := <-tasks:
			t.run()
		}
	}
}
