package tokendist_test

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/tokendist/tokendist"
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

// TestBuildTargets checks the build-time targets (Hypercube(20) and
// RandomRegular(10^6, 4) in ≤ 1 s each); timing, so only with TOKENDIST_LONG=1.
func TestBuildTargets(t *testing.T) {
	tokendist.LongTest(t)
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
