package tokendist

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/tokendist/tokendist/node"

	"github.com/tokendist/tokendist/internal/wire"
)

// This file holds what the round-based node programs (dimexchange_program.go, diffusion_program.go)
// share: roundCore, which numbers the rounds, buffers the messages of rounds the node
// has not reached, paces the rounds by the local clock when Patience is positive and
// persists all of it; each algorithm plugs its round in through roundAlgo.

// roundAlgo is one algorithm's round, driven by roundCore.
type roundAlgo interface {
	// next returns the first round ≥ r in which the node takes part, or -1 if none
	// (a dimension-exchange node skips the rounds in which none of its edges is active).
	next(r int64) int64
	// begin starts round k.round: it reads the node's own load (k.own) and sends.
	begin(c *node.Context, k *roundCore) error
	// handle consumes message m of the current round, which arrived on port.
	handle(c *node.Context, k *roundCore, port int, m node.Message) error
	// complete reports whether the round has everything it waits for.
	complete() bool
	// giveUp ends the round without the messages still missing (Patience ran out).
	giveUp(c *node.Context, k *roundCore) error
	// appendState appends the round's state; restoreState reads it (it may allocate),
	// reports a malformed one through r and returns the function that installs it,
	// which the core calls only if the whole state is valid.
	appendState(b []byte) []byte
	restoreState(r *stateReader) (commit func())
}

// Round-program statuses.
const (
	rcFresh   uint8 = iota // Start has not been called
	rcRunning              // in round round
	rcDone                 // every round is over
	rcWaiting              // Patience > 0: round round begins at its window's first tick
)

// bufMsg is a message of a future round, kept until the node gets there.
type bufMsg struct {
	port int
	m    node.Message
}

// roundCore is the part of a round-based node program that does not depend on the
// algorithm. It implements node.Program for its algo.
type roundCore struct {
	tag      byte // the state format's tag, one per algorithm
	id, deg  int
	patience int64
	algo     roundAlgo

	status uint8
	round  int64
	fut    []bufMsg // messages of rounds > round (≥ round while waiting), in arrival order
	held   int64    // the tokens of the messages in fut, already in node.Context.Load
}

// futCap bounds the future messages a node keeps: with zero patience a neighbour is
// never more than one round ahead on a link and sends at most two messages of that
// round, so 2·deg + 2 suffices; with a positive patience the oldest are dropped beyond
// it (their tokens then count as the node's own at once), which keeps the memory
// O(degree).
func (k *roundCore) futCap() int { return 2*k.deg + 2 }

// own returns the node's own load: node.Context.Load minus the tokens of future rounds'
// messages, at least 0.
func (k *roundCore) own(c *node.Context) int64 { return max(0, c.Load-k.held) }

// sendTokens sends min(want, own load) tokens on port in a message of the current
// round, Counted as told, and returns the tokens sent.
func (k *roundCore) sendTokens(c *node.Context, port int, kind uint8, want int64, counted bool) (int64, error) {
	t := min(max(want, 0), k.own(c))
	return t, c.Send(port, node.Message{Kind: kind, Round: k.round, Tokens: t, Counted: counted})
}

// Start begins the first round the node takes part in.
func (k *roundCore) Start(c *node.Context) error {
	if k.status != rcFresh {
		return badParam("node %d: Start called twice", k.id)
	}
	if err := k.checkContext(c); err != nil {
		return err
	}
	k.status = rcRunning
	return k.enter(c, k.algo.next(0))
}

// checkContext refuses a context of another node.
func (k *roundCore) checkContext(c *node.Context) error {
	if c == nil {
		return badParam("node %d: nil *node.Context", k.id)
	}
	if c.ID != k.id || c.Degree != k.deg {
		return badParam("node %d of degree %d got the context of node %d of degree %d", k.id, k.deg, c.ID, c.Degree)
	}
	return nil
}

// enter starts round r (or ends the program if r < 0 or beyond c.Rounds) and replays
// the buffered messages of r; it moves on while rounds complete at once. With Patience
// P > 0, round r owns the local ticks [r·P, (r+1)·P): a round whose window has passed
// is skipped without a message, and one whose window has not begun waits for its
// first tick (Tick begins it).
func (k *roundCore) enter(c *node.Context, r int64) error {
	for {
		if r < 0 || (c.Rounds > 0 && r >= c.Rounds) {
			k.status, k.round = rcDone, max(r, k.round)
			k.dropBefore(1<<63 - 1)
			return nil
		}
		if k.patience > 0 {
			if w := k.window(c); r < w {
				r = k.algo.next(r + 1) // its window has passed (a restart, a slow round before)
				continue
			} else if r > w {
				k.status, k.round = rcWaiting, r
				k.dropBefore(r)
				return nil
			}
		}
		k.status, k.round = rcRunning, r
		k.dropBefore(r)
		if err := k.algo.begin(c, k); err != nil {
			return err
		}
		if err := k.replay(c); err != nil {
			return err
		}
		if !k.algo.complete() {
			return nil
		}
		r = k.algo.next(r + 1)
	}
}

// window returns the round whose window holds the local clock (Patience > 0).
func (k *roundCore) window(c *node.Context) int64 { return max(c.Now, 0) / k.patience }

// dropBefore forgets the buffered messages of rounds before r (stale: their tokens
// stay in the load).
func (k *roundCore) dropBefore(r int64) {
	j := 0
	for _, b := range k.fut {
		if b.m.Round < r {
			k.held -= b.m.Tokens
			continue
		}
		k.fut[j] = b
		j++
	}
	clear(k.fut[j:])
	k.fut = k.fut[:j]
}

// replay hands the buffered messages of the current round to the algorithm, in arrival
// order.
func (k *roundCore) replay(c *node.Context) error {
	j := 0
	for i := 0; i < len(k.fut); i++ {
		b := k.fut[i]
		if b.m.Round != k.round {
			k.fut[j] = b
			j++
			continue
		}
		k.held -= b.m.Tokens
		if err := k.algo.handle(c, k, b.port, b.m); err != nil && (k.patience <= 0 || !errors.Is(err, errUnexpected)) {
			return err // the host stops the run
		}
	}
	clear(k.fut[j:])
	k.fut = k.fut[:j]
	return nil
}

// Receive consumes m: a message of a past round (or after the last) is stale and only
// its tokens count; one of a future round waits in the buffer; one of the current
// round goes to the algorithm, and the node moves on when its round is complete.
func (k *roundCore) Receive(c *node.Context, port int, m node.Message) error {
	if err := k.checkContext(c); err != nil {
		return err
	}
	if port < 0 || port >= k.deg {
		return badParam("node %d received a message on port %d; it has ports 0..%d", k.id, port, k.deg-1)
	}
	if m.Tokens < 0 {
		return badParam("node %d received a message with %d tokens", k.id, m.Tokens)
	}
	switch {
	case k.status == rcFresh:
		return badParam("node %d received a message before Start", k.id)
	case k.status == rcDone || m.Round < k.round:
		return nil
	case m.Round > k.round || k.status == rcWaiting:
		if len(k.fut) >= k.futCap() {
			if k.patience <= 0 {
				return fmt.Errorf("%w: node %d in round %d holds %d messages of later rounds, more than zero patience allows", errUnexpected, k.id, k.round, len(k.fut))
			}
			k.held -= k.fut[0].m.Tokens
			copy(k.fut, k.fut[1:])
			k.fut = k.fut[:len(k.fut)-1]
		}
		k.fut = append(k.fut, bufMsg{port: port, m: m})
		k.held += m.Tokens
		return nil
	}
	if err := k.algo.handle(c, k, port, m); err != nil {
		if k.patience > 0 && errors.Is(err, errUnexpected) {
			return nil // see errUnexpected
		}
		return err
	}
	if k.algo.complete() {
		return k.enter(c, k.algo.next(k.round+1))
	}
	return nil
}

// Tick paces the rounds when Patience is positive: at the first tick of a waiting
// round's window the node begins it, and at the end of a running round's window it goes
// on without what is missing. With zero patience ticks do nothing.
func (k *roundCore) Tick(c *node.Context) error {
	if err := k.checkContext(c); err != nil {
		return err
	}
	if k.patience <= 0 {
		return nil
	}
	switch w := k.window(c); {
	case k.status == rcWaiting && w >= k.round:
		return k.enter(c, k.round)
	case k.status == rcRunning && w > k.round:
		if err := k.algo.giveUp(c, k); err != nil {
			return err
		}
		return k.enter(c, k.algo.next(k.round+1))
	}
	return nil
}

// Idle reports whether the node waits for nothing but messages: before Start, after its
// last round, and, with zero patience, whenever it waits.
func (k *roundCore) Idle() bool {
	return k.status == rcFresh || k.status == rcDone || k.patience <= 0
}

// stateVersion is the first byte of every node program's state.
const stateVersion = 1

// AppendState appends the program's state: a header (version, tag, node, degree), the
// core's fields and the algorithm's. O(degree) bytes.
func (k *roundCore) AppendState(b []byte) []byte {
	b = append(b, stateVersion, k.tag)
	b = binary.AppendUvarint(b, uint64(k.id))
	b = binary.AppendUvarint(b, uint64(k.deg))
	b = append(b, k.status)
	b = binary.AppendVarint(b, k.round)
	b = binary.AppendUvarint(b, uint64(len(k.fut)))
	for _, f := range k.fut {
		b = binary.AppendUvarint(b, uint64(f.port))
		b, _ = f.m.AppendBinary(b)
	}
	return k.algo.appendState(b)
}

// RestoreState replaces the state with one AppendState wrote for this node; on bytes
// it did not write it returns an error and changes nothing.
func (k *roundCore) RestoreState(b []byte) error {
	r := &stateReader{wire.NewReader(b)}
	if r.Byte() != stateVersion || r.Byte() != k.tag {
		return k.badState(b, "not a state of this program")
	}
	if id, deg := r.Uvarint(), r.Uvarint(); !r.Failed() && (id != uint64(k.id) || deg != uint64(k.deg)) {
		return k.badState(b, fmt.Sprintf("the state of node %d of degree %d", id, deg))
	}
	status, round := r.Byte(), r.Varint()
	n := r.Count(k.futCap())
	fut := make([]bufMsg, 0, k.futCap())
	var held int64
	for i := 0; i < n && !r.Failed(); i++ {
		p := r.Count(k.deg - 1)
		m := r.message()
		if m.Round < round || (m.Round == round && status != rcWaiting) || m.Tokens < 0 || held > 1<<62-m.Tokens {
			r.Fail()
		}
		held += m.Tokens
		fut = append(fut, bufMsg{port: p, m: m})
	}
	if status > rcWaiting || round < 0 {
		r.Fail()
	}
	commit := k.algo.restoreState(r)
	if !r.Failed() && r.Len() != 0 {
		r.Fail()
	}
	if r.Failed() {
		return k.badState(b, errBadState.Error())
	}
	commit()
	k.status, k.round, k.fut, k.held = status, round, fut, held
	return nil
}

func (k *roundCore) badState(b []byte, why string) error {
	return badParam("node %d: RestoreState of %d bytes: %s", k.id, len(b), why)
}

// stateReader decodes a saved state with the module's varint reader (internal/wire):
// the first malformed field fails it and every later read returns zero. It adds the
// reads of the programs' formats (bool, bounded ints, Message).
type stateReader struct{ wire.Reader }

// errUnexpected marks a message a program cannot take in its state. With zero
// patience it is a protocol violation and stops the run; with a positive patience the
// two ends of a link may have settled a round differently (one gave up, the other did
// not, or their FGS errors diverged), so the message is ignored: its tokens are already
// in the load, and only its content is dropped.
var errUnexpected = badParam("protocol violation")

// errBadState is the reason RestoreState gives (the caller adds the node and size).
var errBadState = errors.New("malformed state")

func (r *stateReader) bool() bool {
	x := r.Byte()
	if x > 1 {
		r.Fail()
	}
	return x == 1
}

// intIn reads a signed number in lo..hi.
func (r *stateReader) intIn(lo, hi int64) int64 {
	x := r.Varint()
	if x < lo || x > hi {
		r.Fail()
		return 0
	}
	return x
}

// nonNeg reads a non-negative int64.
func (r *stateReader) nonNeg() int64 {
	x := r.Varint()
	if x < 0 {
		r.Fail()
		return 0
	}
	return x
}

// message reads a Message (Message.AppendBinary's encoding).
func (r *stateReader) message() node.Message {
	if r.Failed() {
		return node.Message{}
	}
	m, k, err := node.DecodeMessage(r.Rest())
	if err != nil {
		r.Fail()
		return node.Message{}
	}
	r.Skip(k)
	return m
}

// nodeOptions validates node.Options (nil: the zero value).
func nodeOptions(o *node.Options) (node.Options, error) {
	if o == nil {
		return node.Options{}, nil
	}
	if o.Patience < 0 {
		return node.Options{}, badParam("node.Options.Patience %d is negative", o.Patience)
	}
	return *o, nil
}

// checkNode refuses a node outside 0..n-1 for Program.
func checkNode(name string, v, n int) error {
	if v < 0 || v >= n {
		return badParam("%s: node %d is not in the network of %d nodes", name, v, n)
	}
	return nil
}

// appendInts appends signed varints.
func appendInts(b []byte, xs ...int64) []byte {
	for _, x := range xs {
		b = binary.AppendVarint(b, x)
	}
	return b
}

// appendBools appends one byte per flag.
func appendBools(b []byte, xs ...bool) []byte {
	for _, x := range xs {
		c := byte(0)
		if x {
			c = 1
		}
		b = append(b, c)
	}
	return b
}
