package tokendist

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/tokendist/tokendist/internal/nilcheck"
	"github.com/tokendist/tokendist/internal/par"
)

// Protocol decides, for one active edge of a dimension-exchange step, how many tokens
// cross it (Houle, Symvonis and Wood, section 1.1: "compare the loads of v and w
// according to some protocol"). It is the extension point for user-defined protocols;
// the built-in THRESHOLD-1, THRESHOLD-2 and DISCREPANCY-1 protocols are specialised
// edge kernels and do not go through it.
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

// protocolKind selects the protocol of a DimensionExchange.
type protocolKind uint8

const (
	custom protocolKind = iota
	threshold2
	threshold1
)

// parallelMinEdges is the least number of active edges per worker before a matching is
// split across cores: below it the hand-off costs more than it saves.
const parallelMinEdges = 1 << 14

// dxEngine is the dimension-exchange stepper that DimensionExchange and Discrepancy1
// share (Houle, Symvonis and Wood, section 1.1): the coloured graph, the matching of
// each step, the edge kernel or user Protocol applied to it, and the parallel split of
// large matchings. It has no exported methods: each balancer states its own API.
type dxEngine struct {
	g     *Graph
	ec    *EdgeColoring
	name  string
	chi   int64
	ready initGuard

	// kernel applies a built-in protocol to flat pairs and returns the tokens moved;
	// nil means the user Protocol proto.
	kernel func(loads []int64, pairs []int32) int64
	proto  Protocol

	// Per-step scratch for the parallel split; set before each par.Group.For call.
	group par.Group
	chunk func(lo, hi int)
	pairs []int32
	loads []int64
	step  int64
	moved atomic.Int64
	errMu sync.Mutex
	err   error

	liveBuf []int32 // the live pairs of the current matching, under churn
}

// setup validates g and ec (or builds the default colouring) and names the engine.
func (e *dxEngine) setup(g *Graph, ec *EdgeColoring, name string) error {
	if g == nil {
		return ErrNilNetwork
	}
	if ec == nil {
		var err error
		if ec, err = DefaultColoring(g); err != nil {
			return err
		}
	} else if err := ec.Validate(g); err != nil {
		return err
	}
	e.g, e.ec, e.name, e.chi = g, ec, name, int64(ec.Colors())
	return nil
}

// activeColor is t mod χ, or 0 without colours.
func (e *dxEngine) activeColor(t int64) int {
	if e.chi == 0 {
		return 0
	}
	return int(t % e.chi)
}

// init checks that the run's network is the coloured graph (O(1) for the same *Graph,
// O(n + m) otherwise) and prepares the per-run buffers. The balancer's Init marks the
// engine ready (e.ready.set) once its own set-up succeeded.
func (e *dxEngine) init(s *State) error {
	e.ready.reset()
	if g, ok := s.Net.(*Graph); !ok || g != e.g {
		if err := e.ec.Validate(s.Net); err != nil {
			return err
		}
	}
	if e.chunk == nil {
		e.chunk = e.runChunk
	}
	if s.Live != nil && e.liveBuf == nil {
		most := 0
		for _, m := range e.ec.match {
			most = max(most, len(m))
		}
		e.liveBuf = make([]int32, 0, most)
	}
	return nil
}

// begin opens a step of balancer b: it refuses a State Init has not prepared
// (ErrNotInitialized), advances s.Time by the step's unit, and reports whether there
// is a matching to apply (false on a graph without edges). O(1).
func (e *dxEngine) begin(s *State, b fmt.Stringer) (bool, error) {
	if err := e.ready.check(s, b); err != nil {
		return false, err
	}
	s.Time++
	if e.chi == 0 {
		return false, nil
	}
	return true, e.checkLoads(s)
}

// exchange applies the protocol to the matching of step t (colour t mod χ) and counts
// the tokens moved and two load messages per active edge. It costs O(|matching|) and
// does not allocate.
func (e *dxEngine) exchange(s *State, t int64) error {
	pairs := e.ec.match[t%e.chi]
	if s.Live != nil {
		pairs = liveMatching(e.g, s.Live, pairs, e.liveBuf)
	}
	edges := len(pairs) / 2
	s.Messages += 2 * int64(edges)
	workers := min(s.Workers, par.Workers(edges, parallelMinEdges))
	if workers <= 1 && e.kernel != nil {
		s.Moved += e.kernel(s.Loads, pairs)
		return nil
	}
	e.pairs, e.loads, e.step = pairs, s.Loads, t
	e.moved.Store(0)
	e.group.For(edges, workers, e.chunk)
	s.Moved += e.moved.Load()
	e.pairs, e.loads = nil, nil
	if e.err != nil {
		err := e.err
		e.err = nil
		return err
	}
	return nil
}

// checkLoads refuses a load vector shorter than the graph: the edge kernels index it
// without bounds checks.
func (e *dxEngine) checkLoads(s *State) error {
	if len(s.Loads) < e.g.Order() {
		return fmt.Errorf("%w: %s: %d loads for a network of %d nodes", ErrBadLoads, e.name, len(s.Loads), e.g.Order())
	}
	return nil
}

// runChunk applies the protocol to active edges lo..hi-1 of the current matching.
func (e *dxEngine) runChunk(lo, hi int) {
	pairs := e.pairs[2*lo : 2*hi]
	if e.kernel != nil {
		e.moved.Add(e.kernel(e.loads, pairs))
		return
	}
	var moved int64
	for i := 0; i+1 < len(pairs); i += 2 {
		u, v := pairs[i], pairs[i+1]
		a, b := e.loads[u], e.loads[v]
		x := e.proto.Send(e.step, int(u), int(v), a, b)
		if x > a || x < -b {
			e.errMu.Lock()
			if e.err == nil {
				e.err = badParam("protocol %s sends %d tokens over edge (%d, %d) with loads %d and %d", e.name, x, u, v, a, b)
			}
			e.errMu.Unlock()
			continue
		}
		e.loads[u], e.loads[v] = a-x, b+x
		if x < 0 {
			x = -x
		}
		moved += x
	}
	e.moved.Add(moved)
}

// DimensionExchange is the DIMENSION-EXCHANGE algorithm of Houle, Symvonis and Wood
// (section 1.1) as a Balancer: the edges carry a proper colouring with χ colours, the
// step at time t activates the edges of colour t mod χ (a matching), and on every active
// edge both ends compare loads and move tokens according to a protocol. A round is χ
// steps; every step costs one unit of model time and two load messages per active edge.
//
// Build one with NewThreshold1, NewThreshold2 or NewDimensionExchange (a user Protocol);
// DISCREPANCY-1, which adds phases and a termination rule, is Discrepancy1. It has no
// termination rule of its own: Run stops it by the stability check (Periodic), a target
// or a step budget. A step costs O(|matching|); large matchings are split across cores
// (the edges of one colour are disjoint, so the split never changes the result). Step
// does not allocate. Step before Init returns an error wrapping ErrNotInitialized. A
// value can be reused for several runs, but not concurrently (Run refuses that with
// ErrConcurrentUse).
//
// Dynamic runs: THRESHOLD-1, THRESHOLD-2 and user protocols accept a Workload (each
// step applies the protocol to the loads as the workload left them; nothing in them
// depends on the total) and Churn (the colouring stays that of the full graph; a step
// skips the active links that are down, at O(|matching|·log Δ) for the lookup).
type DimensionExchange struct {
	dxEngine
	kind protocolKind

	fused     []int32          // one round's pairs in fused order (fusedSchedule), built by the first round
	plan      *fusedPlan       // the parallel fused round for len(plan.parts) workers
	partChunk func(lo, hi int) // runParts, set once
}

var (
	_ Balancer     = (*DimensionExchange)(nil)
	_ Initializer  = (*DimensionExchange)(nil)
	_ Periodic     = (*DimensionExchange)(nil)
	_ fmt.Stringer = (*DimensionExchange)(nil)
	_ rounder      = (*DimensionExchange)(nil)
)

// NewDimensionExchange returns the dimension-exchange algorithm on g with colouring ec
// (nil: DefaultColoring(g)) and the user protocol p. Its stability period is one round:
// p must depend only on the loads and on t mod χ for the stability stop to be sound;
// otherwise run with RunOptions.NoStability. It costs the colouring's construction or
// validation, O(n + m).
func NewDimensionExchange(g *Graph, ec *EdgeColoring, p Protocol) (*DimensionExchange, error) {
	if nilcheck.IsNil(p) {
		return nil, badParam("nil Protocol (%T)", p)
	}
	d, err := newDimensionExchange(g, ec, custom, fmt.Sprintf("DIMENSION-EXCHANGE(%T)", p))
	if err != nil {
		return nil, err
	}
	d.proto = p
	return d, nil
}

// newDimensionExchange validates g and ec (or builds the default colouring) and picks
// the edge kernel of kind.
func newDimensionExchange(g *Graph, ec *EdgeColoring, kind protocolKind, name string) (*DimensionExchange, error) {
	d := &DimensionExchange{kind: kind}
	if err := d.setup(g, ec, name); err != nil {
		return nil, err
	}
	switch kind {
	case threshold1:
		d.kernel = threshold1Edges
	case threshold2:
		d.kernel = threshold2Edges
	}
	return d, nil
}

// String names the protocol, e.g. "THRESHOLD-1" (Houle et al., section 2), in O(1).
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
func (d *DimensionExchange) ActiveColor(t int64) int { return d.activeColor(t) }

// Init checks that the run's network is the coloured graph (O(1) for the same *Graph,
// O(n + m) otherwise) and prepares the per-run buffers (O(Δ) under churn).
func (d *DimensionExchange) Init(s *State) error {
	if d == nil {
		return nilReceiver("DimensionExchange", "Init")
	}
	if err := d.init(s); err != nil {
		return err
	}
	s.RoundSteps = d.chi // a round: one matching of each colour
	d.ready.set(s)
	return nil
}

// Period returns the stability period Run checks: one round (χ steps) for THRESHOLD-2
// and user protocols, one phase (χ·n steps, Houle et al., Definition 3) for THRESHOLD-1,
// whose stable distributions rotate along the observer tour. O(1).
func (d *DimensionExchange) Period(*State) int64 {
	chi := max(d.chi, 1)
	if d.kind == threshold1 {
		return chi * int64(d.g.Order())
	}
	return chi
}

// Step performs one dimension-exchange step (Houle et al., section 1.1): the edges of
// colour s.Steps mod χ are active and each applies the protocol. It costs
// O(|matching|) and does not allocate. Before Init it returns an error wrapping
// ErrNotInitialized.
func (d *DimensionExchange) Step(s *State) error {
	if d == nil {
		return nilReceiver("DimensionExchange", "Step")
	}
	if s == nil {
		return badParam("%s: Step of a nil *State", d)
	}
	return d.stepAt(s, s.Steps)
}

// stepAt performs the step whose colour is t mod χ.
func (d *DimensionExchange) stepAt(s *State, t int64) error {
	if active, err := d.begin(s, d); !active || err != nil {
		return err
	}
	return d.exchange(s, t)
}
