package async

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"slices"

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
	// Items are the IDs of the tokens a Data datagram of a node in item mode carries
	// (len(Items) == Msg.Tokens; nil otherwise). A retransmission carries the same IDs.
	Items []uint64
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
	// ItemMode makes every token an item with a 64-bit ID chosen by the user (a job,
	// a shard, a session): the node holds a list of IDs, its load is their number,
	// each Data datagram carries the IDs of the tokens it moves, and the host's work
	// arrives and finishes through AddItems and CompleteItems instead of SetLoad. Items
	// are the initial items of a new node (Load is then ignored); RestoreNode takes
	// both from the persisted state. A count-only node (the default, which the
	// simulator uses) pays nothing for the mode.
	ItemMode bool
	Items    []uint64
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
	logItems  [][]uint64 // item mode: the IDs of log[i]'s tokens
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

	itemMode bool
	items    []uint64 // item mode: the IDs held; len(items) == ctx.Load between calls

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
	if c.ItemMode {
		n.itemMode = true
		n.items = slices.Clone(c.Items)
		n.ctx.Load = int64(len(n.items))
	}
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
	if n.itemMode != c.ItemMode {
		return nil, errs.BadParam("node %d: persisted state has item mode %t, the config %t", c.ID, n.itemMode, c.ItemMode)
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
		d := Datagram{Port: e.Port, Kind: Data, Seq: seq, Msg: e.Msg}
		if n.itemMode {
			// The tokens leave from the end of the list; Send checked that the
			// node holds them, and the list holds as many IDs as tokens.
			k := len(n.items) - int(e.Msg.Tokens)
			if k < 0 {
				n.ctx.Reset()
				return errs.BadParam("node %d sends %d tokens holding %d items", n.ctx.ID, e.Msg.Tokens, len(n.items))
			}
			d.Items = slices.Clone(n.items[k:])
			n.items = n.items[:k]
			l.logItems = append(l.logItems, d.Items)
		}
		n.pending = append(n.pending, d)
	}
	if len(out) > 0 {
		n.dirty = true
	}
	n.ctx.Reset()
	if n.itemMode && int64(len(n.items)) != n.ctx.Load {
		return errs.BadParam("node %d: program of %s left load %d with %d items (the load changes only through Send)", n.ctx.ID, what, n.ctx.Load, len(n.items))
	}
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
			if n.itemMode {
				if int64(len(d.Items)) != d.Msg.Tokens {
					return errs.BadParam("node %d: data datagram %d on port %d carries %d tokens and %d items", n.ctx.ID, d.Seq, d.Port, d.Msg.Tokens, len(d.Items))
				}
				n.items = append(n.items, d.Items...)
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
		if n.itemMode {
			clear(l.logItems[:k])
			l.logItems = append(l.logItems[:0], l.logItems[k:]...)
		}
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
					d := Datagram{Port: p, Kind: Data, Seq: l.acked + 1 + uint64(i), Msg: m}
					if n.itemMode {
						d.Items = l.logItems[i]
					}
					n.pending = append(n.pending, d)
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
// It returns an error for a negative load, and for a node in item mode (use AddItems
// and CompleteItems). O(1).
func (n *Node) SetLoad(load int64) error {
	if n.itemMode {
		return errs.BadParam("node %d: SetLoad(%d) on a node in item mode", n.ctx.ID, load)
	}
	if load < 0 {
		return errs.BadParam("node %d: negative load %d", n.ctx.ID, load)
	}
	if load != n.ctx.Load {
		n.ctx.Load = load
		n.dirty = true
	}
	return nil
}

// ItemMode reports whether the node is in item mode (NodeConfig.ItemMode). O(1).
func (n *Node) ItemMode() bool { return n.itemMode }

// Items returns the IDs the node holds (item mode; nil otherwise), in the order they
// arrived. The slice is the node's: read it before the next call. O(1).
func (n *Node) Items() []uint64 { return n.items }

// AddItems adds work: the items ids arrive at the node (item mode), raising its load
// by len(ids), to be persisted in the next Ready. The caller chooses the IDs and keeps
// them unique across the fleet; the node does not check. It returns an error for a
// node not in item mode. O(len(ids)).
func (n *Node) AddItems(ids []uint64) error {
	if !n.itemMode {
		return errs.BadParam("node %d: AddItems on a node not in item mode", n.ctx.ID)
	}
	if len(ids) == 0 {
		return nil
	}
	n.items = append(n.items, ids...)
	n.ctx.Load += int64(len(ids))
	n.dirty = true
	return nil
}

// CompleteItems finishes work: it removes min(k, load) items, the oldest first, and
// returns their IDs (a new slice), to be persisted in the next Ready; the host must
// not report them finished before that Ready's State is persisted. It returns an error
// for a negative k or a node not in item mode. O(load).
func (n *Node) CompleteItems(k int) ([]uint64, error) {
	if !n.itemMode {
		return nil, errs.BadParam("node %d: CompleteItems on a node not in item mode", n.ctx.ID)
	}
	if k < 0 {
		return nil, errs.BadParam("node %d: CompleteItems(%d): negative count", n.ctx.ID, k)
	}
	k = min(k, len(n.items))
	if k == 0 {
		return nil, nil
	}
	done := slices.Clone(n.items[:k])
	n.items = append(n.items[:0], n.items[k:]...)
	n.ctx.Load -= int64(k)
	n.dirty = true
	return done, nil
}

// InFlight returns the number of tokens in the node's outgoing logs (sent, not yet
// acknowledged). O(unacknowledged datagrams).
func (n *Node) InFlight() int64 {
	var t int64
	for i := range n.links {
		for _, m := range n.links[i].log {
			t += m.Tokens
		}
	}
	return t
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

// The persisted encoding: a header (magic, version), the load (8 bytes,
// little-endian, at a fixed offset), then varints. Version 1 is a count-only node,
// version 2 a node in item mode: each log entry is followed by its items' IDs, and the
// held IDs follow the links.
const (
	stateMagic       = 0xA5
	stateVersion     = 1
	stateVersionItem = 2
	loadOffset       = 2
)

// StateLoad returns the load recorded in a node's persisted State, in O(1). It returns
// an error for bytes a Node did not write.
func StateLoad(state []byte) (int64, error) {
	if len(state) < loadOffset+8 || state[0] != stateMagic || (state[1] != stateVersion && state[1] != stateVersionItem) {
		return 0, errs.BadParam("persisted node state %s has no valid header", errs.Quote(state))
	}
	return int64(binary.LittleEndian.Uint64(state[loadOffset:])), nil
}

func (n *Node) encode(b []byte) []byte {
	v := byte(stateVersion)
	if n.itemMode {
		v = stateVersionItem
	}
	b = append(b, stateMagic, v)
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
		for j, m := range l.log {
			b, _ = m.AppendBinary(b)
			if n.itemMode {
				for _, id := range l.logItems[j] {
					b = binary.AppendUvarint(b, id)
				}
			}
		}
	}
	if n.itemMode {
		for _, id := range n.items {
			b = binary.AppendUvarint(b, id)
		}
	}
	// The program's state last, length-prefixed.
	n.scratch = n.prog.AppendState(n.scratch[:0])
	b = binary.AppendUvarint(b, uint64(len(n.scratch)))
	return append(b, n.scratch...)
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

// ids reads k uvarint IDs (at least one byte each, so k is checked against the bytes
// left before anything is allocated).
func (d *decoder) ids(k int64) []uint64 {
	if d.err || k < 0 || k > int64(len(d.b)) {
		d.err = true
		return nil
	}
	out := make([]uint64, k)
	for i := range out {
		out[i] = d.uvarint()
	}
	return out
}

// PersistedState is what a node's persisted State records, as ReadState decodes it,
// for a host's audit of a stopped fleet: the persisted states of all nodes form a
// consistent cut, in which a token (an item) is held by a node, or in a sender's log
// with a sequence number above the receiver's Delivered (in flight), or in a log at or
// below it (already delivered: the receiver holds it; the ack has not arrived).
type PersistedState struct {
	// Load, Now, Moved and Messages are the node's NodeContext fields.
	Load, Now, Moved, Messages int64
	// ItemMode is the node's item mode; Items are the IDs it holds (nil without).
	ItemMode bool
	Items    []uint64
	// Links are the sequence state of every port.
	Links []PersistedLink
}

// PersistedLink is one port's persisted sequence state.
type PersistedLink struct {
	// Next is the sequence number of the next data datagram the node sends on the
	// port, Acked the highest the neighbour acknowledged, Delivered the highest the
	// node delivered from the neighbour.
	Next, Acked, Delivered uint64
	// Log holds the unacknowledged data datagrams, sequence numbers Acked+1 ..
	// Next-1, with their items in item mode.
	Log []Datagram
}

// ReadState decodes a node's persisted State (the program's state is not decoded). It
// returns an error wrapping ErrBadParameter for bytes a Node did not write; it never
// panics. O(len(state)).
func ReadState(state []byte) (PersistedState, error) {
	ps, _, err := parseState(state)
	if err != "" {
		return PersistedState{}, errs.BadParam("persisted state %s: %s", errs.Quote(state), err)
	}
	return ps, nil
}

// parseState decodes state, returning the program's state bytes, or a description of
// the first defect.
func parseState(state []byte) (ps PersistedState, prog []byte, bad string) {
	load, err := StateLoad(state)
	if err != nil || load < 0 {
		return ps, nil, "bad header or load"
	}
	ps.ItemMode = state[1] == stateVersionItem
	d := decoder{b: state[loadOffset+8:]}
	ps.Load = load
	ps.Now = d.varint()
	ps.Moved = d.varint()
	ps.Messages = d.varint()
	deg := d.uvarint()
	if d.err || deg > uint64(len(d.b))/3 {
		return ps, nil, fmt.Sprintf("degree %d", deg)
	}
	ps.Links = make([]PersistedLink, deg)
	for i := range ps.Links {
		l := &ps.Links[i]
		l.Next, l.Acked, l.Delivered = d.uvarint(), d.uvarint(), d.uvarint()
		if d.err || l.Next == 0 || l.Acked >= l.Next || l.Next-l.Acked-1 > uint64(len(d.b)) {
			return ps, nil, fmt.Sprintf("link %d sequence state", i)
		}
		k := int(l.Next - l.Acked - 1)
		l.Log = make([]Datagram, k)
		for j := range l.Log {
			g := &l.Log[j]
			g.Port, g.Kind, g.Seq = i, Data, l.Acked+1+uint64(j)
			m, used, err := tokendist.DecodeMessage(d.b)
			if err != nil {
				return ps, nil, fmt.Sprintf("link %d log entry %d", i, j)
			}
			g.Msg, d.b = m, d.b[used:]
			if ps.ItemMode {
				if g.Items = d.ids(m.Tokens); d.err {
					return ps, nil, fmt.Sprintf("link %d log entry %d items", i, j)
				}
			}
		}
	}
	if ps.ItemMode {
		if ps.Items = d.ids(load); d.err {
			return ps, nil, "held items"
		}
	}
	size := d.uvarint()
	if d.err || size != uint64(len(d.b)) {
		return ps, nil, "program state length"
	}
	return ps, d.b, ""
}

func (n *Node) decode(state []byte) error {
	ps, prog, bad := parseState(state)
	if bad == "" && len(ps.Links) != len(n.links) {
		bad = fmt.Sprintf("degree %d, want %d", len(ps.Links), len(n.links))
	}
	if bad != "" {
		return errs.BadParam("node %d: persisted state %s: %s", n.ctx.ID, errs.Quote(state), bad)
	}
	n.ctx.Load, n.ctx.Now, n.ctx.Moved, n.ctx.Messages = ps.Load, ps.Now, ps.Moved, ps.Messages
	n.itemMode, n.items = ps.ItemMode, ps.Items
	for i := range n.links {
		l, p := &n.links[i], &ps.Links[i]
		l.next, l.acked, l.delivered = p.Next, p.Acked, p.Delivered
		l.log = make([]tokendist.Message, len(p.Log))
		if n.itemMode {
			l.logItems = make([][]uint64, len(p.Log))
		}
		for j := range p.Log {
			l.log[j] = p.Log[j].Msg
			if n.itemMode {
				l.logItems[j] = p.Log[j].Items
			}
		}
	}
	return n.restoreProgram(prog)
}

func (n *Node) restoreProgram(b []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%sprogram of node %d panicked in RestoreState: %v", errs.Prefix, n.ctx.ID, r)
		}
	}()
	return errs.Wrapf(n.prog.RestoreState(b), "program of node %d: RestoreState", n.ctx.ID)
}
