package tokendist_test

import (
	"context"
	"runtime"
	"sync"
	"testing"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/internal/par"
	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/simple"
)

// dxBenchTree is the 2^20-node complete binary tree (height 19, 2^20 − 1 nodes) with its
// König colouring and random loads, built once.
var dxBenchTree = sync.OnceValue(func() struct {
	g     *tokendist.Graph
	ec    *tokendist.EdgeColoring
	loads tokendist.Loads
} {
	g, err := tokendist.KaryTree(tokendist.KaryShape{Height: 19, Arity: 2})
	if err != nil {
		panic(err)
	}
	ec, err := tokendist.BipartiteColoring(g)
	if err != nil {
		panic(err)
	}
	loads, err := tokendist.RandomRange(g.Order(), 0, 1000, 1)
	if err != nil {
		panic(err)
	}
	return struct {
		g     *tokendist.Graph
		ec    *tokendist.EdgeColoring
		loads tokendist.Loads
	}{g, ec, loads}
})

// dxBenchRounds runs b.N rounds of d with the given number of workers, each as Run
// performs it: for a DimensionExchange, one Run of b.N rounds, in which Run uses the
// fused round (its unexported fast path; Run's own set-up is O(n) once per run), else
// χ calls of Step per round.
func dxBenchRounds(b *testing.B, d tokendist.Balancer, workers int) {
	if _, ok := d.(*tokendist.DimensionExchange); ok {
		bt := dxBenchTree()
		chi := int64(bt.ec.Colors())
		opts := &tokendist.RunOptions{MaxSteps: chi, NoStability: true, Workers: workers}
		if _, err := tokendist.Run(context.Background(), bt.g, bt.loads, d, opts); err != nil { // the first round builds its schedule
			b.Fatal(err)
		}
		b.SetBytes(int64(8*bt.g.Order() + 8*bt.g.Size()))
		b.ResetTimer()
		opts.MaxSteps = chi * int64(b.N)
		if _, err := tokendist.Run(context.Background(), bt.g, bt.loads, d, opts); err != nil {
			b.Fatal(err)
		}
		return
	}
	dxBenchSteps(b, d, workers)
}

// dxBenchSteps runs b.N rounds of d as χ calls of Step each.
func dxBenchSteps(b *testing.B, d tokendist.Balancer, workers int) {
	chi := dxBenchTree().ec.Colors()
	dxBench(b, d, workers, func(s *tokendist.State) error {
		for c := 0; c < chi; c++ {
			if err := d.Step(s); err != nil {
				return err
			}
			s.Steps++
		}
		return nil
	})
}

// dxBench runs b.N calls of round on one State.
func dxBench(b *testing.B, d tokendist.Balancer, workers int, round func(*tokendist.State) error) {
	par.Acquire() // hold the worker pool as Run does: Step outside a holder is sequential
	defer par.Release()
	bt := dxBenchTree()
	s := &tokendist.State{Net: bt.g, Loads: bt.loads.Clone(), Workers: workers}
	if in, ok := d.(tokendist.Initializer); ok {
		if err := in.Init(s); err != nil {
			b.Fatal(err)
		}
	}
	if err := round(s); err != nil { // the first round builds its schedule
		b.Fatal(err)
	}
	b.SetBytes(int64(8*bt.g.Order() + 8*bt.g.Size()))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := round(s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkThreshold1RoundBinaryTree(b *testing.B) {
	bt := dxBenchTree()
	for _, workers := range []int{1, 2} {
		b.Run(map[int]string{1: "cores=1", 2: "cores=2"}[workers], func(b *testing.B) {
			if workers > runtime.GOMAXPROCS(0) {
				b.Skip("needs GOMAXPROCS ≥ 2")
			}
			d, err := tokendist.NewThreshold1(bt.g, bt.ec)
			if err != nil {
				b.Fatal(err)
			}
			dxBenchRounds(b, d, workers)
		})
	}
	// The same round as χ single steps on one core: what a caller stepping by hand gets.
	b.Run("steps", func(b *testing.B) {
		d, err := tokendist.NewThreshold1(bt.g, bt.ec)
		if err != nil {
			b.Fatal(err)
		}
		dxBenchSteps(b, d, 1)
	})
}

// BenchmarkThreshold1RoundBaselineGonum is the straightforward version the target is
// measured against: THRESHOLD-1 written directly over gonum's simple.UndirectedGraph,
// the edges of each colour collected once from the graph's edge iterator, and every
// step walking its colour's gonum edges through their interface methods.
func BenchmarkThreshold1RoundBaselineGonum(b *testing.B) {
	bt := dxBenchTree()
	ug := simple.NewUndirectedGraph()
	for _, e := range bt.g.EdgeList() {
		ug.SetEdge(simple.Edge{F: simple.Node(e[0]), T: simple.Node(e[1])})
	}
	byColor := make([][]graph.Edge, bt.ec.Colors())
	edges := ug.Edges()
	for edges.Next() {
		e := edges.Edge()
		c := bt.ec.Color(int(e.From().ID()), int(e.To().ID()))
		byColor[c] = append(byColor[c], e)
	}
	loads := bt.loads.Clone()
	b.SetBytes(int64(8*bt.g.Order() + 8*bt.g.Size()))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, es := range byColor {
			for _, e := range es {
				u, v := e.From().ID(), e.To().ID()
				if loads[u] > loads[v] {
					loads[u]--
					loads[v]++
				} else if loads[u] < loads[v] {
					loads[u]++
					loads[v]--
				}
			}
		}
	}
}

// BenchmarkThreshold1RoundFloor streams the bytes a round must touch at least once:
// every load read and written, every pair read. No implementation of a round can beat
// it; the ratio to it shows how close the stepper gets.
func BenchmarkThreshold1RoundFloor(b *testing.B) {
	bt := dxBenchTree()
	loads := bt.loads.Clone()
	var pairs [][]int32
	for c := 0; c < bt.ec.Colors(); c++ {
		pairs = append(pairs, bt.ec.Matching(c))
	}
	b.SetBytes(int64(8*bt.g.Order() + 8*bt.g.Size()))
	b.ResetTimer()
	var sink int32
	for i := 0; i < b.N; i++ {
		for j := range loads {
			loads[j]++
		}
		for _, p := range pairs {
			for _, x := range p {
				sink += x
			}
		}
	}
	if sink == 1 {
		b.Log(sink)
	}
}

// BenchmarkThreshold1RoundBaselineEdgeList is a plain-Go baseline: the edges in one
// slice with their colours, filtered by the active colour at every step.
func BenchmarkThreshold1RoundBaselineEdgeList(b *testing.B) {
	bt := dxBenchTree()
	type edge struct{ u, v, c int }
	var edges []edge
	for _, e := range bt.g.EdgeList() {
		edges = append(edges, edge{e[0], e[1], bt.ec.Color(e[0], e[1])})
	}
	loads := bt.loads.Clone()
	chi := bt.ec.Colors()
	b.SetBytes(int64(8*bt.g.Order() + 8*bt.g.Size()))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for c := 0; c < chi; c++ {
			for _, e := range edges {
				if e.c != c {
					continue
				}
				if loads[e.u] > loads[e.v] {
					loads[e.u]--
					loads[e.v]++
				} else if loads[e.u] < loads[e.v] {
					loads[e.u]++
					loads[e.v]--
				}
			}
		}
	}
}
