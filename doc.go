// Package tokendist simulates, compares and analyses token distribution: indivisible
// units of work (tokens) on the processors of a network, moved over its links until every
// processor holds nearly the same number. It implements, on one shared stepper, the
// algorithms and analytic tools of five papers:
//
//   - Houle, Symvonis, Wood, "Dimension-exchange algorithms for token distribution on
//     tree-connected architectures" (JPDC 2004): edge colourings, THRESHOLD-1,
//     THRESHOLD-2, DISCREPANCY-1, observer tours and maximum stable discrepancy.
//   - Gao, Rosenberg, "On balancing computational load on rings of processors":
//     Keep-left-Send-right with breadth-first scheduling (KS-BF) of growing tree and
//     grid computations, and the DFT workload formulas.
//   - Plaxton, "Load balancing on the hypercube and shuffle-exchange": Balance,
//     MultiBalance, Leighton's minimum-error balance, lower bounds.
//   - Berenbrink, Cooper, Friedetzky, Friedrich, Sauerwald, "Randomized diffusion for
//     indivisible loads": randomized diffusion and its comparators (RSW, continuous,
//     FGS, FS), spectral gap and local divergence.
//   - Margara, Pistocchi, Vassura, "Perfect token distribution on trees": the
//     asynchronous anonymous-tree protocol, simulated and concurrent.
//
// # Networks
//
// A Network has nodes 0..N-1 and undirected links; Neighbors(v) lists v's neighbours in
// ascending order. *Graph is the concrete, immutable implementation: compressed sparse
// rows with int32 entries (4 bytes per edge end). It also implements gonum's
// graph.Undirected, and FromGonum converts the other way. Generators (Path, Ring, Star,
// Complete, KaryTree, RandomTree, Hypercube, ShuffleExchange, Torus, Mesh,
// RandomRegular) validate their parameters and return (*Graph, error). Queries:
// Diameter, Center, Eccentricities, BFS, BFSTree, IsTree, IsRegular, IsBipartite,
// Connected.
//
// # Loads
//
// Loads is a []int64 of tokens per node, with Total, Max, Min, Discrepancy and an exact
// Potential (Σ load² as a Uint128). PointMass, UniformRandom, RandomRange and
// DistanceLoads build initial distributions from a seed; each paper's module adds its
// worst cases.
//
// # Balancers and Run
//
// Every algorithm is a Balancer: Step performs one parallel step of its paper's model on
// State.Loads. Optional interfaces add set-up (Initializer), a termination rule
// (Terminator), a stability period (Periodic) and a declaration of which invariants hold
// (InvariantKeeper, Accountant). Run is the one loop: it validates inputs, works on a
// copy of the loads, stops on the balancer's own rule, a target discrepancy, stability,
// a step budget or context cancellation, records a Trace (CSV/JSON export, SVG plots via
// PlotTraces and PlotLines), and verifies conservation and non-negativity, returning an
// *InvariantError that names the balancer and step when one is broken. Steps do not
// allocate.
//
// # Reproducibility
//
// One uint64 seed fixes every random choice: in generators, in initial loads, and in
// RunOptions.Seed for a run. Parallel steps split work into fixed-size chunks with one
// random stream per (seed, step, chunk), so results are identical for any GOMAXPROCS.
//
// # Notebooks
//
// The exported API is usable from gophernotes (gomacro): no type parameters, plain
// seeds, option structs whose zero value is the default, slices and structs rather than
// iterators. See examples/notebook.
//
// # Errors
//
// Every error starts with "tokendist: " and names the bad value; sentinels
// (ErrBadParameter, ErrBadLoads, ErrNotConnected, ErrNotTree, ErrInvalidColoring,
// ErrNilNetwork, ErrNilBalancer) work with errors.Is.
package tokendist
