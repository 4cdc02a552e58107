package gen_test

import (
	"errors"
	"fmt"

	"github.com/tokendist/tokendist/gen"

	"github.com/tokendist/tokendist"
)

// A connected G(n, p) graph: p·n(n-1)/2 = 396 edges expected here.
func ExampleErdosRenyi() {
	g, err := gen.ErdosRenyi(100, 0.08, 1)
	fmt.Println(g, err)
	// Below the connectivity threshold ln(n)/n the draws are disconnected and the call
	// fails; far below it, it fails at once.
	_, err = gen.ErdosRenyi(100, 0.01, 1)
	fmt.Println(err)
	_, err = gen.ErdosRenyi(1000, 0.001, 1)
	fmt.Println(errors.Is(err, tokendist.ErrNotConnected))
	// Output:
	// Graph(n=100, m=407, Δ=15) <nil>
	// tokendist: network is not connected: ErdosRenyi(100, 0.01) drew no connected graph in 100 draws; raise p above the connectivity threshold ln(n)/n = 0.04605
	// true
}

// Preferential attachment: m(m+1)/2 + (n-m-1)·m = 197 edges, minimum degree m = 2, and
// a few hubs.
func ExampleBarabasiAlbert() {
	g, err := gen.BarabasiAlbert(100, 2, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	minDeg := g.Order()
	for v := range g.Order() {
		minDeg = min(minDeg, g.Degree(v))
	}
	fmt.Println(g, "minimum degree", minDeg)
	// Output:
	// Graph(n=100, m=197, Δ=20) minimum degree 2
}

// A small world: the ring lattice with k = 4 has diameter 25 on 100 nodes; rewiring a
// tenth of its 200 edges shortens it to 10 and keeps the edge count.
func ExampleWattsStrogatz() {
	for _, beta := range []float64{0, 0.1} {
		g, err := gen.WattsStrogatz(100, 4, beta, 1)
		if err != nil {
			fmt.Println(err)
			return
		}
		d, _ := g.Diameter()
		fmt.Printf("beta=%v %v diameter=%d\n", beta, g, d)
	}
	// Output:
	// beta=0 Graph(n=100, m=200, Δ=4) diameter=25
	// beta=0.1 Graph(n=100, m=200, Δ=6) diameter=10
}

// Points in the unit square joined within distance 0.2: n(n-1)/2 · (π r² − 8r³/3 + r⁴/2)
// ≈ 529.6 edges expected for n = 100.
func ExampleRandomGeometric() {
	g, err := gen.RandomGeometric(100, 0.2, 1)
	fmt.Println(g, err)
	// Output:
	// Graph(n=100, m=501, Δ=21) <nil>
}
