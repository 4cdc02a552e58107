package tokendist

// Threshold2 returns the dimension-exchange algorithm with the THRESHOLD-2 protocol
// (Houle, Symvonis and Wood, section 2): across an active edge one token moves from the
// heavier to the lighter end when their loads differ by at least two. On any connected
// graph it reaches a stable distribution with discrepancy at most the diameter
// (Theorem 5), and the bound is tight (DistanceLoads). ec nil means DefaultColoring(g);
// otherwise ec must colour exactly g (else ErrInvalidColoring). The stability period is
// one round, χ steps.
func Threshold2(g *Graph, ec *EdgeColoring) (*DimensionExchange, error) {
	return newDimensionExchange(g, ec, threshold2, "THRESHOLD-2")
}

// Threshold1 returns the dimension-exchange algorithm with the THRESHOLD-1 protocol
// (Houle, Symvonis and Wood, sections 2 and 4): across an active edge one token moves
// from the heavier to the lighter end whenever their loads differ, so an edge with
// discrepancy one swaps its loads. On a tree it always reaches a stable distribution
// (Lemma 8) with discrepancy at most the maximum stable discrepancy MSD(T) (Theorem
// 12), which is at most ⌊n/2⌋ (Lemma 13). g must be a tree (else ErrNotTree; use
// SpanningTree for other graphs). ec nil means BipartiteColoring(g), χ = Δ. The
// stability period is one phase, χ·n steps.
func Threshold1(g *Graph, ec *EdgeColoring) (*DimensionExchange, error) {
	if g == nil {
		return nil, ErrNilNetwork
	}
	if err := requireTree(g); err != nil {
		return nil, err
	}
	return newDimensionExchange(g, ec, threshold1, "THRESHOLD-1")
}

// threshold2Edges applies THRESHOLD-2 to the disjoint edges of pairs.
func threshold2Edges(loads []int64, pairs []int32) (moved int64) {
	for i := 0; i+1 < len(pairs); i += 2 {
		u, v := pairs[i], pairs[i+1]
		a, b := loads[u], loads[v]
		var x int64
		if a-b >= 2 {
			x = 1
		}
		if b-a >= 2 {
			x = -1
		}
		loads[u], loads[v] = a-x, b+x
		moved += x & 1
	}
	return moved
}

// threshold1Edges applies THRESHOLD-1 to the disjoint edges of pairs.
func threshold1Edges(loads []int64, pairs []int32) (moved int64) {
	for i := 0; i+1 < len(pairs); i += 2 {
		u, v := pairs[i], pairs[i+1]
		a, b := loads[u], loads[v]
		var x int64
		if a > b {
			x = 1
		}
		if a < b {
			x = -1
		}
		loads[u], loads[v] = a-x, b+x
		moved += x & 1
	}
	return moved
}
