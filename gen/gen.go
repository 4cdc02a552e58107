package gen

import (
	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/internal/errs"
	"github.com/tokendist/tokendist/internal/randgraph"
)

// ErdosRenyi returns a connected G(n, p) random graph, fixed by seed: every one of the
// n(n-1)/2 possible edges is present independently with probability p. Connected
// rule: draws are repeated, at most 100 times, until one is connected, so the result
// follows G(n, p) conditioned on connectivity (Batagelj and Brandes' geometric skipping
// draws each, in O(n + m) time). Above the connectivity threshold p = (ln n + c)/n a
// draw is connected with probability about exp(-e^-c); where the expected number of
// isolated nodes, n(1-p)^(n-1), exceeds 40 the call fails at once with tokendist.ErrNotConnected.
// It rejects p outside (0, 1] and expected sizes beyond the memory budget.
func ErdosRenyi(n int, p float64, seed uint64) (*tokendist.Graph, error) {
	return build("ErdosRenyi", n)(randgraph.ErdosRenyi(n, p, seed))
}

// BarabasiAlbert returns a Barabási–Albert preferential-attachment graph on n nodes,
// fixed by seed: it starts from the complete graph on nodes 0..m and adds nodes
// m+1..n-1 one at a time, each joined to m distinct earlier nodes chosen with
// probability proportional to their degree. The graph is connected, has exactly
// m(m+1)/2 + (n-m-1)·m edges and minimum degree m; its degree distribution tends to
// P(k) = 2m(m+1)/(k(k+1)(k+2)) for k ≥ m (Bollobás, Riordan, Spencer, Tusnády 2001).
// It costs O(n·m) expected time and about 32 bytes per edge of scratch besides the graph. It rejects
// m < 1 and n ≤ m.
func BarabasiAlbert(n, m int, seed uint64) (*tokendist.Graph, error) {
	return build("BarabasiAlbert", n)(randgraph.BarabasiAlbert(n, m, seed))
}

// WattsStrogatz returns a connected Watts–Strogatz small-world graph, fixed by seed: the
// ring lattice in which every node is joined to its k nearest nodes (k/2 on each side),
// with each lattice edge (u, u+j), j = 1..k/2, rewired with probability beta to
// (u, w), w uniform among the nodes not u and not already adjacent to u (Watts and
// Strogatz 1998, the order NetworkX uses: j outer, u inner). It has exactly n·k/2 edges;
// beta = 0 gives the lattice and beta = 1 a graph close to a random one. Disconnected
// draws are redrawn, at most 100 times, then refused with tokendist.ErrNotConnected (with k = 2 and beta > 0 a draw is
// often disconnected). It costs O(n·k) expected time
// and a hash set of the edges while it builds. It rejects odd k, k < 2, k ≥ n and beta
// outside [0, 1].
func WattsStrogatz(n, k int, beta float64, seed uint64) (*tokendist.Graph, error) {
	return build("WattsStrogatz", n)(randgraph.WattsStrogatz(n, k, beta, seed))
}

// RandomGeometric returns a connected random geometric graph, fixed by seed: n points
// uniform in the unit square [0, 1)², two joined when their Euclidean distance is at
// most radius (Penrose 2003). For radius ≤ 1 the expected number of edges is
// n(n-1)/2 · (π r² − 8r³/3 + r⁴/2). Disconnected draws are redrawn, at most 100 times,
// then refused with tokendist.ErrNotConnected (the threshold is near r = sqrt(ln n / (π n))); where
// n(1 − π r²)^(n−1) exceeds 40 expected isolated nodes the call fails at once. Points are
// bucketed in cells of side ≥ radius, so it costs O(n + m) expected time, 28 bytes a
// node besides the graph. It rejects radius outside (0, √2].
func RandomGeometric(n int, radius float64, seed uint64) (*tokendist.Graph, error) {
	return build("RandomGeometric", n)(randgraph.RandomGeometric(n, radius, seed))
}

// build returns a function that makes the graph on n nodes from a draw's pairs, or
// passes on the draw's error. The pairs are simple, so NewGraph accepts them; the edge
// list it takes costs 8 bytes an end more than the pairs.
func build(what string, n int) func(pairs []int32, err error) (*tokendist.Graph, error) {
	return func(pairs []int32, err error) (*tokendist.Graph, error) {
		if err != nil {
			return nil, err
		}
		if err := errs.CheckAlloc(what+": the edge list", int64(len(pairs)), 8); err != nil {
			return nil, err
		}
		edges := make([][2]int, len(pairs)/2)
		for i := range edges {
			edges[i] = [2]int{int(pairs[2*i]), int(pairs[2*i+1])}
		}
		return tokendist.NewGraph(n, edges)
	}
}
