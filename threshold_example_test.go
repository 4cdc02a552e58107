package tokendist_test

import (
	"context"
	"fmt"

	"github.com/tokendist/tokendist"
)

// THRESHOLD-2 stops once every edge has discrepancy ≤ 1 (Lemma 4), so on a path it can
// stop with discrepancy n − 1 = the diameter (Theorem 5).
func ExampleNewThreshold2() {
	g, _ := tokendist.Path(6)
	b, err := tokendist.NewThreshold2(g, nil)
	if err != nil {
		panic(err)
	}
	r, _ := tokendist.Run(context.Background(), g, tokendist.Loads{40, 0, 0, 0, 0, 2}, b, nil)
	fmt.Println(r.Status, r.Loads, "discrepancy", r.Discrepancy())
	// Output:
	// Stable [9 8 7 7 6 5] discrepancy 4
}

// THRESHOLD-1 also swaps across edges of discrepancy one; on a path that is enough to
// reach discrepancy ≤ 1 (section 4.5).
func ExampleNewThreshold1() {
	g, _ := tokendist.Path(6)
	b, err := tokendist.NewThreshold1(g, nil)
	if err != nil {
		panic(err)
	}
	r, _ := tokendist.Run(context.Background(), g, tokendist.Loads{40, 0, 0, 0, 0, 2}, b, nil)
	fmt.Println(r.Status, r.Loads, "discrepancy", r.Discrepancy())
	fmt.Println("period (one phase):", b.Period(nil), "steps")
	// Output:
	// Stable [7 7 7 7 7 7] discrepancy 0
	// period (one phase): 12 steps
}
