package tokendist_test

import (
	"context"
	"fmt"

	"github.com/tokendist/tokendist"
)

// On a star THRESHOLD-1 can stop at discrepancy ⌊n/2⌋; DISCREPANCY-1 reaches ≤ 1 and
// then stops by its termination rule (Theorem 18).
func ExampleNewDiscrepancy1() {
	g, _ := tokendist.Star(9)
	loads := tokendist.Loads{5, 6, 7, 8, 9, 9, 8, 7, 6} // stable under THRESHOLD-1
	t1, _ := tokendist.NewThreshold1(g, nil)
	r1, _ := tokendist.Run(context.Background(), g, loads, t1, nil)
	fmt.Println("THRESHOLD-1:  ", r1.Status, "discrepancy", r1.Discrepancy())

	d1, err := tokendist.NewDiscrepancy1(g, nil, nil)
	if err != nil {
		panic(err)
	}
	r, _ := tokendist.Run(context.Background(), g, loads, d1, &tokendist.RunOptions{NoStability: true})
	fmt.Println("DISCREPANCY-1:", r.Status, "discrepancy", r.Discrepancy(), "after", r.Report.(tokendist.Discrepancy1Report).Cycles, "cycles of", 2*d1.Colors()*9, "steps")
	// Output:
	// THRESHOLD-1:   Stable discrepancy 4
	// DISCREPANCY-1: Done discrepancy 1 after 3 cycles of 144 steps
}

// With the convergecast termination the tree itself learns that the rule held at every
// node: the same cycle decides, and the "stop" reaches every node 2⌈D/2⌉ steps later
// (D = 2 on a star), at the cost of n − 1 control messages per convergecast and n − 1
// for the broadcast.
func ExampleNewDiscrepancy1_convergecast() {
	g, _ := tokendist.Star(9)
	loads := tokendist.Loads{5, 6, 7, 8, 9, 9, 8, 7, 6}
	opts := &tokendist.RunOptions{NoStability: true}
	global, _ := tokendist.NewDiscrepancy1(g, nil, nil)
	rg, _ := tokendist.Run(context.Background(), g, loads.Clone(), global, opts)
	cc, err := tokendist.NewDiscrepancy1(g, nil, &tokendist.Discrepancy1Options{Convergecast: true})
	if err != nil {
		panic(err)
	}
	rc, _ := tokendist.Run(context.Background(), g, loads.Clone(), cc, opts)
	fmt.Println("global check: ", rg.Status, "after", rg.Steps, "steps,", rg.Messages, "messages, discrepancy", rg.Discrepancy())
	fmt.Println("convergecast: ", rc.Status, "after", rc.Steps, "steps,", rc.Messages, "messages, discrepancy", rc.Discrepancy())
	// Output:
	// global check:  Done after 432 steps, 864 messages, discrepancy 1
	// convergecast:  Done after 434 steps, 892 messages, discrepancy 1
}
