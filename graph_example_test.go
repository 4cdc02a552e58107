package tokendist_test

import (
	"errors"
	"fmt"

	"github.com/tokendist/tokendist"
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
