package tokendist_test

import (
	"context"
	"fmt"

	"github.com/tokendist/tokendist"
)

// SG_1 and MSD of the complete binary tree of height 3 (section 4.3).
func ExampleStableGaps() {
	g, _ := tokendist.KaryTree(tokendist.KaryShape{Height: 3, Arity: 2})
	sg1, _ := tokendist.StableGaps(g)
	msd, _ := tokendist.MSD(g)
	fmt.Println("SG_1:", sg1)
	fmt.Println("MSD:", msd)
	// Output:
	// SG_1: [1 3 7 8 12 14]
	// MSD: 2
}

// Stars are THRESHOLD-1's worst case (MSD = ⌊n/2⌋) and paths its best (MSD = 1),
// section 4.5.
func ExampleMSD() {
	for _, n := range []int{8, 101} {
		star, _ := tokendist.Star(n)
		path, _ := tokendist.Path(n)
		s, _ := tokendist.MSD(star)
		p, _ := tokendist.MSD(path)
		fmt.Printf("n = %d: star %d, path %d\n", n, s, p)
	}
	// Output:
	// n = 8: star 4, path 1
	// n = 101: star 50, path 1
}

// stability(p) for every gap of T_{2,2}: pairs of nodes whose gap is 2 or 5 may differ
// by two tokens in a stable distribution.
func ExampleStabilities() {
	g, _ := tokendist.KaryTree(tokendist.KaryShape{Height: 2, Arity: 2})
	stab, _ := tokendist.Stabilities(g)
	fmt.Println(stab[1:])
	sg2, _ := tokendist.StableGapsAt(g, 2)
	fmt.Println("SG_2:", sg2)
	// Output:
	// [1 2 1 1 2 1]
	// SG_2: [0 1 2 3 4 5 6]
}

// The observer tour of a path coloured 0, 1, 0 and the gaps of its 0-orderings.
func ExampleNewObserverTour() {
	g, _ := tokendist.Path(4)
	ec, _ := tokendist.NewEdgeColoring(g, func(u, v int) int { return u % 2 })
	tour, _ := tokendist.NewObserverTour(ec)
	for i, a := range tour.Arcs() {
		if i > 0 {
			fmt.Print(", ")
		}
		fmt.Printf("t=%d %d→%d", a.Time, a.From, a.To)
	}
	fmt.Println()
	gp, _ := tour.Gaps(0)
	fmt.Println("0-ordering from node 0:", gp.Ordering(0))
	fmt.Println("gap_0(0, 3) =", gp.Gap(0, 3))
	// Output:
	// t=0 0→1, t=1 1→2, t=2 2→3, t=4 3→2, t=5 2→1, t=6 1→0
	// 0-ordering from node 0: [0 2 3 1]
	// gap_0(0, 3) = 2
}

// The worst stable distribution of Theorem 12 on T_{3,2} survives a whole phase of
// THRESHOLD-1 with discrepancy MSD = 2.
func ExampleWorstStableLoads() {
	g, _ := tokendist.KaryTree(tokendist.KaryShape{Height: 3, Arity: 2})
	ec, _ := tokendist.BipartiteColoring(g)
	loads, _ := tokendist.WorstStableLoads(ec, 0, 0)
	fmt.Println(loads, "discrepancy", loads.Discrepancy())
	th, _ := tokendist.NewThreshold1(g, ec)
	res, _ := tokendist.Run(context.Background(), g, loads, th, nil)
	fmt.Println(res.Status, "after", res.Steps, "steps, discrepancy", res.Discrepancy())
	// Output:
	// [0 1 2 2 2 1 1 1 1 2 2 1 2 2 2] discrepancy 2
	// Stable after 45 steps, discrepancy 2
}

// CONSTRUCT SUBGRAPH finds a connected 5-node subtree of T_{3,2}.
func ExampleConstructSubgraph() {
	g, _ := tokendist.KaryTree(tokendist.KaryShape{Height: 3, Arity: 2})
	st, _ := tokendist.ConstructSubgraph(g, 5)
	fmt.Println(st.Nodes, "from leaf", st.Leaf, "in", st.Iterations, "iterations")
	// Output:
	// [0 1 3 7 8] from leaf 7 in 2 iterations
}

// MSD of a complete 7-ary tree with 137,257 nodes, from the closed form of SG_1: 17,
// below the paper's conjectured ⌊(k-1)h/2⌋ = 18 (see examples/msdtable).
func ExampleKaryTreeMSD() {
	msd, _ := tokendist.KaryTreeMSD(tokendist.KaryShape{Height: 6, Arity: 7}, nil)
	bound, _ := tokendist.KaryTreeBound(tokendist.KaryShape{Height: 6, Arity: 7})
	fmt.Println("MSD(T_{6,7}) =", msd, "conjectured ≥", (7-1)*6/2, "Lemma 17 bound", bound)
	// Output:
	// MSD(T_{6,7}) = 17 conjectured ≥ 18 Lemma 17 bound 31
}

// Theorem 16's bound and its three terms for a tree of 1000 nodes with maximum degree 3.
func ExampleThreshold1Bound() {
	b, _ := tokendist.Threshold1Bound(1000, 3)
	fmt.Printf("%+v\n", b)
	// Output:
	// {Linear:500 Degree:11 Balanced:20 Bound:11}
}
