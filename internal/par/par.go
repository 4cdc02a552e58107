// Package par runs index ranges on a small pool of goroutines, without allocating per
// call while the pool is held, so that parallel steps of a balancer stay
// allocation-free.
//
// The pool lives only while someone holds it: Acquire starts it (or joins the running
// one) and Release stops it when the last holder lets go, waiting for its goroutines to
// exit, so no goroutine outlives the call that started it. Run and the other entry
// points hold the pool for the whole call; For while nobody holds the pool runs its
// loop sequentially on the caller (same result, no goroutines, no allocation).
//
// A panic in fn on any goroutine is recovered there, every other range of the loop
// still completes, and For re-panics on the caller's goroutine with the first panic
// value (as errgroup-style libraries do), so the caller's recover sees it and the
// Group stays usable.
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

// run executes the range, recording a panic in the loop's Group, and signals the
// loop's caller after its last range.
func (t task) run() {
	defer func() {
		if p := recover(); p != nil {
			t.g.setPanic(p)
		}
		if t.g.pending.Add(-1) == 0 {
			t.g.done <- struct{}{}
		}
	}()
	t.fn(t.lo, t.hi)
}

// pool is one generation of worker goroutines.
type pool struct {
	tasks chan task
	wg    sync.WaitGroup
}

var (
	mu   sync.Mutex
	refs int
	cur  *pool
)

// Acquire starts the pool, or joins the running one. Every Acquire must be matched by
// one Release.
func Acquire() {
	mu.Lock()
	defer mu.Unlock()
	if refs == 0 {
		p := &pool{tasks: make(chan task, 64)}
		n := max(1, runtime.NumCPU()-1)
		p.wg.Add(n)
		for i := 0; i < n; i++ {
			go func() {
				defer p.wg.Done()
				for t := range p.tasks {
					t.run()
				}
			}()
		}
		cur = p
	}
	refs++
}

// Release lets go of the pool; the last holder stops it and waits for its goroutines to
// exit.
func Release() {
	mu.Lock()
	refs--
	if refs > 0 {
		mu.Unlock()
		return
	}
	p := cur
	cur = nil
	mu.Unlock()
	close(p.tasks)
	p.wg.Wait()
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
	pending  atomic.Int32  // ranges handed out and not yet finished
	done     chan struct{} // receives once when pending drops to 0
	pmu      sync.Mutex
	panicked bool
	pval     any
}

func (g *Group) setPanic(p any) {
	g.pmu.Lock()
	if !g.panicked {
		g.panicked, g.pval = true, p
	}
	g.pmu.Unlock()
}

// For calls fn on contiguous ranges covering [0, n), using up to workers goroutines (the
// caller's included), and returns when all are done. fn must be safe to call
// concurrently on disjoint ranges. With workers ≤ 1 it is a plain call fn(0, n).
//
// While it waits, the caller runs queued ranges itself (of this loop or any other), so
// fn may call For on another Group without deadlocking the pool, and a full queue never
// blocks: the range runs in the caller instead. If fn panics on any range, For waits for
// the other ranges and then panics on the caller's goroutine with the first panic value.
func (g *Group) For(n, workers int, fn func(lo, hi int)) {
	if workers <= 1 || n < 2 {
		fn(0, n)
		return
	}
	mu.Lock()
	if refs == 0 {
		mu.Unlock()
		fn(0, n) // nobody holds the pool: run sequentially rather than start it
		return
	}
	refs++ // keep the pool alive until this loop is done
	p := cur
	mu.Unlock()
	defer Release()
	if g.done == nil {
		g.done = make(chan struct{}, 1)
	}
	g.panicked, g.pval = false, nil
	workers = min(workers, n)
	g.pending.Store(int32(workers - 1))
	for w := 1; w < workers; w++ {
		t := task{fn: fn, lo: n * w / workers, hi: n * (w + 1) / workers, g: g}
		select {
		case p.tasks <- t:
		default:
			t.run()
		}
	}
	g.own(fn, n/workers)
	for {
		select {
		case <-g.done:
			if g.panicked {
				v := g.pval
				g.panicked, g.pval = false, nil
				panic(v)
			}
			return
		case t := <-p.tasks:
			t.run()
		}
	}
}

// own runs the caller's range, recording a panic instead of unwinding before the other
// ranges are done.
func (g *Group) own(fn func(lo, hi int), hi int) {
	defer func() {
		if p := recover(); p != nil {
			g.setPanic(p)
		}
	}()
	fn(0, hi)
}
