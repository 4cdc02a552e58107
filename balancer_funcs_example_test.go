package tokendist_test

import (
	"context"
	"fmt"

	"github.com/tokendist/tokendist"
)

// A balancer made of plain functions, as a notebook would write it: each step, node
// t mod n sends one token to every neighbour that has at least two fewer.
func ExampleFuncs() {
	g, _ := tokendist.Path(4)
	step := func(s *tokendist.State) error {
		u := int(s.Steps % int64(len(s.Loads)))
		for _, v := range g.Neighbors(u) {
			if s.Loads[u]-s.Loads[v] >= 2 {
				s.Loads[u]--
				s.Loads[v]++
				s.Moved++
			}
		}
		s.Time++
		return nil
	}
	b := &tokendist.Funcs{
		Name:       "greedy-sweep",
		StepFunc:   step,
		PeriodFunc: func(s *tokendist.State) int64 { return int64(len(s.Loads)) },
	}
	r, err := tokendist.Run(context.Background(), g, tokendist.Loads{12, 0, 0, 0}, b, nil)
	fmt.Println(r, err)
	fmt.Println(r.Loads)
	// Output:
	// greedy-sweep: Stable after 36 steps (time 36), discrepancy 2, moved 15, messages 0 <nil>
	// [4 3 3 2]
}
