// Package async runs node programs (node.Program) on asynchronous, faulty
// networks in a deterministic discrete-event simulator: links that delay, lose,
// duplicate and reorder datagrams, and nodes that crash and restart from what they
// persisted. Each node runs the token handoff of package handoff (a
// handoff.CountMachine around its program), the same state machine that package fleet
// runs in real processes; this package is its simulated host, and a fleet process links
// none of it.
//
// # The simulator
//
// Simulate runs the programs of a node.Programs on a network (the graph) with
// a handoff machine on every node, under a faults.Model (Options.Faults): one 4-ary
// heap of events in a deterministic total order (time, node, kind, port, then
// scheduling order), a delay distribution per link (constant, uniform, exponential,
// Pareto), loss, duplication and reordering rates, scheduled and random crashes at
// three points inside a node's event handling (faults.CrashIdle,
// faults.CrashBeforePersist, faults.CrashBeforeSend), heterogeneous tick intervals and
// clock drift, and an optional tokendist.Workload applied every Options.WorkloadEvery
// time units. A run is deterministic in its inputs and seed and starts no goroutine.
// Linking the package also registers Simulate with package registry, which runs a
// registry.Spec's network_model block with it.
//
// With the zero faults.Model (unit delays, no faults) the run follows the synchronous
// schedule that Run's node-program equivalence is stated for: Start at time 0 in node
// order; a message sent at time t arrives at t+1; at each t ≥ 1 every node, in order,
// receives its messages by port and send order, then ticks unless idle. The
// acknowledgements of the handoff are invisible to the programs and do not change it.
//
// Conservation is checked in every run: after every event in O(1) (the ledger of
// persisted loads and tokens in flight, kept from the machines' handoff.Stats; every
// delivery against the sender's persisted log; every acknowledgement against the
// receiver's persisted delivered counter), and in full, in O(n + m + tokens in flight),
// every Options.CheckEvery events and at the end. A violation fails the run with a
// *ConservationError. docs/handoff.md gives the protocol, its invariant and the broken
// variants the tests show these checks catch.
//
// # Observing a run
//
// Options.Observer (an Observer, or an ObserverFunc) watches a run in model time: it
// receives a Snapshot at the start, every Options.ObserveEvery time units and at the
// end of a run that ends without error. A snapshot holds the persisted loads, which
// nodes are down, the tokens in flight on each directed link, the datagrams lost on
// each since the previous snapshot, and the totals that conservation relates (Σ loads +
// in flight = initial + arrived − completed at every snapshot). It is taken between
// events on the simulator's goroutine, costs O(n + m + datagrams in flight), and only
// reads the simulator's state, so an observed run is the run without an observer; the
// snapshot's slices are reused, so an observer copies what it keeps. An observer's
// error or panic fails the run. Package animate draws a run from its snapshots
// (animate.RecordSimulation). Without an Observer nothing is observed and the event
// loop pays one comparison per event.
//
// # Costs
//
// An event costs O(log pending events) for the queue plus the program's call and, when
// it changes the node's state, the encoding of that state (O(degree + log + program
// state)). Memory is O(n + m + pending events + logs): the machines share one set of
// per-Ready buffers (handoff.Scratch), so that a node costs its sequence state, its
// program and its persisted bytes; after the buffers have grown, an event allocates
// nothing. Measured figures are in docs/performance.md.
//
// Every error starts with "tokendist: ", names the bad value, and wraps a sentinel of
// package tokendist (ErrBadParameter, ErrBadLoads, ErrNilNetwork) or the error of the
// program, workload or context that caused it; a panic in a program is recovered and
// returned as an error naming the node.
package async
