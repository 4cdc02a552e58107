package tokendist_test

import (
	"sync"
	"testing"

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
