package gen

import (
	"fmt"
	"math"
	"testing"

	"github.com/tokendist/tokendist"
)

// The random families at n = 10^4 and 10^5 nodes, above their connectivity thresholds
// (G(n, p) and random geometric graphs with mean degree 2 ln n, about 18 and 23; the
// others with mean degree 8): the time per edge should stay flat (O(n + m)).
func BenchmarkRandomFamilies(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		fn := float64(n)
		deg := 2 * math.Log(fn)
		for _, fam := range []struct {
			name  string
			build func(seed uint64) (*tokendist.Graph, error)
		}{
			{"ErdosRenyi", func(s uint64) (*tokendist.Graph, error) { return ErdosRenyi(n, deg/fn, s) }},
			{"BarabasiAlbert", func(s uint64) (*tokendist.Graph, error) { return BarabasiAlbert(n, 4, s) }},
			{"WattsStrogatz", func(s uint64) (*tokendist.Graph, error) { return WattsStrogatz(n, 8, 0.1, s) }},
			{"RandomGeometric", func(s uint64) (*tokendist.Graph, error) { return RandomGeometric(n, math.Sqrt(deg/(math.Pi*fn)), s) }},
		} {
			b.Run(fmt.Sprintf("%s/n=%d", fam.name, n), func(b *testing.B) {
				m := 0
				for i := 0; b.Loop(); i++ {
					g, err := fam.build(uint64(i))
					if err != nil {
						b.Fatal(err)
					}
					m = g.Size()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(m), "ns/edge")
			})
		}
	}
}
