package tokendist_test

import (
	"context"
	"fmt"

	"github.com/tokendist/tokendist"
)

// The randomized diffusion of Berenbrink et al. balances a point mass on a hypercube
// within τ(G, K) rounds to a discrepancy of O(log n).
func ExampleRandomizedDiffusion() {
	g, _ := tokendist.Hypercube(8)
	start, _ := tokendist.PointMass(g.Order(), 10000, 0)
	sp, _ := tokendist.HypercubeSpectrum(8)
	tau, _ := tokendist.BalancingTime(sp.LambdaMax, g.Order(), start.Discrepancy())
	b, _ := tokendist.NewRandomizedDiffusion(g)
	r, _ := tokendist.Run(context.Background(), g, start, b, &tokendist.RunOptions{MaxSteps: tau, Seed: 1})
	fmt.Println("τ =", tau, "rounds")
	fmt.Println("final discrepancy:", r.Discrepancy(), "total:", r.Loads.Total())
	// Output:
	// τ = 183 rounds
	// final discrepancy: 8 total: 10000
}

// A Deviation recorder runs the continuous process next to a discrete scheme and
// reports the deviation max_k |X_k(t) − ξ_k(t)| that Theorem 1.1 bounds.
func ExampleDeviation() {
	g, _ := tokendist.Torus(8, 8)
	start, _ := tokendist.PointMass(g.Order(), 6400, 0)
	for _, mk := range []func(tokendist.Network) (tokendist.Balancer, error){
		func(n tokendist.Network) (tokendist.Balancer, error) { return tokendist.NewRandomizedDiffusion(n) },
		func(n tokendist.Network) (tokendist.Balancer, error) { return tokendist.NewRSWDiffusion(n) },
	} {
		b, _ := mk(g)
		dev, _ := tokendist.NewDeviation(g, start)
		res, _ := tokendist.Run(context.Background(), g, start, b, &tokendist.RunOptions{MaxSteps: 300, Seed: 2, SampleEvery: 1, Recorder: dev})
		devs := dev.Samples()
		worst := 0.0
		for _, d := range devs {
			worst = max(worst, d.Deviation)
		}
		fmt.Printf("%s: discrepancy %d, largest deviation %.2f, continuous discrepancy %.4f\n",
			res.Balancer, res.Discrepancy(), worst, devs[len(devs)-1].Continuous)
	}
	// Output:
	// RandomizedDiffusion: discrepancy 0, largest deviation 3.59, continuous discrepancy 0.0000
	// RSW: discrepancy 24, largest deviation 12.00, continuous discrepancy 0.0000
}

// The FGS schemes round each link's flow and may make loads negative; Run counts it.
func ExampleFGSRandomized() {
	g, _ := tokendist.Complete(6)
	b, _ := tokendist.NewFGSRandomized(g)
	r, _ := tokendist.Run(context.Background(), g, tokendist.Loads{1, 0, 0, 0, 0, 1}, b, &tokendist.RunOptions{MaxSteps: 20, Seed: 3})
	fmt.Println(r.NegativeSteps > 0, r.MostNegative, r.Loads.Total())
	// Output:
	// true -1 2
}

// LambdaMax computes λ_max = max(λ_2, |λ_n|) of the transition matrix; on large
// networks it runs Lanczos on 1^⊥, checked here against the torus's closed form.
func ExampleLambdaMax() {
	g, _ := tokendist.Torus(60, 60)
	sp, _ := tokendist.LambdaMax(g, nil)
	cf, _ := tokendist.TorusSpectrum(60, 60)
	fmt.Printf("%v: λ_2 = %.10f, λ_n = %.6f, λ_max = %.10f\n", sp.Method, sp.Lambda2, sp.LambdaN, sp.LambdaMax)
	fmt.Printf("closed form: λ_2 = %.10f, λ_n = %.6f\n", cf.Lambda2, cf.LambdaN)
	// Output:
	// Lanczos: λ_2 = 0.9978087581, λ_n = -0.600000, λ_max = 0.9978087581
	// closed form: λ_2 = 0.9978087581, λ_n = -0.600000
}

// LocalDivergence evaluates Definitions 2.1 and 2.2; on a vertex-transitive network
// one node suffices. Ψ_1 of the hypercube is d(d+1)/2 (Theorem 4.4).
func ExampleLocalDivergence() {
	g, _ := tokendist.Hypercube(6)
	dv, _ := tokendist.LocalDivergence(g, 1e-9, &tokendist.DivergenceOptions{Nodes: []int{0}})
	cf, _ := tokendist.HypercubePsi1(6)
	fmt.Printf("Ψ_1 = %.6f (Theorem 4.4: %g), Ψ_2 = %.4f, Υ_2 = %.4f\n", dv.Psi1, cf, dv.Psi2, dv.Upsilon2)
	// Output:
	// Ψ_1 = 21.000000 (Theorem 4.4: 21), Ψ_2 = 2.6250, Υ_2 = 1.9541
}
