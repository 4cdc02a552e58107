package tokendist

// The reference RandomRegular: the implementation before the issue-15 speed-up, kept
// verbatim (only renamed) so that TestRandomRegularMatchesReference can check that the
// faster generator returns the same graph for the same seed.

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// refRandomRegular is RandomRegular as it was before the issue-15 speed-up.
func refRandomRegular(n, d int, seed uint64) (*Graph, error) {
	if err := checkOrder("RandomRegular", n); err != nil {
		return nil, err
	}
	switch {
	case d < 0 || d >= n:
		return nil, badParam("RandomRegular needs 0 ≤ d < n, got n = %d, d = %d", n, d)
	case n*d%2 != 0:
		return nil, badParam("RandomRegular needs n·d even, got n = %d, d = %d", n, d)
	case d == 0 && n > 1, d == 1 && n > 2:
		return nil, fmt.Errorf("%w: no connected %d-regular graph on %d nodes", ErrNotConnected, d, n)
	case int64(n)*int64(d) > maxEdgeEnds:
		return nil, badParam("RandomRegular(%d, %d) has more than 2^31 edge ends", n, d)
	}
	r := rand.New(rand.NewPCG(seed, 0x726567756c6172))
	if d <= 2 {
		perm := r.Perm(n)
		pairs := make([]int32, 0, 2*n)
		for i := 0; i < n && d > 0; i++ {
			if d == 2 || i%2 == 0 {
				pairs = append(pairs, int32(perm[i]), int32(perm[(i+1)%n]))
			}
		}
		return fromPairs(n, pairs, true)
	}
	// Dense graphs are complements of sparse ones: switching a pairing towards a nearly
	// complete graph gets stuck often, its complement's pairing rarely. Any graph with
	// minimum degree ≥ (n-1)/2 is connected (two non-adjacent nodes share a neighbour).
	dense := 2*d >= n-1
	for attempt := 0; attempt < 100; attempt++ {
		if dense {
			if h, ok := refRandomPairing(n, n-1-d, r); ok {
				return complement(h), nil
			}
			continue
		}
		g, ok := refRandomPairing(n, d, r)
		if ok && g.Connected() {
			return g, nil
		}
	}
	return nil, fmt.Errorf("%w: RandomRegular(%d, %d) found no connected simple graph in 100 draws", ErrNotConnected, n, d)
}

// refRandomPairing is randomPairing as it was before the issue-15 speed-up.
func refRandomPairing(n, d int, r *rand.Rand) (*Graph, bool) {
	m := n * d
	mate := make([]int32, m)
	perm := make([]int32, m)
	for i := range perm {
		perm[i] = int32(i)
	}
	// Fisher–Yates, exactly as rand.Shuffle draws it, without a closure call per swap.
	for i := m - 1; i > 0; i-- {
		j := r.IntN(i + 1)
		perm[i], perm[j] = perm[j], perm[i]
	}
	for i := 0; i < m; i += 2 {
		mate[perm[i]], mate[perm[i+1]] = perm[i+1], perm[i]
	}
	// nb[p] is the node of p's mate; it reuses perm's storage and becomes the adjacency.
	nb := perm
	for p := range nb {
		nb[p] = mate[p] / int32(d)
	}
	// mult returns the multiplicity of the edge {u, v} among u's points.
	mult := func(u, v int) int {
		c := 0
		for _, w := range nb[u*d : u*d+d] {
			if int(w) == v {
				c++
			}
		}
		return c
	}
	bad := func(p int) bool {
		u, v := p/d, int(nb[p])
		return u == v || mult(u, v) > 1
	}
	budget := 8*m + 1000
	for p := 0; p < m; p++ {
		for tries := 0; bad(p); tries++ {
			if tries == budget {
				return nil, false
			}
			q := r.IntN(m)
			pp, qq := int(mate[p]), int(mate[q])
			u, v, x, y := p/d, int(nb[p]), q/d, int(nb[q])
			if q == p || q == pp || u == x || v == y || mult(u, x) > 0 || mult(v, y) > 0 || (u == y && v == x) || (u == v && x == y) {
				continue
			}
			mate[p], mate[q], mate[pp], mate[qq] = int32(q), int32(p), int32(qq), int32(pp)
			nb[p], nb[q], nb[pp], nb[qq] = int32(x), int32(u), int32(y), int32(v)
		}
	}
	off := make([]int, n+1)
	for v := 0; v < n; v++ {
		off[v+1] = off[v] + d
		slices.Sort(nb[off[v]:off[v+1]])
	}
	return &Graph{off: off, adj: nb}, true
}
