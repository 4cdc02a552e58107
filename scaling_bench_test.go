package tokendist

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// scaleSizes returns the sizes of the scaling sweep: 10^3 to 10^6 by default, up to
// the value of TOKENDIST_SCALE (1e7 or 1e8) when it is set. The 10^8 runs need about
// 10 GB; set GOMEMLIMIT and check free memory first.
func scaleSizes(b *testing.B) []int {
	top := 1e6
	if v := os.Getenv("TOKENDIST_SCALE"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 1e3 || f > 1e9 {
			b.Fatalf("TOKENDIST_SCALE=%q: want a size between 1e3 and 1e9", v)
		}
		top = f
	}
	var ns []int
	for n := 1e3; n <= top*1.0001; n *= 10 {
		ns = append(ns, int(n))
	}
	return ns
}

// heapInUse returns the live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// threadClock returns the calling thread's CPU time in nanoseconds
// (CLOCK_THREAD_CPUTIME_ID, exact, unlike getrusage's tick-based figure).
func threadClock() int64 {
	var ts syscall.Timespec
	const clockThreadCPUTimeID = 3
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return ts.Nano()
}

// maxRSS returns the process's peak resident set size in bytes.
func maxRSS() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) * 1024
}

// scaleRound times round on one worker and reports the time and the thread's CPU time
// per node and round (ns/node, cpu-ns/node), the live bytes per node of everything
// the round needs (B/node: network, colouring or link arrays, balancer, loads) and the
// process's peak RSS so far. It warms up for a second or three rounds, whichever is
// longer (huge-page promotion, see timed).
func scaleRound(b *testing.B, n int, bytes uint64, round func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for i, start := 0, time.Now(); i < 3 || time.Since(start) < time.Second; i++ {
		round()
	}
	b.ReportAllocs()
	b.ResetTimer()
	c0, t0 := threadClock(), time.Now()
	for i := 0; i < b.N; i++ {
		round()
	}
	wall, cpu := time.Since(t0), threadClock()-c0
	b.StopTimer()
	per := float64(b.N) * float64(n)
	b.ReportMetric(float64(wall.Nanoseconds())/per, "ns/node")
	b.ReportMetric(float64(cpu)/per, "cpu-ns/node")
	b.ReportMetric(float64(bytes)/float64(n), "B/node")
	b.ReportMetric(maxRSS()/1e6, "maxrss-MB")
}

// BenchmarkScaling sweeps n from 10^3 up (see scaleSizes) for one THRESHOLD-1 round
// (χ = 3 steps, one Round call as Run makes it) on the complete binary tree with at least n nodes (loads uniform in
// 0..1000) and one RandomizedDiffusion round on RandomRegular(n, 4) (loads uniform in
// 490..510, the near-balanced state a run spends most rounds in, which uses 8-bit
// records at every n), one worker. internal/cmd/scalingplot turns its output into
// docs/scaling.svg.
func BenchmarkScaling(b *testing.B) {
	for _, n := range scaleSizes(b) {
		h := int(math.Ceil(math.Log2(float64(n)+1))) - 1
		nt := 1<<(h+1) - 1
		b.Run("threshold1/n="+strconv.Itoa(n), func(b *testing.B) {
			debug.FreeOSMemory()
			h0 := heapInUse()
			g, err := KaryTree(KaryShape{Height: h, Arity: 2})
			if err != nil {
				b.Fatal(err)
			}
			ec, err := BipartiteColoring(g)
			if err != nil {
				b.Fatal(err)
			}
			d, err := NewThreshold1(g, ec)
			if err != nil {
				b.Fatal(err)
			}
			l, err := RandomRange(nt, 0, 1000, 1)
			if err != nil {
				b.Fatal(err)
			}
			s := &State{Net: g, Loads: l, Workers: 1}
			if err := d.Init(s); err != nil {
				b.Fatal(err)
			}
			if _, err := d.round(s); err != nil { // the first round builds its fused order
				b.Fatal(err)
			}
			bytes := heapInUse() - h0
			scaleRound(b, nt, bytes, func() {
				if _, err := d.round(s); err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run("diffusion/n="+strconv.Itoa(n), func(b *testing.B) {
			debug.FreeOSMemory()
			h0 := heapInUse()
			g, err := RandomRegular(n, 4, 1)
			if err != nil {
				b.Fatal(err)
			}
			rd, err := NewRandomizedDiffusion(g)
			if err != nil {
				b.Fatal(err)
			}
			l, err := RandomRange(n, 490, 510, 2)
			if err != nil {
				b.Fatal(err)
			}
			s := &State{Net: g, Loads: l, Workers: 1, Seed: 1}
			if err := rd.Init(s); err != nil {
				b.Fatal(err)
			}
			bytes := heapInUse() - h0
			scaleRound(b, n, bytes, func() {
				if err := rd.Step(s); err != nil {
					b.Fatal(err)
				}
				s.Steps++
			})
		})
	}
}

// scaleTop returns TOKENDIST_SCALE as a number (0 when unset or malformed).
func scaleTop() float64 {
	f, err := strconv.ParseFloat(os.Getenv("TOKENDIST_SCALE"), 64)
	if err != nil {
		return 0
	}
	return f
}

// processCPU returns the CPU time used by the whole process, in nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
