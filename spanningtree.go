package tokendist

import "fmt"

// SpanningTree runs a tree algorithm on a spanning tree of a connected network:
// tokens move only along the tree's edges, so THRESHOLD-1 and DISCREPANCY-1 apply to any
// connected graph (Houle, Symvonis and Wood, section 1.2: "an algorithm for token
// distribution on trees is applicable to arbitrary architectures"). Build it with
// NewSpanningTree. It forwards Init, Step, Done, Period and Report to the tree
// algorithm, which sees the tree as its network; it has a termination rule (Done) exactly
// when the tree algorithm has one. Step before Init returns an error wrapping
// ErrNotInitialized.
type SpanningTree struct {
	g     *Graph
	tree  *Graph
	root  int
	inner Balancer
	ready initGuard
}

var (
	_ Balancer     = (*SpanningTree)(nil)
	_ Initializer  = (*SpanningTree)(nil)
	_ Terminator   = (*SpanningTree)(nil)
	_ Periodic     = (*SpanningTree)(nil)
	_ Reporter     = (*SpanningTree)(nil)
	_ fmt.Stringer = (*SpanningTree)(nil)
	_ ruleHolder   = (*SpanningTree)(nil)
)

// AutoRoot asks NewSpanningTree for a centre of the network as the root.
const AutoRoot = -1

// NewSpanningTree returns build's balancer running on the breadth-first spanning tree of
// the connected network net rooted at root (AutoRoot: a centre of net, so the tree's depth is
// its radius). build receives the tree and returns the tree algorithm, for example
// func(t *Graph) (Balancer, error) { return NewThreshold1(t, nil) }. It costs a BFS, O(n +
// m), plus O(n·m) to find a centre of a graph that is not a tree.
func NewSpanningTree(net Network, root int, build func(tree *Graph) (Balancer, error)) (*SpanningTree, error) {
	g, err := AsGraph(net)
	if err != nil {
		return nil, err
	}
	if build == nil {
		return nil, badParam("nil tree-algorithm constructor")
	}
	if err := requireConnected(g); err != nil {
		return nil, err
	}
	if root == AutoRoot {
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
	return &SpanningTree{g: g, tree: tree, root: root, inner: inner}, nil
}

// Tree returns the spanning tree the algorithm runs on, in O(1).
func (b *SpanningTree) Tree() *Graph { return b.tree }

// Root returns the root of the spanning tree, in O(1).
func (b *SpanningTree) Root() int { return b.root }

// Inner returns the tree algorithm (for its own results, such as Decisions), in O(1).
func (b *SpanningTree) Inner() Balancer { return b.inner }

// String names the tree algorithm and the tree, e.g. "THRESHOLD-1 on a BFS tree from 0".
func (b *SpanningTree) String() string {
	return fmt.Sprintf("%s on a BFS tree from %d", BalancerName(b.inner), b.root)
}

// onTree runs f with s.Net set to the tree.
func (b *SpanningTree) onTree(s *State, f func(*State) error) error {
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
func (b *SpanningTree) Init(s *State) error {
	if b == nil {
		return nilReceiver("SpanningTree", "Init")
	}
	b.ready.reset()
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
	if in, ok := b.inner.(Initializer); ok {
		if err := b.onTree(s, in.Init); err != nil {
			return err
		}
	}
	b.ready.set(s)
	return nil
}

// Step performs one step of the tree algorithm on the tree, at the tree algorithm's cost.
// Before Init it returns an error wrapping ErrNotInitialized.
func (b *SpanningTree) Step(s *State) error {
	if b == nil {
		return nilReceiver("SpanningTree", "Step")
	}
	if err := b.ready.check(s, b); err != nil {
		return err
	}
	net := s.Net
	s.Net = b.tree
	err := b.inner.Step(s)
	s.Net = net
	return err
}

// Done forwards to the tree algorithm's termination rule: the wrapper has a rule
// exactly when the tree algorithm has one (a Terminator, and for Funcs a DoneFunc), and
// Done is false otherwise. It costs what the tree algorithm's Done costs.
func (b *SpanningTree) Done(s *State) bool {
	t := terminatorOf(b.inner)
	if t == nil {
		return false
	}
	net := s.Net
	s.Net = b.tree
	done := t.Done(s)
	s.Net = net
	return done
}

// hasRule reports whether the tree algorithm has a termination rule of its own in this
// run (ruleHolder): Run stops a SpanningTree by Done exactly when it would stop
// the tree algorithm alone by its Done. O(1).
func (b *SpanningTree) hasRule() bool { return terminatorOf(b.inner) != nil }

// Report forwards to the tree algorithm's report (Reporter), or returns nil if it has
// none. It costs what the tree algorithm's Report costs.
func (b *SpanningTree) Report(s *State) any {
	rep, ok := b.inner.(Reporter)
	if !ok {
		return nil
	}
	net := s.Net
	s.Net = b.tree
	out := rep.Report(s)
	s.Net = net
	return out
}

// Period forwards to the tree algorithm's stability period (0, no check, if it has none).
func (b *SpanningTree) Period(s *State) int64 {
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
