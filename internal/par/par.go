// Package par runs index ranges on a small pool of goroutines, without allocating per
// call while the pool is held, so that parallel steps of a balancer stay
// allocation-free.
//
// The pool lives only while someone holds it: Acquire starts it (or joins the running
// one) and Release stops it when the last holder lets go, waiting for its goroutines to
// exit, so no goroutine outlives the call that started it. Run (when the run has more
// than one worker) and the other entry points hold the pool for the whole call; For
// while nobody holds the pool runs its loop sequentially on the caller (same result, no
// goroutines, no allocation).
//
// A panic in fn on any goroutine is recovered there, every other range of the loop
// still completes, and For re-panics on the caller's goroutine with the first panic
// value (as errgroup-style libraries do), so the caller's recover sees it and the
// Group stays usable.
//
// Results must never depend on how ranges are split among workers, which changes from
// call to call (a worker that finishes its share takes pieces of the others'): callers
// that need randomness derive one stream per fixed-size chunk (see internal/rng), not
// per worker, and callers that sum floating-point values keep one partial sum per chunk.
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// task is one worker's part of one loop: the worker starts on share w of g's loop.
type task struct {
	g *Group
	w int
}

// run works on the loop and signals the loop's caller after the last helper is done.
func (t task) run() {
	t.g.work(t.w)
	if t.g.pending.Add(-1) == 0 {
		t.g.done <- struct{}{}
	}
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

// Acquire starts the pool of GOMAXPROCS − 1 helper goroutines (at least one; with the
// caller of For, GOMAXPROCS), or joins the running one. Every Acquire must be matched by
// one Release.
func Acquire() {
	mu.Lock()
	defer mu.Unlock()
	if refs == 0 {
		p := &pool{tasks: make(chan task, 64)}
		n := max(1, runtime.GOMAXPROCS(0)-1) // with the caller, GOMAXPROCS goroutines
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

// piecesPerShare is how many pieces each worker's share of a loop is cut into. A worker
// that finishes its own share takes the remaining pieces of the others', so a core that
// is slow or descheduled (another process, a hypervisor) delays the loop by at most a
// piece instead of holding it up by its whole share.
const piecesPerShare = 8

// pieceLen is the length of the pieces a loop over n items with the given workers
// (≥ 2) is claimed in: a share cut piecesPerShare ways, rounded up.
func pieceLen(n, workers int) int {
	return max(1, (n+workers*piecesPerShare-1)/(workers*piecesPerShare))
}

// share is one worker's contiguous part of a loop, claimed piece by piece.
type share struct {
	next atomic.Int64 // first unclaimed index (may pass end)
	end  int64
	_    [48]byte // one cache line per share: the workers claim concurrently
}

// Group runs one parallel loop at a time. Its zero value is ready to use; keep one per
// balancer so that its set-up is not repeated (and not allocated) per call.
type Group struct {
	pending  atomic.Int32  // helper tasks handed out and not yet finished
	done     chan struct{} // receives once when pending drops to 0
	fn       func(lo, hi int)
	shares   []share // the current loop's shares, one per worker
	piece    int64
	pmu      sync.Mutex
	panicked bool
	pval     any
}

// work runs pieces of the current loop, first of share w, then of the others in turn,
// until every piece is claimed.
func (g *Group) work(w int) {
	k := len(g.shares)
	for i := 0; i < k; i++ {
		sh := &g.shares[(w+i)%k]
		for {
			lo := sh.next.Add(g.piece) - g.piece
			if lo >= sh.end {
				break
			}
			g.call(int(lo), int(min(lo+g.piece, sh.end)))
		}
	}
}

// call runs one piece, recording a panic instead of unwinding, so that every other
// piece of the loop still runs before For re-panics.
func (g *Group) call(lo, hi int) {
	defer func() {
		if p := recover(); p != nil {
			g.setPanic(p)
		}
	}()
	g.fn(lo, hi)
}

func (g *Group) setPanic(p any) {
	g.pmu.Lock()
	if !g.panicked {
		g.panicked, g.pval = true, p
	}
	g.pmu.Unlock()
}

// For calls fn on contiguous ranges covering [0, n) exactly once, using up to workers
// goroutines (the caller's included), and returns when all are done. fn must be safe to
// call concurrently on disjoint ranges; how [0, n) is cut into ranges, and which
// goroutine runs each, depends on timing. With workers ≤ 1 it is a plain call fn(0, n).
//
// Each worker starts on its own contiguous share of [0, n) (so that in a balanced loop
// it touches the same data every call), claims it piece by piece, and then helps with
// the others' remaining pieces.
//
// While it waits, the caller runs queued tasks itself (of this loop or any other), so
// fn may call For on another Group without deadlocking the pool, and a full queue never
// blocks: the task runs in the caller instead. If fn panics on any range, For waits for
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
	if cap(g.shares) < workers {
		g.shares = make([]share, workers)
	}
	g.shares = g.shares[:workers]
	for w := range g.shares {
		g.shares[w].next.Store(int64(n * w / workers))
		g.shares[w].end = int64(n * (w + 1) / workers)
	}
	g.fn, g.piece = fn, int64(pieceLen(n, workers))
	g.pending.Store(int32(workers - 1))
	for w := 1; w < workers; w++ {
		t := task{g: g, w: w}
		select {
		case p.tasks <- t:
		default:
			t.run()
		}
	}
	g.work(0)
	for {
		select {
		case <-g.done:
			g.fn = nil
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
