package tokendist_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/tokendist/tokendist"
	"gonum.org/v1/gonum/graph/simple"
)

// Build networks and query them.
func ExampleGraph_queries() {
	for _, build := range []func() (*tokendist.Graph, error){
		func() (*tokendist.Graph, error) { return tokendist.Hypercube(4) },
		func() (*tokendist.Graph, error) { return tokendist.KaryTree(tokendist.KaryShape{Height: 3, Arity: 2}) },
		func() (*tokendist.Graph, error) { return tokendist.Torus(4, 5) },
		func() (*tokendist.Graph, error) { return tokendist.RandomRegular(16, 3, 1) },
	} {
		g, err := build()
		if err != nil {
			fmt.Println(err)
			return
		}
		diam, _ := g.Diameter()
		fmt.Printf("%v diameter=%d tree=%v regular=%v bipartite=%v\n", g, diam, g.IsTree(), g.IsRegular(), g.IsBipartite())
	}
	// Bad parameters are errors that name the value.
	_, err := tokendist.KaryTree(tokendist.KaryShape{Height: 3, Arity: 0})
	fmt.Println(err)
	fmt.Println(errors.Is(err, tokendist.ErrBadParameter))
	// Output:
	// Graph(n=16, m=32, Δ=4) diameter=4 tree=false regular=true bipartite=true
	// Graph(n=15, m=14, Δ=3) diameter=6 tree=true regular=false bipartite=true
	// Graph(n=20, m=40, Δ=4) diameter=4 tree=false regular=true bipartite=false
	// Graph(n=16, m=24, Δ=3) diameter=5 tree=false regular=true bipartite=true
	// tokendist: bad parameter: k-ary tree needs k ≥ 1, got k = 0
	// true
}

// A breadth-first spanning tree, for algorithms that run on trees.
func ExampleGraph_BFSTree() {
	g, _ := tokendist.Mesh(3, 3)
	tree, parent, _ := g.BFSTree(4) // rooted at the middle node
	fmt.Println(tree, tree.IsTree())
	fmt.Println("parents:", parent)
	c, _ := tree.Center()
	fmt.Println("centre:", c)
	// Output:
	// Graph(n=9, m=8, Δ=4) true
	// parents: [1 4 1 4 -1 4 3 4 5]
	// centre: 4
}

// Load metrics and initial distributions.
func ExampleLoads_metrics() {
	l := tokendist.Loads{7, 0, 3, 2}
	fmt.Println("total", l.Total(), "max", l.Max(), "min", l.Min(), "discrepancy", l.Discrepancy(), "potential", l.Potential())

	// The potential is exact even beyond 64 bits.
	big := tokendist.Loads{1 << 62, 1 << 62}
	fmt.Println("potential", big.Potential())

	// Validate rejects what Run rejects.
	_, err := tokendist.Loads{3, -1}.Validate()
	fmt.Println(err)

	ring, _ := tokendist.Ring(6)
	dist, _ := tokendist.DistanceLoads(ring, 0)
	fmt.Println("distance loads", dist, "discrepancy", dist.Discrepancy())
	u, _ := tokendist.UniformRandom(6, 60, 1)
	fmt.Println("uniform", u, "total", u.Total())
	// Output:
	// total 12 max 7 min 0 discrepancy 7 potential 62
	// potential 42535295865117307932921825928971026432
	// tokendist: bad loads: negative load -1 at node 1
	// distance loads [0 1 2 3 2 1] discrepancy 3
	// uniform [9 11 12 10 9 9] total 60
}

// exampleOddEven is a tiny balancer: odd-even nearest-neighbour token exchange on the
// nodes 0..n-1 in order. At even steps the pairs (0,1), (2,3), ... and at odd steps
// (1,2), (3,4), ... move one token from the larger to the smaller load when they
// differ by at least two. It implements Periodic, so Run stops when the loads repeat.
type exampleOddEven struct{}

func (exampleOddEven) String() string { return "odd-even" }

func (exampleOddEven) Step(s *tokendist.State) error {
	for u := int(s.Steps % 2); u+1 < len(s.Loads); u += 2 {
		a, b := &s.Loads[u], &s.Loads[u+1]
		if *a-*b >= 2 {
			*a, *b = *a-1, *b+1
			s.Moved++
		} else if *b-*a >= 2 {
			*a, *b = *a+1, *b-1
			s.Moved++
		}
	}
	s.Time++
	return nil
}

func (exampleOddEven) Period(*tokendist.State) int64 { return 2 }

// Run a custom balancer on a path until it is stable.
func ExampleRun_customBalancer() {
	path, _ := tokendist.Path(6)
	loads, _ := tokendist.PointMass(6, 30, 0)
	r, err := tokendist.Run(context.Background(), path, loads, exampleOddEven{}, &tokendist.RunOptions{SampleEvery: 10})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r)
	fmt.Println("final loads", r.Loads)
	for _, smp := range r.Trace {
		fmt.Printf("step %2d: discrepancy %2d, potential %s\n", smp.Step, smp.Discrepancy, smp.Potential)
	}
	// Output:
	// odd-even: Stable after 50 steps (time 50), discrepancy 4, moved 62, messages 0
	// final loads [7 6 5 5 4 3]
	// step  0: discrepancy 30, potential 900
	// step 10: discrepancy 25, potential 634
	// step 20: discrepancy 20, potential 430
	// step 30: discrepancy 14, potential 280
	// step 40: discrepancy  8, potential 190
	// step 50: discrepancy  4, potential 160
}

// Write a run's trace as CSV (the potential is an exact decimal).
func ExampleTrace_WriteCSV() {
	path, _ := tokendist.Path(4)
	r, _ := tokendist.Run(context.Background(), path, tokendist.Loads{8, 0, 0, 0}, exampleOddEven{}, &tokendist.RunOptions{SampleEvery: 3})
	if err := r.Trace.WriteCSV(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// step,time,discrepancy,max,min,potential,moved,messages,negative
	// 0,0,8,8,0,64,0,0,0
	// 3,3,6,6,0,40,2,0,0
	// 6,6,5,5,0,30,4,0,0
	// 9,9,2,3,1,20,8,0,0
	// 12,12,2,3,1,18,9,0,0
}

// Convert a gonum graph with arbitrary node IDs.
func ExampleFromGonum() {
	ug := simple.NewUndirectedGraph()
	ug.SetEdge(simple.Edge{F: simple.Node(100), T: simple.Node(-3)})
	ug.SetEdge(simple.Edge{F: simple.Node(100), T: simple.Node(7)})
	g, ids, err := tokendist.FromGonum(ug)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(g, g.EdgeList())
	fmt.Println("node i is gonum node ids[i]:", ids)
	// Output:
	// Graph(n=3, m=2, Δ=2) [[0 2] [1 2]]
	// node i is gonum node ids[i]: [-3 7 100]
}
