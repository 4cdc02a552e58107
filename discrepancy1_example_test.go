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

	d1, err := tokendist.NewDiscrepancy1(g, nil, 0)
	if err != nil {
		panic(err)
	}
	r, _ := tokendist.Run(context.Background(), g, loads, d1, &tokendist.RunOptions{NoStability: true})
	fmt.Println("DISCREPANCY-1:", r.Status, "discrepancy", r.Discrepancy(), "after", d1.Cycles(), "cycles of", 2*d1.Colors()*9, "steps")
	// Output:
	// THRESHOLD-1:   Stable discrepancy 4
	// DISCREPANCY-1: Done discrepancy 1 after 3 cycles of 144 steps
}
