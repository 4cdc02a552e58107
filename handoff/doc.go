// Package handoff is the fault-tolerant token handoff of one node: a deterministic
// state machine, in the style of etcd-io/raft's RawNode, around a node.Program.
// It has no goroutines, clock or I/O; a host drives it. Two hosts use it: the event
// simulator of package async and the networked runtime of package fleet, so that a
// production node process links no simulator.
//
// # The state machine and its host
//
// A Machine is made in one of two modes, as distinct types: a CountMachine
// (NewCountMachine, RestoreCountMachine), whose tokens are counts and whose host
// changes the load with SetLoad, and an ItemMachine (NewItemMachine,
// RestoreItemMachine), whose tokens are items with user-chosen 64-bit IDs that arrive
// and finish through AddItems and CompleteItems. The host feeds the machine datagrams
// (Step) and local timer ticks (Tick), and then asks for a Ready: the State to persist
// and the Datagrams to send, in that order, after which it calls Advance. After a crash
// the host rebuilds the machine from the last persisted State around a fresh program
// (RestoreCountMachine, RestoreItemMachine); DecodeState reads a State for audits.
//
// # The protocol
//
// Over each directed link the sender numbers its data datagrams (each carries one
// program Message, hence tokens), keeps every unacknowledged one in a persisted
// outgoing log and sends the log again on a timer (RetransmitTicks, doubling up to 64
// times); the receiver delivers in order, exactly once, adds the tokens to its load and
// acknowledges cumulatively, only after the new state is persisted. A crash loses the
// machine's memory only. The invariant, in every reachable state,
//
//	Σ loads + Σ tokens in the senders' logs not yet delivered = initial + arrived − completed
//
// holds over the persisted states, whatever the network does (loss, duplication,
// reordering, delay); for an ItemMachine it holds for IDs: every accepted ID is exactly
// once held, in flight or completed. docs/handoff.md gives the protocol, the invariant
// and a proof sketch. Stats counts the datagrams and tokens logged and delivered, from
// which a host keeps a ledger of tokens in flight (the simulator checks the invariant
// after every event with it).
//
// # Costs
//
// Step costs O(1) plus the program's Receive (an ack O(entries freed)); Tick O(degree)
// plus the program's Tick; Ready O(degree + size of the state), the State being
// O(degree + unacknowledged datagrams + items held + program state) bytes; Advance
// O(datagrams of the Ready). Memory is O(degree + unacknowledged datagrams + items
// held) per machine; machines driven by one goroutine can share their per-Ready
// buffers (Scratch).
//
// Every error starts with "tokendist: ", names the node and the bad value, and wraps
// tokendist.ErrBadParameter or the program's error.
//
// # The program's methods
//
// The machine calls every method of its node.Program itself, each under a recover; a
// host calls none. Idle is evaluated right after each call of Start, Receive, Tick and
// RestoreState (the calls that change the program's state) and cached: Machine.Idle and
// Machine.ProgramIdle read the cache in O(1). AppendState is called in Ready. A panic in
// any method (Start, Receive, Tick, Idle, AppendState, RestoreState) is returned as an
// error naming the node and the method, by the call that made it (Start, Step, Tick,
// Ready, RestoreCountMachine, RestoreItemMachine); a Ready that fails has nothing to
// persist or send, so the last persisted state stands and no token is lost or doubled.
// The host then stops the machine (the simulator of package async fails its run).
package handoff
