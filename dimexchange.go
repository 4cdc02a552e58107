package tokendist

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/tokendist/tokendist/internal/par"
)

// Protocol decides, for one active edge of a dimension-exchange step, how many tokens
// cross it (Houle, Symvonis and Wood, section 1.1: "compare the loads of v and w
// according to some protocol"). It is the extension point for user-defined protocols;
// the built-in THRESHOLD-1, THRESHOLD-2 and DISCREPANCY-1 protocols are specialised
// inside the stepper and do not go through it.
type Protocol interface {
	// Send returns the number of tokens that node u sends to node v across the active
	// edge (u, v), u < v, at step t, given their loads lu and lv before the step; a
	// negative value sends tokens from v to u. It must keep both loads non-negative,
	// be deterministic, and be safe for concurrent calls on distinct edges (the
	// stepper splits large matchings across cores).
	Send(t int64, u, v int, lu, lv int64) int64
}

// ProtocolFunc adapts a function to Protocol.
type ProtocolFunc func(t int64, u, v int, lu, lv int64) int64

// Send calls f.
func (f ProtocolFunc) Send(t int64, u, v int, lu, lv int64) int64 { return f(t, u, v, lu, lv) }

// protocolKind selects the specialised inner loop of a DimensionExchange.
type protocolKind uint8

const (
	custom protocolKind = iota
	threshold2
	threshold1
	discrepancy1
)

// parallelMinEdges is the least number of active edges per worker before a matching is
// split across cores: below it the hand-off costs more than it saves.
const parallelMinEdges = 1 << 14

// DimensionExchange is the DIMENSION-EXCHANGE algorithm of Houle, Symvonis and Wood
// (section 1.1) as a Balancer: the edges carry a proper colouring with χ colours, the
// step at time t activates the edges of colour t mod χ (a matching), and on every active
// edge both ends compare loads and move tokens according to a protocol. A round is χ
// steps; every step costs one unit of model time and two load messages per active edge.
//
// Build one with NewThreshold1, NewThreshold2, NewDiscrepancy1 or NewDimensionExchange (a user
// Protocol). A step costs O(|matching|); large matchings are split across cores (the
// edges of one colour are disjoint, so the split never changes the result). Step does
// not allocate. A value can be reused for several runs, but not concurrently.
//
// Dynamic runs: THRESHOLD-1, THRESHOLD-2 and user protocols accept a Workload (each
// step applies the protocol to the loads as the workload left them; nothing in them
// depends on the total) and Churn (the colouring stays that of the full graph; a step
// skips the active links that are down, at O(|matching|·log Δ) for the lookup).
// DISCREPANCY-1 refuses both in Init: its termination rule and its phases assume a
// fixed total and fixed links.
type DimensionExchange struct {
	g     *Graph
	ec    *EdgeColoring
	kind  protocolKind
	proto Protocol
	name  string
	chi   int64

	// DISCREPANCY-1 state (section 5).
	nodes    int64   // the n every node knows; phases are χ·nodes steps
	localMax []int64 // localMax(v) of the current cycle
	prevMax  []int64 // localMax(v) of the previous cycle
	decided  []int64 // cycle at which v's local termination rule first held, 0 if never
	cycles   int64   // completed cycles
	allDone  bool    // every node's rule held at the end of one cycle

	// DISCREPANCY-1 convergecast termination (NewDiscrepancy1With).
	convergecast bool
	ccRadius     int64   // eccentricity r of the root (a centre)
	ccUp         []int64 // ccUp[ℓ]: non-root nodes of height ℓ (send at step ℓ of a cycle)
	ccDown       []int64 // ccDown[d-1]: nodes at depth d (hear "stop" at step r+d-1)
	ccStop       int64   // step count at which the run stops, -1 before the root decides

	// Per-step scratch for the parallel split; set before each par.Group.For call.
	group par.Group
	chunk func(lo, hi int)
	pairs []int32
	loads []int64
	step  int64
	plus  bool
	moved atomic.Int64
	errMu sync.Mutex
	err   error

	liveBuf []int32 // the live pairs of the current matching, under churn

	fused     []int32          // one round's pairs in fused order (fusedSchedule), built by the first Round
	plan      *fusedPlan       // the parallel fused round for len(plan.parts) workers
	partChunk func(lo, hi int) // runParts, set once
}

// NewDimensionExchange returns the dimension-exchange algorithm on g with colouring ec
// (nil: DefaultColoring(g)) and the user protocol p. Its stability period is one round:
// p must depend only on the loads and on t mod χ for the stability stop to be sound;
// otherwise run with RunOptions.NoStability. It costs the colouring's construction or
// validation, O(n + m).
func NewDimensionExchange(g *Graph, ec *EdgeColoring, p Protocol) (*DimensionExchange, error) {
	if p == nil {
		return nil, badParam("nil Protocol")
	}
	d, err := newDimensionExchange(g, ec, custom, fmt.Sprintf("DIMENSION-EXCHANGE(%T)", p))
	if err != nil {
		return nil, err
	}
	d.proto = p
	return d, nil
}

// newDimensionExchange validates g and ec (or builds the default colouring).
func newDimensionExchange(g *Graph, ec *EdgeColoring, kind protocolKind, name string) (*DimensionExchange, error) {
	if g == nil {
		return nil, ErrNilNetwork
	}
	if ec == nil {
		var err error
		if ec, err = DefaultColoring(g); err != nil {
			return nil, err
		}
	} else if err := ec.Validate(g); err != nil {
		return nil, err
	}
	return &DimensionExchange{g: g, ec: ec, kind: kind, name: name, chi: int64(ec.Colors())}, nil
}

// String names the protocol, e.g. "THRESHOLD-1" (Houle et al., section 2).
func (d *DimensionExchange) String() string { return d.name }

// Graph returns the network the balancer was built for, in O(1).
func (d *DimensionExchange) Graph() *Graph { return d.g }

// Coloring returns the edge colouring in use, in O(1).
func (d *DimensionExchange) Coloring() *EdgeColoring { return d.ec }

// Colors returns χ, the number of colours and so the number of steps in a round
// (Houle et al., Definition 1), in O(1).
func (d *DimensionExchange) Colors() int { return int(d.chi) }

// ActiveColor returns the colour whose edges are active at step t: t mod χ (Houle et
// al., section 1.1), in O(1).
func (d *DimensionExchange) ActiveColor(t int64) int {
	if d.chi == 0 {
		return 0
	}
	return int(t % d.chi)
}

// Init checks that the run's network is the coloured graph (O(1) for the same *Graph,
// O(n + m) otherwise) and resets the per-run state (DISCREPANCY-1's per-node arrays,
// O(n)).
func (d *DimensionExchange) Init(s *State) error {
	if g, ok := s.Net.(*Graph); !ok || g != d.g {
		if err := d.ec.Validate(s.Net); err != nil {
			return err
		}
	}
	if d.chunk == nil {
		d.chunk = d.runChunk
	}
	if d.kind == discrepancy1 {
		if err := refuseDynamic(s, d.name, false, false, "its termination rule and phases assume a fixed total and fixed links"); err != nil {
			return err
		}
	}
	if s.Live != nil && d.liveBuf == nil {
		most := 0
		for _, m := range d.ec.match {
			most = max(most, len(m))
		}
		d.liveBuf = make([]int32, 0, most)
	}
	if d.kind == discrepancy1 {
		d.initDiscrepancy1(s)
	}
	return nil
}

// Period returns the stability period Run checks: one round (χ steps) for THRESHOLD-2
// and user protocols, one phase (χ·n steps, Houle et al., Definition 3) for THRESHOLD-1,
// whose stable distributions rotate along the observer tour, and one cycle (2·χ·n) for
// DISCREPANCY-1.
func (d *DimensionExchange) Period(*State) int64 {
	chi := max(d.chi, 1)
	switch d.kind {
	case threshold1:
		return chi * int64(d.g.Order())
	case discrepancy1:
		return 2 * chi * d.nodes
	}
	return chi
}

// Step performs one dimension-exchange step (Houle et al., section 1.1): the edges of
// colour s.Steps mod χ are active and each applies the protocol. It costs O(|matching|),
// plus O(n) at the first and last step of a DISCREPANCY-1 cycle, and does not allocate.
func (d *DimensionExchange) Step(s *State) error {
	s.Time++
	if d.chi == 0 {
		return nil
	}
	if err := d.checkLoads(s); err != nil {
		return err
	}
	if d.kind == discrepancy1 {
		d.beforeDiscrepancy1Step(s)
	}
	pairs := d.ec.match[s.Steps%d.chi]
	if s.Live != nil {
		pairs = liveMatching(d.g, s.Live, pairs, d.liveBuf)
	}
	edges := len(pairs) / 2
	s.Messages += 2 * int64(edges)
	workers := min(s.Workers, par.Workers(edges, parallelMinEdges))
	if workers <= 1 && d.kind != custom {
		s.Moved += d.apply(s.Loads, pairs)
	} else {
		d.pairs, d.loads, d.step = pairs, s.Loads, s.Steps
		d.moved.Store(0)
		d.group.For(edges, workers, d.chunk)
		s.Moved += d.moved.Load()
		d.pairs, d.loads = nil, nil
		if d.err != nil {
			err := d.err
			d.err = nil
			return err
		}
	}
	if d.kind == discrepancy1 {
		d.afterDiscrepancy1Step(s)
		if d.convergecast {
			d.afterConvergecastStep(s)
		}
	}
	return nil
}

// checkLoads refuses a load vector shorter than the graph: the edge kernels index it
// without bounds checks.
func (d *DimensionExchange) checkLoads(s *State) error {
	if len(s.Loads) < d.g.Order() {
		return fmt.Errorf("%w: %d loads for a network of %d nodes", ErrBadLoads, len(s.Loads), d.g.Order())
	}
	return nil
}

// runChunk applies the protocol to active edges lo..hi-1 of the current matching.
func (d *DimensionExchange) runChunk(lo, hi int) {
	pairs := d.pairs[2*lo : 2*hi]
	if d.kind != custom {
		d.moved.Add(d.apply(d.loads, pairs))
		return
	}
	var moved int64
	for i := 0; i+1 < len(pairs); i += 2 {
		u, v := pairs[i], pairs[i+1]
		a, b := d.loads[u], d.loads[v]
		x := d.proto.Send(d.step, int(u), int(v), a, b)
		if x > a || x < -b {
			d.errMu.Lock()
			if d.err == nil {
				d.err = badParam("protocol %s sends %d tokens over edge (%d, %d) with loads %d and %d", d.name, x, u, v, a, b)
			}
			d.errMu.Unlock()
			continue
		}
		d.loads[u], d.loads[v] = a-x, b+x
		if x < 0 {
			x = -x
		}
		moved += x
	}
	d.moved.Add(moved)
}

// apply runs a built-in protocol over flat pairs and returns the tokens moved. The
// switch sits outside the edge loops so that each loop is branch-light.
func (d *DimensionExchange) apply(loads []int64, pairs []int32) int64 {
	switch d.kind {
	case threshold2:
		return threshold2Edges(loads, pairs)
	case threshold1:
		return threshold1Edges(loads, pairs)
	case discrepancy1:
		if d.plus {
			return threshold1PlusEdges(loads, d.localMax, pairs)
		}
		return threshold1MaxEdges(loads, d.localMax, pairs)
	}
	panic("tokendist: internal error: apply on a user protocol")
}

// SpanningTreeBalancer runs a tree algorithm on a spanning tree of a connected network:
// tokens move only along the tree's edges, so THRESHOLD-1 and DISCREPANCY-1 apply to any
// connected graph (Houle, Symvonis and Wood, section 1.2: "an algorithm for token
// distribution on trees is applicable to arbitrary architectures"). Build it with
// NewSpanningTree. It forwards Init, Step, Done and Period to the tree algorithm, which
// sees the tree as its network.
type SpanningTreeBalancer struct {
	g     *Graph
	tree  *Graph
	root  int
	inner Balancer
}

// AutoRoot asks NewSpanningTree for a centre of the network as the root.
const AutoRoot = -1

// NewSpanningTree returns build's balancer running on the breadth-first spanning tree of
// the connected graph g rooted at root (AutoRoot: a centre of g, so the tree's depth is
// g's radius). build receives the tree and returns the tree algorithm, for example
// func(t *Graph) (Balancer, error) { return NewThreshold1(t, nil) }. It costs a BFS, O(n +
// m), plus O(n·m) to find a centre of a graph that is not a tree.
func NewSpanningTree(g *Graph, root int, build func(tree *Graph) (Balancer, error)) (*SpanningTreeBalancer, error) {
	if g == nil {
		return nil, ErrNilNetwork
	}
	if build == nil {
		return nil, badParam("nil tree-algorithm constructor")
	}
	if err := requireConnected(g); err != nil {
		return nil, err
	}
	if root == AutoRoot {
		var err error
		if root, err = g.Center(); err != nil {
			return nil, err
		}
	}
	tree, _, err := g.BFSTree(root)
	if err != nil {
		return nil, err
	}
	inner, err := build(tree)
	if err != nil {
		return nil, wrapf(err, "NewSpanningTree: the tree algorithm's constructor failed")
	}
	if inner == nil {
		return nil, ErrNilBalancer
	}
	return &SpanningTreeBalancer{g: g, tree: tree, root: root, inner: inner}, nil
}

// Tree returns the spanning tree the algorithm runs on, in O(1).
func (b *SpanningTreeBalancer) Tree() *Graph { return b.tree }

// Root returns the root of the spanning tree, in O(1).
func (b *SpanningTreeBalancer) Root() int { return b.root }

// Inner returns the tree algorithm (for its own results, such as Decisions), in O(1).
func (b *SpanningTreeBalancer) Inner() Balancer { return b.inner }

// String names the tree algorithm and the tree, e.g. "THRESHOLD-1 on a BFS tree from 0".
func (b *SpanningTreeBalancer) String() string {
	return fmt.Sprintf("%s on a BFS tree from %d", BalancerName(b.inner), b.root)
}

// onTree runs f with s.Net set to the tree.
func (b *SpanningTreeBalancer) onTree(s *State, f func(*State) error) error {
	net := s.Net
	s.Net = b.tree
	err := f(s)
	s.Net = net
	return err
}

// Init checks that the run's network is the graph the tree spans (O(n log Δ) unless it
// is the same *Graph) and initialises the tree algorithm. A Workload is passed on to the
// tree algorithm (which accepts or refuses it); Churn is refused, because State.Live
// indexes the links of the graph, not of the tree.
func (b *SpanningTreeBalancer) Init(s *State) error {
	if err := refuseDynamic(s, b.String(), true, false, "churn on a spanning tree is not supported"); err != nil {
		return err
	}
	if g, ok := s.Net.(*Graph); !ok || g != b.g {
		other, err := AsGraph(s.Net)
		if err != nil {
			return err
		}
		for u := 0; u < b.tree.Order(); u++ {
			for _, v := range b.tree.Neighbors(u) {
				if u >= other.Order() || !other.HasEdge(u, int(v)) {
					return badParam("the network has no edge (%d, %d) of the spanning tree", u, v)
				}
			}
		}
		if other.Order() != b.tree.Order() {
			return badParam("the network has %d nodes, the spanning tree %d", other.Order(), b.tree.Order())
		}
	}
	in, ok := b.inner.(Initializer)
	if !ok {
		return nil
	}
	return b.onTree(s, in.Init)
}

// Step performs one step of the tree algorithm on the tree, at the tree algorithm's cost.
func (b *SpanningTreeBalancer) Step(s *State) error {
	net := s.Net
	s.Net = b.tree
	err := b.inner.Step(s)
	s.Net = net
	return err
}

// Done forwards to the tree algorithm's termination rule (false if it has none). It
// costs what the tree algorithm's Done costs.
func (b *SpanningTreeBalancer) Done(s *State) bool {
	t, ok := b.inner.(Terminator)
	if !ok {
		return false
	}
	net := s.Net
	s.Net = b.tree
	done := t.Done(s)
	s.Net = net
	return done
}

// HasRule reports whether the tree algorithm has a termination rule of its own
// (OptionalTerminator): it implements Terminator and, if it is an OptionalTerminator,
// its HasRule reports true.
func (b *SpanningTreeBalancer) HasRule(s *State) bool {
	if _, ok := b.inner.(Terminator); !ok {
		return false
	}
	o, ok := b.inner.(OptionalTerminator)
	if !ok {
		return true
	}
	net := s.Net
	s.Net = b.tree
	has := o.HasRule(s)
	s.Net = net
	return has
}

// DescribeResult forwards to the tree algorithm's summary (ResultDescriber), or returns
// the discrepancy, moves and messages if it has none. O(n).
func (b *SpanningTreeBalancer) DescribeResult(s *State) string {
	d, ok := b.inner.(ResultDescriber)
	if !ok {
		return describeTimedBalance(s)
	}
	net := s.Net
	s.Net = b.tree
	text := d.DescribeResult(s)
	s.Net = net
	return text
}

// Period forwards to the tree algorithm's stability period (0, no check, if it has none).
func (b *SpanningTreeBalancer) Period(s *State) int64 {
	p, ok := b.inner.(Periodic)
	if !ok {
		return 0
	}
	net := s.Net
	s.Net = b.tree
	period := p.Period(s)
	s.Net = net
	return period
}
