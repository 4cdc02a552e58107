package tokendist

import (
	"context"
	"sync"
	"syscall"
	"testing"
	"time"
)

// cpuTime returns the process's user plus system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds the CPU time per operation since start, a figure that (unlike ns/op)
// barely depends on other processes sharing the machine.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N)/1e6, "cpu-ms/op")
}

// Benchmark inputs, built once and only when a benchmark needs them.
var (
	benchCube20 = sync.OnceValues(func() (*Graph, Loads) {
		g, err := Hypercube(20)
		if err != nil {
			panic(err)
		}
		// Lemma 2.4's worst case: 2^26 tokens, 128 per processor, in a ball of p/2.
		l, err := HammingBallLoads(20, 1<<26, 128, 1<<20-1)
		if err != nil {
			panic(err)
		}
		return g, l
	})
	benchSE20 = sync.OnceValue(func() *Graph {
		g, err := ShuffleExchange(20)
		if err != nil {
			panic(err)
		}
		return g
	})
	benchMulti16 = sync.OnceValues(func() (*Graph, []Loads) {
		g, err := Hypercube(16)
		if err != nil {
			panic(err)
		}
		// Theorem 3.2's worst case: g = 64 groups by condensed ID, 64 tokens per processor.
		groups, err := CondensedIDGroups(16, 6, 64)
		if err != nil {
			panic(err)
		}
		return g, groups
	})
)

func benchRun(b *testing.B, g *Graph, loads Loads, bal Balancer) {
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	for i := 0; i < b.N; i++ {
		r, err := Run(context.Background(), g, loads, bal, nil)
		if err != nil || r.Status != StatusDone {
			b.Fatal(r.Status, err)
		}
	}
	reportCPU(b, start)
}

func BenchmarkHypercubeBalance20(b *testing.B) {
	g, loads := benchCube20()
	bal, err := NewHypercubeBalance(g, nil)
	if err != nil {
		b.Fatal(err)
	}
	benchRun(b, g, loads, bal)
}

// BenchmarkHypercubeBalance20Reference is the baseline: the straightforward sequential
// recursion with δ computed per dimension (refRecursive).
func BenchmarkHypercubeBalance20Reference(b *testing.B) {
	_, loads := benchCube20()
	b.ResetTimer()
	start := cpuTime()
	for i := 0; i < b.N; i++ {
		refRecursive(loads.Clone(), 20, 1)
	}
	reportCPU(b, start)
}

func BenchmarkHypercubeBalance20MinError(b *testing.B) {
	g, loads := benchCube20()
	bal, err := NewHypercubeBalance(g, &CubeOptions{MinError: true})
	if err != nil {
		b.Fatal(err)
	}
	benchRun(b, g, loads, bal)
}

func BenchmarkDimensionOrder20(b *testing.B) {
	g, loads := benchCube20()
	bal, err := NewDimensionOrderBalance(g, nil)
	if err != nil {
		b.Fatal(err)
	}
	benchRun(b, g, loads, bal)
}

// BenchmarkDimensionOrder20Reference is the baseline: plain sequential loops (refAscend).
func BenchmarkDimensionOrder20Reference(b *testing.B) {
	_, loads := benchCube20()
	b.ResetTimer()
	start := cpuTime()
	for i := 0; i < b.N; i++ {
		refAscend(loads.Clone(), 20, 1)
	}
	reportCPU(b, start)
}

func BenchmarkDimensionOrderSE20(b *testing.B) {
	_, loads := benchCube20()
	g := benchSE20()
	bal, err := NewDimensionOrderBalance(g, nil)
	if err != nil {
		b.Fatal(err)
	}
	benchRun(b, g, loads, bal)
}

func BenchmarkMultiBalance16x64(b *testing.B) {
	g, groups := benchMulti16()
	bal, err := NewMultiBalance(g, groups, nil)
	if err != nil {
		b.Fatal(err)
	}
	benchRun(b, g, groupTotals(groups), bal)
}

// BenchmarkMultiBalance16x64Reference is the baseline: the straightforward recursion.
func BenchmarkMultiBalance16x64Reference(b *testing.B) {
	_, groups := benchMulti16()
	p, w := 1<<16, len(groups)
	rows := make([]int64, p*w)
	b.ResetTimer()
	start := cpuTime()
	defer reportCPU(b, start)
	for i := 0; i < b.N; i++ {
		for j, grp := range groups {
			for v, x := range grp {
				rows[v*w+j] = x
			}
		}
		refRecursive(rows, 16, w)
	}
}

func BenchmarkMultiBalance16x64Ascending(b *testing.B) {
	g, groups := benchMulti16()
	bal, err := NewMultiBalance(g, groups, &MultiOptions{Ascending: true})
	if err != nil {
		b.Fatal(err)
	}
	benchRun(b, g, groupTotals(groups), bal)
}

// BenchmarkHypercubeFringe16 computes f(H_16, x) by Harper's theorem and Kruskal–Katona.
func BenchmarkHypercubeFringe16(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := HypercubeFringe(16, 23456); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHypercubeFringe16Enumerate is the baseline: build the ball and count its
// fringe on the graph.
func BenchmarkHypercubeFringe16Enumerate(b *testing.B) {
	g, err := Hypercube(16)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ball, err := HammingBall(16, 23456, 0)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Fringe(g, ball); err != nil {
			b.Fatal(err)
		}
	}
}
