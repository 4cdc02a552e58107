package node

import (
	"math"

	"github.com/tokendist/tokendist/internal/errs"
	"github.com/tokendist/tokendist/internal/rng"
)

// Envelope is a message and the port it leaves on.
type Envelope struct {
	// Port is the sender's port the message leaves on (0 ≤ Port < Context.Degree).
	Port int
	// Msg is the message.
	Msg Message
}

// Context is a node program's view of its node, owned by the host. The program reads
// its fields and sends with Send; the host sets the fields and drains Outbox.
type Context struct {
	// ID is the node's index in the network. Anonymous algorithms (the perfect-tree
	// protocol) do not read it; it keys the node's random stream.
	ID int
	// Degree is the number of the node's links; its ports are 0..Degree-1, port p being
	// its p-th neighbour in the network's order (tokendist.Graph.Neighbors).
	Degree int
	// Load is the node's current load.
	Load int64
	// Now is the node's local clock, in ticks since Start (it may drift from other
	// nodes' clocks).
	Now int64
	// Rounds is the number of rounds a round-based program may begin (0: no limit); a
	// program that has begun them all finishes its last round and becomes idle. With
	// Rounds = R a synchronous host reproduces tokendist.Run with MaxSteps R.
	Rounds int64
	// Seed is the run's seed (see Random).
	Seed uint64
	// Moved and Messages count the tokens this node sent and the Counted messages it
	// sent since Start.
	Moved, Messages int64

	out []Envelope
}

// Send queues message m on port. It takes m.Tokens from Load at once (the tokens are then
// in flight until the receiver's host adds them) and returns an error wrapping
// tokendist.ErrBadParameter, sending nothing, for a port out of range, negative tokens
// or more tokens than the node holds, and an error wrapping tokendist.ErrOverflow,
// sending nothing, when Moved or Messages would exceed the int64 range (as Run refuses
// a run whose counters overflow). O(1) amortized; the outbox is reused after Reset.
func (c *Context) Send(port int, m Message) error {
	if port < 0 || port >= c.Degree {
		return errs.BadParam("node %d sends on port %d; it has ports 0..%d", c.ID, port, c.Degree-1)
	}
	if m.Tokens < 0 || m.Tokens > c.Load {
		return errs.BadParam("node %d sends %d tokens on port %d; it holds %d", c.ID, m.Tokens, port, c.Load)
	}
	if c.Moved > math.MaxInt64-m.Tokens || (m.Counted && c.Messages == math.MaxInt64) {
		return errs.Overflowf("node %d sends %d tokens on port %d: its Moved %d or Messages %d would overflow int64", c.ID, m.Tokens, port, c.Moved, c.Messages)
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
func (c *Context) Outbox() []Envelope { return c.out }

// Reset empties the outbox, keeping its storage.
func (c *Context) Reset() { c.out = c.out[:0] }

// Random returns the i-th 64-bit word of the node's random stream for round: a pure
// function of (Seed, round, ID, i), so a program that restarts, or runs on another host,
// draws the same words. The built-in programs draw word 0, 1, 2, ... of a round in
// order, rejecting words as Lemire's method requires. O(1), no allocation.
func (c *Context) Random(round int64, i uint64) uint64 {
	return Random(c.Seed, round, c.ID, i)
}

// Random is Context.Random for node id of a run with the given seed: word i of the
// counter-based stream keyed by (seed, round, id), two SplitMix64 finalisers over the
// key. tokendist.Run draws the same words with RunOptions.NodeStreams. O(1).
func Random(seed uint64, round int64, id int, i uint64) uint64 {
	a, b := rng.NodeKey(seed, round, id)
	return rng.NodeWord(a, b, i)
}
