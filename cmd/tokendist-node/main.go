// Command tokendist-node runs one node of a tokendist fleet (package fleet): it reads a
// JSON config (fleet.Config), restores the node from its data directory or starts it
// with its initial items, exchanges frames with its neighbours over TCP, serves its
// HTTP endpoint (/metrics, /status, /items, /work, /complete) and stops cleanly on
// SIGTERM or SIGINT: it stops the HTTP server, persists the last state, closes the
// transport and the store, and exits 0 within a few seconds. docs/fleet.md describes
// a fleet.
//
// Usage:
//
//	tokendist-node -config node.json
//	tokendist-node -config node.json -print-config
//	tokendist-node -config node.json -print-token
//	tokendist-node -config node.json -reinit
//
// The node refuses to start when its store was created for another node, fleet name,
// network, loads, algorithm or seed (the message names the difference), and when its
// store is empty or missing on a data directory that has run a node before: -reinit
// starts it afresh with its initial items all the same (fleet.Options.Reinit), for
// that one start. -quiet logs nothing but errors.
//
// Frames and HTTP requests are authenticated with the fleet's shared key (the
// config's key_file; docs/fleet.md, "Authentication"): -print-token prints the bearer
// token that HTTP clients send as "Authorization: Bearer TOKEN". A config without
// key_file is refused unless it says "insecure": true (loopback experiments only).
//
// Exit status: 0 after a clean stop, 1 on an error (printed to stderr), 2 on bad flags.
package main

import (
	"io"
	"os"

	"github.com/tokendist/tokendist/internal/nodecmd"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command (internal/nodecmd, shared with the chaos test's broken node).
func run(args []string, stdout, stderr io.Writer) int {
	return nodecmd.Main(args, stdout, stderr, nil)
}
