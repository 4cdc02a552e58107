package tokendist_test

import (
	"fmt"
	"testing"

	"github.com/tokendist/tokendist"
)

// BenchmarkLambdaMaxAuto is the benchmark pair behind LambdaMax's automatic choice of
// solver (issue 23): the hypercube of dimension 10 (1024 nodes) must not cost more than
// the one of dimension 11 (2048 nodes). With the dense solver up to 1024 nodes, d = 10
// took about 1.1 s and d = 11 (Lanczos) 0.3 ms; compare the two lines of
// go test -run '^$' -bench 'LambdaMaxAuto' .
func BenchmarkLambdaMaxAuto(b *testing.B) {
	for _, d := range []int{10, 11} {
		g := must(tokendist.Hypercube(d))
		b.Run(fmt.Sprintf("hypercube-d%d", d), func(b *testing.B) {
			for b.Loop() {
				if _, err := tokendist.LambdaMax(g, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
