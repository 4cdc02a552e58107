package handoff

import (
	"fmt"
	"slices"

	"github.com/tokendist/tokendist/node"

	"github.com/tokendist/tokendist/internal/errs"
	"github.com/tokendist/tokendist/internal/nilcheck"
)

// DatagramKind says what a Datagram carries.
type DatagramKind uint8

// The kinds of datagram.
const (
	// DatagramData carries one program message (and its tokens) with the link's next
	// sequence number.
	DatagramData DatagramKind = iota + 1
	// DatagramAck acknowledges, cumulatively, every data datagram of the link up to Seq.
	DatagramAck
)

// String names the kind ("Data", "Ack").
func (k DatagramKind) String() string {
	switch k {
	case DatagramData:
		return "Data"
	case DatagramAck:
		return "Ack"
	}
	return fmt.Sprintf("DatagramKind(%d)", uint8(k))
}

// Datagram is the unit a Machine hands to the network and takes from it. In a Ready,
// Port is the port it leaves on; given to Step, Port is the port it arrived on (the
// host translates: the receiver's port is the sender's position in the receiver's
// list). The network may lose, duplicate, reorder and delay datagrams; it must not
// alter them.
type Datagram struct {
	Port int
	Kind DatagramKind
	// Seq is the link's sequence number of a data datagram (1, 2, ...), or the
	// receiver's delivered counter an ack reports.
	Seq uint64
	// Msg is the program's message of a data datagram (zero in an ack).
	Msg node.Message
	// Items are the IDs of the tokens a data datagram of an ItemMachine carries
	// (len(Items) == Msg.Tokens; nil otherwise). A retransmission carries the same IDs.
	Items []uint64
}

// Ready is what a Machine asks its host to do, in order: first persist State (when it
// is not nil) durably, replacing the machine's previous state; then send Datagrams;
// then call Advance. The host must not send a datagram of a Ready before its State is
// persisted: the acknowledgements in it promise that deliveries are durable, and the
// data in it must be in a durable outgoing log. State and Datagrams are valid until
// Advance.
type Ready struct {
	// State is the machine's whole state (program state, load, counters, the
	// sequence state of every link and the outgoing log of unacknowledged data), or
	// nil when it has not changed since the last Advance. RestoreCountMachine (or
	// RestoreItemMachine) rebuilds the machine from it; DecodeState reads it.
	State []byte
	// Datagrams are the datagrams to send once State is persisted.
	Datagrams []Datagram
}

// Config configures a machine. ID, Degree, Rounds and Seed fill the program's
// node.Context. The zero value of every other field means its default.
type Config struct {
	ID     int
	Degree int
	Rounds int64
	Seed   uint64
	// RetransmitTicks is how many local ticks an unacknowledged data datagram waits
	// before the link's log is sent again; it doubles after every retransmission up to
	// 64 times the base and falls back when an ack makes progress. 0 means
	// DefaultRetransmitTicks.
	RetransmitTicks int64
	// Scratch, when not nil, holds the machine's per-Ready buffers, shared with every
	// machine given the same Scratch (see Scratch); nil gives the machine its own.
	Scratch *Scratch
}

// DefaultRetransmitTicks is Config.RetransmitTicks's default.
const DefaultRetransmitTicks = 4

// Stats counts a machine's handoff work since it was made or restored (they are not
// persisted). A host that keeps a ledger of tokens in flight reads the differences of
// Logged, TokensLogged, Delivered and TokensDelivered across a Ready.
type Stats struct {
	// Retransmissions counts data datagrams sent again after a timeout.
	Retransmissions int64
	// Duplicates counts data datagrams dropped because they were already delivered.
	Duplicates int64
	// OutOfOrder counts data datagrams dropped because an earlier one of the link is
	// missing (the sender's retransmission brings them again, in order).
	OutOfOrder int64
	// Delivered counts data datagrams delivered to the program (each once), and
	// TokensDelivered their tokens.
	Delivered, TokensDelivered int64
	// Logged counts data datagrams the program sent (each entered an outgoing log
	// once), and TokensLogged their tokens.
	Logged, TokensLogged int64
}

// Sequence is one port's sequence state.
type Sequence struct {
	// Next is the sequence number of the next data datagram the machine sends on the
	// port, Acked the highest the neighbour acknowledged (the outgoing log holds
	// Acked+1 .. Next-1), Delivered the highest the machine delivered from the
	// neighbour.
	Next, Acked, Delivered uint64
}

// Scratch is a set of buffers a machine fills between a call and its Advance: the
// datagrams of the next Ready and the encoding of its State. Machines that share a
// Scratch (Config.Scratch) keep one set instead of one each, which saves memory when
// one goroutine drives many machines, as the simulator of package async does. The rule:
// once a machine sharing it has been called, the host takes its Ready and calls its
// Advance (or discards the machine) before it calls another machine sharing the
// Scratch; a machine that finds the Scratch last used by another one starts from empty
// buffers. The zero value is ready to use; a Scratch is not safe for concurrent use.
type Scratch struct {
	owner   *Machine
	pending []Datagram
	state   []byte
	prog    []byte
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
	log       []node.Message
	logItems  [][]uint64 // item mode: the IDs of log[i]'s tokens
}

// Machine is the fault-tolerant token handoff of one node around its node.Program, a
// deterministic state machine in the style of etcd-io/raft's RawNode: the host feeds it
// datagrams (Step) and local timer ticks (Tick), drains Ready, persists and sends what
// it says, and calls Advance. Over each directed link the sender numbers its data
// datagrams, keeps every unacknowledged one in a persisted outgoing log and sends the
// log again on a timer; the receiver delivers in order exactly once (dropping
// duplicates and out-of-order datagrams), adds the tokens to the load, calls the
// program's Receive, and acknowledges cumulatively in the next Ready, that is only
// after the new state is persisted. A Machine has no goroutines, clock or I/O, so a
// simulator and a networked runtime drive the same code; docs/handoff.md gives the
// protocol, its invariant and a proof sketch.
//
// A Machine is made as a CountMachine (NewCountMachine, RestoreCountMachine), whose
// tokens are counts, or as an ItemMachine (NewItemMachine, RestoreItemMachine), whose
// tokens are items with IDs; both have the methods below (a zero Machine, made by
// neither, returns errors and has nothing to do). A Machine is not safe for concurrent
// use.
type Machine struct {
	prog  node.Program
	ctx   node.Context
	links []link
	rto   int64

	dirty   bool
	unacked int // Σ len(link.log)
	buf     *Scratch
	stats   Stats
	started bool

	// idle is the program's Idle, evaluated under recover right after each call of
	// Start, Receive, Tick and RestoreState (the only calls that change its state).
	idle bool

	itemMode bool
	items    []uint64 // item mode: the IDs held; len(items) == ctx.Load between calls
}

// CountMachine is a Machine whose tokens are counts: the host's work changes the load
// through SetLoad. The simulator of package async runs count machines.
type CountMachine struct{ Machine }

// ItemMachine is a Machine whose tokens are items with 64-bit IDs chosen by the user
// (a job, a shard, a session): it holds a list of IDs, its load is their number, each
// data datagram carries the IDs of the tokens it moves, and the host's work arrives and
// finishes through AddItems and CompleteItems. Every accepted ID is then exactly once
// held, in flight or completed.
type ItemMachine struct{ Machine }

// NewCountMachine returns a new count machine with the given load around prog, which must
// be a fresh program; call Start before anything else. It returns an error for a nil
// program or a negative degree, load, Rounds or RetransmitTicks. O(Degree).
func NewCountMachine(prog node.Program, c Config, load int64) (*CountMachine, error) {
	m := &CountMachine{}
	if err := m.init(prog, c); err != nil {
		return nil, err
	}
	if load < 0 {
		return nil, errs.BadParam("node %d: negative load %d", c.ID, load)
	}
	m.ctx.Load = load
	return m, nil
}

// NewItemMachine returns a new item machine holding items (the machine keeps a copy) around
// prog, which must be a fresh program; call Start before anything else. It returns an
// error for a nil program or a negative degree, Rounds or RetransmitTicks.
// O(Degree + len(items)).
func NewItemMachine(prog node.Program, c Config, items []uint64) (*ItemMachine, error) {
	m := &ItemMachine{}
	if err := m.init(prog, c); err != nil {
		return nil, err
	}
	m.itemMode = true
	m.items = slices.Clone(items)
	m.ctx.Load = int64(len(m.items))
	return m, nil
}

func (n *Machine) init(prog node.Program, c Config) error {
	if nilcheck.IsNil(prog) {
		return errs.BadParam("node %d: nil program", c.ID)
	}
	if c.Degree < 0 {
		return errs.BadParam("node %d: negative degree %d", c.ID, c.Degree)
	}
	if c.RetransmitTicks < 0 {
		return errs.BadParam("node %d: negative RetransmitTicks %d", c.ID, c.RetransmitTicks)
	}
	if c.Rounds < 0 {
		return errs.BadParam("node %d: negative Rounds %d", c.ID, c.Rounds)
	}
	rto := c.RetransmitTicks
	if rto == 0 {
		rto = DefaultRetransmitTicks
	}
	n.prog, n.rto, n.links = prog, rto, make([]link, c.Degree)
	n.buf = c.Scratch
	if n.buf == nil {
		n.buf = &Scratch{owner: n}
	}
	n.ctx.ID, n.ctx.Degree, n.ctx.Rounds, n.ctx.Seed = c.ID, c.Degree, c.Rounds, c.Seed
	for i := range n.links {
		n.links[i] = link{next: 1, timer: -1, rto: rto}
	}
	return nil
}

// RestoreCountMachine rebuilds a count machine from a State that a CountMachine's Ready
// returned, around a fresh program prog of the same node (NodePrograms.Program): the
// program's state is restored with RestoreState and Start is not called again. c must
// have the ID and Degree the state was written with. Unacknowledged data is sent again
// at the first Tick. It returns an error wrapping ErrBadParameter, naming the node, for
// bytes a Machine did not write and for the state of an ItemMachine. O(len(state)).
func RestoreCountMachine(prog node.Program, c Config, state []byte) (*CountMachine, error) {
	m := &CountMachine{}
	if err := m.restore(prog, c, state, false); err != nil {
		return nil, err
	}
	return m, nil
}

// RestoreItemMachine is RestoreCountMachine for an ItemMachine: it returns an error for
// the state of a CountMachine. O(len(state)).
func RestoreItemMachine(prog node.Program, c Config, state []byte) (*ItemMachine, error) {
	m := &ItemMachine{}
	if err := m.restore(prog, c, state, true); err != nil {
		return nil, err
	}
	return m, nil
}

func (n *Machine) restore(prog node.Program, c Config, state []byte, itemMode bool) error {
	if err := n.init(prog, c); err != nil {
		return err
	}
	if len(state) >= 2 && state[0] == stateMagic && (state[1] == stateVersionItem) != itemMode {
		mode := map[bool]string{false: "a CountMachine", true: "an ItemMachine"}
		return errs.BadParam("node %d: persisted state of %s restored as %s", c.ID, mode[!itemMode], mode[itemMode])
	}
	if err := n.decode(state); err != nil {
		return err
	}
	n.started = true
	for i := range n.links {
		l := &n.links[i]
		n.unacked += len(l.log)
		if len(l.log) > 0 {
			l.timer = -2 // resend at the first tick
		}
	}
	return nil
}

// scratch returns the machine's buffers, emptied when another machine used them last.
func (n *Machine) scratch() *Scratch {
	if n.buf == nil { // the zero Machine
		n.buf = &Scratch{owner: n}
	}
	b := n.buf
	if b.owner != n {
		clear(b.pending)
		b.pending, b.owner = b.pending[:0], n
	}
	return b
}

// NodeContext returns the program's node.Context, owned by the machine: a host reads it
// (Load, Now, Moved, Messages) and changes the load only through SetLoad (a
// CountMachine) or AddItems and CompleteItems (an ItemMachine). O(1).
func (n *Machine) NodeContext() *node.Context { return &n.ctx }

// Program returns the machine's program. A host calls none of its methods: the machine
// calls them, each under a recover (ProgramIdle gives the program's idleness). O(1).
func (n *Machine) Program() node.Program { return n.prog }

// ProgramIdle reports the program's idleness (its Idle) as of its last call: the
// machine calls Idle, under a recover, right after each call of Start, Receive, Tick and
// RestoreState, and caches the answer (Idle is the machine's: the program's and the
// logs'). False before Start. O(1).
func (n *Machine) ProgramIdle() bool { return n.idle }

// Stats returns the machine's handoff counters. O(1).
func (n *Machine) Stats() Stats { return n.stats }

// Start starts the program with the initial load. It returns an error when called
// twice, on a restored machine, or for the program's error. O(program's Start).
func (n *Machine) Start() error {
	if n.prog == nil {
		return errs.BadParam("Start on a Machine not made by NewCountMachine or NewItemMachine")
	}
	if n.started {
		return errs.BadParam("node %d: Start called twice", n.ctx.ID)
	}
	n.started = true
	n.dirty = true
	return n.call("Start", -1, func() error { return n.prog.Start(&n.ctx) })
}

// call runs a program method and then its Idle with a recover, then moves the
// program's outbox into the links' logs and the pending datagrams.
func (n *Machine) call(what string, port int, f func() error) (err error) {
	n.ctx.Reset()
	method := what
	var panicked error
	func() {
		defer func() {
			if r := recover(); r != nil {
				if port >= 0 && method == what {
					method = fmt.Sprintf("%s on port %d", what, port)
				}
				panicked = fmt.Errorf("%sprogram of node %d panicked in %s: %v", errs.Prefix, n.ctx.ID, method, r)
			}
		}()
		if err = f(); err == nil {
			method = "Idle"
			n.idle = n.prog.Idle()
		}
	}()
	if panicked != nil {
		return panicked
	}
	if err != nil {
		if port >= 0 {
			return errs.Wrapf(err, "program of node %d: %s on port %d", n.ctx.ID, what, port)
		}
		return errs.Wrapf(err, "program of node %d: %s", n.ctx.ID, what)
	}
	out := n.ctx.Outbox()
	var b *Scratch
	if len(out) > 0 {
		b = n.scratch()
		n.dirty = true
	}
	for _, e := range out {
		l := &n.links[e.Port]
		seq := l.next
		l.next++
		l.log = append(l.log, e.Msg)
		n.unacked++
		n.stats.Logged++
		n.stats.TokensLogged += e.Msg.Tokens
		d := Datagram{Port: e.Port, Kind: DatagramData, Seq: seq, Msg: e.Msg}
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
		b.pending = append(b.pending, d)
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
// an ack of a sequence number never sent, a data datagram of an ItemMachine whose items
// do not match its tokens, or a program error. O(1) plus the program's Receive; an ack
// costs O(entries freed).
func (n *Machine) Step(d Datagram) error {
	if d.Port < 0 || d.Port >= len(n.links) {
		return errs.BadParam("node %d: datagram on port %d; it has ports 0..%d", n.ctx.ID, d.Port, len(n.links)-1)
	}
	if !n.started {
		return errs.BadParam("node %d: Step before Start", n.ctx.ID)
	}
	l := &n.links[d.Port]
	switch d.Kind {
	case DatagramData:
		switch {
		case d.Seq == l.delivered+1:
			if d.Msg.Tokens < 0 {
				return errs.BadParam("node %d: data datagram %d on port %d carries %d tokens", n.ctx.ID, d.Seq, d.Port, d.Msg.Tokens)
			}
			if n.itemMode {
				if int64(len(d.Items)) != d.Msg.Tokens {
					return errs.BadParam("node %d: data datagram %d on port %d carries %d tokens and %d items", n.ctx.ID, d.Seq, d.Port, d.Msg.Tokens, len(d.Items))
				}
				n.items = append(n.items, d.Items...)
			}
			l.delivered = d.Seq
			l.ackDue = true
			n.dirty = true
			n.ctx.Load += d.Msg.Tokens
			n.stats.Delivered++
			n.stats.TokensDelivered += d.Msg.Tokens
			return n.call("Receive", d.Port, func() error { return n.prog.Receive(&n.ctx, d.Port, d.Msg) })
		case d.Seq <= l.delivered:
			n.stats.Duplicates++
			l.ackDue = true
		default:
			n.stats.OutOfOrder++
			l.ackDue = true
		}
		return nil
	case DatagramAck:
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

// Tick is one tick of the machine's local timer at local time now (ticks since Start,
// not decreasing). It sends the log of every link whose retransmission timer expired,
// then, unless the program is idle, sets node.Context.Now and calls the program's Tick.
// O(Degree) plus the program's Tick.
func (n *Machine) Tick(now int64) error {
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
				b := n.scratch()
				for i, m := range l.log {
					d := Datagram{Port: p, Kind: DatagramData, Seq: l.acked + 1 + uint64(i), Msg: m}
					if n.itemMode {
						d.Items = l.logItems[i]
					}
					b.pending = append(b.pending, d)
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
	if n.idle {
		return nil
	}
	n.ctx.Now = now
	n.dirty = true
	return n.call("Tick", -1, func() error { return n.prog.Tick(&n.ctx) })
}

// SetLoad sets the machine's load (a host's workload), to be persisted in the next
// Ready. It returns an error for a negative load. O(1).
func (n *CountMachine) SetLoad(load int64) error {
	if load < 0 {
		return errs.BadParam("node %d: negative load %d", n.ctx.ID, load)
	}
	if load != n.ctx.Load {
		n.ctx.Load = load
		n.dirty = true
	}
	return nil
}

// Items returns the IDs the machine holds, in the order they arrived. The slice is the
// machine's: read it before the next call. O(1).
func (n *ItemMachine) Items() []uint64 { return n.items }

// AddItems adds work: the items ids arrive at the machine, raising its load by
// len(ids), to be persisted in the next Ready. The caller chooses the IDs and keeps
// them unique across the fleet; the machine does not check. O(len(ids)).
func (n *ItemMachine) AddItems(ids []uint64) {
	if len(ids) == 0 {
		return
	}
	n.items = append(n.items, ids...)
	n.ctx.Load += int64(len(ids))
	n.dirty = true
}

// CompleteItems finishes work: it removes min(k, load) items, the oldest first, and
// returns their IDs (a new slice), to be persisted in the next Ready; the host must
// not report them finished before that Ready's State is persisted. It returns an error
// for a negative k. O(load).
func (n *ItemMachine) CompleteItems(k int) ([]uint64, error) {
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

// InFlight returns the number of tokens in the machine's outgoing logs (sent, not yet
// acknowledged). O(unacknowledged datagrams).
func (n *Machine) InFlight() int64 {
	var t int64
	for i := range n.links {
		for _, m := range n.links[i].log {
			t += m.Tokens
		}
	}
	return t
}

// Idle reports whether the machine needs no ticks: its program is idle and every data
// datagram it sent is acknowledged. A host stops ticking an idle machine and resumes
// when a datagram arrives. The program's part is ProgramIdle (cached; no program call).
// O(1).
func (n *Machine) Idle() bool { return n.unacked == 0 && n.idle }

// Unacked returns the number of data datagrams in the machine's outgoing logs. O(1).
func (n *Machine) Unacked() int { return n.unacked }

// Sequence returns the sequence state of port p (the persisted one once the last
// Ready is persisted). It panics for a port out of range. O(1).
func (n *Machine) Sequence(p int) Sequence {
	l := &n.links[p]
	return Sequence{Next: l.next, Acked: l.acked, Delivered: l.delivered}
}

// Logged returns the message of the data datagram with sequence number seq in the
// outgoing log of port p, and false when the log does not hold it (seq ≤ Acked or
// seq ≥ Next). It panics for a port out of range. O(1).
func (n *Machine) Logged(p int, seq uint64) (node.Message, bool) {
	l := &n.links[p]
	if seq <= l.acked || seq >= l.next {
		return node.Message{}, false
	}
	return l.log[seq-l.acked-1], true
}

// HasReady reports whether Ready has anything to persist or send. O(Degree).
func (n *Machine) HasReady() bool {
	if n.dirty || (n.buf != nil && n.buf.owner == n && len(n.buf.pending) > 0) {
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
// (or was persisted before). The slices are reused after Advance. It returns an error,
// naming the node, when the program panics in AppendState: then nothing is to be
// persisted or sent (the persisted state stays the last one, consistent) and the host
// stops the machine. O(Degree + state).
func (n *Machine) Ready() (Ready, error) {
	var rd Ready
	b := n.scratch()
	if n.dirty {
		st, err := n.encode(b.state[:0])
		if err != nil {
			return Ready{}, err
		}
		b.state = st
		rd.State = b.state
	}
	for p := range n.links {
		l := &n.links[p]
		if l.ackDue {
			l.ackDue = false
			b.pending = append(b.pending, Datagram{Port: p, Kind: DatagramAck, Seq: l.delivered})
		}
	}
	rd.Datagrams = b.pending
	return rd, nil
}

// Advance tells the machine that the last Ready was persisted and sent. O(datagrams of
// that Ready).
func (n *Machine) Advance() {
	n.dirty = false
	if b := n.buf; b != nil && b.owner == n {
		clear(b.pending)
		b.pending = b.pending[:0]
	}
}
