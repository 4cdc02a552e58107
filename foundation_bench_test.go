package tokendist_test

import (
	"context"
	"math"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/tokendist/tokendist"
	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/traverse"
)

// Benchmark inputs, built once and only when a benchmark asks for them.
var (
	fndHypercube20      = sync.OnceValue(func() *tokendist.Graph { return fndMust(tokendist.Hypercube(20)) })
	fndHypercube20Edges = sync.OnceValue(func() [][2]int { return fndHypercube20().EdgeList() })
	fndRegular1e6       = sync.OnceValue(func() *tokendist.Graph { return fndMust(tokendist.RandomRegular(1_000_000, 4, 1)) })
	fndRegular1e6Edges  = sync.OnceValue(func() [][2]int { return fndRegular1e6().EdgeList() })
	fndTree1e6          = sync.OnceValue(func() *tokendist.Graph { return fndMust(tokendist.RandomTree(1_000_000, 1)) })
	fndRing1e6          = sync.OnceValue(func() *tokendist.Graph { return fndMust(tokendist.Ring(1_000_000)) })
	fndLoads1e6         = sync.OnceValue(func() tokendist.Loads {
		l, err := tokendist.RandomRange(1_000_000, 0, 1000, 1)
		if err != nil {
			panic(err)
		}
		return l
	})
)

// fndReportBytesPerEnd reports the adjacency element size and all memory allocated by
// one call of build per edge end (adjacency plus offsets).
func fndReportBytesPerEnd(b *testing.B, g *tokendist.Graph, build func()) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	build()
	runtime.ReadMemStats(&after)
	// The measuring build is not one of the b.N timed ones (ResetTimer also clears
	// metrics, so it comes before ReportMetric).
	b.ResetTimer()
	ends := float64(2 * g.Size())
	b.ReportMetric(float64(unsafe.Sizeof(g.Neighbors(0)[0])), "adj-B/end")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/ends, "alloc-B/end")
}

// BenchmarkBuildHypercube20 builds H_20 (2^20 nodes, 20·2^20 edge ends); the baseline
// builds the same graph with NewGraph from its edge list (the generic path).
func BenchmarkBuildHypercube20(b *testing.B) {
	b.Run("Hypercube", func(b *testing.B) {
		fndReportBytesPerEnd(b, fndHypercube20(), func() { fndMust(tokendist.Hypercube(20)) })
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			fndMust(tokendist.Hypercube(20))
		}
	})
	b.Run("baseline-NewGraph", func(b *testing.B) {
		edges := fndHypercube20Edges()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			fndMust(tokendist.NewGraph(1<<20, edges))
		}
	})
}

// BenchmarkBuildRandomRegular1e6 builds a random 4-regular graph on 10^6 nodes; the
// baseline builds a graph of the same size with NewGraph from an edge list.
func BenchmarkBuildRandomRegular1e6(b *testing.B) {
	b.Run("RandomRegular", func(b *testing.B) {
		fndReportBytesPerEnd(b, fndRegular1e6(), func() { fndMust(tokendist.RandomRegular(1_000_000, 4, 2)) })
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			fndMust(tokendist.RandomRegular(1_000_000, 4, uint64(i)))
		}
	})
	b.Run("baseline-NewGraph", func(b *testing.B) {
		edges := fndRegular1e6Edges()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			fndMust(tokendist.NewGraph(1_000_000, edges))
		}
	})
}

// fndOverheadSteps is the number of steps per benchmark operation in the overhead
// comparison.
const fndOverheadSteps = 200

// fndBareSteps restores the initial loads in s (so that every operation does the same
// work as a Run from those loads) and calls Step fndOverheadSteps times: the baseline
// for Run.
func fndBareSteps(b testing.TB, s *tokendist.State, loads tokendist.Loads, bal tokendist.Balancer) {
	copy(s.Loads, loads)
	s.Steps, s.Time, s.Moved, s.Messages = 0, 0, 0, 0
	for k := 0; k < fndOverheadSteps; k++ {
		if err := bal.Step(s); err != nil {
			b.Fatal(err)
		}
		s.Steps++
	}
}

func fndRunSteps(b testing.TB, g *tokendist.Graph, loads tokendist.Loads, bal tokendist.Balancer) {
	r, err := tokendist.Run(context.Background(), g, loads, bal, &tokendist.RunOptions{MaxSteps: fndOverheadSteps, NoStability: true})
	if err != nil || r.Steps != fndOverheadSteps {
		b.Fatalf("Run: %v after %d steps", err, r.Steps)
	}
}

// BenchmarkRunOverhead compares Run (input validation, copying the loads, first and last
// sample, final invariant check, per-step stop rules) with a bare loop calling Step on
// one State, for 200 steps of nearest-neighbour token exchange (O(n) per step) on a ring
// of 10^6 nodes.
func BenchmarkRunOverhead(b *testing.B) {
	g, loads := fndRing1e6(), fndLoads1e6()
	bal := fndNeighbourExchange{}
	b.Run("bare-Step-loop", func(b *testing.B) {
		s := &tokendist.State{Net: g, Loads: loads.Clone()}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			fndBareSteps(b, s, loads, bal)
		}
	})
	b.Run("Run", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			fndRunSteps(b, g, loads, bal)
		}
	})
}

// TestRunOverhead measures the ratio of BenchmarkRunOverhead's two sides and requires
// Run to cost at most 5% more than the bare loop. Timing on a shared machine is noisy,
// so it runs only with TOKENDIST_LONG=1, interleaves the two sides and compares the
// fastest of ten runs of each.
func TestRunOverhead(t *testing.T) {
	if os.Getenv("TOKENDIST_LONG") == "" {
		t.Skip("set TOKENDIST_LONG=1 to measure Run's overhead")
	}
	g, loads := fndRing1e6(), fndLoads1e6()
	bal := fndNeighbourExchange{}
	s := &tokendist.State{Net: g, Loads: loads.Clone()}
	fndRunSteps(t, g, loads, bal) // warm up
	bare, run := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
	for round := 0; round < 10; round++ {
		start := time.Now()
		fndBareSteps(t, s, loads, bal)
		bare = min(bare, time.Since(start))
		start = time.Now()
		fndRunSteps(t, g, loads, bal)
		run = min(run, time.Since(start))
	}
	ratio := float64(run) / float64(bare)
	t.Logf("%d steps on Ring(10^6): bare loop %v, Run %v, ratio %.3f", fndOverheadSteps, bare, run, ratio)
	if ratio > 1.05 {
		t.Errorf("Run costs %.1f%% more than a bare Step loop, want ≤ 5%%", 100*(ratio-1))
	}
}

// TestBuildTargets checks the build-time targets (Hypercube(20) and
// RandomRegular(10^6, 4) in ≤ 1 s each); timing, so only with TOKENDIST_LONG=1.
func TestBuildTargets(t *testing.T) {
	if os.Getenv("TOKENDIST_LONG") == "" {
		t.Skip("set TOKENDIST_LONG=1 to time the large generators")
	}
	for name, f := range map[string]func(b *testing.B){
		"Hypercube(20)": func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				fndMust(tokendist.Hypercube(20))
			}
		},
		"RandomRegular(10^6, 4)": func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				fndMust(tokendist.RandomRegular(1_000_000, 4, uint64(i)))
			}
		},
	} {
		r := testing.Benchmark(f)
		t.Logf("%s: %.0f ms per build", name, float64(r.NsPerOp())/1e6)
		if r.NsPerOp() > 1e9 {
			t.Errorf("%s takes %.2f s, want ≤ 1 s", name, float64(r.NsPerOp())/1e9)
		}
	}
}

// BenchmarkBFS runs one breadth-first search over RandomRegular(10^6, 4); the baseline
// is gonum's traverse.BreadthFirst on the same *Graph (through the gonum interface).
func BenchmarkBFS(b *testing.B) {
	g := fndRegular1e6()
	b.Run("Graph.BFS", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := g.BFS(i % g.Order()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("baseline-gonum-BreadthFirst", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var bf traverse.BreadthFirst
			bf.Walk(g, g.Node(int64(i%g.Order())), func(graph.Node, int) bool { return false })
		}
	})
}

// BenchmarkDiameterTree measures the two-BFS diameter of RandomTree(10^6); the baseline
// is one BFS (so the ratio should be about 2).
func BenchmarkDiameterTree(b *testing.B) {
	tr := fndTree1e6()
	b.Run("Diameter", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := tr.Diameter(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("baseline-one-BFS", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := tr.BFS(0); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkLoadsMetrics measures the exact 128-bit potential, Validate and Discrepancy
// on 10^6 loads; the baseline is a plain (overflowing) int64 Σ x² loop.
func BenchmarkLoadsMetrics(b *testing.B) {
	l := fndLoads1e6()
	var sink int64
	b.Run("Potential", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			sink += int64(l.Potential().Lo)
		}
	})
	b.Run("Validate", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			t, _ := l.Validate()
			sink += t
		}
	})
	b.Run("Discrepancy", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			sink += l.Discrepancy()
		}
	})
	b.Run("baseline-int64-sum-of-squares", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var p int64
			for _, x := range l {
				p += x * x
			}
			sink += p
		}
	})
	_ = sink
}
