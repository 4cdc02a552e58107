package tokendist_test

import (
	"context"
	"fmt"

	"github.com/tokendist/tokendist"
)

// NewHypercubeBalance against dimension order on dimension order's worst case on
// Hypercube(10), with at most m = 256 tokens per processor.
func ExampleNewHypercubeBalance() {
	g, _ := tokendist.Hypercube(10)
	loads, _ := tokendist.DimensionOrderWorstLoads(10, 256)
	for _, mk := range []func() (*tokendist.CubeBalancer, error){
		func() (*tokendist.CubeBalancer, error) { return tokendist.NewDimensionOrderBalance(g, nil) },
		func() (*tokendist.CubeBalancer, error) { return tokendist.NewHypercubeBalance(g, nil) },
		func() (*tokendist.CubeBalancer, error) {
			return tokendist.NewHypercubeBalance(g, &tokendist.CubeOptions{MinError: true})
		},
	} {
		b, _ := mk()
		r, _ := tokendist.Run(context.Background(), g, loads, b, nil)
		fmt.Printf("%v: error %d, %v\n", b, r.Discrepancy(), r.Report)
	}
	ub, _ := tokendist.HypercubeBalanceTimeBound(10, 256)
	dimUB, _ := tokendist.DimensionOrderTimeBound(g, 256)
	fmt.Println("upper bounds: recursion", ub, "dimension order", dimUB)
	// Output:
	// NewDimensionOrderBalance(Hypercube(10)): error 1, model time 1163, balance 1163
	// NewHypercubeBalance(Hypercube(10)): error 1, model time 406, select 139, balance 267
	// NewHypercubeBalance(Hypercube(10), min error): error 1, model time 446, select 139, balance 267, reduce 20, route 20, Leighton phases 1
	// upper bounds: recursion 728 dimension order 1290
}

// Leighton's algorithm deals the tokens out in cyclic blocks: the result is the ideal
// distribution with the extra tokens on the first processors, in exactly (2m+1)·log p
// time steps.
func ExampleNewLeightonBalance() {
	g, _ := tokendist.Hypercube(3)
	loads := tokendist.Loads{9, 0, 0, 4, 0, 0, 0, 2}
	b, _ := tokendist.NewLeightonBalance(g)
	r, _ := tokendist.Run(context.Background(), g, loads, b, nil)
	want, _ := tokendist.LeightonTime(g, loads.Max())
	fmt.Println(r.Loads, "time", r.Time, "=", want, "phases", r.Report.(tokendist.CubeTimes).Phases)
	// Output:
	// [2 2 2 2 2 2 2 1] time 57 = 57 phases 9
}

// NewMultiBalance on Theorem 3.2's condensed-ID input: 4 groups on Hypercube(8), each group
// packed on the processors of one condensed ID.
func ExampleNewMultiBalance() {
	g, _ := tokendist.Hypercube(8)
	groups, _ := tokendist.CondensedIDGroups(8, 2, 16)
	total := make(tokendist.Loads, g.Order())
	for _, grp := range groups {
		for v, x := range grp {
			total[v] += x
		}
	}
	b, _ := tokendist.NewMultiBalance(g, groups, nil)
	r, _ := tokendist.Run(context.Background(), g, total, b, nil)
	for j, grp := range r.Report.(tokendist.MultiBalanceReport).Groups {
		fmt.Printf("group %d: %d tokens, error %d\n", j, grp.Total(), grp.Discrepancy())
	}
	lb, _ := tokendist.MultiBalanceLowerBound(groups, int64(g.Order()/2))
	fmt.Println("time", r.Time, "section 3.2 lower bound", lb)
	// Output:
	// group 0: 1024 tokens, error 0
	// group 1: 1024 tokens, error 0
	// group 2: 1024 tokens, error 0
	// group 3: 1024 tokens, error 0
	// time 342 section 3.2 lower bound 16
}

// Harper's theorem: the least fringe of x processors of Hypercube(4), and a Hamming
// ball that attains it.
func ExampleHypercubeFringe() {
	var f []int64
	for x := int64(0); x <= 16; x++ {
		fx, _ := tokendist.HypercubeFringe(4, x)
		f = append(f, fx)
	}
	fmt.Println("f(H_4, x), x = 0..16:", f)
	ball, _ := tokendist.HammingBall(4, 7, 0)
	g, _ := tokendist.Hypercube(4)
	fb, _ := tokendist.Fringe(g, ball)
	fmt.Println(ball, "fringe", fb)
	// Output:
	// f(H_4, x), x = 0..16: [0 1 2 3 4 4 5 6 6 7 7 6 7 7 6 4 0]
	// [0 1 2 4 8 3 5] fringe 6
}
