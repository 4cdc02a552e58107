package tokendist_test

import (
	"fmt"

	"github.com/tokendist/tokendist"
)

// Load metrics and initial distributions.
func ExampleLoads_metrics() {
	l := tokendist.Loads{7, 0, 3, 2}
	fmt.Println("total", l.Total(), "max", l.Max(), "min", l.Min(), "discrepancy", l.Discrepancy(), "potential", l.Potential())

	// The potential is exact even beyond 64 bits.
	big := tokendist.Loads{1 << 62, 1 << 62}
	fmt.Println("potential", big.Potential())

	// Validate rejects what Run rejects.
	_, err := tokendist.Loads{3, -1}.Validate()
	fmt.Println(err)

	ring, _ := tokendist.Ring(6)
	dist, _ := tokendist.DistanceLoads(ring, 0)
	fmt.Println("distance loads", dist, "discrepancy", dist.Discrepancy())
	u, _ := tokendist.UniformRandom(6, 60, 1)
	fmt.Println("uniform", u, "total", u.Total())
	// Output:
	// total 12 max 7 min 0 discrepancy 7 potential 62
	// potential 42535295865117307932921825928971026432
	// tokendist: bad loads: negative load -1 at node 1
	// distance loads [0 1 2 3 2 1] discrepancy 3
	// uniform [9 11 12 10 9 9] total 60
}
