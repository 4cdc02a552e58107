package tokendist

// The node programs of dimension exchange (Houle, Symvonis and Wood, section 1.1):
// THRESHOLD-1, THRESHOLD-2 and user protocols.

// Message kinds of the dimension-exchange programs.

import (
	"github.com/tokendist/tokendist/internal/nilcheck"
	"github.com/tokendist/tokendist/node"
)

const (
	dxKindLoad   uint8 = iota + 1 // Value: the sender's load at the start of the round (Counted)
	dxKindTokens                  // Tokens: the exchange's tokens (not Counted)
)

var _ NodeAlgorithm = (*DimensionExchange)(nil)

// NodePrograms returns the node programs of the dimension exchange (NodeAlgorithm) on
// net, which must be the coloured graph (else an error wrapping ErrInvalidColoring or
// ErrNilNetwork). Round r of a program is step r of Step: the edges of colour r mod χ
// are active, and on an active edge {u, v}, u < v, each end sends the other a Load
// message with its load at the start of the round (Counted: the two messages per active
// edge that Step counts in Messages). An end holding both loads computes the step's
// protocol value x = Send(r, u, v, l_u, l_v), exactly as Step does (x > 0: u sends x
// tokens to v, x < 0: v sends −x to u); the sending end sends one Tokens message (not
// Counted, none when x = 0) and the receiving end waits for it. A node without an
// active edge in round r goes straight to the next round with one; a node without edges
// is idle at once. Messages carry their round; a message of a round the node has not
// reached waits in a buffer (its tokens do not count in the load the node reports until
// then), and a message of a round it has left is stale: its tokens stay in the load and
// its content is ignored. A send is clamped to the node's own load (node.Context.Load
// minus buffered tokens), which matters only when a host workload removed tokens.
//
// With zero Patience a synchronous host (unit delays, Rounds = R) ends with the loads,
// Moved and Messages of Run with MaxSteps R and NoStability (the stability stop would
// end Run early). With Patience p > 0 rounds are paced by the local clock (round r
// owns the ticks [r·p, (r+1)·p), see node.Options), and at the end of its window a node
// gives the round up: if it lacks its partner's Load it skips the exchange; if it lacks the
// partner's tokens it goes on without them (they are added when they arrive). The
// partner may then have computed that tokens go to it and wait for them in vain: it
// gives up at the end of its own window in the same way. Tokens are never lost or doubled
// (they move only through Send), but the two ends may apply different exchanges.
//
// Program(v) costs O(1); a call of a program costs O(deg v) (finding the round's
// partner port) and its state is O(deg v) bytes (the buffered messages). A user
// Protocol is called at both ends of each active edge, so it must be deterministic, as
// Step already requires. It returns an error for a nil receiver or a negative Patience.
func (d *DimensionExchange) NodePrograms(net Network, opts *node.Options) (node.Programs, error) {
	if d == nil {
		return nil, nilReceiver("DimensionExchange", "node.Programs")
	}
	o, err := nodeOptions(opts)
	if err != nil {
		return nil, err
	}
	if nilcheck.IsNil(net) {
		return nil, ErrNilNetwork
	}
	if g, ok := net.(*Graph); !ok || g != d.g {
		if err := d.ec.Validate(net); err != nil {
			return nil, err
		}
	}
	return &dxNodes{d: d, opts: o}, nil
}

// dxNodes makes the programs of one DimensionExchange.
type dxNodes struct {
	d    *DimensionExchange
	opts node.Options
}

// Program returns node v's program.
func (s *dxNodes) Program(v int) (node.Program, error) {
	if err := checkNode(s.d.name, v, s.d.g.Order()); err != nil {
		return nil, err
	}
	p := &dxProg{s: s, v: v}
	p.roundCore = roundCore{tag: 'D', id: v, deg: s.d.g.Degree(v), patience: s.opts.Patience, algo: p}
	return p, nil
}

// dxProg is one node's dimension-exchange program.
type dxProg struct {
	roundCore
	s *dxNodes
	v int

	port    int   // the round's active port, -1 if none (only between rounds)
	mine    int64 // the load the node reported
	other   int64 // the partner's load
	have    bool  // the partner's Load has arrived
	expect  bool  // the partner owes tokens
	settled bool  // the exchange is over
}

// colorOf returns the colour of v's port p.
func (p *dxProg) colorOf(port int) int64 {
	return int64(p.s.d.ec.color[p.s.d.g.off[p.v]+port])
}

// next is the first round ≥ r in which one of v's edges is active. O(deg).
func (p *dxProg) next(r int64) int64 {
	chi := p.s.d.chi
	if p.deg == 0 || chi == 0 {
		return -1
	}
	best := int64(-1)
	for port := 0; port < p.deg; port++ {
		k := r + ((p.colorOf(port)-r%chi)+chi)%chi
		if best < 0 || k < best {
			best = k
		}
	}
	return best
}

// activePort returns v's port of colour r mod χ, or -1. O(deg).
func (p *dxProg) activePort(r int64) int {
	c := r % p.s.d.chi
	for port := 0; port < p.deg; port++ {
		if p.colorOf(port) == c {
			return port
		}
	}
	return -1
}

func (p *dxProg) begin(c *node.Context, k *roundCore) error {
	p.port = p.activePort(k.round)
	p.have, p.expect, p.settled, p.other = false, false, false, 0
	p.mine = k.own(c)
	if p.port < 0 { // next never returns such a round; be safe
		p.settled = true
		return nil
	}
	return c.Send(p.port, node.Message{Kind: dxKindLoad, Round: k.round, Value: p.mine, Counted: true})
}

func (p *dxProg) handle(c *node.Context, k *roundCore, port int, m node.Message) error {
	if port != p.port || p.settled {
		return unexpected(p.v, k.round, port, m)
	}
	switch {
	case m.Kind == dxKindLoad && !p.have:
		p.have, p.other = true, m.Value
		return p.exchange(c, k)
	case m.Kind == dxKindTokens && p.expect:
		p.expect, p.settled = false, true
		return nil
	}
	return unexpected(p.v, k.round, port, m)
}

// exchange computes the round's protocol value from both loads, as Step does, and
// sends or expects the tokens.
func (p *dxProg) exchange(c *node.Context, k *roundCore) error {
	d := p.s.d
	w := int(d.g.adj[d.g.off[p.v]+p.port])
	u, x, lu, lx := p.v, w, p.mine, p.other
	if w < p.v {
		u, x, lu, lx = w, p.v, p.other, p.mine
	}
	var f int64
	switch d.kind {
	case threshold1:
		f = threshold1Send(lu, lx)
	case threshold2:
		f = threshold2Send(lu, lx)
	default:
		f = d.proto.Send(k.round, u, x, lu, lx)
	}
	if f > lu || f < -lx {
		return badParam("protocol %s sends %d tokens over edge (%d, %d) with loads %d and %d", d.name, f, u, x, lu, lx)
	}
	out := f // the tokens this node sends
	if p.v != u {
		out = -f
	}
	switch {
	case out > 0:
		if _, err := k.sendTokens(c, p.port, dxKindTokens, out, false); err != nil {
			return err
		}
		p.settled = true
	case out < 0:
		p.expect = true
	default:
		p.settled = true
	}
	return nil
}

func (p *dxProg) complete() bool { return p.settled }

func (p *dxProg) giveUp(*node.Context, *roundCore) error {
	p.settled, p.expect = true, false
	return nil
}

func (p *dxProg) appendState(b []byte) []byte {
	b = appendInts(b, int64(p.port), p.mine, p.other)
	return appendBools(b, p.have, p.expect, p.settled)
}

func (p *dxProg) restoreState(r *stateReader) func() {
	port, mine, other := r.intIn(-1, int64(p.deg)-1), r.nonNeg(), r.Varint()
	have, expect, settled := r.bool(), r.bool(), r.bool()
	return func() {
		p.port, p.mine, p.other, p.have, p.expect, p.settled = int(port), mine, other, have, expect, settled
	}
}
