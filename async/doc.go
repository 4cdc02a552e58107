// Package async runs node programs (tokendist.NodeProgram) on asynchronous, faulty
// networks: links that delay, lose, duplicate and reorder datagrams, and nodes that
// crash and restart from what they persisted. It has two layers.
//
// # The token handoff
//
// Node is one node's fault-tolerant transfer protocol around its program, a
// deterministic state machine in the style of etcd-io/raft: the host feeds it datagrams
// (Step) and local timer ticks (Tick), and it answers with a Ready that says what to
// persist and what to send, in that order, after which the host calls Advance. Over
// each directed link the sender numbers its data datagrams (each carries one program
// Message, hence tokens), keeps every unacknowledged one in a persisted outgoing log
// and sends the log again on a timer; the receiver delivers in order, exactly once,
// adds the tokens to its load and acknowledges cumulatively, only after the new state
// is persisted. A crash loses the node's memory only: RestoreNode rebuilds it from the
// persisted bytes around a fresh program. The invariant, in every reachable state,
//
//	Σ loads + Σ tokens in the senders' logs not yet delivered = initial + arrived − completed
//
// holds over the persisted states, whatever the network does; docs/handoff.md gives
// the protocol, the invariant and a proof sketch. Node has no goroutines, clock or I/O:
// the simulator below and a networked runtime (package fleet) drive the same code.
//
// In item mode (NodeConfig.ItemMode) every token is an item with a user-chosen 64-bit
// ID: the node holds a list of IDs, data datagrams carry the IDs of their tokens, and
// work arrives and finishes through AddItems and CompleteItems; the invariant then
// holds for IDs: every accepted ID is exactly once held, in flight or completed.
// ReadState decodes a persisted state for such audits. The simulator runs count-only
// nodes, which pay nothing for the mode.
//
// # The simulator
//
// Simulate runs the programs of a tokendist.NodePrograms on a network with a Node on
// every node, as a discrete-event simulation: one binary-heap-like queue (4-ary) of
// events in a deterministic total order (time, node, kind, port, then scheduling order),
// a NetworkModel with a delay distribution per link (Constant, Uniform, Exponential,
// Pareto), loss, duplication and reordering rates, scheduled and random crashes at three
// points inside a node's event handling (faults.CrashIdle, faults.CrashBeforePersist,
// faults.CrashBeforeSend), heterogeneous tick intervals and clock drift, and an optional
// tokendist.Workload applied every Options.WorkloadEvery time units. A run is
// deterministic in its inputs and seed and starts no goroutine.
//
// With the zero NetworkModel (unit delays, no faults) the run follows the synchronous
// schedule that Run's node-program equivalence is stated for: Start at time 0 in node
// order; a message sent at time t arrives at t+1; at each t ≥ 1 every node, in order,
// receives its messages by port and send order, then ticks unless idle. The
// acknowledgements of the handoff are invisible to the programs and do not change it.
//
// Conservation is checked in every run: after every event in O(1) (the ledger of
// persisted loads and tokens in flight; every delivery against the sender's persisted
// log; every acknowledgement against the receiver's persisted delivered counter), and
// in full, in O(n + m + tokens in flight), every Options.CheckEvery events and at the
// end. A violation fails the run with a *ConservationError.
//
// # Costs
//
// An event costs O(log pending events) for the queue plus the program's call and, when
// it changes the node's state, the encoding of that state (O(degree + log + program
// state)). Memory is O(n + m + pending events + logs). On a 10^6-node torus with a
// diffusion program, BenchmarkScale measured about 2.4 KB per node and 1.3 million
// events per second, against 7.4 million for a plain event loop over the same queue
// (ratio 5.8, one run on 2 cores); the node buffers grow once, after which an event
// allocates nothing.
//
// Every error starts with "tokendist: ", names the bad value, and wraps a sentinel of
// package tokendist (ErrBadParameter, ErrBadLoads, ErrNilNetwork) or the error of the
// program, workload or context that caused it; a panic in a program is recovered and
// returned as an error naming the node.
package async
