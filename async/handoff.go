package async

import (
	"encoding/binary"
	"fmt"
	"reflect"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/internal/errs"
)

// DatagramKind says what a Datagram carries.
type DatagramKind uint8

// The kinds of datagram.
const (
	// Data carries one program message (and its tokens) with the link's next sequence
	// number.
	Data DatagramKind = iota + 1
	// Ack acknowledges, cumulatively, every data datagram of the link up to Seq.
	Ack
)

// String names the kind.
func (k DatagramKind) String() string {
	switch k {
	case Data:
		return "Data"
	case Ack:
		return "Ack"
	}
	return fmt.Sprintf("DatagramKind(%d)", uint8(k))
}

// Datagram is the unit a Node hands to the network and takes from it. In a Ready, Port
// is the port it leaves on; given to Step, Port is the port it arrived on (the host
// translates: the receiver's port is the sender's position in the receiver's list).
// The network may lose, duplicate, reorder and delay datagrams; it must not alter them.
type Datagram struct {
	Port int
	Kind DatagramKind
	// Seq is the link's sequence number of a Data datagram (1, 2, ...), or the
	// receiver's delivered counter an Ack reports.
	Seq uint64
	// Msg is the program's message of a Data datagram (zero in an Ack).
	Msg tokendist.Message
}

// Ready is what a Node asks its host to do, in order: first persist State (when it is
// not nil) durably, replacing the node's previous state; then send Datagrams; then call
// Advance. The host must not send a datagram of a Ready before its State is persisted:
// the acknowledgements in it promise that deliveries are durable, and the data in it
// must be in a durable outgoing log. State and Datagrams are valid until Advance.
type Ready struct {
	// State is the node's whole state (program state, load, counters, the sequence
	// state of every link and the outgoing log of unacknowledged data), or nil when
	// it has not changed since the last Advance. RestoreNode rebuilds the node from it.
	State []byte
	// Datagrams are the datagrams to send once State is persisted.
	Datagrams []Datagram
}

// NodeConfig configures a Node. ID, Degree, Rounds and Seed fill the program's
// NodeContext; Load is the initial load of a new node (RestoreNode ignores it and takes
// the persisted load).
type NodeConfig struct {
	ID     int
	Degree int
	Load   int64
	Rounds int64
	Seed   uint64
	// RetransmitTicks is how many local ticks an unacknowledged data datagram waits
	// before the link's log is sent again; it doubles after every retransmission up to
	// 64 times the base and falls back when an ack makes progress. 0 means 4.
	RetransmitTicks int64
}

// DefaultRetransmitTicks is NodeConfig.RetransmitTicks's default.
const DefaultRetransmitTicks = 4

// NodeStats counts a node's handoff work since it was made or restored (they are not
// persisted).
type NodeStats struct {
	// Retransmissions counts data datagrams sent again after a timeout.
	Retransmissions int64
	// Duplicates counts data datagrams dropped because they were already delivered.
	Duplicates int64
	// OutOfOrder counts data datagrams dropped because an earlier one of the link is
	// missing (the sender's retransmission brings them again, in order).
	OutOfOrder int64
}

// link is one port's sequence state: the sender side (next, acked, log) and the
// receiver side (delivered).
type link struct {
	next      uint64 // sequence number of the next data datagram sent (from 1)
	acked     uint64 // highest cumulative ack received: log holds acked+1 .. next-1
	delivered uint64 // highest sequence number delivered in order to the program
	timer     int64  // local tick at which the retransmission timer started; -1: not started
	rto       int64  // current timeout in ticks
	ackDue    bool   // an ack is to be sent in the next Ready
	log       []tokendist.Message
}

// Node is the fault-tolerant token handoff of one node around its NodeProgram, a
// deterministic state machine in the style of etcd-io/raft's RawNode: the host feeds it
// datagrams (Step) and local timer ticks (Tick), drains Ready, persists and sends what
// it says, and calls Advance. Over each directed link the sender numbers its data
// datagrams, keeps every unacknowledged one in a persisted outgoing log and sends the
// log again on a timer; the receiver delivers in order exactly once (dropping
// duplicates and out-of-order datagrams), adds the tokens to the load, calls the
// program's Receive, and acknowledges cumulatively in the next Ready, that is only
// after the new state is persisted. The Node has no goroutines, clock or I/O, so a
// simulator and a networked runtime drive the same code; docs/handoff.md gives the
// protocol, its invariant and a proof sketch.
//
// A Node is not safe for concurrent use.
type Node struct {
	prog  tokendist.NodeProgram
	ctx   tokendist.NodeContext
	links []link
	rto   int64

	dirty   bool
	unacked int // Σ len(link.log)
	pending []Datagram
	state   []byte
	stats   NodeStats
	started bool

	scratch []byte

	// ledger counters for the simulator (not persisted): tokens and datagrams logged
	// and delivered since the last Advance.
	evLogged, evDelivered   int64
	evLoggedN, evDeliveredN int64
	brk                     broken
}

// broken selects a deliberately wrong handoff, for the tests that show the property
// tests catch it. The zero value is the correct protocol.
type broken uint8

const (
	// brokenNoDedup delivers a data datagram again when it arrives again.
	brokenNoDedup broken = iota + 1
	// brokenAckBeforePersist: the host sends a Ready's acks before it persists.
	brokenAckBeforePersist
	// brokenSendBeforePersist: the host sends a Ready's datagrams before it persists.
	brokenSendBeforePersist
)

// NewNode returns a new node around prog, which must be a fresh program; call Start
// before anything else. It returns an error for a negative degree or load. O(Degree).
func NewNode(prog tokendist.NodeProgram, c NodeConfig) (*Node, error) {
	n, err := newNode(prog, c)
	if err != nil {
		return nil, err
	}
	if c.Load < 0 {
		return nil, errs.BadParam("node %d: negative load %d", c.ID, c.Load)
	}
	n.ctx.Load = c.Load
	return n, nil
}

func newNode(prog tokendist.NodeProgram, c NodeConfig) (*Node, error) {
	if isNil(prog) {
		return nil, errs.BadParam("node %d: nil program", c.ID)
	}
	if c.Degree < 0 {
		return nil, errs.BadParam("node %d: negative degree %d", c.ID, c.Degree)
	}
	if c.RetransmitTicks < 0 {
		return nil, errs.BadParam("node %d: negative RetransmitTicks %d", c.ID, c.RetransmitTicks)
	}
	if c.Rounds < 0 {
		return nil, errs.BadParam("node %d: negative Rounds %d", c.ID, c.Rounds)
	}
	rto := c.RetransmitTicks
	if rto == 0 {
		rto = DefaultRetransmitTicks
	}
	n := &Node{prog: prog, rto: rto, links: make([]link, c.Degree)}
	n.ctx.ID, n.ctx.Degree, n.ctx.Rounds, n.ctx.Seed = c.ID, c.Degree, c.Rounds, c.Seed
	for i := range n.links {
		n.links[i] = link{next: 1, timer: -1, rto: rto}
	}
	return n, nil
}

func isNil(p tokendist.NodeProgram) bool {
	if p == nil {
		return true
	}
	v := reflect.ValueOf(p)
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return v.IsNil()
	}
	return false
}

// RestoreNode rebuilds a node from a State that a Node's Ready returned, around a fresh
// program prog of the same node (NodePrograms.Program): the program's state is restored
// with RestoreState and Start is not called again. c must have the ID and Degree the
// state was written with. Unacknowledged data is sent again at the first Tick. It
// returns an error wrapping ErrBadParameter, naming the node, for bytes a Node did not
// write. O(len(state)).
func RestoreNode(prog tokendist.NodeProgram, c NodeConfig, state []byte) (*Node, error) {
	n, err := newNode(prog, c)
	if err != nil {
		return nil, err
	}
	if err := n.decode(state); err != nil {
		return nil, err
	}
	n.started = true
	for i := range n.links {
		l := &n.links[i]
		n.unacked += len(l.log)
		if len(l.log) > 0 {
			l.timer = -2 // resend at the first tick
		}
	}
	return n, nil
}

// Context returns the program's NodeContext, owned by the node: a host reads it (Load,
// Now, Moved, Messages) and must change it only through SetLoad. O(1).
func (n *Node) Context() *tokendist.NodeContext { return &n.ctx }

// Program returns the node's program. O(1).
func (n *Node) Program() tokendist.NodeProgram { return n.prog }

// Stats returns the node's handoff counters. O(1).
func (n *Node) Stats() NodeStats { return n.stats }

// Start starts the program with the configured load. O(program's Start).
func (n *Node) Start() error {
	if n.started {
		return errs.BadParam("node %d: Start called twice", n.ctx.ID)
	}
	n.started = true
	n.dirty = true
	return n.call("Start", -1, func() error { return n.prog.Start(&n.ctx) })
}

// call runs a program method with a recover, then moves the program's outbox into the
// links' logs and the pending datagrams.
func (n *Node) call(what string, port int, f func() error) (err error) {
	n.ctx.Reset()
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("%sprogram of node %d panicked in %s: %v", errs.Prefix, n.ctx.ID, what, r)
			}
		}()
		err = f()
	}()
	if err != nil {
		if port >= 0 {
			return errs.Wrapf(err, "program of node %d: %s on port %d", n.ctx.ID, what, port)
		}
		return errs.Wrapf(err, "program of node %d: %s", n.ctx.ID, what)
	}
	out := n.ctx.Outbox()
	for _, e := range out {
		l := &n.links[e.Port]
		seq := l.next
		l.next++
		l.log = append(l.log, e.Msg)
		n.unacked++
		n.dirty = true
		n.evLogged += e.Msg.Tokens
		n.evLoggedN++
		n.pending = append(n.pending, Datagram{Port: e.Port, Kind: Data, Seq: seq, Msg: e.Msg})
	}
	if len(out) > 0 {
		n.dirty = true
	}
	n.ctx.Reset()
	return nil
}

// Step consumes a datagram that arrived on d.Port. A data datagram with the link's next
// sequence number is delivered: its tokens are added to the load and the program's
// Receive is called; an ack for it goes into the next Ready. A duplicate is dropped and
// acknowledged again; an out-of-order one is dropped. An ack frees the link's log up to
// its sequence number. It returns an error for a port out of range, an unknown kind,
// an ack of a sequence number never sent, or a program error. O(1) plus the program's
// Receive; an ack costs O(entries freed).
func (n *Node) Step(d Datagram) error {
	if d.Port < 0 || d.Port >= len(n.links) {
		return errs.BadParam("node %d: datagram on port %d; it has ports 0..%d", n.ctx.ID, d.Port, len(n.links)-1)
	}
	if !n.started {
		return errs.BadParam("node %d: Step before Start", n.ctx.ID)
	}
	l := &n.links[d.Port]
	switch d.Kind {
	case Data:
		switch {
		case d.Seq == l.delivered+1 || (n.brk == brokenNoDedup && d.Seq <= l.delivered):
			if d.Msg.Tokens < 0 {
				return errs.BadParam("node %d: data datagram %d on port %d carries %d tokens", n.ctx.ID, d.Seq, d.Port, d.Msg.Tokens)
			}
			if d.Seq > l.delivered {
				l.delivered = d.Seq
			}
			l.ackDue = true
			n.dirty = true
			n.ctx.Load += d.Msg.Tokens
			n.evDelivered += d.Msg.Tokens
			n.evDeliveredN++
			return n.call("Receive", d.Port, func() error { return n.prog.Receive(&n.ctx, d.Port, d.Msg) })
		case d.Seq <= l.delivered:
			n.stats.Duplicates++
			l.ackDue = true
		default:
			n.stats.OutOfOrder++
			l.ackDue = true
		}
		return nil
	case Ack:
		if d.Seq >= l.next {
			return errs.BadParam("node %d: ack %d on port %d for a sequence number never sent (next is %d)", n.ctx.ID, d.Seq, d.Port, l.next)
		}
		if d.Seq <= l.acked {
			return nil
		}
		k := int(d.Seq - l.acked)
		clear(l.log[:k])
		l.log = append(l.log[:0], l.log[k:]...)
		n.unacked -= k
		l.acked = d.Seq
		l.timer = -1
		l.rto = n.rto
		n.dirty = true
		return nil
	}
	return errs.BadParam("node %d: datagram of unknown kind %d on port %d", n.ctx.ID, d.Kind, d.Port)
}

// Tick is one tick of the node's local timer at local time now (ticks since Start, not
// decreasing). It sends the log of every link whose retransmission timer expired, then,
// unless the program is idle, sets NodeContext.Now and calls the program's Tick.
// O(Degree) plus the program's Tick.
func (n *Node) Tick(now int64) error {
	if !n.started {
		return errs.BadParam("node %d: Tick before Start", n.ctx.ID)
	}
	if n.unacked > 0 {
		for p := range n.links {
			l := &n.links[p]
			if len(l.log) == 0 {
				continue
			}
			switch {
			case l.timer == -2 || (l.timer >= 0 && now-l.timer >= l.rto):
				for i, m := range l.log {
					n.pending = append(n.pending, Datagram{Port: p, Kind: Data, Seq: l.acked + 1 + uint64(i), Msg: m})
				}
				n.stats.Retransmissions += int64(len(l.log))
				if l.timer != -2 && l.rto < 64*n.rto {
					l.rto *= 2
				}
				l.timer = now
			case l.timer < 0:
				l.timer = now
			}
		}
	}
	if n.prog.Idle() {
		return nil
	}
	n.ctx.Now = now
	n.dirty = true
	return n.call("Tick", -1, func() error { return n.prog.Tick(&n.ctx) })
}

// SetLoad sets the node's load (a host's workload), to be persisted in the next Ready.
// It returns an error for a negative load. O(1).
func (n *Node) SetLoad(load int64) error {
	if load < 0 {
		return errs.BadParam("node %d: negative load %d", n.ctx.ID, load)
	}
	if load != n.ctx.Load {
		n.ctx.Load = load
		n.dirty = true
	}
	return nil
}

// ProgramIdle reports the program's Idle. O(program's Idle).
func (n *Node) ProgramIdle() bool { return n.prog.Idle() }

// Idle reports whether the node needs no ticks: its program is idle and every data
// datagram it sent is acknowledged. A host stops ticking an idle node and resumes when
// a datagram arrives. O(program's Idle).
func (n *Node) Idle() bool { return n.unacked == 0 && n.prog.Idle() }

// Unacked returns the number of data datagrams in the node's outgoing logs. O(1).
func (n *Node) Unacked() int { return n.unacked }

// HasReady reports whether Ready has anything to persist or send. O(Degree).
func (n *Node) HasReady() bool {
	if n.dirty || len(n.pending) > 0 {
		return true
	}
	for i := range n.links {
		if n.links[i].ackDue {
			return true
		}
	}
	return false
}

// Ready returns what to persist and send now (see Ready); the host persists, sends and
// then calls Advance before calling any other method. Acks are added here, one per link
// that received data, each reporting the link's delivered counter, which is in State
// (or was persisted before). The slices are reused after Advance. O(Degree + state).
func (n *Node) Ready() Ready {
	var rd Ready
	if n.dirty {
		n.state = n.encode(n.state[:0])
		rd.State = n.state
	}
	for p := range n.links {
		l := &n.links[p]
		if l.ackDue {
			l.ackDue = false
			n.pending = append(n.pending, Datagram{Port: p, Kind: Ack, Seq: l.delivered})
		}
	}
	rd.Datagrams = n.pending
	return rd
}

// Advance tells the node that the last Ready was persisted and sent. O(1).
func (n *Node) Advance() {
	n.dirty = false
	clear(n.pending)
	n.pending = n.pending[:0]
	n.evLogged, n.evDelivered, n.evLoggedN, n.evDeliveredN = 0, 0, 0, 0
}

// The persisted encoding: a header, the load (8 bytes, little-endian, at a fixed
// offset), then varints.
const (
	stateMagic   = 0xA5
	stateVersion = 1
	loadOffset   = 2
)

// StateLoad returns the load recorded in a node's persisted State, in O(1). It returns
// an error for bytes a Node did not write.
func StateLoad(state []byte) (int64, error) {
	if len(state) < loadOffset+8 || state[0] != stateMagic || state[1] != stateVersion {
		return 0, errs.BadParam("persisted node state %s has no valid header", errs.Quote(state))
	}
	return int64(binary.LittleEndian.Uint64(state[loadOffset:])), nil
}

func (n *Node) encode(b []byte) []byte {
	b = append(b, stateMagic, stateVersion)
	b = binary.LittleEndian.AppendUint64(b, uint64(n.ctx.Load))
	b = binary.AppendVarint(b, n.ctx.Now)
	b = binary.AppendVarint(b, n.ctx.Moved)
	b = binary.AppendVarint(b, n.ctx.Messages)
	b = binary.AppendUvarint(b, uint64(len(n.links)))
	for i := range n.links {
		l := &n.links[i]
		b = binary.AppendUvarint(b, l.next)
		b = binary.AppendUvarint(b, l.acked)
		b = binary.AppendUvarint(b, l.delivered)
		for _, m := range l.log {
			b = appendMessage(b, m)
		}
	}
	// The program's state last, length-prefixed.
	n.scratch = n.prog.AppendState(n.scratch[:0])
	b = binary.AppendUvarint(b, uint64(len(n.scratch)))
	return append(b, n.scratch...)
}

func appendMessage(b []byte, m tokendist.Message) []byte {
	flags := byte(0)
	if m.Counted {
		flags = 1
	}
	b = append(b, m.Kind, flags)
	b = binary.AppendVarint(b, m.Round)
	b = binary.AppendVarint(b, m.Value)
	return binary.AppendVarint(b, m.Tokens)
}

type decoder struct {
	b   []byte
	err bool
}

func (d *decoder) uvarint() uint64 {
	v, k := binary.Uvarint(d.b)
	if k <= 0 {
		d.err = true
		d.b = nil
		return 0
	}
	d.b = d.b[k:]
	return v
}

func (d *decoder) varint() int64 {
	v, k := binary.Varint(d.b)
	if k <= 0 {
		d.err = true
		d.b = nil
		return 0
	}
	d.b = d.b[k:]
	return v
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.err = true
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (n *Node) decode(state []byte) error {
	bad := func(what string) error {
		return errs.BadParam("node %d: persisted state %s: %s", n.ctx.ID, errs.Quote(state), what)
	}
	load, err := StateLoad(state)
	if err != nil || load < 0 {
		return bad("bad header or load")
	}
	d := decoder{b: state[loadOffset+8:]}
	n.ctx.Load = load
	n.ctx.Now = d.varint()
	n.ctx.Moved = d.varint()
	n.ctx.Messages = d.varint()
	if deg := d.uvarint(); d.err || deg != uint64(len(n.links)) {
		return bad(fmt.Sprintf("degree %d, want %d", deg, len(n.links)))
	}
	for i := range n.links {
		l := &n.links[i]
		l.next, l.acked, l.delivered = d.uvarint(), d.uvarint(), d.uvarint()
		if d.err || l.next == 0 || l.acked >= l.next || l.next-l.acked-1 > uint64(len(d.b)) {
			return bad(fmt.Sprintf("link %d sequence state", i))
		}
		k := int(l.next - l.acked - 1)
		l.log = make([]tokendist.Message, k)
		for j := range l.log {
			m := &l.log[j]
			m.Kind = d.byte()
			f := d.byte()
			m.Counted = f == 1
			m.Round, m.Value, m.Tokens = d.varint(), d.varint(), d.varint()
			if d.err || f > 1 || m.Tokens < 0 {
				return bad(fmt.Sprintf("link %d log entry %d", i, j))
			}
		}
	}
	size := d.uvarint()
	if d.err || size != uint64(len(d.b)) {
		return bad("program state length")
	}
	if err := n.restoreProgram(d.b); err != nil {
		return err
	}
	return nil
}

func (n *Node) restoreProgram(b []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%sprogram of node %d panicked in RestoreState: %v", errs.Prefix, n.ctx.ID, r)
		}
	}()
	return errs.Wrapf(n.prog.RestoreState(b), "program of node %d: RestoreState", n.ctx.ID)
}
