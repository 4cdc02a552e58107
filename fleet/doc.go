// Package fleet runs tokendist's node programs as a fleet of real processes: each node
// is one process (or goroutine) that exchanges frames with its neighbours over a
// Transport and keeps its durable state in a Store, in the manner of etcd-io/raft,
// where the library is the state machine and transport and storage are pluggable.
// TCPTransport (the standard library's net package) and BoltStore (go.etcd.io/bbolt)
// are the reference implementations.
//
// This package is being built for issue 25; so far it holds the transport and the
// store.
package fleet
