// Package fleet runs tokendist's node programs as a fleet of real processes: each node
// is one process (or goroutine) that exchanges frames with its neighbours over a
// Transport and keeps its durable state in a Store, in the manner of etcd-io/raft,
// where the library is the state machine and transport and storage are pluggable.
// TCPTransport (the standard library's net package: length-prefixed frames, one
// connection per peer, reconnection with backoff) and BoltStore (go.etcd.io/bbolt, one
// fsync'd transaction per state) are the reference implementations, InmemNetwork and
// MemoryStore their in-process counterparts for tests (below); the command
// tokendist-node (cmd/tokendist-node) runs one Node from a Config file.
//
// # The node
//
// Node wraps a handoff.ItemMachine around the node program of the Config's
// algorithm (tokendist.NodeAlgorithm): the node's load is a list of item IDs (jobs,
// shards, sessions) that move with the tokens, and work arrives and finishes through
// AddItems and CompleteItems, or POST /work and POST /complete of Handler. One
// goroutine (Run) owns the state machine and handles one event at a time (a frame, a
// tick, a request); after each it saves the state the handoff asks for and only then
// sends the datagrams of that state (AppendFrame, a versioned binary encoding;
// DecodeFrame refuses anything else without panicking) and answers the request. A node
// restarted on the same data directory, after a clean stop or a kill -9, continues from
// its last saved state; its neighbours retransmit what it has not acknowledged.
//
// # Identity
//
// Every frame names the fleet (Identity.Fleet, derived from the spec and Config.Fleet),
// its sender and receiver and the sender's incarnation (FrameHeader); a node applies
// only frames of its fleet, for itself, from a neighbour on that neighbour's link, of
// its newest incarnation, and counts and reports the others (Status.Refused,
// Status.Faults). Every saved state carries the node's Identity, and a restart with
// another spec or node ID is refused naming the difference; an empty store on a data
// directory that has run before is refused unless Options.Reinit. Two live processes
// with one node ID started from the same epoch (FrameHeader.Epoch: the number of the
// node's start on its store) are reported by the neighbours that hear both
// (Status.DuplicatePeers); frames of an older epoch are refused.
// docs/fleet.md ("Identity") says exactly what is detected.
//
// # Authentication
//
// Unless Config.Insecure (loopback addresses only), every frame carries a MAC
// (HMAC-SHA256, MACSize bytes) under a key derived from Config.KeyFile, checked before
// the frame is decoded (Status.Refused.MAC), and every HTTP endpoint wants the bearer
// token Config.HTTPToken. docs/fleet.md ("Authentication") says what this protects
// against and what not.
//
// # Guarantees
//
// As long as every Store keeps its rules (Save atomic and durable) and the node
// programs keep theirs: every item accepted (an initial one, or one whose AddItems or
// POST /work returned) is, at every moment, held by exactly one node, in flight in one
// sender's log, or completed (returned by exactly one CompleteItems) — whatever the
// network loses, duplicates, reorders or delays and whenever processes crash. Progress
// needs the nodes to come back and the links to deliver eventually. docs/fleet.md
// states the assumptions, the command, the config and the endpoint; docs/handoff.md
// proves the handoff. TestChaos (scripts/chaos.sh) checks all of it on real processes
// behind toxiproxy.
//
// # Testing a fleet in one process
//
// MemoryStore and InmemNetwork are the in-process Store and Transport, in the manner
// of etcd's MemoryStorage and hashicorp/raft's InmemStore and InmemTransport, and the
// way to test a fleet in one process: give each Node a MemoryStore (Options.Store) and
// the transport of its ID on one InmemNetwork (Options.Transport: InmemNetwork.Transport),
// run each Node in a goroutine, and drive it with AddItems and CompleteItems. No sockets
// are opened and nothing is written but the starts file in Config.Data (the addresses in
// Config must still be host:port; they are not used). The network delivers every frame,
// asynchronously and in order per link, unless told to drop it (InmemOptions.Drop),
// its link's queue is full or its receiver is down; a MemoryStore outlives the Node that closes it, so a crash is: stop the Node, and build
// a new one on MemoryStore.Reopen — or wrap the store in one whose Save fails, which
// stops Run inside an event. The package's own tests do exactly this (memory_test.go):
// whole fleets balancing to their algorithms' bounds, crashes and restores, and crashes
// at every k-th Save checking that nothing sent or answered was left unsaved.
//
// # Costs
//
// An event costs the program's call, the encoding of the node's state (O(degree +
// unacknowledged datagrams + items held + program state) bytes) and one Save (with
// BoltStore one transaction and two fsyncs, so the disk's fsync latency bounds the
// events a node handles per second; docs/performance.md has measured figures; with
// MemoryStore a copy of the state); a frame costs O(its items).
package fleet
