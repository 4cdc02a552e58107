package node

// Program is one node's side of a local token-distribution algorithm, written as a
// deterministic state machine: it knows its own load, the number of its links (its
// ports) and the messages it receives, and nothing else. It has no goroutines, clocks
// or I/O. A host drives it: the event simulator of package async, a process of package
// fleet, or a test. The host delivers messages and timer ticks, carries out the sends,
// persists the program's state and makes each link reliable.
//
// Rules the host keeps:
//   - Methods are called one at a time, never concurrently, always with the same
//     *Context; Start is called once, before any other method.
//   - Every link is reliable and FIFO: Receive is called exactly once per message sent
//     to this node, in the order the sender sent the link's messages, whatever the
//     network loses, duplicates, reorders or delays (the host's transfer protocol).
//   - A received message's Tokens are in Context.Load when Receive is called.
//   - Tick is called on the node's local timer, at most once per local time unit; a
//     node's ticks stop while Idle reports true and resume when a message arrives.
//   - After a crash the host restores the state the program last saved (AppendState)
//     into a program value it made afresh, with RestoreState, and continues: the
//     program sees a pause, plus the ticks it missed.
//
// Rules the program keeps:
//   - Its load changes only through Context.Send (which removes the tokens sent) and
//     through the tokens of received messages, and it never sends more than it holds.
//     A host's workload may also change Context.Load between calls: read it fresh.
//   - All its state is in AppendState's output, and its random choices come from
//     Context.Random, so that a restart and a replay make the same choices.
//   - A call must not block or take more than O(degree) time and memory beyond the
//     messages it sends. A non-nil error stops the host's run (StatusFailed), and so
//     does a panic in any method: the host (the machine of package handoff) calls
//     each method under a recover and fails its run with an error naming the node and
//     the method.
//   - Idle depends only on the program's state: the host evaluates it right after each
//     call of Start, Receive, Tick and RestoreState and caches the answer until the
//     next such call (a workload's change of Context.Load does not re-evaluate it).
//
// Built-in algorithms offer their programs through tokendist.NodeAlgorithm.
type Program interface {
	// Start begins the program with Context.Load tokens.
	Start(c *Context) error
	// Receive consumes message m, which arrived on port (0 ≤ port < c.Degree).
	Receive(c *Context, port int, m Message) error
	// Tick is one tick of the node's local timer (c.Now has advanced).
	Tick(c *Context) error
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

// Programs makes the node programs of one algorithm on one network.
type Programs interface {
	// Program returns a fresh program for node v. A host calls it once per node and
	// run, and again after a crash of v (then restoring the saved state into it).
	Program(v int) (Program, error)
}

// Options configure the node programs of a built-in algorithm. The zero value asks
// for the synchronous semantics.
type Options struct {
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
	// its neighbours' messages. Built-in programs read the clock in Tick (Context.Now).
	Patience int64
}
