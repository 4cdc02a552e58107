package tokendist

import (
	"encoding/binary"
	"fmt"

	"github.com/tokendist/tokendist/internal/errs"
	"github.com/tokendist/tokendist/internal/rng"
	"github.com/tokendist/tokendist/internal/wire"
)

// NodeProgram is one node's side of a local token-distribution algorithm, written as a
// deterministic state machine in the style of etcd-io/raft: it knows its own load, the
// number of its links (its ports) and the messages it receives, and nothing else. It has
// no goroutines, clocks or I/O. A host drives it: the event simulator of package async,
// a process of a runtime, or a test. The host delivers messages and timer ticks, carries
// out the sends, persists the program's state and makes each link reliable.
//
// Rules the host keeps:
//   - Methods are called one at a time, never concurrently, always with the same
//     *NodeContext; Start is called once, before any other method.
//   - Every link is reliable and FIFO: Receive is called exactly once per message sent
//     to this node, in the order the sender sent the link's messages, whatever the
//     network loses, duplicates, reorders or delays (the host's transfer protocol).
//   - A received message's Tokens are in NodeContext.Load when Receive is called.
//   - Tick is called on the node's local timer, at most once per local time unit; a
//     node's ticks stop while Idle reports true and resume when a message arrives.
//   - After a crash the host restores the state the program last saved (AppendState)
//     into a program value it made afresh, with RestoreState, and continues: the
//     program sees a pause, plus the ticks it missed.
//
// Rules the program keeps:
//   - Its load changes only through NodeContext.Send (which removes the tokens sent) and
//     through the tokens of received messages, and it never sends more than it holds.
//     A host's workload may also change NodeContext.Load between calls: read it fresh.
//   - All its state is in AppendState's output, and its random choices come from
//     NodeContext.Random, so that a restart and a replay make the same choices.
//   - A call must not block or take more than O(degree) time and memory beyond the
//     messages it sends. A non-nil error stops the host's run (StatusFailed).
//
// Built-in algorithms offer their programs through NodeAlgorithm.
type NodeProgram interface {
	// Start begins the program with NodeContext.Load tokens.
	Start(c *NodeContext) error
	// Receive consumes message m, which arrived on port (0 ≤ port < c.Degree).
	Receive(c *NodeContext, port int, m Message) error
	// Tick is one tick of the node's local timer (c.Now has advanced).
	Tick(c *NodeContext) error
	// Idle reports whether the program will send nothing until a message arrives: the
	// host stops its ticks, and a run ends when every program is idle and no message is
	// in flight.
	Idle() bool
	// AppendState appends the program's whole state to b and returns the result.
	AppendState(b []byte) []byte
	// RestoreState replaces the program's state with one AppendState wrote; it returns
	// an error, and changes nothing, for bytes AppendState did not write.
	RestoreState(b []byte) error
}

// Message is what a node program sends over one link. Kind, Round and Value are the
// program's to define (a message kind, the round it belongs to, a load or a proposal).
// Tokens are the tokens it carries: NodeContext.Send takes them from the sender's load,
// and the host adds them to the receiver's load exactly once.
type Message struct {
	// Kind is the program's message type (the built-in programs start at 1).
	Kind uint8
	// Round is the round the message belongs to (or any number the program defines).
	Round int64
	// Value is the program's payload: a load, a proposal, a digit.
	Value int64
	// Tokens is the number of tokens the message carries (≥ 0).
	Tokens int64
	// Counted marks a message of the algorithm's own model, the kind Run counts in
	// Result.Messages (for example the two load reports of a dimension-exchange edge).
	// Messages that only pace an asynchronous execution (a round marker with no
	// tokens) and the host's acknowledgements and retransmissions are not counted.
	Counted bool
}

// Envelope is a message and the port it leaves on.
type Envelope struct {
	// Port is the sender's port the message leaves on (0 ≤ Port < NodeContext.Degree).
	Port int
	// Msg is the message.
	Msg Message
}

// NodeContext is a node program's view of its node, owned by the host. The program reads
// its fields and sends with Send; the host sets the fields and drains Outbox.
type NodeContext struct {
	// ID is the node's index in the network. Anonymous algorithms (the perfect-tree
	// protocol) do not read it; it keys the node's random stream.
	ID int
	// Degree is the number of the node's links; its ports are 0..Degree-1, port p being
	// its p-th neighbour in the network's order (Graph.Neighbors).
	Degree int
	// Load is the node's current load.
	Load int64
	// Now is the node's local clock, in ticks since Start (it may drift from other
	// nodes' clocks).
	Now int64
	// Rounds is the number of rounds a round-based program may begin (0: no limit); a
	// program that has begun them all finishes its last round and becomes idle. With
	// Rounds = R a synchronous host reproduces Run with MaxSteps R.
	Rounds int64
	// Seed is the run's seed (see Random).
	Seed uint64
	// Moved and Messages count the tokens this node sent and the Counted messages it
	// sent since Start.
	Moved, Messages int64

	out []Envelope
}

// Send queues message m on port. It takes m.Tokens from Load at once (the tokens are then
// in flight until the receiver's host adds them) and returns an error, sending nothing,
// for a port out of range, negative tokens or more tokens than the node holds. O(1)
// amortized; the outbox is reused after Reset.
func (c *NodeContext) Send(port int, m Message) error {
	if port < 0 || port >= c.Degree {
		return badParam(fmt.Sprintf("node %d sends on port %d; it has ports 0..%d", c.ID, port, c.Degree-1))
	}
	if m.Tokens < 0 || m.Tokens > c.Load {
		return badParam(fmt.Sprintf("node %d sends %d tokens on port %d; it holds %d", c.ID, m.Tokens, port, c.Load))
	}
	c.Load -= m.Tokens
	c.Moved += m.Tokens
	if m.Counted {
		c.Messages++
	}
	c.out = append(c.out, Envelope{Port: port, Msg: m})
	return nil
}

// Outbox returns the messages sent since the last Reset, in order. The host owns the
// slice until its next Reset.
func (c *NodeContext) Outbox() []Envelope { return c.out }

// Reset empties the outbox, keeping its storage.
func (c *NodeContext) Reset() { c.out = c.out[:0] }

// Random returns the i-th 64-bit word of the node's random stream for round: a pure
// function of (Seed, round, ID, i), so a program that restarts, or runs on another host,
// draws the same words. The built-in programs draw word 0, 1, 2, ... of a round in
// order, rejecting words as Lemire's method requires. O(1), no allocation.
func (c *NodeContext) Random(round int64, i uint64) uint64 {
	return NodeRandom(c.Seed, round, c.ID, i)
}

// NodeRandom is NodeContext.Random for node id of a run with the given seed.
func NodeRandom(seed uint64, round int64, id int, i uint64) uint64 {
	a, b := rng.Key(rng.Mix(seed^nodeDomain), round, id) // its own domain: never a chunk's or a workload's stream
	return rng.Mix(a ^ rng.Mix(b+i))
}

// nodeDomain separates the node streams from the chunk and workload streams of a seed.
const nodeDomain = 0x6e6f64652d72616e // "node-ran"

// NodePrograms makes the node programs of one algorithm on one network.
type NodePrograms interface {
	// Program returns a fresh program for node v. A host calls it once per node and
	// run, and again after a crash of v (then restoring the saved state into it).
	Program(v int) (NodeProgram, error)
}

// NodeOptions configure the node programs of a built-in algorithm. The zero value asks
// for the synchronous semantics.
type NodeOptions struct {
	// Patience is the length, in local ticks, of a round whose node paces its rounds
	// by its clock. Zero does not pace: a node begins a round as soon as it has
	// finished the last and waits for ever for what the round needs, so every round
	// uses exactly the loads the synchronous round would: the final loads are Run's
	// whatever the delays and faults, and only the time changes. With Patience p > 0,
	// round r owns the node's local ticks [r·p, (r+1)·p): the node begins it at tick
	// r·p (not before), and at tick (r+1)·p goes on without the messages still
	// missing; a round whose window has passed (after a restart) is skipped without a
	// message. Clocks that agree keep the nodes in step, so with unit delays and p
	// large enough for a round's messages the loads are still Run's; slower messages,
	// down nodes and drifting clocks make rounds go without them. Late tokens are
	// added when they arrive, never lost, and a program ignores the content of a
	// message it can no longer use (one of a round it has left, or one its two ends
	// settled differently). Each algorithm's NodePrograms says what a node does without
	// its neighbours' messages. Built-in programs read the clock in Tick
	// (NodeContext.Now).
	Patience int64
}

// NodeAlgorithm is implemented by the balancers that have node programs: Run's
// synchronous stepper runs the balancer itself, and an asynchronous host runs the
// programs NodePrograms returns for the same network. With unit delays, no faults and
// zero Patience a host's loads, Moved and Messages after R rounds are Run's after R
// steps with the same seed (for the randomized algorithms, Run's with node-keyed
// random streams: RunOptions.NodeStreams, NodeRandom).
//
// The built-in implementations are DimensionExchange (THRESHOLD-1, THRESHOLD-2 and
// user protocols), RandomizedDiffusion, RandomMatching, RSWDiffusion,
// FGSDeterministic, FGSRandomized, PerfectTree and SpanningTree (when its tree
// algorithm has programs). Each NodePrograms states its messages, what a node does
// when its Patience runs out, and where the equivalence needs a condition: Run's
// stability stop off for dimension exchange (RunOptions.NoStability), no node asked
// for more tokens than it holds for FGS, and one extra message when the perfect-tree
// election ends in a crossing.
type NodeAlgorithm interface {
	NodePrograms(net Network, opts *NodeOptions) (NodePrograms, error)
}

// maxMessageBytes is the longest encoding of a Message: kind, flags and three varints.
const maxMessageBytes = 2 + 3*binary.MaxVarintLen64

// AppendBinary appends m's binary encoding to b and returns the result (it implements
// encoding.BinaryAppender and never fails): Kind, a flags byte (1 when Counted, else 0),
// then Round, Value and Tokens as varints, at most 32 bytes. Hosts use it to persist a
// node's outgoing log and to put messages on the wire. O(1).
func (m Message) AppendBinary(b []byte) ([]byte, error) {
	flags := byte(0)
	if m.Counted {
		flags = 1
	}
	b = append(b, m.Kind, flags)
	b = binary.AppendVarint(b, m.Round)
	b = binary.AppendVarint(b, m.Value)
	return binary.AppendVarint(b, m.Tokens), nil
}

// DecodeMessage decodes the Message that AppendBinary wrote at the start of b and
// returns it with the number of bytes it took. It returns an error wrapping
// ErrBadParameter, and never panics, for a truncated encoding, a flags byte other than
// 0 or 1, or negative tokens. O(1).
func DecodeMessage(b []byte) (Message, int, error) {
	bad := func(what string) (Message, int, error) {
		return Message{}, 0, badParam("message %s: %s", errs.Quote(b[:min(len(b), maxMessageBytes)]), what)
	}
	if len(b) < 2 {
		return bad("truncated")
	}
	m := Message{Kind: b[0], Counted: b[1] == 1}
	if b[1] > 1 {
		return bad("flags not 0 or 1")
	}
	r := wire.NewReader(b[2:])
	m.Round, m.Value, m.Tokens = r.Varint(), r.Varint(), r.Varint()
	if r.Failed() {
		return bad("truncated or overlong varint")
	}
	if m.Tokens < 0 {
		return bad("negative tokens")
	}
	return m, 2 + r.Used(), nil
}
