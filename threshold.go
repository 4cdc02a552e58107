package tokendist

import "unsafe"

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

// The edge kernels below are the library's hottest loops. They index the loads through
// unsafe pointer arithmetic, without Go's two bounds checks per edge (about 14 % of a
// THRESHOLD-1 round, BenchmarkThreshold1RoundBinaryTree); their callers guarantee that
// every node in pairs is below len(loads): the pairs come from an EdgeColoring whose
// nodes Validate checked against the graph, and Step checks len(s.Loads) against the
// graph's order first. They take one edge at a time, so consecutive edges may share an
// endpoint (the fused round of dimexchange_fused.go relies on that).

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

// threshold1Send is THRESHOLD-1 across an edge with loads a, b: the tokens going a → b,
// the sign of a − b, branch-free. Loads are non-negative, so a − b cannot overflow.
func threshold1Send(a, b int64) int64 {
	d := a - b
	return d>>63 | int64(uint64(-d)>>63)
}

// threshold2Edges applies THRESHOLD-2 to the edges of pairs, in order, and returns the
// tokens moved. Every node in pairs must be below len(loads).
func threshold2Edges(loads []int64, pairs []int32) (moved int64) {
	if len(pairs) < 2 {
		return 0
	}
	base := unsafe.Pointer(unsafe.SliceData(loads))
	p := unsafe.Pointer(unsafe.SliceData(pairs))
	for i := range len(pairs) / 2 {
		q := unsafe.Add(p, 8*i)
		pa := (*int64)(unsafe.Add(base, uintptr(*(*uint32)(q))*8))
		pb := (*int64)(unsafe.Add(base, uintptr(*(*uint32)(unsafe.Add(q, 4)))*8))
		a, b := *pa, *pb
		x := threshold2Send(a, b)
		*pa, *pb = a-x, b+x
		moved += x & 1
	}
	return moved
}

// threshold1Edges applies THRESHOLD-1 to the edges of pairs, in order, and returns the
// tokens moved. Every node in pairs must be below len(loads).
func threshold1Edges(loads []int64, pairs []int32) (moved int64) {
	if len(pairs) < 2 {
		return 0
	}
	base := unsafe.Pointer(unsafe.SliceData(loads))
	p := unsafe.Pointer(unsafe.SliceData(pairs))
	for i := range len(pairs) / 2 {
		q := unsafe.Add(p, 8*i)
		pa := (*int64)(unsafe.Add(base, uintptr(*(*uint32)(q))*8))
		pb := (*int64)(unsafe.Add(base, uintptr(*(*uint32)(unsafe.Add(q, 4)))*8))
		a, b := *pa, *pb
		x := threshold1Send(a, b)
		*pa, *pb = a-x, b+x
		moved += x & 1
	}
	return moved
}
