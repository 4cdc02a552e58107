package tokendist_test

import (
	"fmt"

	"github.com/tokendist/tokendist"
)

// A tree is bipartite, so König's theorem colours it with exactly Δ colours; each
// colour class is a matching, stored as flat pairs.
func ExampleBipartiteColoring() {
	g, _ := tokendist.KaryTree(tokendist.KaryShape{Height: 2, Arity: 2}) // 7 nodes, Δ = 3
	ec, err := tokendist.BipartiteColoring(g)
	if err != nil {
		panic(err)
	}
	fmt.Println("colours:", ec.Colors())
	for c := 0; c < ec.Colors(); c++ {
		fmt.Println(c, ec.Matching(c))
	}
	// Output:
	// colours: 3
	// 0 [0 1 2 5]
	// 1 [0 2 1 3]
	// 2 [1 4 2 6]
}

// Misra–Gries colours any simple graph with at most Δ+1 colours (Vizing's theorem); the
// Petersen graph needs all four.
func ExampleMisraGriesColoring() {
	var edges [][2]int
	for i := 0; i < 5; i++ {
		edges = append(edges, [2]int{i, (i + 1) % 5}, [2]int{i, i + 5}, [2]int{i + 5, (i+2)%5 + 5})
	}
	petersen, _ := tokendist.NewGraph(10, edges)
	ec, err := tokendist.MisraGriesColoring(petersen)
	if err != nil {
		panic(err)
	}
	fmt.Println("Δ =", petersen.MaxDegree(), "colours:", ec.Colors(), "valid:", ec.Validate(petersen) == nil)
	// Output:
	// Δ = 3 colours: 4 valid: true
}

// The hypercube's natural colouring gives the edges of dimension i colour i; a round of
// dimension exchange sweeps the dimensions in order.
func ExampleHypercubeColoring() {
	ec, _ := tokendist.HypercubeColoring(3)
	fmt.Println("colours:", ec.Colors())
	fmt.Println("edge (5, 7) flips bit", ec.Color(5, 7))
	fmt.Println("dimension 0:", ec.Matching(0))
	// Output:
	// colours: 3
	// edge (5, 7) flips bit 1
	// dimension 0: [0 1 2 3 4 5 6 7]
}

// Rings: two colours when even, a third for the closing edge when odd. Torus and mesh
// are coloured by dimension and parity.
func ExampleRingColoring() {
	even, _ := tokendist.RingColoring(8)
	odd, _ := tokendist.RingColoring(7)
	torus, _ := tokendist.TorusColoring(4, 6)
	mesh, _ := tokendist.MeshColoring(3, 3)
	fmt.Println(even.Colors(), odd.Colors(), torus.Colors(), mesh.Colors())
	// Output:
	// 2 3 4 4
}
