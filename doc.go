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
//     NewMultiBalance, Leighton's minimum-error balance, lower bounds.
//   - Berenbrink, Cooper, Friedetzky, Friedrich, Sauerwald, "Randomized diffusion for
//     indivisible loads": randomized diffusion and its comparators (RSW, continuous,
//     FGS, FS), spectral gap and local divergence.
//   - Margara, Pistocchi, Vassura, "Perfect token distribution on trees": the
//     asynchronous anonymous-tree protocol, simulated and concurrent.
//
// # Names
//
// One rule for each kind of name, applied to every exported name of the module:
//
//   - A constructor of a stateful object is New followed by the type it returns, with a
//     word in front for a variant: NewGraph, NewEdgeColoring, NewObserverTour,
//     NewDeviation, NewQuadrature, NewPerfectTree; NewPoissonArrivals and
//     NewHotSpotArrivals return *Arrivals; NewRandomLinkChurn and NewScheduledLinkChurn
//     return *LinkChurn; NewUnitDelays, NewRandomDelays and the other delay models
//     return Delays. It validates its arguments and returns (value, error).
//   - A balancer constructor is New followed by the algorithm's name in its paper (or
//     by what it runs), and returns the engine that runs it: NewThreshold1 and
//     NewThreshold2 return *DimensionExchange; NewHypercubeBalance,
//     NewDimensionOrderBalance and NewLeightonBalance return *CubeBalancer; NewRingTree
//     and NewRingGrid return *RingScheduler; NewDiscrepancy1, NewMultiBalance,
//     NewRandomizedDiffusion and NewRandomMatching return their own types.
//   - A function that returns an immutable value of a named family (a graph, a load
//     vector, an edge colouring, a growing dag, a bound, a spectrum) is the family's
//     name: Path, Hypercube, KaryTree, PointMass, BipartiteColoring, CompleteTree,
//     KaryTreeBound, LambdaMax.
//   - A function that executes steps is Run followed by what it runs, takes a
//     context.Context first and returns a typed result with a Status and an error: Run
//     (any Balancer), RunRing (a RingScheduler from its root task) and
//     RunRingComparison.
//   - Networks as parameters: a function takes Network when it only reads the topology,
//     so that any implementation works (it converts once with AsGraph, which costs
//     nothing for a *Graph); it takes *Graph when another argument or its result refers
//     to that graph's edge indices: the colourings (BipartiteColoring,
//     NewEdgeColoring, ...) and the balancers driven by a colouring (NewThreshold1,
//     NewThreshold2, NewDiscrepancy1, NewDimensionExchange).
//   - Options are structs whose zero value means the default, passed by pointer (nil:
//     all defaults); results are plain structs; seeds are plain uint64 values.
//   - Layers that are not the core live in their own packages beside it:
//     github.com/tokendist/tokendist/plot (SVG plots), .../animate (a run as an
//     animation), .../registry (algorithms,
//     networks and loads by name), .../tokendisttest (the Balancer contract as a test
//     suite) and .../experiment (experiment files, sweeps and their database).
//
// # Networks
//
// A Network has nodes 0..N-1 and undirected links; Neighbors(v) lists v's neighbours in
// ascending order. *Graph is the concrete, immutable implementation: compressed sparse
// rows with int32 entries (4 bytes per edge end). It also implements gonum's
// graph.Undirected, and FromGonum converts the other way. Generators (Path, Ring, Star,
// Complete, KaryTree, RandomTree, Hypercube, ShuffleExchange, Torus, Mesh,
// RandomRegular) validate their parameters and return (*Graph, error); the random
// families of network science (G(n, p), Barabási–Albert, Watts–Strogatz, geometric)
// are package gen's, beside the core.
// Queries:
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
// (Terminator), a stability period (Periodic), a default step budget (StepBudgeter), a
// declaration of which invariants hold (InvariantKeeper, Accountant) and figures of its
// own in Result.Report (Reporter); fmt.Stringer names the balancer. Step before Init
// returns an error wrapping ErrNotInitialized, and one balancer value serves one Run at
// a time (ErrConcurrentUse). Run is the one loop: it validates inputs, works on a copy
// of the loads, stops on the balancer's own rule, a target discrepancy, stability (for
// balancers without a rule of their own), a step budget (the balancer's default, such
// as τ(G, K) rounds for the diffusion schemes, or DefaultMaxSteps) or context
// cancellation, records a Trace (CSV/JSON export; SVG plots in package
// github.com/tokendist/tokendist/plot), and verifies conservation and non-negativity, returning an
// *InvariantError that names the balancer and step when one is broken. Steps do not
// allocate.
//
// # Dimension exchange on trees (Houle, Symvonis, Wood)
//
// An EdgeColoring (BipartiteColoring: König, χ = Δ; MisraGriesColoring: Vizing, ≤ Δ+1; natural
// colourings of hypercubes, rings, tori and meshes) drives the dimension-exchange stepper
// (NewDimensionExchange, section 1.1): at step t the edges of colour t mod χ are active.
// NewThreshold2 and NewThreshold1 are its protocols (sections 2, 3); NewDiscrepancy1
// builds Discrepancy1, the same stepper with section 5's phases and termination rule;
// NewSpanningTree runs a tree algorithm on any connected graph. Section 4's analysis is in
// msd.go: NewObserverTour, Gaps, StableGaps, Stabilities, MSD (a breadth-first search over
// Z_n), KaryTreeMSD, WorstStableLoads, ConstructSubgraph and the bounds Threshold1Bound
// and KaryTreeBound.
//
// # Growing computations on a ring (Gao, Rosenberg)
//
// RingScheduler simulates a dynamically growing binary tree-dag or grid-dag (CompleteTree,
// WCompleteTree, RandomTreeDag, PyramidGrid, AdversarialGrid, RandomGridDag, NewQuadrature
// or a user rule) on the ring R_p under KS-BF or a comparison policy, through Run with
// loads = queued tasks, and exposes the exact schedule. RunRingComparison answers the paper's
// open question in one call; RingWork, RingWorkDFT, RingTreeBounds, RingGridWork,
// RingGridBounds, RingTreeTau and RingGridTau are the paper's analytics, corrected where
// the paper is wrong.
//
// # Hypercube and shuffle-exchange (Plaxton)
//
// NewDimensionOrderBalance, NewHypercubeBalance (the recursion of section 2.3), NewLeightonBalance
// and the minimum-error pipeline of Theorem 2.4 run with the model's time accounting (a
// pair with loads a, b costs ⌈|a−b|/2⌉ + 1), on the hypercube and, by shuffle emulation,
// the shuffle-exchange; NewMultiBalance balances g token types (section 3). Lower bounds:
// HammingBall, Fringe, HypercubeFringe (Harper), BalanceLowerBound and friends.
//
// # Diffusion (Berenbrink, Cooper, Friedetzky, Friedrich, Sauerwald)
//
// NewRandomizedDiffusion (section 2.1) and the comparators of Table 1 (NewRSWDiffusion,
// NewFGSDeterministic, NewFGSRandomized, NewRandomMatching) are balancers; the FGS schemes
// may go negative, which Run counts. ContinuousDiffusion and the Deviation recorder
// measure the discrete–continuous deviation the paper bounds; TransitionMatrix, LambdaMax (dense or
// Lanczos), BalancingTime and LocalDivergence are the spectral tools.
//
// # Perfect distribution on trees (Margara, Pistocchi, Vassura)
//
// NewPerfectTree runs the anonymous asynchronous protocol through Run, as a
// discrete-event simulation with delay models (Delays) or, with
// PerfectTreeOptions.Goroutines, with one goroutine per node and mailboxes as links;
// Result.Report is a PerfectTreeReport, and OptimalPerfectMoves gives the exact optimum
// for comparison.
//
// # Dynamic runs
//
// RunOptions.Workload adds and removes tokens after every step — NewPoissonArrivals (λ
// per node or per network), NewHotSpotArrivals, NewAdversary (at the heaviest node),
// NewTraceArrivals (a CSV trace), NewService (μ per node), composed with
// NewCombinedWorkload and shaped with NewBursts and NewWindow — and Run checks exact
// accounting: total = initial + arrivals − completions (Result.Arrived,
// Result.Completed). RunOptions.Churn fails and recovers links (NewRandomLinkChurn,
// NewScheduledLinkChurn) through State.Live; the dimension-exchange schemes keep the
// colouring of the full graph and skip links that are down, the diffusion and matching
// schemes use the live links. RunOptions.Steady measures the time-average and
// 95th-percentile discrepancy and maximum load after a warm-up, tokens moved per
// arrival, and a documented instability test (SteadyStats). Balancers whose algorithm
// assumes a fixed total or fixed links (DISCREPANCY-1, PerfectTree, the hypercube
// schedules, NewMultiBalance, RingScheduler) refuse them in Init; each balancer's doc
// comment says which. docs/dynamic.md has the model and the study of examples/dynamic.
//
// # Node programs: asynchronous and faulty networks
//
// Run steps every node at once in one address space. For networks that are not like
// that, the balancers that implement NodeAlgorithm (dimension exchange, the diffusions,
// random matching, the perfect-tree protocol, SpanningTree) return node.Programs: one
// node.Program per node, a state machine in the style of etcd-io/raft that knows its load,
// its ports and the messages it receives, and that a host drives with messages and ticks
// through a node.Context. Random choices come from node.Random, keyed by (seed, round,
// node), so a restarted node draws again what it drew; RunOptions.NodeStreams makes Run
// draw the same way, so that a synchronous host reproduces Run exactly. node.Options.Patience
// chooses between waiting for every neighbour (Run's loads whatever the delays) and
// rounds paced by the local clock. Package handoff is the exactly-once token handoff
// around a program; package async is its host that simulates faulty networks (under a
// faults.Model), and package fleet its host that runs the programs as processes over
// TCP. docs/async.md has the study of which paper claims survive.
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
// Every error starts with "tokendist: " and names the bad value, quoting at most a short
// prefix of bad text; errors from user callbacks, readers and writers are wrapped with
// that prefix (errors.Is still finds them), and so are the operating system's. The
// sentinels, all in errors.go, work with errors.Is: ErrBadParameter, ErrBadLoads,
// ErrNilNetwork, ErrNilBalancer, ErrNotConnected, ErrNotTree, ErrInvalidColoring,
// ErrOverflow, ErrTooLarge, ErrNotConverged, ErrDeadlock, ErrProtocol, ErrBadDag,
// ErrTaskBudget, ErrConcurrentUse and ErrNotInitialized. The packages beside the core
// return the same values (package registry adds ErrUnknownName and ErrNotApplicable,
// package experiment ErrFile). One rule for invalid input holds everywhere: an error,
// never -1, a zero or a saturated value. Nil arguments
// (including typed nils such as a nil *Funcs in a Balancer, and a nil context.Context)
// are errors, not panics. Integer results are exact or an error: a bound, closed form,
// total or Run counter that would not fit in int64 is ErrOverflow, never a wrapped
// value. Accessors indexed by node, edge or colour (Graph.Neighbors, EdgeColoring.Color,
// ...) follow Go's slice convention and panic on an index out of range, as their
// documentation says.
//
// # Memory
//
// Every entry point computes what it will allocate, with overflow-checked arithmetic,
// before allocating, and refuses with an error wrapping ErrTooLarge that names the size
// when one call would need more than the memory budget: the smaller of the program's
// soft memory limit (runtime/debug.SetMemoryLimit, set by GOMEMLIMIT) and half of the
// machine's memory (MemTotal in /proc/meminfo, read once; no limit where it cannot be
// read). Lower GOMEMLIMIT to make the library refuse sooner. Work that is bounded by
// time rather than memory has documented caps instead (MaxUniformTokens, MaxDelay,
// RingWorkDFT's p ≤ 16384, LocalDivergence's round cap).
//
// # Panics and goroutines
//
// Parallel steps run on a pool of goroutines that exists only while a call holds it (Run
// and the runners, LambdaMax, the MSD search and the parallel BFS): no goroutine outlives
// the call that started it. A balancer's Step called directly, outside Run, runs its
// parallel loops sequentially with the same result. A panic in user code (a Protocol, a
// growth rule, a Recorder, a Network) on one of the pool's goroutines is recovered there,
// the loop's other ranges finish, and the panic is re-raised with the same value on the
// goroutine that called the library, where the caller's recover sees it; the balancer
// is then reusable (Init starts it afresh).
package tokendist
