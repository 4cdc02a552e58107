// Package node is the contract between a node program and its host: the Program a
// local token-distribution algorithm runs on each node, the Context it sees, and the
// Message it sends over a link.
//
// A Program is a deterministic state machine in the style of etcd-io/raft: it knows
// its own load, the number of its links and the messages it receives, and nothing
// else; it has no goroutines, clocks or I/O. A host drives it and does the rest:
//
//   - the event simulator of package async, which runs programs on a simulated network
//     of delays, losses and crashes;
//   - the processes of package fleet, which run them over TCP with a durable store;
//   - a test, which may call the methods by hand.
//
// The built-in algorithms of package tokendist offer their programs through
// tokendist.NodeAlgorithm (dimension exchange, the diffusions, the perfect-tree
// protocol and the spanning-tree balancer). With unit delays, no faults and zero
// Options.Patience a host reproduces tokendist.Run's loads exactly.
//
// This package imports only the standard library and the module's internal packages:
// a program of one's own needs nothing else, and the core package tokendist imports
// it for the built-in programs.
package node
