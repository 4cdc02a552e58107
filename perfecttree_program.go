package tokendist

import (
	"encoding/binary"
	"fmt"

	"github.com/tokendist/tokendist/node"

	"github.com/tokendist/tokendist/internal/wire"
)

// The perfect-tree protocol's node program (ptNode, perfecttree_protocol.go) under the
// node.Program interface: ptProg is a runtime for one ptNode, as ptSim is for all of them.

// Message kinds of the perfect-tree programs on the wire.
const (
	ptWireUp       uint8 = iota + 1 // phase 1, S1.2: a subtree's (T, N) to the parent; Round = N<<32 | the sender's ID
	ptWireDown                      // phase 1, S1.4/S1.5: the global (T, N); Value = T, Round = N
	ptWireToken                     // a token (Tokens = 1)
	ptWireToken3                    // a phase-3 token of the corrected program (Tokens = 1)
	ptWireFinished                  // phase 3: the sender has finished
)

var _ NodeAlgorithm = (*PerfectTree)(nil)

// NodePrograms returns the perfect-tree node programs (NodeAlgorithm; Margara,
// Pistocchi and Vassura, section 3) on the tree net (else an error wrapping ErrNotTree): the node program of PerfectTree's two runtimes,
// driven by a small runtime of its own per node. Every message the protocol sends is
// Counted and every token is one message, as in Run. The adapter resumes the node in
// Start and at its ticks: Receive queues a message in the node's channel (and wakes it
// if it waits for that message), and the node runs at its next Tick, after all of that
// time's deliveries, as PerfectTree's scheduler runs nodes after the deliveries of a
// time unit. A node that sends is busy until its next tick (the single-port model: one
// message per time unit), so a synchronous host with unit delays reproduces the
// scheduler's timing.
//
// The scheduler's link reservations are a lock shared by both ends of a link, which
// messages cannot emulate: the programs never wait for a free link, which changes
// nothing but one case. When two adjacent nodes both reach phase 1's S1.2 at the same
// time, each choosing the other as parent, the scheduler lets the first to run send
// and makes the other the root; the programs both send (a crossing), and on receiving
// the other's message each end applies the scheduler's choice: the scheduler runs the
// nodes woken at a time in the order of the messages that woke them, so with unit
// delays its run order in phase 1 is the order of the smallest leaf ID at the origin of
// each node's last wake-up. Every subtree message carries that origin (a node's own ID
// for a leaf), and the end with the larger origin becomes the root, absorbing the
// other's message, while the other ignores the root's. So a synchronous host with unit
// delays gives exactly Run's loads and Moved (Run with unit delays, to completion), and
// Run's Messages plus one when phase 1 ended in a crossing (the root's ignored
// message). Under other delays the election may differ from the scheduler's, but both
// ends always agree (their origins are distinct leaves) and every run ends with a
// perfect distribution (Theorems 1 to 3 hold for either root).
//
// The programs are anonymous in the paper's sense: the node program never reads
// node.Context.ID; the adapter reads it only as a leaf's tie-break key above. They ignore node.Options.Patience: the
// protocol has no rounds to give up and waits for ever for each message, as the paper's
// asynchronous model does. ShufflePorts, Delays, Goroutines, Jitter and Batch of
// PerfectTreeOptions do not apply (the host numbers the ports and delivers the
// messages); Literal does. The program assumes no workload: a node whose load a host
// lowers below what it must send fails. Program(v) costs O(deg v); a call costs O(deg v)
// plus O(1) per message it sends; the state is O(deg v) bytes.
func (pt *PerfectTree) NodePrograms(net Network, opts *node.Options) (node.Programs, error) {
	if pt == nil {
		return nil, nilReceiver("PerfectTree", "node.Programs")
	}
	if _, err := nodeOptions(opts); err != nil {
		return nil, err
	}
	g, err := AsGraph(net)
	if err != nil {
		return nil, err
	}
	if err := requireTree(g); err != nil {
		return nil, err
	}
	if pt.opts.ShufflePorts {
		return nil, badParam("PerfectTree.NodePrograms: ShufflePorts is not supported (the host numbers the ports)")
	}
	if g.Order() > 1<<31-1 {
		return nil, badParam("PerfectTree.NodePrograms: %d nodes exceed 2^31 − 1", g.Order())
	}
	return &ptNodes{g: g, literal: pt.opts.Literal}, nil
}

// ptNodes makes the perfect-tree programs of one tree.
type ptNodes struct {
	g       *Graph
	literal bool
}

// Program returns node v's program.
func (s *ptNodes) Program(v int) (node.Program, error) {
	if err := checkNode("PerfectTree", v, s.g.Order()); err != nil {
		return nil, err
	}
	deg := s.g.Degree(v)
	p := &ptProg{id: v, deg: deg, literal: s.literal}
	p.subT, p.subN = make([]int64, deg), make([]int64, deg)
	p.q, p.ring = make([]ptQueue, deg), make([]int32, deg)
	return p, nil
}

// What a perfect-tree program waits for.
const (
	ptwFresh uint8 = iota // Start has not been called
	ptwRun                // to resume at the next tick
	ptwSend               // busy sending until the next tick
	ptwAny                // a message on any channel
	ptwPort               // a message on channel wport
	ptwDone               // Finished
)

// ptProg is one node's perfect-tree program.
type ptProg struct {
	id, deg int
	literal bool

	nd      ptNode
	subT    []int64
	subN    []int64
	q       []ptQueue
	ring    []int32
	wait    uint8
	wport   int32
	upPort  int32 // the channel S1.2's message went out on, 0 if none (crossing detection)
	crossed bool  // a crossing happened here
	origin  int64 // the tie-break key of the node's last wake-up in phase 1 (see NodePrograms)
}

// run resumes the node until it waits, carrying out its actions.
func (p *ptProg) run(c *node.Context) error {
	ok := false
	for {
		nd := &p.nd
		a := nd.resume(ok)
		ok = false
		switch a.op {
		case ptOpReserve:
			ok = true // no reservations: see NodePrograms
		case ptOpRelease, ptOpWaitFree, ptOpPhase:
		case ptOpSend:
			m := node.Message{Counted: true}
			switch a.msg.kind {
			case ptMsgInfo:
				if nd.pc == ptPcP12Sent {
					m.Kind, m.Value, m.Round = ptWireUp, a.msg.t, a.msg.n<<32|p.origin
					p.upPort = a.port
				} else {
					m.Kind, m.Value, m.Round = ptWireDown, a.msg.t, a.msg.n
				}
			case ptMsgToken:
				m.Kind, m.Tokens = ptWireToken, 1
			case ptMsgToken3:
				m.Kind, m.Tokens = ptWireToken3, 1
			case ptMsgFinished:
				m.Kind = ptWireFinished
			}
			p.wait = ptwSend
			return c.Send(int(a.port)-1, m)
		case ptOpWaitAny:
			p.wait = ptwAny
			return nil
		case ptOpWaitPort:
			p.wait, p.wport = ptwPort, a.port
			return nil
		case ptOpDone:
			p.wait = ptwDone
			return nil
		default:
			code := a.port
			if code < 1 || int(code) >= len(ptFailText) {
				code = ptFailState
			}
			return ptNodeError(p.id, nd, code)
		}
	}
}

// Start sets the node up with node.Context.Load tokens and runs it until it waits.
func (p *ptProg) Start(c *node.Context) error {
	if err := p.check(c); err != nil {
		return err
	}
	if p.wait != ptwFresh {
		return badParam("node %d: Start called twice", p.id)
	}
	if c.Load < 0 {
		return badParam("node %d starts with %d tokens", p.id, c.Load)
	}
	p.nd.init(c.Load, p.subT, p.subN, p.q, p.ring, p.literal)
	p.wait, p.origin = ptwRun, int64(p.id)
	return p.run(c)
}

func (p *ptProg) check(c *node.Context) error {
	if c == nil {
		return badParam("node %d: nil *node.Context", p.id)
	}
	if c.ID != p.id || c.Degree != p.deg {
		return badParam("node %d of degree %d got the context of node %d of degree %d", p.id, p.deg, c.ID, c.Degree)
	}
	return nil
}

// Receive queues m on its channel and wakes the node if it waits for it. A subtree
// message from the node's own chosen parent is a crossing (see NodePrograms).
func (p *ptProg) Receive(c *node.Context, port int, m node.Message) error {
	if err := p.check(c); err != nil {
		return err
	}
	if port < 0 || port >= p.deg {
		return badParam("node %d received a message on port %d; it has ports 0..%d", p.id, port, p.deg-1)
	}
	if p.wait == ptwFresh {
		return badParam("node %d received a message before Start", p.id)
	}
	ch := int32(port) + 1
	var msg ptMsg
	switch m.Kind {
	case ptWireUp:
		msg = ptMsg{kind: ptMsgInfo, t: m.Value, n: m.Round >> 32}
		origin := m.Round & (1<<32 - 1)
		if p.upPort == ch && p.nd.phase == 1 {
			p.crossed = true
			if p.origin > origin {
				// The crossing's root: absorb the message as S1.2 does when it finds
				// the parent's message queued.
				p.nd.s = 0
				p.nd.absorb(ch, msg)
				p.nd.parent, p.nd.pc = 0, ptPcP1
				p.upPort = 0
				if p.wait != ptwSend {
					p.wait = ptwRun
				}
			}
			return nil // the crossing's child ignores the root's message
		}
		switch p.wait {
		case ptwAny: // the first message of a wake-up
			p.origin = origin
		case ptwRun: // another message of the same time
			p.origin = min(p.origin, origin)
		}
	case ptWireDown:
		msg = ptMsg{kind: ptMsgInfo, t: m.Value, n: m.Round}
	case ptWireToken, ptWireToken3:
		if m.Tokens != 1 {
			return badParam("node %d: a token message with %d tokens on port %d", p.id, m.Tokens, port)
		}
		msg = ptMsg{kind: ptMsgToken}
		if m.Kind == ptWireToken3 {
			msg.kind = ptMsgToken3
		}
	case ptWireFinished:
		msg = ptMsg{kind: ptMsgFinished}
	default:
		return badParam("node %d: unknown message kind %d on port %d", p.id, m.Kind, port)
	}
	if !p.nd.in.deliver(ch, msg) {
		return ptNodeError(p.id, &p.nd, ptFailOverflow)
	}
	if p.wait == ptwAny || (p.wait == ptwPort && p.wport == ch) {
		p.wait = ptwRun
	}
	return nil
}

// Tick resumes the node if it is woken or done sending.
func (p *ptProg) Tick(c *node.Context) error {
	if err := p.check(c); err != nil {
		return err
	}
	if p.wait != ptwRun && p.wait != ptwSend {
		return nil
	}
	return p.run(c)
}

// Idle reports whether the node waits for a message (or is Finished).
func (p *ptProg) Idle() bool { return p.wait != ptwRun && p.wait != ptwSend }

// AppendState appends the node's whole state: the paper's variables, the program
// counter and the channel queues. O(deg) bytes.
func (p *ptProg) AppendState(b []byte) []byte {
	nd := &p.nd
	b = append(b, stateVersion, 'P')
	b = binary.AppendUvarint(b, uint64(p.id))
	b = binary.AppendUvarint(b, uint64(p.deg))
	b = append(b, p.wait)
	b = appendInts(b, int64(p.wport), int64(p.upPort))
	b = appendBools(b, p.crossed)
	b = appendInts(b, p.origin)
	b = appendInts(b, nd.own, nd.tv, nd.nv, int64(nd.r), int64(nd.s), int64(nd.parent), int64(nd.p), nd.avg,
		int64(nd.nBig), int64(nd.nSmall), int64(nd.cursor), int64(nd.i), nd.early)
	b = appendBools(b, nd.earlyFin)
	b = append(b, nd.pc, nd.phase, nd.ret, byte(nd.out.kind))
	b = appendInts(b, int64(nd.outPort), nd.out.t, nd.out.n)
	for k := 0; k < p.deg; k++ {
		b = appendInts(b, p.subT[k], p.subN[k])
		q := &p.q[k]
		b = append(b, q.first, q.runs)
		b = appendBools(b, q.ready)
		for j := uint8(0); j < q.runs; j++ {
			r := q.run[(q.first+j)%4]
			b = append(b, byte(r.kind))
			b = appendInts(b, r.count, r.t, r.n)
		}
	}
	b = appendInts(b, int64(nd.in.rhead), int64(nd.in.rlen))
	for j := int32(0); j < nd.in.rlen; j++ {
		b = appendInts(b, int64(p.ring[(nd.in.rhead+j)%int32(p.deg)]))
	}
	return b
}

// RestoreState replaces the state with one AppendState wrote for this node; on other
// bytes it returns an error and changes nothing.
func (p *ptProg) RestoreState(b []byte) error {
	r := &stateReader{wire.NewReader(b)}
	if r.Byte() != stateVersion || r.Byte() != 'P' {
		return p.badState(b, "not a state of this program")
	}
	if id, deg := r.Uvarint(), r.Uvarint(); !r.Failed() && (id != uint64(p.id) || deg != uint64(p.deg)) {
		return p.badState(b, fmt.Sprintf("the state of node %d of degree %d", id, deg))
	}
	deg := int64(p.deg)
	wait := r.Byte()
	wport, upPort := r.intIn(0, deg), r.intIn(0, deg)
	crossed := r.bool()
	origin := r.intIn(0, 1<<31-1)
	var nd ptNode
	nd.own, nd.tv, nd.nv = r.nonNeg(), r.Varint(), r.nonNeg()
	nd.r, nd.s = int32(r.intIn(0, deg)), int32(r.intIn(0, deg))
	nd.parent, nd.p = int32(r.intIn(0, deg)), int32(r.intIn(0, deg))
	nd.avg = r.nonNeg()
	nd.nBig, nd.nSmall = int32(r.intIn(0, deg)), int32(r.intIn(0, deg))
	nd.cursor, nd.i = int32(r.intIn(0, deg+1)), int32(r.intIn(0, deg))
	nd.early = r.Varint()
	nd.earlyFin = r.bool()
	nd.pc, nd.phase, nd.ret = r.Byte(), r.Byte(), r.Byte()
	nd.out.kind = ptKind(r.Byte())
	nd.outPort, nd.out.t, nd.out.n = int32(r.intIn(0, deg)), r.Varint(), r.Varint()
	if wait > ptwDone || nd.pc > ptPcDone || nd.ret > ptPcDone || nd.phase < 1 && wait != ptwFresh || nd.phase > 4 || nd.out.kind > ptMsgFinished {
		r.Fail()
	}
	subT, subN := make([]int64, p.deg), make([]int64, p.deg)
	q, ring := make([]ptQueue, p.deg), make([]int32, p.deg)
	for k := 0; k < p.deg && !r.Failed(); k++ {
		subT[k], subN[k] = r.Varint(), r.nonNeg()
		first, runs := r.Byte(), r.Byte()
		q[k].ready = r.bool()
		if first > 3 || runs > 4 {
			r.Fail()
			break
		}
		q[k].first, q[k].runs = first, runs
		for j := uint8(0); j < runs; j++ {
			kind := ptKind(r.Byte())
			count, t, n := r.Varint(), r.Varint(), r.Varint()
			if kind == ptMsgNone || kind > ptMsgFinished || count < 1 {
				r.Fail()
			}
			q[k].run[(first+j)%4] = ptRun{kind: kind, count: count, t: t, n: n}
		}
	}
	rhead, rlen := r.intIn(0, max(deg-1, 0)), r.intIn(0, deg)
	ready := 0
	for k := range q {
		if q[k].ready {
			ready++
		}
	}
	if int(rlen) != ready {
		r.Fail()
	}
	seen := make([]bool, p.deg)
	for j := int64(0); j < rlen && !r.Failed(); j++ {
		c := int32(r.intIn(1, deg))
		if r.Failed() || !q[c-1].ready || seen[c-1] {
			r.Fail()
			break
		}
		seen[c-1] = true
		ring[(rhead+j)%deg] = c
	}
	if !r.Failed() && r.Len() != 0 {
		r.Fail()
	}
	if r.Failed() {
		return p.badState(b, errBadState.Error())
	}
	nd.deg, nd.literal = int32(p.deg), p.literal
	nd.subT, nd.subN = subT, subN
	nd.in = ptInbox{q: q, ring: ring, rhead: int32(rhead), rlen: int32(rlen)}
	p.nd, p.subT, p.subN, p.q, p.ring = nd, subT, subN, q, ring
	p.wait, p.wport, p.upPort, p.crossed, p.origin = wait, int32(wport), int32(upPort), crossed, origin
	return nil
}

func (p *ptProg) badState(b []byte, why string) error {
	return badParam("node %d: RestoreState of %d bytes: %s", p.id, len(b), why)
}
