package tokendist_test

import (
	"context"
	"fmt"

	"github.com/tokendist/tokendist"
)

// A ring of 16 processors under Poisson arrivals at 0.45 tokens per node per step and
// service at 0.5 per node (ρ = 0.9), balanced by THRESHOLD-2: the accounting is exact
// and the steady-state metrics come after a warm-up.
func ExampleNewCombinedWorkload() {
	g, _ := tokendist.Ring(16)
	b, _ := tokendist.NewThreshold2(g, nil)
	arrivals, _ := tokendist.NewPoissonArrivals(0.45, true)
	service, _ := tokendist.NewService(0.5)
	w, _ := tokendist.NewCombinedWorkload(arrivals, service)
	res, err := tokendist.Run(context.Background(), g, make(tokendist.Loads, 16), b, &tokendist.RunOptions{
		MaxSteps: 5000, Seed: 7, Workload: w, Steady: &tokendist.SteadyOptions{WarmUp: 1000},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(w)
	fmt.Println("total = initial + arrived - completed:", res.Loads.Total() == res.Initial+res.Arrived-res.Completed)
	fmt.Printf("arrived %d, completed %d\n", res.Arrived, res.Completed)
	fmt.Printf("mean discrepancy %.2f, p95 %d, unstable %v\n", res.Steady.MeanDiscrepancy, res.Steady.P95Discrepancy, res.Steady.Unstable)
	// Output:
	// Poisson(0.45/node) + Service(0.5/node)
	// total = initial + arrived - completed: true
	// arrived 35802, completed 35783
	// mean discrepancy 3.92, p95 6, unstable false
}

// Link churn: on a path 0–1–2 the link (0, 1) is down for steps 0..9. THRESHOLD-1 skips
// it in its colour's steps, so node 0 keeps its tokens until the link is back.
func ExampleNewScheduledLinkChurn() {
	g, _ := tokendist.Path(3)
	b, _ := tokendist.NewThreshold1(g, nil)
	churn, _ := tokendist.NewScheduledLinkChurn([]tokendist.LinkEvent{
		{Step: 0, U: 0, V: 1, Up: false},
		{Step: 10, U: 0, V: 1, Up: true},
	})
	for _, steps := range []int64{10, 40} {
		res, _ := tokendist.Run(context.Background(), g, tokendist.Loads{9, 0, 0}, b, &tokendist.RunOptions{MaxSteps: steps, Churn: churn})
		fmt.Println(steps, "steps:", res.Loads)
	}
	// Output:
	// 10 steps: [9 0 0]
	// 40 steps: [3 3 3]
}
