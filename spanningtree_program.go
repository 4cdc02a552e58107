package tokendist

import "github.com/tokendist/tokendist/node"

var _ NodeAlgorithm = (*SpanningTree)(nil)

// NodePrograms returns the tree algorithm's node programs (NodeAlgorithm; Houle,
// Symvonis and Wood, section 1.2: a tree algorithm balances any network on a spanning
// tree) run on the spanning tree inside net, which must be the graph the tree spans: node v's program is
// the tree algorithm's program for v, which sees only v's tree links (its ports
// 0..deg_T(v)−1 in the tree's order) and whose messages leave on the matching ports of
// net; the other links of net stay silent. It returns an error wrapping ErrBadParameter
// if the tree algorithm has no node programs, and the tree algorithm's errors. So a
// synchronous host on net gives what the tree algorithm's programs give on the tree,
// which is Run's of the SpanningTree (see the tree algorithm's NodePrograms). A call
// costs the tree algorithm's plus O(deg_T v); Program(v) costs O(deg v) for the port
// map.
func (b *SpanningTree) NodePrograms(net Network, opts *node.Options) (node.Programs, error) {
	if b == nil {
		return nil, nilReceiver("SpanningTree", "node.Programs")
	}
	inner, ok := b.inner.(NodeAlgorithm)
	if !ok {
		return nil, badParam("%s: the tree algorithm %s has no node programs", b, BalancerName(b.inner))
	}
	g, err := AsGraph(net)
	if err != nil {
		return nil, err
	}
	if g != b.g {
		if g.Order() != b.g.Order() || g.Size() != b.g.Size() {
			return nil, badParam("%s: the network has %d nodes and %d edges, the spanned graph %d and %d", b, g.Order(), g.Size(), b.g.Order(), b.g.Size())
		}
		for u := 0; u < g.Order(); u++ {
			for _, v := range b.tree.Neighbors(u) {
				if !g.HasEdge(u, int(v)) {
					return nil, badParam("%s: the network has no edge (%d, %d) of the spanning tree", b, u, v)
				}
			}
		}
	}
	progs, err := inner.NodePrograms(b.tree, opts)
	if err != nil {
		return nil, err
	}
	return &treeNodes{g: g, tree: b.tree, inner: progs}, nil
}

// treeNodes makes the programs of a tree algorithm run inside a larger network.
type treeNodes struct {
	g, tree *Graph
	inner   node.Programs
}

// Program returns node v's tree program with its ports mapped to v's ports in g.
func (s *treeNodes) Program(v int) (node.Program, error) {
	if err := checkNode("SpanningTree", v, s.g.Order()); err != nil {
		return nil, err
	}
	p, err := s.inner.Program(v)
	if err != nil {
		return nil, err
	}
	nb, tn := s.g.Neighbors(v), s.tree.Neighbors(v)
	out := make([]int, len(tn)) // tree port → network port
	in := make([]int, len(nb))  // network port → tree port, -1 off the tree
	j := 0
	for i, w := range nb {
		in[i] = -1
		if j < len(tn) && tn[j] == w {
			in[i], out[j] = j, i
			j++
		}
	}
	return &treeProg{p: p, out: out, in: in}, nil
}

// treeProg runs a tree program inside the network: it keeps the program's own context
// (tree ports) and forwards its sends to the host's context on the network's ports.
type treeProg struct {
	p       node.Program
	out, in []int
	ic      node.Context
}

// call runs f on the inner context, set from c, and forwards the sends to c.
func (t *treeProg) call(c *node.Context, f func(ic *node.Context) error) error {
	if c == nil {
		return badParam("SpanningTree node program: nil *node.Context")
	}
	t.ic.ID, t.ic.Degree, t.ic.Load, t.ic.Now, t.ic.Rounds, t.ic.Seed = c.ID, len(t.out), c.Load, c.Now, c.Rounds, c.Seed
	t.ic.Reset()
	err := f(&t.ic)
	for _, e := range t.ic.Outbox() {
		if serr := c.Send(t.out[e.Port], e.Msg); serr != nil && err == nil {
			err = serr
		}
	}
	t.ic.Reset()
	return err
}

func (t *treeProg) Start(c *node.Context) error {
	if c != nil && c.Degree != len(t.in) {
		return badParam("SpanningTree node %d of degree %d got a context of degree %d", c.ID, len(t.in), c.Degree)
	}
	return t.call(c, func(ic *node.Context) error { return t.p.Start(ic) })
}

func (t *treeProg) Receive(c *node.Context, port int, m node.Message) error {
	if port < 0 || port >= len(t.in) || t.in[port] < 0 {
		id := -1
		if c != nil {
			id = c.ID
		}
		return badParam("SpanningTree node %d received a message on port %d, which is not a tree link", id, port)
	}
	return t.call(c, func(ic *node.Context) error { return t.p.Receive(ic, t.in[port], m) })
}

func (t *treeProg) Tick(c *node.Context) error {
	return t.call(c, func(ic *node.Context) error { return t.p.Tick(ic) })
}

func (t *treeProg) Idle() bool { return t.p.Idle() }

// AppendState is the tree program's state (the port map is rebuilt by Program).
func (t *treeProg) AppendState(b []byte) []byte { return t.p.AppendState(b) }

// RestoreState restores the tree program's state.
func (t *treeProg) RestoreState(b []byte) error { return t.p.RestoreState(b) }
