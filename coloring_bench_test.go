package tokendist_test

import (
	"sync"
	"testing"

	"github.com/tokendist/tokendist"
)

var (
	dxBenchRandomTree = sync.OnceValue(func() *tokendist.Graph {
		return dxMustGraph(tokendist.RandomTree(1_000_000, 1))
	})
	dxBenchRegular = sync.OnceValue(func() *tokendist.Graph {
		return dxMustGraph(tokendist.RandomRegular(100_000, 6, 1))
	})
)

// BenchmarkBipartiteColoringRandomTree colours a 10^6-node random tree with Δ colours.
func BenchmarkBipartiteColoringRandomTree(b *testing.B) {
	g := dxBenchRandomTree()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ec, err := tokendist.BipartiteColoring(g)
		if err != nil || ec.Colors() != g.MaxDegree() {
			b.Fatal(err, ec.Colors())
		}
	}
}

// BenchmarkMisraGriesRandomRegular colours RandomRegular(10^5, 6) with at most 7 colours.
func BenchmarkMisraGriesRandomRegular(b *testing.B) {
	g := dxBenchRegular()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ec, err := tokendist.MisraGriesColoring(g)
		if err != nil || ec.Colors() > 7 {
			b.Fatal(err, ec.Colors())
		}
	}
}

// dxGreedyMaps is the straightforward baseline: every edge takes the first colour unused
// at both ends, with a map of used colours per node (up to 2Δ − 1 colours, no
// guarantee of Δ or Δ + 1).
func dxGreedyMaps(g *tokendist.Graph) int {
	used := make([]map[int]bool, g.Order())
	for v := range used {
		used[v] = map[int]bool{}
	}
	chi := 0
	for _, e := range g.EdgeList() {
		c := 0
		for used[e[0]][c] || used[e[1]][c] {
			c++
		}
		used[e[0]][c], used[e[1]][c] = true, true
		chi = max(chi, c+1)
	}
	return chi
}

func BenchmarkColoringBaselineGreedyMapsRandomTree(b *testing.B) {
	g := dxBenchRandomTree()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dxGreedyMaps(g)
	}
}

func BenchmarkColoringBaselineGreedyMapsRandomRegular(b *testing.B) {
	g := dxBenchRegular()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dxGreedyMaps(g)
	}
}
