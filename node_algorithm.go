package tokendist

import "github.com/tokendist/tokendist/node"

// NodeAlgorithm is implemented by the balancers that have node programs (package node):
// Run's synchronous stepper runs the balancer itself, and an asynchronous host runs the
// programs NodePrograms returns for the same network. With unit delays, no faults and
// zero Patience a host's loads, Moved and Messages after R rounds are Run's after R
// steps with the same seed (for the randomized algorithms, Run's with node-keyed
// random streams: RunOptions.NodeStreams, node.Random).
//
// The built-in implementations are DimensionExchange (THRESHOLD-1, THRESHOLD-2 and
// user protocols), RandomizedDiffusion, RandomMatching, RSWDiffusion,
// FGSDeterministic, FGSRandomized, PerfectTree and SpanningTree (when its tree
// algorithm has programs). Each NodePrograms states its messages, what a node does
// when its Patience runs out, and where the equivalence needs a condition: Run's
// stability stop off for dimension exchange (RunOptions.NoStability), no node asked
// for more tokens than it holds for FGS, and one extra message when the perfect-tree
// election ends in a crossing.
type NodeAlgorithm interface {
	NodePrograms(net Network, opts *node.Options) (node.Programs, error)
}
