package tokendist

import (
	"fmt"
	"math"
)

// Discrepancy1 is algorithm DISCREPANCY-1 of Houle, Symvonis and Wood (section 5) on a
// tree, as a Balancer with a termination rule (Terminator). It is a dimension exchange
// (the steps and matchings of DimensionExchange, with which it shares its stepper) that
// runs in cycles of an A-phase and a B-phase of χ·n steps each, where n is the number of
// nodes every node is assumed to know (Discrepancy1Options.Nodes). In the A-phase it
// runs THRESHOLD-1 and every node v records localMax(v), the largest load it held during
// the phase; in the B-phase it runs THRESHOLD-1 PLUS, which does not swap across an edge
// of discrepancy one when the heavier end holds its localMax. Every cycle that starts
// with discrepancy ≥ 2 lowers it by at least one (Theorem 18), so discrepancy ≤ 1 is
// reached within 2(Δ0 − 1)·χ·n steps for initial discrepancy Δ0.
//
// The paper ends section 5 with a local termination rule: node v stops when localMax(v)
// is the same in two consecutive cycles, which is claimed to imply a stable
// distribution with discrepancy ≤ 1. That per-node claim is false: on the 3-node path
// with loads 0, 17, 22 the centre's localMax is 17 in cycles 1 and 2, yet the
// discrepancy after cycle 2 is 2. Done therefore reports the rule holding at every node
// at the end of the same cycle, which no run of our sweeps saw fail; Decisions reports
// when each node's own rule first held. Discrepancy1Options.Convergecast offers a
// distributed version of this check (a convergecast over the tree, 2⌈D/2⌉ extra steps).
// Whether the global rule itself is correct is open: see docs/proofs/discrepancy1.md.
//
// Build one with NewDiscrepancy1. Period is one cycle, 2·χ·n steps; Run stops a
// Discrepancy1 by its rule and checks stability only with RunOptions.StopWhenStable. A
// step costs O(|matching|), plus O(n) at the start and end of every cycle, and does not
// allocate. Step before Init returns an error wrapping ErrNotInitialized. Init refuses a
// Workload and Churn: the termination rule and the phases assume a fixed total and fixed
// links. A value can be reused for several runs, but not concurrently (Run refuses that
// with ErrConcurrentUse).
type Discrepancy1 struct {
	dxEngine

	nodes    int64   // the n every node knows; phases are χ·nodes steps
	plus     bool    // the current step is in a B-phase (THRESHOLD-1 PLUS)
	localMax []int64 // localMax(v) of the current cycle
	prevMax  []int64 // localMax(v) of the previous cycle
	decided  []int64 // cycle at which v's local termination rule first held, 0 if never
	cycles   int64   // completed cycles
	allDone  bool    // every node's rule held at the end of one cycle

	// Convergecast termination (Discrepancy1Options.Convergecast).
	convergecast bool
	ccRadius     int64   // eccentricity r of the root (a centre)
	ccUp         []int64 // ccUp[ℓ]: non-root nodes of height ℓ (send at step ℓ of a cycle)
	ccDown       []int64 // ccDown[d-1]: nodes at depth d (hear "stop" at step r+d-1)
	ccStop       int64   // step count at which the run stops, -1 before the root decides
}

var (
	_ Balancer     = (*Discrepancy1)(nil)
	_ Initializer  = (*Discrepancy1)(nil)
	_ Terminator   = (*Discrepancy1)(nil)
	_ Periodic     = (*Discrepancy1)(nil)
	_ Reporter     = (*Discrepancy1)(nil)
	_ fmt.Stringer = (*Discrepancy1)(nil)
)

// Discrepancy1Options configures NewDiscrepancy1; nil and the zero value mean n =
// g.Order() and the global termination check.
type Discrepancy1Options struct {
	// Nodes is the n every node knows (Houle et al., section 5); 0 means g.Order(), the
	// sensible default. A larger value, an upper bound known to the nodes, lengthens the
	// phases of χ·n steps and keeps the proofs valid; a smaller one is an error.
	Nodes int
	// Convergecast replaces the global termination check by one the tree runs itself
	// (see NewDiscrepancy1); false keeps the global check.
	Convergecast bool
}

// NewDiscrepancy1 returns DISCREPANCY-1 (Houle, Symvonis and Wood, section 5; see
// Discrepancy1) on the tree g with colouring ec (nil: BipartiteColoring(g), χ = Δ) and
// options opts (nil: the zero Discrepancy1Options, n = g.Order() and the global
// termination check). g must be a tree, else ErrNotTree (use NewSpanningTree for other
// graphs); Nodes below g.Order(), or cycles of 2·χ·n steps that overflow int64, are
// ErrBadParameter. It costs O(n + m) plus the colouring (O(n + m) for BipartiteColoring
// on a tree).
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
// finishes within the cycle that follows the one it reports on. The option adds O(n) to
// the construction (a centre and a breadth-first search) and O(1) to a step.
func NewDiscrepancy1(g *Graph, ec *EdgeColoring, opts *Discrepancy1Options) (*Discrepancy1, error) {
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
	d := &Discrepancy1{}
	if err := d.setup(g, ec, "DISCREPANCY-1"); err != nil {
		return nil, err
	}
	if d.chi > math.MaxInt64/4/int64(n) {
		return nil, badParam("DISCREPANCY-1 cycles of 2·χ·n = 2·%d·%d steps overflow int64", d.chi, n)
	}
	d.nodes = int64(n)
	d.kernel = d.edges
	if o.Convergecast && d.chi > 0 {
		if err := d.planConvergecast(); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// planConvergecast roots the tree at a centre and counts the nodes sending at each step
// of the convergecast (by height) and of the broadcast (by depth), in O(n).
func (d *Discrepancy1) planConvergecast() error {
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

// String names the protocol, "DISCREPANCY-1" (Houle et al., section 5), in O(1).
func (d *Discrepancy1) String() string { return d.name }

// Graph returns the network the balancer was built for, in O(1).
func (d *Discrepancy1) Graph() *Graph { return d.g }

// Coloring returns the edge colouring in use, in O(1).
func (d *Discrepancy1) Coloring() *EdgeColoring { return d.ec }

// Colors returns χ, the number of colours and so the number of steps in a round
// (Houle et al., Definition 1), in O(1).
func (d *Discrepancy1) Colors() int { return int(d.chi) }

// ActiveColor returns the colour whose edges are active at step t: t mod χ (Houle et
// al., section 1.1), in O(1).
func (d *Discrepancy1) ActiveColor(t int64) int { return d.activeColor(t) }

// Init checks that the run's network is the coloured tree (O(1) for the same *Graph,
// O(n + m) otherwise), refuses a Workload and Churn, and resets the per-run state (the
// per-node arrays, O(n)).
func (d *Discrepancy1) Init(s *State) error {
	if d == nil {
		return nilReceiver("Discrepancy1", "Init")
	}
	if err := d.init(s); err != nil {
		return err
	}
	if err := refuseDynamic(s, d.name, false, false, "its termination rule and phases assume a fixed total and fixed links"); err != nil {
		return err
	}
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
	s.RoundSteps = d.chi // a round: one matching of each colour
	d.ready.set(s)
	return nil
}

// Period returns the stability period Run checks with RunOptions.StopWhenStable: one
// cycle, 2·χ·n steps (Houle et al., section 5). O(1).
func (d *Discrepancy1) Period(*State) int64 {
	return 2 * max(d.chi, 1) * d.nodes
}

// Step performs one step of DISCREPANCY-1 (Houle et al., section 5): the edges of colour
// s.Steps mod χ apply THRESHOLD-1 in an A-phase and THRESHOLD-1 PLUS in a B-phase. It
// costs O(|matching|), plus O(n) at the first and last step of a cycle, and does not
// allocate. Before Init it returns an error wrapping ErrNotInitialized.
func (d *Discrepancy1) Step(s *State) error {
	if d == nil {
		return nilReceiver("Discrepancy1", "Step")
	}
	if active, err := d.begin(s, d); !active || err != nil {
		return err
	}
	d.beforeStep(s)
	if err := d.exchange(s, s.Steps); err != nil {
		return err
	}
	d.afterStep(s)
	if d.convergecast {
		d.afterConvergecastStep(s)
	}
	return nil
}

// edges is the edge kernel: THRESHOLD-1 recording localMax in an A-phase, THRESHOLD-1
// PLUS in a B-phase.
func (d *Discrepancy1) edges(loads []int64, pairs []int32) int64 {
	if d.plus {
		return threshold1PlusEdges(loads, d.localMax, pairs)
	}
	return threshold1MaxEdges(loads, d.localMax, pairs)
}

// phase returns the position of step t in its cycle and the phase length χ·n.
func (d *Discrepancy1) phase(t int64) (pos, length int64) {
	length = d.chi * d.nodes
	return t % (2 * length), length
}

// beforeStep starts a cycle (localMax(v) ← load(v)) and picks the protocol.
func (d *Discrepancy1) beforeStep(s *State) {
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

// afterStep applies the local termination rule at the end of a cycle.
func (d *Discrepancy1) afterStep(s *State) {
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
func (d *Discrepancy1) afterConvergecastStep(s *State) {
	if d.ccStop >= 0 && s.Steps+1 >= d.ccStop {
		d.allDone = true
	}
}

// Done reports whether, at the end of some cycle, DISCREPANCY-1's local termination rule
// (Houle et al., end of section 5: localMax(v) unchanged from the previous cycle) held at
// every node at once; with Discrepancy1Options.Convergecast, whether the "stop" broadcast
// that follows has reached every node (2⌈D/2⌉ steps later). On a single node (no
// colours, nothing can move) it is true at once. It costs O(1).
func (d *Discrepancy1) Done(*State) bool { return d.allDone || d.chi == 0 }

// Discrepancy1Report is what a DISCREPANCY-1 run reports (Result.Report).
type Discrepancy1Report struct {
	// Cycles is the number of cycles (an A-phase and a B-phase, Houle et al., section 5)
	// completed.
	Cycles int64 `json:"cycles"`
	// Decisions[v] is the first cycle (1, 2, ...) at whose end node v's local
	// termination rule (Houle et al., end of section 5) held, or 0 if it never did.
	Decisions []int64 `json:"decisions"`
	// LocalMax[v] is localMax(v), the largest load node v held during the A-phase of the
	// last completed cycle (Houle et al., section 5).
	LocalMax []int64 `json:"local_max"`
}

// String summarises the report: the completed cycles.
func (r Discrepancy1Report) String() string { return fmt.Sprintf("cycles %d", r.Cycles) }

// Report returns the run's Discrepancy1Report (Reporter), with copies of the per-node
// slices, in O(n).
func (d *Discrepancy1) Report(*State) any {
	return Discrepancy1Report{
		Cycles:    d.cycles,
		Decisions: append([]int64(nil), d.decided...),
		LocalMax:  append([]int64(nil), d.prevMax...),
	}
}

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
