package tokendist

// NewThreshold2 returns the dimension-exchange algorithm with the THRESHOLD-2 protocol
// (Houle, Symvonis and Wood, section 2): across an active edge one token moves from the
// heavier to the lighter end when their loads differ by at least two. On any connected
// graph it reaches a stable distribution with discrepancy at most the diameter
// (Theorem 5), and the bound is tight (DistanceLoads). ec nil means DefaultColoring(g);
// otherwise ec must colour exactly g (else ErrInvalidColoring). The stability period is
// one round, χ steps. It costs the colouring (DefaultColoring when ec is nil) plus O(n +
// m); a step costs O(|matching|).
func NewThreshold2(g *Graph, ec *EdgeColoring) (*DimensionExchange, error) {
	return newDimensionExchange(g, ec, threshold2, "THRESHOLD-2")
}

// NewThreshold1 returns the dimension-exchange algorithm with the THRESHOLD-1 protocol
// (Houle, Symvonis and Wood, sections 2 and 4): across an active edge one token moves
// from the heavier to the lighter end whenever their loads differ, so an edge with
// discrepancy one swaps its loads. On a tree it always reaches a stable distribution
// (Lemma 8) with discrepancy at most the maximum stable discrepancy MSD(T) (Theorem
// 12), which is at most ⌊n/2⌋ (Lemma 13). g must be a tree (else ErrNotTree; use
// NewSpanningTree for other graphs). ec nil means BipartiteColoring(g), χ = Δ. The
// stability period is one phase, χ·n steps. It costs O(n + m) plus the colouring (O(n +
// m) for BipartiteColoring on a tree); a step costs O(|matching|).
func NewThreshold1(g *Graph, ec *EdgeColoring) (*DimensionExchange, error) {
	if g == nil {
		return nil, ErrNilNetwork
	}
	if err := requireTree(g); err != nil {
		return nil, err
	}
	return newDimensionExchange(g, ec, threshold1, "THRESHOLD-1")
}

// The edge kernels below walk a matching two edges at a time: the edges of one colour
// are disjoint, so both edges' loads can be read before either is written, and the
// unrolled, branch-free body (CMOVs, one bounds check per pair of edges) runs about a
// third faster than the plain loop (BenchmarkThreshold1RoundBinaryTree).

// threshold2Send is THRESHOLD-2 across an edge with loads a, b: the tokens going a → b.
func threshold2Send(a, b int64) int64 {
	var x int64
	if a-b >= 2 {
		x = 1
	}
	if b-a >= 2 {
		x = -1
	}
	return x
}

// threshold1Send is THRESHOLD-1 across an edge with loads a, b: the tokens going a → b.
func threshold1Send(a, b int64) int64 {
	var x int64
	if a > b {
		x = 1
	}
	if a < b {
		x = -1
	}
	return x
}

// threshold2Edges applies THRESHOLD-2 to the disjoint edges of pairs.
func threshold2Edges(loads []int64, p []int32) (moved int64) {
	for len(p) >= 4 {
		q := p[:4:4]
		p = p[4:]
		u0, v0, u1, v1 := uint32(q[0]), uint32(q[1]), uint32(q[2]), uint32(q[3])
		a0, b0, a1, b1 := loads[u0], loads[v0], loads[u1], loads[v1]
		x0, x1 := threshold2Send(a0, b0), threshold2Send(a1, b1)
		loads[u0], loads[v0], loads[u1], loads[v1] = a0-x0, b0+x0, a1-x1, b1+x1
		moved += x0&1 + x1&1
	}
	if len(p) == 2 {
		u, v := uint32(p[0]), uint32(p[1])
		a, b := loads[u], loads[v]
		x := threshold2Send(a, b)
		loads[u], loads[v] = a-x, b+x
		moved += x & 1
	}
	return moved
}

// threshold1Edges applies THRESHOLD-1 to the disjoint edges of pairs.
func threshold1Edges(loads []int64, p []int32) (moved int64) {
	for len(p) >= 4 {
		q := p[:4:4]
		p = p[4:]
		u0, v0, u1, v1 := uint32(q[0]), uint32(q[1]), uint32(q[2]), uint32(q[3])
		a0, b0, a1, b1 := loads[u0], loads[v0], loads[u1], loads[v1]
		x0, x1 := threshold1Send(a0, b0), threshold1Send(a1, b1)
		loads[u0], loads[v0], loads[u1], loads[v1] = a0-x0, b0+x0, a1-x1, b1+x1
		moved += x0&1 + x1&1
	}
	if len(p) == 2 {
		u, v := uint32(p[0]), uint32(p[1])
		a, b := loads[u], loads[v]
		x := threshold1Send(a, b)
		loads[u], loads[v] = a-x, b+x
		moved += x & 1
	}
	return moved
}
