package tokendist_test

import (
	"context"
	"fmt"

	"github.com/tokendist/tokendist"
)

// The simulated runtime on a path of four nodes: node 2 is elected in phase 1, phase 2
// gives everyone else Avg = 1 token, phase 3 spreads the root's two extra tokens. The
// protocol's figures are in Result.Report.
func ExampleNewPerfectTree() {
	g, _ := tokendist.Path(4)
	b, _ := tokendist.NewPerfectTree(g, nil)
	res, err := tokendist.Run(context.Background(), g, tokendist.Loads{2, 0, 3, 1}, b, nil)
	if err != nil {
		panic(err)
	}
	r := res.Report.(tokendist.PerfectTreeReport)
	fmt.Println("final:", res.Loads, "perfect:", r.Perfect, "root:", r.Root)
	fmt.Println("time:", r.Time, "phase ends:", r.PhaseTime)
	fmt.Println("messages:", r.Messages, "moves:", r.Moves, "optimum:", r.OptimalMoves)
	fmt.Println("theorems:", r.CheckTheorems(g))
	// Output:
	// final: [1 2 2 1] perfect: true root: 2
	// time: 7 phase ends: [4 5 7]
	// messages: [6 1 4] moves: [0 1 1] optimum: 1
	// theorems: <nil>
}

// PerfectTree plugs into Run like any balancer; one step is one time unit. Here the
// links take random delays, fixed by the run's seed.
func ExamplePerfectTree() {
	g, _ := tokendist.KaryTree(tokendist.KaryShape{Height: 3, Arity: 2})
	loads, _ := tokendist.PointMass(g.Order(), 40, 14)
	delays, _ := tokendist.NewRandomDelays(3)
	b, _ := tokendist.NewPerfectTree(g, &tokendist.PerfectTreeOptions{Delays: delays})
	res, err := tokendist.Run(context.Background(), g, loads, b, &tokendist.RunOptions{MaxSteps: 10_000, Seed: 7})
	if err != nil {
		panic(err)
	}
	r := res.Report.(tokendist.PerfectTreeReport)
	fmt.Println(res.Status, "after", res.Steps, "steps")
	fmt.Println("final:", res.Loads)
	fmt.Printf("moves %d, optimum %d, ratio %.2f\n", r.TotalMoves(), r.OptimalMoves, r.Ratio)
	// Output:
	// Done after 320 steps
	// final: [3 3 3 3 2 3 3 2 2 2 2 3 3 3 3]
	// moves 180, optimum 142, ratio 1.27
}

// The goroutine runtime: one goroutine per node, the whole protocol in one Step. The
// schedule, hence the elected root and the exact moves, vary from run to run; the
// outcome does not.
func ExampleNewPerfectTree_goroutines() {
	g, _ := tokendist.RandomTree(100, 1)
	loads, _ := tokendist.RandomRange(100, 0, 9, 1)
	b, _ := tokendist.NewPerfectTree(g, &tokendist.PerfectTreeOptions{Goroutines: true})
	res, err := tokendist.Run(context.Background(), g, loads, b, nil)
	if err != nil {
		panic(err)
	}
	r := res.Report.(tokendist.PerfectTreeReport)
	fmt.Println(res.Status, "perfect:", r.Perfect, "finished:", r.Finished, "roots:", r.Roots)
	fmt.Println("theorems:", r.CheckTheorems(g))
	// Output:
	// Done perfect: true finished: 100 roots: 1
	// theorems: <nil>
}

// The literal pseudo-code strands a token on the erratum's minimal counterexample.
func ExamplePerfectTreeOptions() {
	g, _ := tokendist.Path(4)
	loads := tokendist.Loads{2, 0, 3, 1}
	for _, literal := range []bool{true, false} {
		b, _ := tokendist.NewPerfectTree(g, &tokendist.PerfectTreeOptions{Literal: literal})
		res, _ := tokendist.Run(context.Background(), g, loads, b, nil)
		fmt.Println("literal:", literal, "final:", res.Loads, "perfect:", res.Report.(tokendist.PerfectTreeReport).Perfect)
	}
	// Output:
	// literal: true final: [1 1 3 1] perfect: false
	// literal: false final: [1 2 2 1] perfect: true
}

func ExampleOptimalPerfectMoves() {
	g, _ := tokendist.Star(5) // centre 0
	moves, _ := tokendist.OptimalPerfectMoves(g, tokendist.Loads{0, 7, 0, 0, 0})
	fmt.Println(moves) // leaf 1 keeps 2 and sends 5 to the centre, which keeps 2 and sends 1 to each other leaf
	// Output:
	// 8
}

func ExampleIsPerfectDistribution() {
	fmt.Println(tokendist.IsPerfectDistribution(tokendist.Loads{3, 2, 3}))
	fmt.Println(tokendist.IsPerfectDistribution(tokendist.Loads{4, 2, 2}))
	// Output:
	// true
	// false
}

// Batched runs of tokens: the same moves, messages and final loads as the per-token
// runtime, in far fewer steps; Time differs, as a node passes tokens on only once their
// whole run has arrived.
func ExamplePerfectTreeOptions_batch() {
	g, _ := tokendist.Path(50)
	loads, _ := tokendist.PointMass(50, 1000, 0)
	for _, batch := range []bool{false, true} {
		b, _ := tokendist.NewPerfectTree(g, &tokendist.PerfectTreeOptions{Batch: batch})
		res, err := tokendist.Run(context.Background(), g, loads, b, nil)
		if err != nil {
			panic(err)
		}
		r := res.Report.(tokendist.PerfectTreeReport)
		fmt.Printf("batch %v: perfect %v, moves %d, messages %d, time %d, steps %d\n",
			batch, r.Perfect, res.Moved, res.Messages, res.Time, res.Steps)
	}
	// Output:
	// batch false: perfect true, moves 24500, messages 24647, time 18576, steps 18576
	// batch true: perfect true, moves 24500, messages 24647, time 24551, steps 147
}
