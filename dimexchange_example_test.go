package tokendist_test

import (
	"context"
	"fmt"

	"github.com/tokendist/tokendist"
)

// A tree algorithm runs on any connected network through a spanning tree: here
// DISCREPANCY-1 on a BFS tree of a 4×4 torus.
func ExampleNewSpanningTree() {
	torus, _ := tokendist.Torus(4, 4)
	b, err := tokendist.NewSpanningTree(torus, tokendist.AutoRoot, func(tree *tokendist.Graph) (tokendist.Balancer, error) {
		return tokendist.NewDiscrepancy1(tree, nil, nil)
	})
	if err != nil {
		panic(err)
	}
	loads, _ := tokendist.PointMass(16, 100, 5)
	r, _ := tokendist.Run(context.Background(), torus, loads, b, &tokendist.RunOptions{NoStability: true})
	fmt.Println(b, "|", r.Status, "discrepancy", r.Discrepancy())
	// Output:
	// DISCREPANCY-1 on a BFS tree from 0 | Done discrepancy 1
}

// A user protocol plugs into the same stepper: the heavier end sends half the
// difference, the integer form of Cybenko's dimension exchange on the hypercube.
func ExampleNewDimensionExchange() {
	ec, _ := tokendist.HypercubeColoring(4)
	half := tokendist.ProtocolFunc(func(t int64, u, v int, lu, lv int64) int64 { return (lu - lv) / 2 })
	b, err := tokendist.NewDimensionExchange(ec.Graph(), ec, half)
	if err != nil {
		panic(err)
	}
	loads, _ := tokendist.PointMass(16, 1000, 0)
	r, _ := tokendist.Run(context.Background(), ec.Graph(), loads, b, &tokendist.RunOptions{MaxSteps: 4})
	fmt.Println(r.Loads, "discrepancy", r.Discrepancy())
	// Output:
	// [63 63 63 63 63 63 63 63 62 62 62 62 62 62 62 62] discrepancy 1
}
