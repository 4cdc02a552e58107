package par

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestForCovers checks that For calls fn on disjoint, non-empty, contiguous ranges
// that cover [0, n) exactly once, for many n and worker counts, in pieces no longer
// than a worker's share cut piecesPerShare ways.
func TestForCovers(t *testing.T) {
	Acquire()
	defer Release()
	var g Group
	ns := []int{0, 1, 2, 3, 5, 7, 8, 63, 64, 65, 100, 1000, 4097}
	for _, n := range ns {
		for workers := -1; workers <= 9; workers++ {
			hits := make([]int32, n)
			var calls atomic.Int32
			w := max(1, min(workers, n))
			if n < 2 {
				w = 1
			}
			maxPiece := n
			if w > 1 {
				maxPiece = pieceLen(n, w)
			}
			g.For(n, workers, func(lo, hi int) {
				calls.Add(1)
				if lo > hi || lo < 0 || hi > n {
					t.Errorf("n=%d workers=%d: bad range [%d, %d)", n, workers, lo, hi)
					return
				}
				if lo == hi && n > 0 {
					t.Errorf("n=%d workers=%d: empty range at %d", n, workers, lo)
				}
				if hi-lo > maxPiece {
					t.Errorf("n=%d workers=%d: range [%d, %d) longer than a piece (%d)", n, workers, lo, hi, maxPiece)
				}
				for i := lo; i < hi; i++ {
					atomic.AddInt32(&hits[i], 1)
				}
			})
			for i, h := range hits {
				if h != 1 {
					t.Fatalf("n=%d workers=%d: index %d covered %d times", n, workers, i, h)
				}
			}
			if w == 1 && calls.Load() != 1 {
				t.Errorf("n=%d workers=%d: %d calls, want one sequential call", n, workers, calls.Load())
			}
		}
	}
}

// TestForStealsFromStalledWorker blocks the goroutine running the first piece of the
// second share until every other piece is done: the other worker must take over the
// rest of that share (with fixed shares the loop would never finish).
func TestForStealsFromStalledWorker(t *testing.T) {
	Acquire()
	defer Release()
	const n = 1000
	piece := pieceLen(n, 2)
	var g Group
	var done atomic.Int64
	g.For(n, 2, func(lo, hi int) {
		if lo == n/2 {
			deadline := time.Now().Add(20 * time.Second)
			for done.Load() < int64(n-piece) {
				if time.Now().After(deadline) {
					t.Errorf("the other pieces were not taken over: %d of %d done", done.Load(), n-piece)
					break
				}
				time.Sleep(time.Millisecond)
			}
		}
		done.Add(int64(hi - lo))
	})
	if done.Load() != n {
		t.Errorf("%d items done, want %d", done.Load(), n)
	}
}

// TestForNoAlloc checks that a parallel For does not allocate once its Group is warm.
func TestForNoAlloc(t *testing.T) {
	var g Group
	data := make([]int64, 10000)
	fn := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			data[i]++
		}
	}
	Acquire()
	defer Release()
	g.For(len(data), 2, fn) // warm up: Group set-up
	for _, workers := range []int{1, 2, 4} {
		if a := testing.AllocsPerRun(100, func() { g.For(len(data), workers, fn) }); a != 0 {
			t.Errorf("workers=%d: %v allocations per For", workers, a)
		}
	}
}

// TestForConcurrentGroups runs loops from several goroutines at once, each with its
// own Group, sharing the pool.
func TestForConcurrentGroups(t *testing.T) {
	Acquire()
	defer Release()
	var wg sync.WaitGroup
	for k := 0; k < 8; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var g Group
			for rep := 0; rep < 50; rep++ {
				n := 100 + k*37 + rep
				var sum atomic.Int64
				g.For(n, 1+(k+rep)%5, func(lo, hi int) {
					s := int64(0)
					for i := lo; i < hi; i++ {
						s += int64(i)
					}
					sum.Add(s)
				})
				if want := int64(n) * int64(n-1) / 2; sum.Load() != want {
					t.Errorf("sum %d, want %d", sum.Load(), want)
				}
			}
		}()
	}
	wg.Wait()
}

// TestForNested calls For from inside For, which must not deadlock even when every
// pool goroutine is busy with an outer range.
func TestForNested(t *testing.T) {
	done := make(chan struct{})
	Acquire()
	defer Release()
	go func() {
		defer close(done)
		var outer Group
		inner := make([]Group, 64)
		var total atomic.Int64
		outer.For(64, 64, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				inner[i].For(100, 4, func(a, b int) { total.Add(int64(b - a)) })
			}
		})
		if total.Load() != 6400 {
			t.Errorf("nested total %d, want 6400", total.Load())
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("nested For deadlocked")
	}
}

func TestWorkers(t *testing.T) {
	old := runtime.GOMAXPROCS(4)
	defer runtime.GOMAXPROCS(old)
	cases := []struct{ n, minPer, want int }{
		{0, 64, 1}, {63, 64, 1}, {128, 64, 2}, {1000, 64, 4}, {1 << 20, 64, 4}, {10, 0, 4}, {3, 1, 3}, {-5, 1, 1},
	}
	for _, tc := range cases {
		if got := Workers(tc.n, tc.minPer); got != tc.want {
			t.Errorf("Workers(%d, %d) = %d, want %d", tc.n, tc.minPer, got, tc.want)
		}
	}
}

// TestForPanicPropagates checks that a panic on any range reaches the caller's
// goroutine after every other range finished, and that the Group and pool stay usable.
func TestForPanicPropagates(t *testing.T) {
	defer goleak.VerifyNone(t)
	Acquire()
	defer Release()
	var g Group
	for _, bad := range []int{0, 500, 999} { // the caller's range, a middle one, the last
		var ran atomic.Int64
		func() {
			defer func() {
				if p := recover(); p != "boom" {
					t.Errorf("bad=%d: recovered %v, want boom", bad, p)
				}
			}()
			g.For(1000, 4, func(lo, hi int) {
				ran.Add(int64(hi - lo))
				if lo <= bad && bad < hi {
					panic("boom")
				}
			})
			t.Errorf("bad=%d: For returned without panicking", bad)
		}()
		if ran.Load() != 1000 {
			t.Errorf("bad=%d: %d items ran before the re-panic, want 1000", bad, ran.Load())
		}
		var sum atomic.Int64
		g.For(1000, 4, func(lo, hi int) { sum.Add(int64(hi - lo)) })
		if sum.Load() != 1000 {
			t.Errorf("bad=%d: reuse after panic covered %d, want 1000", bad, sum.Load())
		}
	}
}

// TestNoLeak checks that the pool's goroutines exit when the last holder releases it.
func TestNoLeak(t *testing.T) {
	defer goleak.VerifyNone(t)
	Acquire()
	Acquire()
	var g Group
	g.For(100, 3, func(lo, hi int) {})
	Release()
	g.For(100, 3, func(lo, hi int) {})
	Release()
	g.For(100, 3, func(lo, hi int) {})
}

// TestPieceLen checks the piece length against its definition, a worker's share of n
// cut piecesPerShare = 8 ways and rounded up, ⌈n/(8·workers)⌉, at least 1.
func TestPieceLen(t *testing.T) {
	for _, tc := range []struct{ n, workers, want int }{
		{1000, 2, 63}, {1008, 2, 63}, {1009, 2, 64}, {16, 2, 1}, {17, 2, 2}, {5, 4, 1}, {1, 2, 1}, {64 * 3, 3, 8}, {64*3 + 1, 3, 9},
	} {
		if got := pieceLen(tc.n, tc.workers); got != tc.want {
			t.Errorf("pieceLen(%d, %d) = %d, want %d", tc.n, tc.workers, got, tc.want)
		}
	}
}

// TestForPieces checks how For cuts a loop: every range is a full piece of
// ⌈n/(8·workers)⌉ items (computed here, not by pieceLen) except the last of a worker's
// share, which ends at the share's end, n·(w+1)/workers; shares are never merged.
func TestForPieces(t *testing.T) {
	Acquire()
	defer Release()
	var g Group
	for _, n := range []int{2, 9, 100, 1000, 4097} {
		for _, workers := range []int{2, 3, 5} {
			w := min(workers, n)
			piece := (n + 8*w - 1) / (8 * w)
			ends := map[int]bool{}
			for k := 0; k < w; k++ {
				ends[n*(k+1)/w] = true
			}
			var mu sync.Mutex
			var bad []string
			g.For(n, workers, func(lo, hi int) {
				if hi-lo != piece && !(ends[hi] && hi-lo < piece) {
					mu.Lock()
					bad = append(bad, fmt.Sprintf("[%d, %d)", lo, hi))
					mu.Unlock()
				}
			})
			if len(bad) > 0 {
				t.Errorf("n=%d workers=%d: ranges %v are neither a piece of %d nor the end of a share", n, workers, bad, piece)
			}
		}
	}
}

// TestForWaitsForSlowPiece: For returns only after every range has finished, even when
// a helper is still working on one after the caller ran out of pieces.
func TestForWaitsForSlowPiece(t *testing.T) {
	Acquire()
	defer Release()
	var g Group
	for _, workers := range []int{2, 3} {
		var done atomic.Int64
		g.For(workers, workers, func(lo, hi int) {
			if lo > 0 {
				time.Sleep(30 * time.Millisecond)
			}
			done.Add(int64(hi - lo))
		})
		if got := done.Load(); got != int64(workers) {
			t.Errorf("workers=%d: For returned with %d of %d items done", workers, got, workers)
		}
	}
}

// helpers counts the goroutines running the pool's worker loop.
func helpers() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "internal/par.Acquire.func1(")
}

// TestPoolSize: Acquire starts GOMAXPROCS − 1 helpers, at least one; a second Acquire
// joins the pool; the last Release stops it and waits for its goroutines, so right after
// it (no waiting) they are gone. A goroutine may still be on its way out after it has
// signalled, so the check is on the average over many pools: a Release that does not
// wait leaves about all of them.
func TestPoolSize(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 5} {
		runtime.GOMAXPROCS(procs)
		want := max(1, procs-1)
		Acquire()
		Acquire()
		got := helpers()
		Release()
		Release()
		if got != want {
			t.Errorf("GOMAXPROCS %d: %d helpers, want %d", procs, got, want)
		}
	}
	runtime.GOMAXPROCS(5)
	var g Group
	left := 0
	const pools = 50
	for i := 0; i < pools; i++ {
		Acquire()
		g.For(100, 5, func(lo, hi int) {})
		Release()
		left += helpers()
	}
	if left > pools*4/2 {
		t.Errorf("%d helpers of %d still running right after Release", left, pools*4)
	}
}

// TestPoolConcurrentHolders: goroutines acquire and release the pool concurrently,
// running loops in between whose every range panics, on several groups at once: each
// caller recovers a value of its own loop, every range still runs, and the pool ends
// stopped. The ranges sleep before panicking so that the panics of one loop overlap on
// several goroutines; under the race detector (.ci/run runs go test -race) this is what
// finds a dropped lock around the pool's reference count or a group's panic value, which
// a mutation tool cannot produce.
func TestPoolConcurrentHolders(t *testing.T) {
	defer goleak.VerifyNone(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	var wg sync.WaitGroup
	for k := 0; k < 4; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var g Group
			for rep := 0; rep < 10; rep++ {
				Acquire()
				var ran atomic.Int64
				func() {
					defer func() {
						p, ok := recover().([2]int)
						if !ok || p[0] != k || p[1] != rep {
							t.Errorf("holder %d rep %d: recovered %v", k, rep, p)
						}
					}()
					g.For(8, 4, func(lo, hi int) {
						ran.Add(int64(hi - lo))
						time.Sleep(time.Millisecond)
						panic([2]int{k, rep})
					})
				}()
				if ran.Load() != 8 {
					t.Errorf("holder %d rep %d: %d of 8 items ran", k, rep, ran.Load())
				}
				Release()
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if refs != 0 || cur != nil {
		t.Errorf("after every Release: refs %d, pool %v", refs, cur)
	}
}
