package tokendist

import (
	"fmt"
	"math"
)

// NewDiscrepancy1 returns algorithm DISCREPANCY-1 of Houle, Symvonis and Wood (section 5)
// on the tree g with colouring ec (nil: BipartiteColoring(g), χ = Δ). It runs in
// cycles of an A-phase and a B-phase of χ·n steps each, where n is the number of nodes
// every node is assumed to know (0 means g.Order(); a larger n, an upper bound known to
// the nodes, lengthens the phases and keeps the proofs valid). In the A-phase it runs
// THRESHOLD-1 and every node v records localMax(v), the largest load it held during the
// phase; in the B-phase it runs THRESHOLD-1 PLUS, which does not swap across an edge of
// discrepancy one when the heavier end holds its localMax. Every cycle that starts with
// discrepancy ≥ 2 lowers it by at least one (Theorem 18), so discrepancy ≤ 1 is reached
// within 2(Δ0 − 1)·χ·n steps for initial discrepancy Δ0.
//
// The paper ends section 5 with a local termination rule: node v stops when localMax(v)
// is the same in two consecutive cycles, which is claimed to imply a stable
// distribution with discrepancy ≤ 1. That per-node claim is false: on the 3-node path
// with loads 0, 17, 22 the centre's localMax is 17 in cycles 1 and 2, yet the
// discrepancy after cycle 2 is 2.
// Done therefore reports the rule holding at every node at the end of the same cycle,
// which no run of our sweeps saw fail; Decisions reports when each node's own rule
// first held. NewDiscrepancy1With offers a distributed version of this check (a
// convergecast over the tree, 2⌈D/2⌉ extra steps). Period is one cycle, 2·χ·n steps. g
// must be a tree, else ErrNotTree (use NewSpanningTree for other graphs). It costs
// O(n + m) plus the colouring (O(n + m) for BipartiteColoring on a tree); a step costs
// O(|matching|), plus O(n) at the start and end of every cycle.
func NewDiscrepancy1(g *Graph, ec *EdgeColoring, n int) (*DimensionExchange, error) {
	return NewDiscrepancy1With(g, ec, &Discrepancy1Options{Nodes: n})
}

// Discrepancy1Options configures NewDiscrepancy1With; the zero value is NewDiscrepancy1's
// behaviour (n = g.Order(), the global termination check).
type Discrepancy1Options struct {
	// Nodes is the n every node knows (0: g.Order()); a larger value, an upper bound
	// known to the nodes, lengthens the phases of χ·n steps.
	Nodes int
	// Convergecast replaces the global termination check by one the tree runs itself
	// (see NewDiscrepancy1With): false keeps the global check of NewDiscrepancy1.
	Convergecast bool
}

// NewDiscrepancy1With returns DISCREPANCY-1 (Houle, Symvonis and Wood, section 5) as
// NewDiscrepancy1 does, with options (nil: the zero Discrepancy1Options).
//
// With Convergecast set, termination is a distributed protocol over the tree itself
// instead of a global check. The tree is rooted at a centre c (Graph.Center), whose
// eccentricity is the radius r = ⌈D/2⌉ for diameter D. At the end of every cycle k ≥ 2
// each node v holds its bit "localMax(v) is unchanged from cycle k − 1" (the paper's
// rule); the bits are ANDed up the tree while cycle k + 1's exchanges go on, one hop per
// step: a node of height ℓ (longest path down to a leaf) sends its subtree's AND to its
// parent during step ℓ of the new cycle, so the root has the AND of all n bits after r
// steps. If it is true the root broadcasts "stop", one hop per step: a node at depth d
// learns it during step r + d − 1 and stops, and the run ends (Done) 2r steps after the
// end of cycle k. So it stops exactly 2r = 2⌈D/2⌉ steps (D or D + 1) after the global
// check would have, on the same cycle; the exchanges of those 2r steps keep running
// (and cannot raise the discrepancy: THRESHOLD-1 and THRESHOLD-1 PLUS never raise the
// maximum nor lower the minimum), so the run ends with the discrepancy the global check
// would have seen, or less. Costs counted in the run's State: each of those steps
// advances Time by one like any other and sends its matching's load messages; the
// control messages add n − 1 per convergecast (one per non-root node, sent after every
// cycle from the second on) and n − 1 for the broadcast. The simulation computes the
// AND at the end of the cycle and delivers it after this exact delay, counting each
// control message at the step in which it would be sent. 2r < 2·χ·n, so a convergecast
// finishes within the cycle that follows the one it reports on. The option adds O(n) to the
// construction (a centre and a breadth-first search) and O(1) to a step. Whether the
// global rule itself is correct is open: see docs/proofs/discrepancy1.md.
func NewDiscrepancy1With(g *Graph, ec *EdgeColoring, opts *Discrepancy1Options) (*DimensionExchange, error) {
	var o Discrepancy1Options
	if opts != nil {
		o = *opts
	}
	n := o.Nodes
	if g == nil {
		return nil, ErrNilNetwork
	}
	if err := requireTree(g); err != nil {
		return nil, err
	}
	if n == 0 {
		n = g.Order()
	}
	if n < g.Order() {
		return nil, badParam("DISCREPANCY-1 needs n ≥ the tree's %d nodes, got n = %d", g.Order(), n)
	}
	d, err := newDimensionExchange(g, ec, discrepancy1, "DISCREPANCY-1")
	if err != nil {
		return nil, err
	}
	if d.chi > math.MaxInt64/4/int64(n) {
		return nil, badParam("DISCREPANCY-1 cycles of 2·χ·n = 2·%d·%d steps overflow int64", d.chi, n)
	}
	d.nodes = int64(n)
	if o.Convergecast && d.chi > 0 {
		if err := d.planConvergecast(); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// planConvergecast roots the tree at a centre and counts the nodes sending at each step
// of the convergecast (by height) and of the broadcast (by depth), in O(n).
func (d *DimensionExchange) planConvergecast() error {
	root, err := d.g.Center()
	if err != nil {
		return err
	}
	n := d.g.Order()
	dist := make([]int32, n)
	order := d.g.bfs(root, dist, make([]int32, 0, n))
	r := int(dist[order[n-1]])
	height := make([]int32, n)
	d.ccUp = make([]int64, r)
	d.ccDown = make([]int64, r)
	for i := n - 1; i >= 1; i-- { // children before parents
		v := order[i]
		d.ccUp[height[v]]++
		d.ccDown[dist[v]-1]++
		for _, u := range d.g.Neighbors(int(v)) {
			if dist[u] == dist[v]-1 {
				height[u] = max(height[u], height[v]+1)
			}
		}
	}
	d.ccRadius = int64(r)
	d.convergecast = true
	return nil
}

// initDiscrepancy1 resets the per-run state of DISCREPANCY-1.
func (d *DimensionExchange) initDiscrepancy1(s *State) {
	n := d.g.Order()
	if len(d.localMax) != n {
		d.localMax = make([]int64, n)
		d.prevMax = make([]int64, n)
		d.decided = make([]int64, n)
	}
	clear(d.decided)
	d.cycles = 0
	d.allDone = false
	d.plus = false
	d.ccStop = -1
}

// phase returns the position of step t in its cycle and the phase length χ·n.
func (d *DimensionExchange) phase(t int64) (pos, length int64) {
	length = d.chi * d.nodes
	return t % (2 * length), length
}

// beforeDiscrepancy1Step starts a cycle (localMax(v) ← load(v)) and picks the protocol.
func (d *DimensionExchange) beforeDiscrepancy1Step(s *State) {
	pos, length := d.phase(s.Steps)
	if pos == 0 {
		copy(d.localMax, s.Loads)
	}
	d.plus = pos >= length
	if d.convergecast && pos < 2*d.ccRadius {
		if pos < d.ccRadius {
			if d.cycles >= 2 { // nodes of height pos report cycle d.cycles
				s.Messages += d.ccUp[pos]
			}
		} else if d.ccStop >= 0 && s.Steps < d.ccStop { // nodes at depth pos − r + 1 hear "stop"
			s.Messages += d.ccDown[pos-d.ccRadius]
		}
	}
}

// afterDiscrepancy1Step applies the local termination rule at the end of a cycle.
func (d *DimensionExchange) afterDiscrepancy1Step(s *State) {
	pos, length := d.phase(s.Steps)
	if pos != 2*length-1 {
		return
	}
	d.cycles++
	same := 0
	for v, m := range d.localMax {
		if d.cycles >= 2 && m == d.prevMax[v] {
			same++
			if d.decided[v] == 0 {
				d.decided[v] = d.cycles
			}
		}
	}
	if same == len(d.localMax) {
		if !d.convergecast {
			d.allDone = true
		} else if d.ccStop < 0 {
			d.ccStop = s.Steps + 1 + 2*d.ccRadius
		}
	}
	d.localMax, d.prevMax = d.prevMax, d.localMax
}

// afterConvergecastStep ends a convergecast run when the broadcast has reached every node.
func (d *DimensionExchange) afterConvergecastStep(s *State) {
	if d.ccStop >= 0 && s.Steps+1 >= d.ccStop {
		d.allDone = true
	}
}

// Done reports whether, at the end of some cycle, DISCREPANCY-1's local termination rule
// (Houle et al., end of section 5: localMax(v) unchanged from the previous cycle) held at
// every node at once; with Discrepancy1Options.Convergecast, whether the "stop" broadcast
// that follows has reached every node (2⌈D/2⌉ steps later). On a single node (no
// colours, nothing can move) it is true at once. It is always false for the other
// protocols. It costs O(1).
func (d *DimensionExchange) Done(*State) bool {
	return d.allDone || d.kind == discrepancy1 && d.chi == 0
}

// HasRule reports whether d has a termination rule of its own (OptionalTerminator):
// true for DISCREPANCY-1, false for THRESHOLD-1, THRESHOLD-2 and user protocols, which
// Run therefore stops by the stability check (Periodic). O(1).
func (d *DimensionExchange) HasRule(*State) bool { return d.kind == discrepancy1 }

// DescribeResult summarises a run (ResultDescriber): the discrepancy, moves and
// messages (a step is one unit of time), and for DISCREPANCY-1 the completed cycles.
// O(n).
func (d *DimensionExchange) DescribeResult(s *State) string {
	if d.kind == discrepancy1 {
		return fmt.Sprintf("%s, cycles %d", describeBalance(s), d.cycles)
	}
	return describeBalance(s)
}

// Cycles returns the number of DISCREPANCY-1 cycles (an A-phase and a B-phase, Houle et
// al., section 5) completed in the last run, in O(1).
func (d *DimensionExchange) Cycles() int64 { return d.cycles }

// Decisions returns, for every node, the first cycle (1, 2, ...) at whose end its local
// termination rule (Houle et al., end of section 5) held in the last run, or 0 if it
// never did. The slice is a copy, made in O(n).
func (d *DimensionExchange) Decisions() []int64 { return append([]int64(nil), d.decided...) }

// LocalMax returns localMax(v), the largest load node v held during the A-phase of the
// last completed DISCREPANCY-1 cycle (Houle et al., section 5), as a copy made in O(n).
func (d *DimensionExchange) LocalMax() []int64 { return append([]int64(nil), d.prevMax...) }

// threshold1MaxEdges applies THRESHOLD-1 and keeps localMax up to date (A-phase).
func threshold1MaxEdges(loads, localMax []int64, p []int32) (moved int64) {
	for len(p) >= 2 {
		u, v := uint32(p[0]), uint32(p[1])
		p = p[2:]
		a, b := loads[u], loads[v]
		x := threshold1Send(a, b)
		a, b = a-x, b+x
		loads[u], loads[v] = a, b
		localMax[u] = max(localMax[u], a)
		localMax[v] = max(localMax[v], b)
		moved += x & 1
	}
	return moved
}

// threshold1PlusSend is THRESHOLD-1 PLUS across an edge with loads a, b whose ends have
// localMax ma, mb: as THRESHOLD-1, except that an end holding its localMax does not send
// across a discrepancy of one.
func threshold1PlusSend(a, b, ma, mb int64) int64 {
	var x int64
	if a-b >= 2 || a-b == 1 && a != ma {
		x = 1
	}
	if b-a >= 2 || b-a == 1 && b != mb {
		x = -1
	}
	return x
}

// threshold1PlusEdges applies THRESHOLD-1 PLUS (B-phase).
func threshold1PlusEdges(loads, localMax []int64, p []int32) (moved int64) {
	for len(p) >= 2 {
		u, v := uint32(p[0]), uint32(p[1])
		p = p[2:]
		a, b := loads[u], loads[v]
		x := threshold1PlusSend(a, b, localMax[u], localMax[v])
		loads[u], loads[v] = a-x, b+x
		moved += x & 1
	}
	return moved
}
