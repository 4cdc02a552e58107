package tokendist

import (
	"fmt"

	"github.com/tokendist/tokendist/internal/nilcheck"
	"github.com/tokendist/tokendist/node"
)

// The node programs of the diffusion schemes of Berenbrink et al. (section 2 and Table
// 1): RandomizedDiffusion, RandomMatching and the edge-based RSW, FGSDeterministic and
// FGSRandomized. Every round is a synchronous round of Step; the programs draw their
// random choices from node.Context.Random with the functions of node_random.go, which
// Run's node-stream mode (RunOptions.NodeStreams) calls too.

// Message kinds of the diffusion programs.
const (
	rdKindShare uint8 = iota + 1 // RandomizedDiffusion: Tokens, the share of the link

	rmKindNone   // RandomMatching: no proposal on this link
	rmKindProp0  // a proposal with coin 0 (Value: the proposer's load; Counted)
	rmKindProp1  // a proposal with coin 1
	rmKindAccept // Tokens: the acceptor's tokens; Value: the tokens asked of the proposer (Counted)
	rmKindReject // the proposal is declined
	rmKindTokens // the proposer's tokens for an accepted proposal
	edKindLoad   // edge schemes: Value, the load at the start of the round
	edKindCoin   // FGSRandomized: Value, the lower end's digit for the link
	edKindTokens // Tokens: the link's flow (Counted)
)

var (
	_ NodeAlgorithm = (*RandomizedDiffusion)(nil)
	_ NodeAlgorithm = (*RandomMatching)(nil)
	_ NodeAlgorithm = (*RSWDiffusion)(nil)
	_ NodeAlgorithm = (*FGSDeterministic)(nil)
	_ NodeAlgorithm = (*FGSRandomized)(nil)
)

// diffScheme selects a diffusion program.
type diffScheme uint8

const (
	schemeRD diffScheme = iota
	schemeRM
	schemeEdge
)

// diffNodes makes the programs of one diffusion balancer on its network.
type diffNodes struct {
	name   string
	ln     *lazyNet
	scheme diffScheme
	rule   edgeRule     // schemeEdge
	table  *subsetTable // schemeRD: the balancer's subset table (nil masks beyond subsetTableMax)
	opts   node.Options
}

// newDiffNodes validates net and opts for balancer name on ln.
func newDiffNodes(name string, ln *lazyNet, net Network, opts *node.Options) (*diffNodes, error) {
	o, err := nodeOptions(opts)
	if err != nil {
		return nil, err
	}
	if nilcheck.IsNil(net) {
		return nil, ErrNilNetwork
	}
	if err := ln.same(net); err != nil {
		g, gerr := AsGraph(net)
		if gerr != nil {
			return nil, gerr
		}
		return nil, badParam("%s.NodePrograms: the balancer was built for %v, the network is %v with other links", name, ln.g, g)
	}
	return &diffNodes{name: name, ln: ln, opts: o}, nil
}

// Program returns node v's program.
func (s *diffNodes) Program(v int) (node.Program, error) {
	g := s.ln.g
	if err := checkNode(s.name, v, g.Order()); err != nil {
		return nil, err
	}
	deg := g.Degree(v)
	core := roundCore{id: v, deg: deg, patience: s.opts.Patience}
	switch s.scheme {
	case schemeRD:
		p := &rdProg{s: s, v: v, mask: make([]uint64, rdMaskWords(uint64(s.ln.d+1), uint64(deg)))}
		p.roundCore, p.tag, p.algo = core, 'R', p
		return p, nil
	case schemeRM:
		p := &rmProg{s: s, v: v, props: make([]bool, deg)}
		p.roundCore, p.tag, p.algo = core, 'M', p
		return p, nil
	}
	p := &edgeProg{s: s, v: v, other: make([]int64, deg), digit: make([]uint64, deg), flags: make([]uint8, deg), err: make([]int64, deg)}
	for i := range p.flags {
		p.flags[i] = edSettled // no round yet: every link is settled
	}
	p.roundCore, p.tag, p.algo = core, 'E', p
	return p, nil
}

// NodePrograms returns the node programs of randomized diffusion (NodeAlgorithm;
// Berenbrink et al., section 2.1) on net, which must be the balancer's network (else an
// error wrapping ErrBadParameter). In
// round r node v, with own load X, draws its excess slots from node.Context.Random(r, ·)
// exactly as Step does in node-stream mode (RunOptions.NodeStreams), and sends on each
// port p one Share message with ⌊X/(d+1)⌋ tokens plus one if slot p got an excess token:
// Counted when it carries tokens (the directed links that Step counts in Messages), a
// round marker otherwise. The round ends when a share from every neighbour has arrived;
// shares of the next round wait in a buffer, and their tokens do not count in X until
// then. So with zero Patience a synchronous host with Rounds = R ends with the loads,
// Moved and Messages of Run with MaxSteps R and NodeStreams. With Patience p > 0 (rounds
// paced by the local clock, see node.Options) a node starts the next round at the end of
// its round's window without the missing shares; they are
// added to its load when they arrive (stale content is ignored), so tokens are
// conserved and loads stay non-negative, but rounds no longer use synchronous loads.
//
// Program(v) costs O(deg v) (the slot mask: ⌈(Δ+1)/64⌉ words only for a node with
// 2·deg v + 1 ≥ Δ+1, which draws all Δ+1 slots); a round costs O(deg v) at node v (see
// RandomizedDiffusion for the draw) and its state is O(deg v) bytes. It returns an error for a nil receiver or a negative
// Patience.
func (b *RandomizedDiffusion) NodePrograms(net Network, opts *node.Options) (node.Programs, error) {
	if b == nil {
		return nil, nilReceiver("RandomizedDiffusion", "node.Programs")
	}
	s, err := newDiffNodes(b.String(), b.ln, net, opts)
	if err != nil {
		return nil, err
	}
	s.scheme, s.table = schemeRD, &b.table
	return s, nil
}

// NodePrograms returns the node programs of random matching (NodeAlgorithm; Friedrich
// and Sauerwald, the FS column of Table 1 in Berenbrink et al.) on net, which must be
// the balancer's network (else an error wrapping ErrBadParameter). In
// round r node v draws (active, coin, port) from node.Context.Random(r, ·) exactly as
// Step does in node-stream mode (RunOptions.NodeStreams) and sends one message on every
// port: a Proposal with its load and coin on the chosen port if it is active (Counted),
// a marker elsewhere (not Counted). An active node declines every proposal it gets (a
// Reject, not Counted). An inactive node, once it has heard from every neighbour,
// accepts a proposal if it got exactly one: it computes the split as Step does, and its
// Accept (Counted) carries the tokens it gives or asks the proposer for the tokens it
// takes, which the proposer then sends (not Counted); with several proposals it declines
// them all. So Messages counts one per proposal and per acceptance, as Step does, and
// with zero Patience a synchronous host with Rounds = R ends with the loads, Moved and
// Messages of Run with MaxSteps R and NodeStreams.
//
// With Patience p > 0 (rounds paced by the local clock, see node.Options) a node ends
// the round at the end of its window: an inactive node
// that has not heard from every neighbour declines the proposals it has, a proposer
// without an answer keeps its tokens, and a node owed tokens goes on without them (they
// are added when they arrive). Late answers are ignored; tokens are conserved and loads
// stay non-negative.
//
// Program(v) costs O(deg v); a call costs O(deg v) and the state is O(deg v) bytes. It
// returns an error for a nil receiver or a negative Patience.
func (b *RandomMatching) NodePrograms(net Network, opts *node.Options) (node.Programs, error) {
	if b == nil {
		return nil, nilReceiver("RandomMatching", "node.Programs")
	}
	s, err := newDiffNodes(b.String(), b.ln, net, opts)
	if err != nil {
		return nil, err
	}
	s.scheme = schemeRM
	return s, nil
}

// nodePrograms is NodePrograms for the three edge-based schemes.
func (b *edgeDiffusion) nodePrograms(name string, net Network, opts *node.Options) (node.Programs, error) {
	s, err := newDiffNodes(name, b.ln, net, opts)
	if err != nil {
		return nil, err
	}
	s.scheme, s.rule = schemeEdge, b.rule
	return s, nil
}

// NodePrograms returns the node programs of RSW diffusion (NodeAlgorithm; Rabani,
// Sinclair and Wanka, the edge-based round-down of Table 1 in Berenbrink et al.) on net,
// which must be the balancer's network (else an error wrapping ErrBadParameter). In
// round r
// every node sends its load at the start of the round on every port (Load, not
// Counted). When a neighbour's load has arrived, the node computes the link's flow as
// Step does; the end the flow leaves sends one Tokens message with it (Counted: Step
// counts one message per link with a non-zero flow) and the other end waits for it. The
// round ends when every link is settled, so with zero Patience a synchronous host with
// Rounds = R ends with Run's loads, Moved and Messages after MaxSteps R (RSW never
// sends more than a node holds). With Patience p > 0 (rounds paced by the local
// clock, see node.Options) a node ends the round at the end of its window: a link whose neighbour's load is missing carries no flow this round,
// and tokens still owed are added when they arrive (their content ignored).
//
// A round costs O(deg v) at node v and its state is O(deg v) bytes. It returns an error
// for a nil receiver or a negative Patience.
func (b *RSWDiffusion) NodePrograms(net Network, opts *node.Options) (node.Programs, error) {
	if b == nil {
		return nil, nilReceiver("RSWDiffusion", "node.Programs")
	}
	return b.nodePrograms(b.String(), net, opts)
}

// NodePrograms returns the node programs of deterministic FGS diffusion
// (NodeAlgorithm; Friedrich, Gairing and Sauerwald, Table 1 of Berenbrink et al.) on net, which must be the balancer's network (else an error wrapping
// ErrBadParameter). The rounds are RSWDiffusion's programs' (see there) with FGS's
// rounding: each end keeps the link's accumulated rounding error (O(deg v) state) and
// both compute the same flow. Unlike Step, a node cannot send tokens it does not hold:
// it sends min(F, its own load) when a flow F leaves it (its own load being its load at
// that moment, received tokens included, minus tokens of later rounds), so the programs
// match Run (with MaxSteps R) exactly when no node is asked to send more than it holds
// at that point, in particular whenever Run's loads stay non-negative with room to
// spare; where Run drives a load negative they differ, and the programs' loads stay
// non-negative. With Patience p > 0 a link whose neighbour's load is missing carries no
// flow this round and keeps its error at this end; the two ends' errors may then differ.
// Conservation always holds. It returns an error for a nil receiver or a negative
// Patience.
func (b *FGSDeterministic) NodePrograms(net Network, opts *node.Options) (node.Programs, error) {
	if b == nil {
		return nil, nilReceiver("FGSDeterministic", "node.Programs")
	}
	return b.nodePrograms(b.String(), net, opts)
}

// NodePrograms returns the node programs of randomized FGS diffusion (NodeAlgorithm;
// Friedrich, Gairing and Sauerwald, Table 1 of Berenbrink et al.) on net, which must be the balancer's network (else an error wrapping ErrBadParameter).
// The rounds are RSWDiffusion's programs' (see there) with randomized rounding: at the
// start of round r the lower end of each link draws the link's digit from
// node.Context.Random(r, ·) exactly as Step does in node-stream mode
// (RunOptions.NodeStreams) — one digit of range d+1 per link to a higher neighbour, in
// port order — and sends it to the upper end in a Coin message (not Counted), so both
// ends round alike. As for FGSDeterministic a node sends min(F, its own load), so the
// programs match Run with NodeStreams exactly when no node is asked to send more than
// it holds; with Patience p > 0 a link whose neighbour's load or coin is missing carries
// no flow this round. It returns an error for a nil receiver or a negative Patience.
func (b *FGSRandomized) NodePrograms(net Network, opts *node.Options) (node.Programs, error) {
	if b == nil {
		return nil, nilReceiver("FGSRandomized", "node.Programs")
	}
	return b.nodePrograms(b.String(), net, opts)
}

// unexpected reports a message a program cannot take in its state. With a positive
// patience the core ignores it (see errUnexpected).
func unexpected(v int, round int64, port int, m node.Message) error {
	return fmt.Errorf("%w: node %d, round %d: unexpected message of kind %d on port %d", errUnexpected, v, round, m.Kind, port)
}

// everyRound is next for the diffusion programs: every round, unless the node has no
// link (a one-node network), when nothing ever happens.
func everyRound(deg int, r int64) int64 {
	if deg == 0 {
		return -1
	}
	return r
}

// rdProg is one node's randomized-diffusion program.
type rdProg struct {
	roundCore
	s    *diffNodes
	v    int
	got  int      // shares of the round received
	mask []uint64 // scratch: the round's slot mask
}

func (p *rdProg) next(r int64) int64 { return everyRound(p.deg, r) }

func (p *rdProg) begin(c *node.Context, k *roundCore) error {
	p.got = 0
	x := uint64(k.own(c))
	D := uint64(p.s.ln.d + 1)
	q := x / D
	st := newNodeStream(c.Seed, k.round, p.v)
	rdNodeDraw(&st, D, uint64(p.deg), x-q*D, p.s.table, p.mask)
	for port := 0; port < p.deg; port++ {
		t := int64(q + p.mask[port>>6]>>(port&63)&1)
		if err := c.Send(port, node.Message{Kind: rdKindShare, Round: k.round, Tokens: t, Counted: t > 0}); err != nil {
			return err
		}
	}
	return nil
}

func (p *rdProg) handle(_ *node.Context, k *roundCore, port int, m node.Message) error {
	if m.Kind != rdKindShare || p.got >= p.deg {
		return unexpected(p.v, k.round, port, m)
	}
	p.got++
	return nil
}

func (p *rdProg) complete() bool { return p.got >= p.deg }

func (p *rdProg) giveUp(*node.Context, *roundCore) error { p.got = p.deg; return nil }

func (p *rdProg) appendState(b []byte) []byte { return appendInts(b, int64(p.got)) }

func (p *rdProg) restoreState(r *stateReader) func() {
	got := r.intIn(0, int64(p.deg))
	return func() { p.got = int(got) }
}

// rmProg is one node's random-matching program.
type rmProg struct {
	roundCore
	s *diffNodes
	v int

	x0       int64 // the load at the start of the round
	active   bool
	coin     uint8
	pick     int    // the port proposed on, if active
	firsts   int    // the neighbours heard from (proposal or marker)
	props    []bool // the ports that proposed (inactive node)
	nprops   int
	propLoad int64 // the load and coin of the last proposer
	propCoin uint8
	propPort int
	decided  bool // inactive: answered; active: answered by the chosen neighbour
	expect   bool // tokens are owed to this node
}

func (p *rmProg) next(r int64) int64 { return everyRound(p.deg, r) }

func (p *rmProg) begin(c *node.Context, k *roundCore) error {
	p.x0 = k.own(c)
	st := newNodeStream(c.Seed, k.round, p.v)
	a, coin, pick := rmNodeChoice(&st, p.deg)
	p.active, p.coin, p.pick = a == 1, uint8(coin), int(pick)
	p.firsts, p.nprops, p.propPort, p.decided, p.expect = 0, 0, -1, false, false
	clear(p.props)
	for port := 0; port < p.deg; port++ {
		m := node.Message{Kind: rmKindNone, Round: k.round}
		if p.active && port == p.pick {
			m = node.Message{Kind: rmKindProp0 + p.coin, Round: k.round, Value: p.x0, Counted: true}
		}
		if err := c.Send(port, m); err != nil {
			return err
		}
	}
	return nil
}

func (p *rmProg) handle(c *node.Context, k *roundCore, port int, m node.Message) error {
	switch m.Kind {
	case rmKindNone, rmKindProp0, rmKindProp1:
		if p.firsts >= p.deg {
			return unexpected(p.v, k.round, port, m)
		}
		p.firsts++
		if m.Kind != rmKindNone {
			if p.active {
				if err := c.Send(port, node.Message{Kind: rmKindReject, Round: k.round}); err != nil {
					return err
				}
			} else {
				p.props[port] = true
				p.nprops++
				p.propPort, p.propLoad, p.propCoin = port, m.Value, m.Kind-rmKindProp0
			}
		}
		return p.decide(c, k)
	case rmKindAccept, rmKindReject:
		if !p.active || port != p.pick || p.decided {
			return unexpected(p.v, k.round, port, m)
		}
		p.decided = true
		if m.Kind == rmKindAccept && m.Value > 0 {
			_, err := k.sendTokens(c, port, rmKindTokens, m.Value, false)
			return err
		}
		return nil
	case rmKindTokens:
		if !p.expect || port != p.propPort {
			return unexpected(p.v, k.round, port, m)
		}
		p.expect = false
		return nil
	}
	return unexpected(p.v, k.round, port, m)
}

// decide answers the proposals of an inactive node once it has heard from every
// neighbour: with exactly one it balances as Step does, else it declines them all.
func (p *rmProg) decide(c *node.Context, k *roundCore) error {
	if p.active || p.decided || p.firsts < p.deg {
		return nil
	}
	p.decided = true
	if p.nprops != 1 {
		return p.rejectAll(c, k)
	}
	sum := p.x0 + p.propLoad
	x := sum / 2
	if sum%2 == 1 && p.propCoin == 0 {
		x++
	}
	if x < p.x0 {
		t := min(p.x0-x, k.own(c))
		return c.Send(p.propPort, node.Message{Kind: rmKindAccept, Round: k.round, Tokens: t, Counted: true})
	}
	p.expect = x > p.x0
	return c.Send(p.propPort, node.Message{Kind: rmKindAccept, Round: k.round, Value: x - p.x0, Counted: true})
}

// rejectAll declines every proposal the node holds.
func (p *rmProg) rejectAll(c *node.Context, k *roundCore) error {
	for port, ok := range p.props {
		if ok {
			if err := c.Send(port, node.Message{Kind: rmKindReject, Round: k.round}); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *rmProg) complete() bool { return p.firsts >= p.deg && p.decided && !p.expect }

func (p *rmProg) giveUp(c *node.Context, k *roundCore) error {
	p.firsts = p.deg
	p.expect = false
	if !p.decided {
		p.decided = true
		if !p.active {
			return p.rejectAll(c, k)
		}
	}
	return nil
}

func (p *rmProg) appendState(b []byte) []byte {
	b = appendInts(b, p.x0, int64(p.coin), int64(p.pick), int64(p.firsts), int64(p.nprops), p.propLoad, int64(p.propCoin), int64(p.propPort))
	b = appendBools(b, p.active, p.decided, p.expect)
	return appendBools(b, p.props...)
}

func (p *rmProg) restoreState(r *stateReader) func() {
	deg := int64(p.deg)
	x0, coin, pick := r.nonNeg(), r.intIn(0, 1), r.intIn(0, max(deg, 1)-1)
	firsts, nprops := r.intIn(0, deg), r.intIn(0, deg)
	propLoad, propCoin, propPort := r.Varint(), r.intIn(0, 1), r.intIn(-1, deg-1)
	active, decided, expect := r.bool(), r.bool(), r.bool()
	props := make([]bool, p.deg)
	for i := range props {
		props[i] = r.bool()
	}
	return func() {
		p.x0, p.coin, p.pick, p.firsts, p.nprops = x0, uint8(coin), int(pick), int(firsts), int(nprops)
		p.propLoad, p.propCoin, p.propPort = propLoad, uint8(propCoin), int(propPort)
		p.active, p.decided, p.expect = active, decided, expect
		p.props = props
	}
}

// Per-port flags of the edge programs.
const (
	edHave    uint8 = 1 << iota // the neighbour's load has arrived
	edCoin                      // the lower end's digit has arrived (FGSRandomized)
	edExpect                    // the flow comes to this node and has not arrived
	edSettled                   // the link is done for the round
)

// edgeProg is one node's program of an edge-based scheme.
type edgeProg struct {
	roundCore
	s *diffNodes
	v int

	x0    int64
	left  int      // links not settled
	other []int64  // the neighbours' loads
	digit []uint64 // FGSRandomized: each link's digit (drawn here for higher neighbours)
	flags []uint8
	err   []int64 // FGSDeterministic: (d+1)·(accumulated discrete − continuous flow to the neighbour)
}

func (p *edgeProg) next(r int64) int64 { return everyRound(p.deg, r) }

// nbr returns the neighbour on port.
func (p *edgeProg) nbr(port int) int { return int(p.s.ln.g.adj[p.s.ln.g.off[p.v]+port]) }

func (p *edgeProg) begin(c *node.Context, k *roundCore) error {
	p.x0 = k.own(c)
	p.left = p.deg
	clear(p.flags)
	var nf nodeFixed
	if p.s.rule == ruleFGSRand {
		nf.nodeStream = newNodeStream(c.Seed, k.round, p.v)
		nf.reset(uint64(p.s.ln.d + 1))
	}
	for port := 0; port < p.deg; port++ {
		if err := c.Send(port, node.Message{Kind: edKindLoad, Round: k.round, Value: p.x0}); err != nil {
			return err
		}
		if p.s.rule == ruleFGSRand && p.nbr(port) > p.v {
			p.digit[port] = nf.draw()
			if err := c.Send(port, node.Message{Kind: edKindCoin, Round: k.round, Value: int64(p.digit[port])}); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *edgeProg) handle(c *node.Context, k *roundCore, port int, m node.Message) error {
	f := &p.flags[port]
	switch {
	case m.Kind == edKindLoad && *f&(edHave|edSettled) == 0:
		*f |= edHave
		p.other[port] = m.Value
	case m.Kind == edKindCoin && *f&(edCoin|edSettled) == 0 && p.nbr(port) < p.v && p.s.rule == ruleFGSRand:
		if m.Value < 0 || m.Value > int64(p.s.ln.d) {
			return unexpected(p.v, k.round, port, m)
		}
		*f |= edCoin
		p.digit[port] = uint64(m.Value)
	case m.Kind == edKindTokens && *f&edExpect != 0:
		*f = *f&^edExpect | edSettled
		p.left--
		return nil
	default:
		return unexpected(p.v, k.round, port, m)
	}
	return p.flow(c, k, port)
}

// flow settles the link on port once what it needs has arrived: it computes the flow as
// Step does, in the terms of the link's lower end, and sends or expects it.
func (p *edgeProg) flow(c *node.Context, k *roundCore, port int) error {
	f := &p.flags[port]
	j := p.nbr(port)
	if *f&edHave == 0 || (p.s.rule == ruleFGSRand && j < p.v && *f&edCoin == 0) {
		return nil
	}
	D := int64(p.s.ln.d + 1)
	sign := int64(1)
	if j < p.v {
		sign = -1
	}
	a := sign * (p.x0 - p.other[port])
	var fl int64
	switch p.s.rule {
	case ruleRSW:
		fl = a / D
	case ruleFGSDet:
		el := sign * p.err[port]
		q, r := floorDiv(a-el, D)
		q -= (D - 1 - 2*r) >> 63
		fl = q
		p.err[port] = sign * (el + D*fl - a)
	case ruleFGSRand:
		q, r := floorDiv(a, D)
		fl = q
		if int64(p.digit[port]) < r {
			fl++
		}
	}
	switch out := sign * fl; {
	case out > 0:
		if _, err := k.sendTokens(c, port, edKindTokens, out, true); err != nil {
			return err
		}
		*f |= edSettled
		p.left--
	case out < 0:
		*f |= edExpect
	default:
		*f |= edSettled
		p.left--
	}
	return nil
}

func (p *edgeProg) complete() bool { return p.left == 0 }

func (p *edgeProg) giveUp(*node.Context, *roundCore) error {
	for i := range p.flags {
		p.flags[i] = edSettled
	}
	p.left = 0
	return nil
}

func (p *edgeProg) appendState(b []byte) []byte {
	b = appendInts(b, p.x0, int64(p.left))
	for i := 0; i < p.deg; i++ {
		b = appendInts(b, p.other[i], int64(p.digit[i]), p.err[i])
		b = append(b, p.flags[i])
	}
	return b
}

func (p *edgeProg) restoreState(r *stateReader) func() {
	x0, left := r.nonNeg(), r.Varint()
	other, digit, flags, errs := make([]int64, p.deg), make([]uint64, p.deg), make([]uint8, p.deg), make([]int64, p.deg)
	D := int64(p.s.ln.d + 1)
	unsettled := int64(0)
	for i := 0; i < p.deg; i++ {
		other[i] = r.Varint()
		digit[i] = uint64(r.intIn(0, D-1))
		errs[i] = r.intIn(-D, D)
		flags[i] = r.Byte()
		if flags[i] >= 1<<4 {
			r.Fail()
		}
		if flags[i]&edSettled == 0 {
			unsettled++
		}
	}
	if left != unsettled {
		r.Fail()
	}
	return func() {
		p.x0, p.left, p.other, p.digit, p.flags, p.err = x0, int(left), other, digit, flags, errs
	}
}
