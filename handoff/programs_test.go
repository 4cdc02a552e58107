package handoff

import "github.com/tokendist/tokendist/internal/testprog"

// The test program share (a round-based diffusion; package async's tests have the same
// one): it waits for its neighbours, so its final loads are the synchronous ones
// whatever the network does.

// shareProgram: in round r every node sends ⌊L/(deg+1)⌋ to each neighbour
// (internal/testprog.Share, shared with the other hosts' tests).
type shareProgram = testprog.Share

// pairProgram: on an even ring, round r pairs the nodes along matching (r−1) mod 2
