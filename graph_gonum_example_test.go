package tokendist_test

import (
	"fmt"

	"github.com/tokendist/tokendist"
	"gonum.org/v1/gonum/graph/simple"
)

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
