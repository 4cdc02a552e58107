package tokendist_test

import (
	"context"
	"fmt"

	"github.com/tokendist/tokendist"
)

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
