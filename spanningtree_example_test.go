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
