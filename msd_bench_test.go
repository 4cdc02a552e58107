package tokendist_test

import (
	"runtime"
	"sync"
	"testing"

	"github.com/tokendist/tokendist"
)

// Benchmark inputs, built once and only when a benchmark runs.
var (
	msdBenchBinary18   = sync.OnceValue(func() *tokendist.Graph { return msdMust(tokendist.KaryTree(tokendist.KaryShape{Height: 18, Arity: 2})) })
	msdBenchBinary12   = sync.OnceValue(func() *tokendist.Graph { return msdMust(tokendist.KaryTree(tokendist.KaryShape{Height: 12, Arity: 2})) })
	msdBenchRandom1M   = sync.OnceValue(func() *tokendist.Graph { return msdMust(tokendist.RandomTree(1_000_000, 1)) })
	msdBenchRandom100K = sync.OnceValue(func() *tokendist.Graph { return msdMust(tokendist.RandomTree(100_000, 1)) })
	msdBenchColor1M    = sync.OnceValue(func() *tokendist.EdgeColoring {
		ec, err := tokendist.BipartiteColoring(msdBenchRandom1M())
		if err != nil {
			panic(err)
		}
		return ec
	})
)

func msdGapsOf(b *testing.B, g *tokendist.Graph) []int {
	sg1, err := tokendist.StableGaps(g)
	if err != nil {
		b.Fatal(err)
	}
	return sg1
}

// Target: MSD(T_{18,2}) (524,287 nodes) in ≤ 100 ms, from the built tree.
func BenchmarkMSDBinary18(b *testing.B) {
	g := msdBenchBinary18()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tokendist.MSD(g); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(msdBytesPerNode(b, g.Order(), func() { _, _ = tokendist.MSD(g) }), "B/node")
}

// Target: MSD(T_{24,2}) (33,554,431 nodes) in ≤ 10 s and ≤ 16 bytes per node, from the
// closed-form SG_1 (the tree itself would take 16 bytes per node to store).
func BenchmarkMSDBinary24(b *testing.B) {
	n, sg1, err := tokendist.KaryTreeStableGaps(tokendist.KaryShape{Height: 24, Arity: 2})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := tokendist.GapMSD(n, sg1, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(msdBytesPerNode(b, n, func() { _, _ = tokendist.GapMSD(n, sg1, nil) }), "B/node")
}

// msdBytesPerNode measures the bytes fn allocates, per node.
func msdBytesPerNode(b *testing.B, n int, fn func()) float64 {
	b.StopTimer()
	defer b.StartTimer()
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	fn()
	runtime.ReadMemStats(&m1)
	return float64(m1.TotalAlloc-m0.TotalAlloc) / float64(n)
}

// The paper's procedure (O(n²·MSD)) and the bitset search on the same tree, T_{12,2}
// (8191 nodes): the ratio of the two is the speed-up.
func BenchmarkMSDPaperSetBuilding(b *testing.B) {
	g := msdBenchBinary12()
	sg1 := msdGapsOf(b, g)
	for b.Loop() {
		msdPaper(g.Order(), sg1)
	}
}

func BenchmarkMSDBitsetSearch(b *testing.B) {
	g := msdBenchBinary12()
	sg1 := msdGapsOf(b, g)
	for b.Loop() {
		if _, err := tokendist.GapMSD(g.Order(), sg1, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// Stabilities of a random tree with 100,000 nodes (|SG_1| in the thousands), against a
// plain queue BFS over Z_n (the baseline).
func BenchmarkStabilitiesRandom100K(b *testing.B) {
	g := msdBenchRandom100K()
	sg1 := msdGapsOf(b, g)
	for b.Loop() {
		if _, err := tokendist.GapStabilities(g.Order(), sg1, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStabilitiesQueueBaseline100K(b *testing.B) {
	g := msdBenchRandom100K()
	sg1 := msdGapsOf(b, g)
	for b.Loop() {
		msdQueueBFS(g.Order(), sg1)
	}
}

// The observer tour and one colour's gaps of a random tree with a million nodes,
// against the baseline of walking one observer step by step for a whole phase with
// colour look-ups (O(χ·n log Δ)), which yields the same c-ordering.
func BenchmarkObserverTourGaps1M(b *testing.B) {
	ec := msdBenchColor1M()
	for b.Loop() {
		t, err := tokendist.NewObserverTour(ec)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := t.Gaps(0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkObserverWalkBaseline1M(b *testing.B) {
	ec := msdBenchColor1M()
	g := ec.Graph()
	n, chi := g.Order(), ec.Colors()
	for b.Loop() {
		// One observer, step by step with colour look-ups, for a whole phase.
		x := 0
		for t := 0; t < chi*n; t++ {
			col := t % chi
			for _, y := range g.Neighbors(x) {
				if ec.Color(x, int(y)) == col {
					x = int(y)
					break
				}
			}
		}
	}
}

func BenchmarkWorstStableLoads1M(b *testing.B) {
	ec := msdBenchColor1M()
	for b.Loop() {
		if _, err := tokendist.WorstStableLoads(ec, 0, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// CONSTRUCT SUBGRAPH on a random tree with a million nodes, p = n/3, against the
// baseline of growing a connected subtree by BFS from a leaf (no centroid guarantee).
func BenchmarkConstructSubgraph1M(b *testing.B) {
	g := msdBenchRandom1M()
	for b.Loop() {
		if _, err := tokendist.ConstructSubgraph(g, g.Order()/3); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSubtreeBFSBaseline1M(b *testing.B) {
	g := msdBenchRandom1M()
	p := g.Order() / 3
	for b.Loop() {
		seen := make([]bool, g.Order())
		q := []int{0}
		seen[0] = true
		for h := 0; h < len(q) && len(q) < p; h++ {
			for _, v := range g.Neighbors(q[h]) {
				if !seen[v] && len(q) < p {
					seen[v] = true
					q = append(q, int(v))
				}
			}
		}
	}
}
