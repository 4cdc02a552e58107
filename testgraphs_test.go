package tokendist

import "github.com/tokendist/tokendist/internal/randgraph"

// The random families of package gen for the core's internal tests, which cannot
// import gen (it imports the core): the same draws, so the same graphs, built with
// fromPairs.

func erdosRenyi(n int, p float64, seed uint64) (*Graph, error) {
	return fromDraw(n)(randgraph.ErdosRenyi(n, p, seed))
}

func barabasiAlbert(n, m int, seed uint64) (*Graph, error) {
	return fromDraw(n)(randgraph.BarabasiAlbert(n, m, seed))
}

func wattsStrogatz(n, k int, beta float64, seed uint64) (*Graph, error) {
	return fromDraw(n)(randgraph.WattsStrogatz(n, k, beta, seed))
}

// fromDraw returns a function that builds the graph on n nodes from a draw's pairs,
// or passes on the draw's error.
func fromDraw(n int) func([]int32, error) (*Graph, error) {
	return func(pairs []int32, err error) (*Graph, error) {
		if err != nil {
			return nil, err
		}
		return fromPairs(n, pairs, false)
	}
}
