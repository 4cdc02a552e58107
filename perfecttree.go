package tokendist

import (
	"context"
	"fmt"
	"math"
)

// Perfect token distribution on anonymous asynchronous trees: Margara, Pistocchi and
// Vassura, "Perfect token distribution on trees" (the paper's sections in brackets).
//
// Anonymous nodes (they see their degree, their channel numbers 1..deg and their tokens,
// never an ID) exchange messages over FIFO links in the asynchronous single-port model
// [1, 2]. Phase 1 [3.1] counts the nodes and tokens of every subtree and elects a root;
// phase 2 [3.2] gives every node but the root Avg = ⌊T/N⌋ tokens; phase 3 [3.3] spreads
// the root's extra tokens down the tree, one Finished message per link, until every
// node holds Avg or Avg+1 tokens and is Finished. The node program (perfecttree_protocol.go)
// is written once and driven by two runtimes behind one Balancer, PerfectTree: a
// reproducible discrete-event scheduler (one Step per time unit), and with
// PerfectTreeOptions.Goroutines one goroutine per node (the whole protocol in one Step).

// PerfectTreeOptions configures both runtimes of the perfect-tree protocol. The zero
// value (or nil) runs the corrected program in the simulated runtime with unit delays
// and ports numbered in ascending neighbour order. The run's seed (RunOptions.Seed)
// fixes every random choice: port shuffling, random delays, jitter.
type PerfectTreeOptions struct {
	// Delays is the simulated runtime's delay policy (nil: NewUnitDelays). The concurrent
	// runtime ignores it: its delays are the Go scheduler's.
	Delays Delays
	// ShufflePorts numbers each node's channels 1..deg in a random order fixed by the
	// seed, instead of in ascending neighbour order.
	ShufflePorts bool
	// Literal runs the pseudo-code exactly as printed, without the fix of the erratum in
	// docs/errata.md (M1): a phase-3 token that reaches a node still in phase 2 is then
	// taken for a phase-2 token, and the run may end with a token stranded in a queue
	// (Perfect false) or fail.
	Literal bool
	// Goroutines runs the protocol with real asynchrony instead of the simulated
	// runtime: one goroutine per node, each executing the same node program, with
	// mailboxes as links. The whole protocol then runs in the first Step (Run's
	// samples are the first and the last; Run's context cancels it), Time is the
	// logical (Lamport) time of the last event, and the schedule is the Go
	// scheduler's, so a seed fixes the ports and the jitter but not the interleaving.
	// Delays is ignored: the delays are the scheduler's. Init reserves
	// ptGoroutineBytes (6 KiB) per node against the memory budget for a goroutine's
	// stack and its mailbox, and refuses larger networks with ErrTooLarge.
	Goroutines bool
	// Jitter makes the goroutine runtime yield the processor at random before sends, to
	// vary the interleavings. The simulated runtime ignores it.
	Jitter bool
	// Batch makes the simulated runtime carry each run of tokens that a node sends down
	// one link in a row as one event: where the per-token program sends k tokens one at
	// a time (S2.3 to one child in `smaller`, S2.4 to the parent, S3.1 to one child), the
	// batched program sends one message with the k tokens, delivered when the last of
	// them would arrive had they been sent back to back (each when the previous one
	// arrived: k time units under unit delays; the delay policy is still asked once per
	// token, in order, with consecutive message numbers), and the receiver takes them all
	// then. The sender is busy, and the link reserved, until then. A Step advances to the
	// next time a message arrives, skipping the time units in which every node waits.
	// The zero value keeps the per-token runtime and its results.
	//
	// What stays: every token is still one message and one move. Phase 1 elects the
	// root before any token moves, and given the root the corrected program's moves do
	// not depend on timing, so Loads, Moved, Messages, Perfect, Finished, Root, Roots,
	// Parent, GlobalKnown, Phase2Tokens, Moves[k], Messages[k], OptimalMoves, ExcessMoves
	// and Ratio are the per-token runtime's under every delay policy. What changes: Time,
	// PhaseTime[1], PhaseTime[2] and LastMove (a node passes tokens on only once their
	// whole run has arrived, so runs no longer pipeline down a path: Time is usually
	// longer, 1.8 times on the point-mass benchmark), PhaseTime[0] too under the policies
	// whose draws depend on the order of all messages (random, serial, reverse: the
	// draws fall to other messages once tokens move; under unit delays and
	// NewSlowLinkDelays it stays), and Result.Steps. Where every run has one token the
	// two semantics coincide and so do all the results but Steps. The literal program's
	// outcome depends on timing (M1 in docs/errata.md), so with Literal the final loads
	// and Perfect may differ too.
	//
	// The gain is speed: a run costs O(events), not O(tokens moved): the point-mass
	// benchmark (n = 10⁴, T = 10⁵) carries 1.2·10⁷ token messages in about 4·10⁴ events
	// and runs in less CPU time than a plain loop making its moves one token at a time
	// (docs/performance.md, "Perfect tree"). The goroutine runtime and NodePrograms
	// ignore Batch.
	Batch bool
}

// PerfectTreeReport is what a perfect-tree run reports (Result.Report), in either
// runtime. The final loads and the status are Result's: its Loads count tokens queued at
// a node that its program has not received (the literal program can leave some).
type PerfectTreeReport struct {
	// Perfect reports whether every node holds ⌊T/N⌋ or ⌈T/N⌉ tokens.
	Perfect bool `json:"perfect"`
	// Finished is the number of nodes in the final state.
	Finished int `json:"finished"`
	// N, T, Avg and Extra are the number of nodes and tokens, ⌊T/N⌋ and T mod N.
	N     int   `json:"n"`
	T     int64 `json:"t"`
	Avg   int64 `json:"avg"`
	Extra int64 `json:"extra"`
	// Root is the node elected by phase 1 (-1 if no node ended phase 1 as a root) and
	// Roots the number of nodes that did (Theorem 1: exactly one).
	Root  int `json:"root"`
	Roots int `json:"roots"`
	// Parent[v] is the neighbour that v's channel parent leads to after phase 1, -1 for
	// a root or a node that did not end phase 1 (Theorem 1: the tree rooted at Root).
	Parent []int32 `json:"parent"`
	// GlobalKnown counts the nodes that ended phase 1 with Tv = T and Nv = N (Theorem 1).
	GlobalKnown int `json:"global_known"`
	// Phase2Tokens[v] is v's token count when it ended phase 2, -1 if it did not
	// (Theorem 2: Avg, except Avg + T mod N at the root).
	Phase2Tokens Loads `json:"phase2_tokens"`
	// Time is the completion time: model time units in the simulated runtime, the
	// logical (Lamport) time of the last event in the concurrent one.
	Time int64 `json:"time"`
	// PhaseTime[k] is the time at which the last node ended phase k+1, and LastMove the
	// time at which the last token arrived (0 if none moved).
	PhaseTime [3]int64 `json:"phase_time"`
	LastMove  int64    `json:"last_move"`
	// Messages[k] and Moves[k] count the messages sent and the token moves made by
	// nodes in phase k+1 (phase 1 moves no token).
	Messages [3]int64 `json:"messages"`
	Moves    [3]int64 `json:"moves"`
	// OptimalMoves is the least number of token moves of any perfect distribution of
	// the initial loads on this tree (OptimalPerfectMoves), ExcessMoves the moves made
	// beyond it, and Ratio the moves made divided by it: 1 when both are 0, +Inf when
	// only the optimum is (so it is left out of JSON). OptimalMoves is -1 when it was
	// not computed: it overflows, or the run was cancelled (the optimum costs
	// O(N·min(N, T mod N)), too long to wait for after a cancellation).
	OptimalMoves int64   `json:"optimal_moves"`
	ExcessMoves  int64   `json:"excess_moves"`
	Ratio        float64 `json:"-"`
}

// TotalMoves returns the token moves of all phases.
func (r PerfectTreeReport) TotalMoves() int64 { return r.Moves[0] + r.Moves[1] + r.Moves[2] }

// TotalMessages returns the messages of all phases.
func (r PerfectTreeReport) TotalMessages() int64 {
	return r.Messages[0] + r.Messages[1] + r.Messages[2]
}

// String returns a one-line summary.
func (r PerfectTreeReport) String() string {
	return fmt.Sprintf("perfect %v, %d/%d finished, root %d, time %d, moves %d (optimum %d, ratio %.3f), messages %d",
		r.Perfect, r.Finished, r.N, r.Root, r.Time, r.TotalMoves(), r.OptimalMoves, r.Ratio, r.TotalMessages())
}

// CheckTheorems verifies the outcomes the paper proves for a completed run on tree g:
// Theorem 1 (one root; every node knows T and N; parent channels form the tree rooted
// at the root), Theorem 2 (every node but the root ends phase 2 with Avg tokens, the
// root with Avg + T mod N) and Theorem 3 (the final distribution is perfect, every node
// Finished). It costs O(N) and returns the first violation found.
func (r PerfectTreeReport) CheckTheorems(g *Graph) error {
	if g == nil || g.Order() != r.N || len(r.Parent) != r.N || len(r.Phase2Tokens) != r.N {
		return badParam("result for %d nodes does not match the graph", r.N)
	}
	if r.Roots != 1 || r.Root < 0 {
		return fmt.Errorf("tokendist: Theorem 1: %d roots after phase 1", r.Roots)
	}
	if r.GlobalKnown != r.N {
		return fmt.Errorf("tokendist: Theorem 1: %d of %d nodes know T and N after phase 1", r.GlobalKnown, r.N)
	}
	_, parent, err := g.BFSTree(r.Root)
	if err != nil {
		return err
	}
	for v, p := range r.Parent {
		if p != parent[v] {
			return fmt.Errorf("tokendist: Theorem 1: node %d's parent is %d, want %d in the tree rooted at %d", v, p, parent[v], r.Root)
		}
	}
	for v, x := range r.Phase2Tokens {
		want := r.Avg
		if v == r.Root {
			want += r.Extra
		}
		if x != want {
			return fmt.Errorf("tokendist: Theorem 2: node %d ended phase 2 with %d tokens, want %d", v, x, want)
		}
	}
	if r.Finished != r.N || !r.Perfect {
		return fmt.Errorf("tokendist: Theorem 3: %d of %d nodes finished, perfect %v", r.Finished, r.N, r.Perfect)
	}
	return nil
}

// IsPerfectDistribution reports whether every load is ⌊T/N⌋ or ⌈T/N⌉ for the total T
// of the N loads: the paper's perfect token distribution [1]. Then exactly T mod N nodes
// hold ⌈T/N⌉. It costs O(N); an empty vector is not perfect.
func IsPerfectDistribution(l Loads) bool {
	if len(l) == 0 {
		return false
	}
	avg := l.Total() / int64(len(l))
	for _, x := range l {
		if x != avg && x != avg+1 {
			return false
		}
	}
	return true
}

// PerfectTree is the simulated runtime of the perfect-tree protocol (Margara, Pistocchi
// and Vassura, section 3) as a Balancer: a discrete-event scheduler in which one Step is
// one time unit. At each time it delivers the messages due then (in the order they were
// sent), and runs every node whose wait is over until it waits again, in the order they
// became ready; time 0 runs in Init. A sender is busy until its message arrives and
// holds the link's reservation meanwhile (single-port model). Messages in flight wait in
// a FIFO queue while every delay is 1 (O(1) per event) and on a heap after the first
// other delay (O(log N)); a step allocates nothing. Runs are reproducible for a seed.
//
// With PerfectTreeOptions.Batch a run of tokens sent down one link is one event and a
// Step is the next time at which a message arrives (see there: the timing fields
// change, the moves and the outcome do not).
//
// Loads are the tokens at each node, counting tokens queued at a node and tokens in
// flight at their sender. Done reports that every node is Finished. Step fails with
// ErrDeadlock or ErrProtocol (only the literal program can). Result.Report is a
// PerfectTreeReport: the elected root, the phase boundaries, moves and messages per
// phase, and the optimum. With PerfectTreeOptions.Goroutines the same node program runs
// with one goroutine per node instead (see there).
//
// Which runtime to use: this one (the default) for the paper's time model and bounds,
// with integer delays (PerfectTreeOptions.Delays); Goroutines to show that the program
// needs no global clock; NodePrograms under async.Simulate for the protocol under loss,
// duplication, reordering, crashes and continuous delays (faults.Delay). All three run
// the same node program; docs/design.md ("Which perfect-tree runtime, when") gives the
// reasons, and why the two delay vocabularies stay apart.
type PerfectTree struct {
	opts  PerfectTreeOptions
	sim   ptSim
	ready initGuard
	// The goroutine runtime's state: the tree Init validated, whether the run happened,
	// and its report.
	g    *Graph
	ran  bool
	conc PerfectTreeReport
}

var (
	_ Balancer     = (*PerfectTree)(nil)
	_ Initializer  = (*PerfectTree)(nil)
	_ Terminator   = (*PerfectTree)(nil)
	_ Reporter     = (*PerfectTree)(nil)
	_ fmt.Stringer = (*PerfectTree)(nil)
)

// NewPerfectTree returns the simulated runtime for tree net. It fails with ErrNotTree on
// a network that is not a tree; Init checks the run's network again. It costs O(n).
func NewPerfectTree(net Network, opts *PerfectTreeOptions) (*PerfectTree, error) {
	g, err := AsGraph(net)
	if err != nil {
		return nil, err
	}
	if err := requireTree(g); err != nil {
		return nil, err
	}
	pt := &PerfectTree{}
	if opts != nil {
		pt.opts = *opts
	}
	if pt.opts.Delays == nil {
		pt.opts.Delays = ptUnitDelays{}
	}
	return pt, nil
}

// String names the balancer and its delay policy.
func (pt *PerfectTree) String() string {
	s := "PerfectTree"
	if pt.opts.Literal {
		s += "-literal"
	}
	if st, ok := pt.opts.Delays.(fmt.Stringer); ok {
		s += "(" + st.String() + ")"
	}
	return s
}

// Init builds the scheduler for the run's network and loads (O(N + M log Δ)) and runs
// time 0, when every node starts. It refuses a Workload and Churn: the protocol counts
// the fixed total up the tree once and then distributes exactly that many tokens, and
// its messages travel over fixed links (Margara et al., section 3).
func (pt *PerfectTree) Init(s *State) error {
	if pt == nil {
		return nilReceiver("PerfectTree", "Init")
	}
	pt.ready.reset()
	if err := refuseDynamic(s, "PerfectTree", false, false, "the protocol counts a fixed total once and distributes exactly it over fixed links"); err != nil {
		return err
	}
	g, err := AsGraph(s.Net)
	if err != nil {
		return err
	}
	if err := requireTree(g); err != nil {
		return err
	}
	if len(s.Loads) != g.Order() {
		return ptBadLength(len(s.Loads), g.Order())
	}
	total, err := s.Loads.Validate()
	if err != nil {
		return err
	}
	if total > math.MaxInt64-int64(g.Order()) {
		return fmt.Errorf("%w: total %d too close to the int64 limit for %d nodes", ErrBadLoads, total, g.Order())
	}
	if pt.opts.Goroutines {
		if err := checkAlloc(fmt.Sprintf("PerfectTree goroutine runtime: a goroutine and a mailbox for each of %d nodes", g.Order()), int64(g.Order()), ptGoroutineBytes); err != nil {
			return err
		}
		pt.g, pt.ran, pt.conc = g, false, PerfectTreeReport{}
	} else if err := pt.sim.init(g, s, &pt.opts); err != nil {
		return err
	}
	pt.ready.set(s)
	return nil
}

// Step advances the simulation by one time unit (with PerfectTreeOptions.Batch, to the
// next time at which a message arrives): it delivers the k messages due and runs the
// nodes they wake, in O(k) (O(k log N) once a delay other than 1 has occurred, or a
// batch of more than one token) plus the nodes' work, without allocating. Before Init it returns an error wrapping
// ErrNotInitialized.
func (pt *PerfectTree) Step(s *State) error {
	if pt == nil {
		return nilReceiver("PerfectTree", "Step")
	}
	if err := pt.ready.check(s, pt); err != nil {
		return err
	}
	if pt.opts.Goroutines {
		return pt.runGoroutines(s)
	}
	return pt.sim.step(s)
}

// runGoroutines runs the whole protocol with one goroutine per node (the first Step of
// a run with PerfectTreeOptions.Goroutines) and copies its outcome into s.
func (pt *PerfectTree) runGoroutines(s *State) error {
	if pt.ran {
		return nil
	}
	ctx := s.Context
	if ctx == nil {
		ctx = context.Background()
	}
	// s.Loads are the initial loads (Init refused a workload); the runtime reads them and
	// returns the final loads separately.
	rep, loads, err := runPTConcurrent(ctx, pt.g, s.Loads, &pt.opts, s.Seed)
	pt.ran, pt.conc = true, rep
	copy(s.Loads, loads)
	s.Time = rep.Time
	s.Moved += rep.TotalMoves()
	s.Messages += rep.TotalMessages()
	return err
}

// Done reports whether every node is Finished (the paper's distinguished final state,
// section 1), in O(1).
func (pt *PerfectTree) Done(*State) bool {
	if pt.opts.Goroutines {
		return pt.ran
	}
	return pt.sim.finished == pt.sim.n
}

// Report returns the run's PerfectTreeReport (Reporter). It computes the optimum number
// of moves, O(N · min(N, T mod N)).
func (pt *PerfectTree) Report(*State) any {
	if pt.opts.Goroutines {
		return pt.conc
	}
	return pt.sim.result()
}

// ptFinish fills the parts of a report that depend only on the final and initial loads:
// perfection, the optimum and the ratio.
func ptFinish(ctx context.Context, r *PerfectTreeReport, g *Graph, initial, final Loads) {
	r.Perfect = IsPerfectDistribution(final)
	opt, err := optimalPerfectMoves(ctx, g, initial)
	if err != nil {
		opt = -1
	}
	r.OptimalMoves = opt
	r.ExcessMoves = r.TotalMoves() - opt
	switch moves := r.TotalMoves(); {
	case opt == moves:
		r.Ratio = 1
	case opt > 0:
		r.Ratio = float64(moves) / float64(opt)
	default:
		r.Ratio = math.Inf(1)
	}
}
