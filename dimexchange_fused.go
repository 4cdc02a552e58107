package tokendist

import "github.com/tokendist/tokendist/internal/par"

// A fused round applies the χ matchings of one dimension-exchange round in one pass over
// the edges, in an order chosen once so that the loads it touches stay in cache.
//
// Why it gives the same loads as χ steps: an edge operation reads and writes only its
// two endpoints, so two operations without a common endpoint commute, and the loads
// after a round depend only on the order of the operations at each node. Any order in
// which every node still sees its edges in colour order (a topological order of the
// per-node colour chains) therefore ends with the loads of the χ steps, bit for bit.
// Each edge is active once per round (proper colouring), so a round is m operations.

// fusedWindow is the number of consecutive node indices whose edges the schedule takes
// together: the loads of 512 nodes (4 KiB) and of the neighbours their edges reach stay
// in the 32 KiB L1d (windows of 256 to 1024 nodes were fastest on the machine of
// docs/performance.md; 4096 was slower than plain steps).
const fusedWindow = 512

// fusedSchedule returns the edges of match (match[c]: the flat pairs of colour c) as
// flat pairs in an order that respects every node's colour order and takes the edges
// window by window of their larger endpoint: an edge is emitted in its own window if
// its predecessors at both ends already are, and otherwise as soon as the last of them
// is (in whatever window that happens). n is the number of nodes. It costs O(n + m)
// time and O(n + m) memory, once per balancer.
func fusedSchedule(n int, match [][]int32, window int) []int32 {
	m := 0
	for _, p := range match {
		m += len(p) / 2
	}
	// byNode: each node's operations in colour order (CSR over ops).
	start := make([]int32, n+1)
	for _, p := range match {
		for _, v := range p {
			start[v+1]++
		}
	}
	for v := 0; v < n; v++ {
		start[v+1] += start[v]
	}
	byNode := make([]int32, 2*m)
	fill := make([]int32, n)
	copy(fill, start[:n])
	// ops are numbered in colour order; op k has endpoints ends[2k], ends[2k+1].
	ends := make([]int32, 0, 2*m)
	for _, p := range match {
		for i := 0; i+1 < len(p); i += 2 {
			k := int32(len(ends) / 2)
			u, v := p[i], p[i+1]
			ends = append(ends, u, v)
			byNode[fill[u]] = k
			fill[u]++
			byNode[fill[v]] = k
			fill[v]++
		}
	}
	next := fill // reuse: next[v] is the index in byNode of v's first unemitted op
	copy(next, start[:n])
	winOf := func(k int32) int {
		return int(max(ends[2*k], ends[2*k+1])) / window
	}
	// Buckets of ops by window, each in op (colour) order: a counting sort.
	windows := (n + window - 1) / window
	bstart := make([]int32, windows+1)
	for k := int32(0); int(k) < m; k++ {
		bstart[winOf(k)+1]++
	}
	for w := 0; w < windows; w++ {
		bstart[w+1] += bstart[w]
	}
	bucket := make([]int32, m)
	bfill := make([]int32, windows)
	copy(bfill, bstart[:windows])
	for k := int32(0); int(k) < m; k++ {
		w := winOf(k)
		bucket[bfill[w]] = k
		bfill[w]++
	}
	ready := func(k int32) bool {
		u, v := ends[2*k], ends[2*k+1]
		return next[u] < start[u+1] && byNode[next[u]] == k && next[v] < start[v+1] && byNode[next[v]] == k
	}
	// Emit window by window in frontiers (sets of ready operations, each a matching):
	// about a quarter faster to apply than emitting each operation's newly ready
	// successors depth-first, which chains dependent loads and stores.
	out := make([]int32, 0, 2*m)
	queued := make([]bool, m)
	var front, nextFront []int32
	for w := 0; w < windows; w++ {
		front = front[:0]
		for _, k := range bucket[bstart[w]:bstart[w+1]] {
			if !queued[k] && ready(k) {
				queued[k] = true
				front = append(front, k)
			}
		}
		for len(front) > 0 {
			for _, k := range front {
				u, v := ends[2*k], ends[2*k+1]
				out = append(out, u, v)
				next[u]++
				next[v]++
			}
			nextFront = nextFront[:0]
			for _, k := range front {
				for _, x := range [2]int32{ends[2*k], ends[2*k+1]} {
					if next[x] == start[x+1] {
						continue
					}
					if k2 := byNode[next[x]]; !queued[k2] && winOf(k2) <= w && ready(k2) {
						queued[k2] = true
						nextFront = append(nextFront, k2)
					}
				}
			}
			front, nextFront = nextFront, front
		}
	}
	if len(out) != 2*m {
		panic("tokendist: internal error: fused schedule left edges out")
	}
	return out
}

// round performs the χ steps of one round (Houle, Symvonis and Wood, Definition 1: a
// round is χ steps, one per colour), s.Steps … s.Steps+χ−1, and returns the number of
// steps it completed: χ, or on an error the steps before the failing one. It leaves
// s.Steps alone (Run counts the steps) and advances s.Time, s.Moved and s.Messages as
// those χ calls of Step would; the loads it leaves are bit for bit theirs, for any
// s.Workers. Run calls it, through the rounder interface, when nothing in the run looks
// inside a round. Before Init it returns an error wrapping ErrNotInitialized.
//
// For THRESHOLD-1 and THRESHOLD-2 at a round boundary (s.Steps a multiple of χ) without
// churn it applies the round in one pass over the edges, in an order that keeps the
// loads it touches in cache and still meets every node's edges in colour order; with
// several workers on a large graph, the nodes are split into parts whose inner edges
// run concurrently before the few edges that depend on crossings. The orders are
// computed at the first such call for each worker count (O(n + m) time, 8 to 16 bytes
// per edge kept). Otherwise it performs the χ steps one by one. It costs O(m) and,
// after the first call, does not allocate.
func (d *DimensionExchange) round(s *State) (int64, error) {
	if err := d.ready.check(s, d); err != nil {
		return 0, err
	}
	if d.chi == 0 {
		return 0, nil
	}
	if d.kind == custom || s.Live != nil || s.Steps%d.chi != 0 {
		for c := int64(0); c < d.chi; c++ {
			if err := d.stepAt(s, s.Steps+c); err != nil {
				return c, err
			}
		}
		return d.chi, nil
	}
	if err := d.checkLoads(s); err != nil {
		return 0, err
	}
	kernel := d.kernel
	if p := min(s.Workers, par.Workers(d.g.Size(), parallelMinEdges)); p > 1 {
		if d.plan == nil || len(d.plan.parts) != p {
			d.plan = newFusedPlan(d.g, d.ec.match, p)
		}
		if d.partChunk == nil {
			d.partChunk = d.runParts
		}
		d.loads = s.Loads
		d.moved.Store(0)
		d.group.For(p, p, d.partChunk)
		d.loads = nil
		s.Moved += d.moved.Load() + kernel(s.Loads, d.plan.cone)
	} else {
		if d.fused == nil {
			d.fused = fusedSchedule(d.g.Order(), d.ec.match, fusedWindow)
		}
		s.Moved += kernel(s.Loads, d.fused)
	}
	s.Messages += 2 * int64(d.g.Size())
	s.Time += d.chi
	return d.chi, nil
}

// runParts applies parts lo..hi-1 of the parallel plan.
func (d *DimensionExchange) runParts(lo, hi int) {
	kernel := d.kernel
	var moved int64
	for _, p := range d.plan.parts[lo:hi] {
		moved += kernel(d.loads, p)
	}
	d.moved.Add(moved)
}

// A parallel fused round splits the nodes into p parts (contiguous runs of a depth-first
// preorder, so that a tree splits into few subtrees and few edges cross). The "cone" is
// every edge operation that depends, within the round, on an edge between two parts:
// the crossing edges and, transitively, each later-coloured edge at an endpoint of one
// already in the cone. The cone is closed under successors, so the rest is closed under
// predecessors; an operation outside the cone has both ends in one part, and so do its
// predecessors. Hence the p parts' non-cone operations are independent of each other and
// can run concurrently, each in fused order, and the cone then runs in colour order,
// after all of them: a topological order again, so the loads are those of the χ steps
// for any number of parts.

// fusedPlan is the schedule of a parallel fused round.
type fusedPlan struct {
	parts [][]int32 // parts[i]: the non-cone edges inside part i, in fused order
	cone  []int32   // the cone's edges in colour order
}

// newFusedPlan computes the plan for p parts of g's edges coloured by match. It costs
// O(n + m) time and memory.
func newFusedPlan(g *Graph, match [][]int32, p int) *fusedPlan {
	n := g.Order()
	part := preorderParts(g, p)
	// Each op's successor at each end: ops are numbered in colour order, so the op at
	// node x after op k is the next op at x in numbering order.
	last := make([]int32, n) // the latest op seen at each node, -1 if none
	for v := range last {
		last[v] = -1
	}
	m := 0
	for _, q := range match {
		m += len(q) / 2
	}
	succ := make([]int32, 2*m) // succ[2k+e]: the op after k at its end e, -1 if none
	for i := range succ {
		succ[i] = -1
	}
	ends := make([]int32, 0, 2*m)
	for _, q := range match {
		for i := 0; i+1 < len(q); i += 2 {
			k := int32(len(ends) / 2)
			for _, x := range q[i : i+2] {
				if j := last[x]; j >= 0 {
					if ends[2*j] == x {
						succ[2*j] = k
					} else {
						succ[2*j+1] = k
					}
				}
				last[x] = k
			}
			ends = append(ends, q[i], q[i+1])
		}
	}
	cone := make([]bool, m)
	for k := 0; k < m; k++ { // in colour order, so a cone op's successors are marked before they are visited
		if part[ends[2*k]] != part[ends[2*k+1]] {
			cone[k] = true
		}
		if cone[k] {
			for _, j := range succ[2*k : 2*k+2] {
				if j >= 0 {
					cone[j] = true
				}
			}
		}
	}
	plan := &fusedPlan{parts: make([][]int32, p)}
	for i := 0; i < p; i++ {
		sub := make([][]int32, len(match))
		k := 0
		for c, q := range match {
			for j := 0; j+1 < len(q); j, k = j+2, k+1 {
				if !cone[k] && part[q[j]] == int32(i) {
					sub[c] = append(sub[c], q[j], q[j+1])
				}
			}
		}
		plan.parts[i] = fusedSchedule(n, sub, fusedWindow)
	}
	for k := 0; k < m; k++ {
		if cone[k] {
			plan.cone = append(plan.cone, ends[2*k], ends[2*k+1])
		}
	}
	return plan
}

// preorderParts returns part[v] in 0..p-1: the depth-first preorder of g (from node 0,
// then from each unvisited node) cut into p runs of n/p nodes. O(n + m).
func preorderParts(g *Graph, p int) []int32 {
	n := g.Order()
	part := make([]int32, n)
	seen := make([]bool, n)
	stack := make([]int32, 0, 64)
	rank := 0
	for r := 0; r < n; r++ {
		if seen[r] {
			continue
		}
		seen[r] = true
		stack = append(stack[:0], int32(r))
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			part[v] = int32(rank * p / n)
			rank++
			nb := g.Neighbors(int(v))
			for i := len(nb) - 1; i >= 0; i-- { // push in reverse: visit the lowest first
				if w := nb[i]; !seen[w] {
					seen[w] = true
					stack = append(stack, w)
				}
			}
		}
	}
	return part
}
