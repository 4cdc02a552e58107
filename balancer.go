package tokendist

import (
	"context"
	"fmt"
	"math/rand/v2"
)

// Balancer is a token-distribution algorithm driven by Run, one parallel step at a time.
//
// Rules: Step performs exactly one step of the algorithm's model on s.Loads in place,
// advances s.Time by the step's cost in model units, and adds the tokens it moved and
// messages it sent to s.Moved and s.Messages. Run increments s.Steps after each Step.
// Step must not allocate on its hot path; per-network set-up belongs in Init. Unless
// the balancer declares otherwise (see Invariants), Step conserves the total and never
// makes a load negative. A Step error stops the run and is returned by Run, wrapped.
//
// Step before Init: a balancer that implements Initializer prepares per-network state
// in Init, and its Step on a State whose network Init has not prepared returns an error
// wrapping ErrNotInitialized that names the balancer (every built-in balancer does so;
// none panics). One balancer value serves one run at a time: Run refuses a balancer
// value that is already inside another Run with an error wrapping ErrConcurrentUse.
//
// Optional interfaces refine the contract: Initializer, Terminator, Periodic,
// StepBudgeter, InvariantKeeper, Accountant and Reporter. Name a balancer with a
// String method (fmt.Stringer); otherwise its Go type names it in errors and results.
type Balancer interface {
	Step(s *State) error
}

// Initializer is implemented by balancers that validate the network and prepare
// buffers before the first step. Run calls Init once per run, after copying the loads,
// so a balancer value can be reused for several runs (not concurrently: Run refuses
// that with ErrConcurrentUse). A built-in balancer's Step on a State its Init has not
// prepared returns an error wrapping ErrNotInitialized.
type Initializer interface {
	Init(s *State) error
}

// Terminator is implemented by balancers with their own termination rule (for example
// DISCREPANCY-1's local rule, Discrepancy1). Run stops with StatusDone when Done returns
// true; it is asked before every step. A balancer with its own rule stops by that rule:
// Run's stability check (Periodic) does not stop it unless RunOptions.StopWhenStable is
// set. Two built-in types implement Done without always having a rule: Funcs has one
// exactly when its DoneFunc is set, and SpanningTree exactly when its tree
// algorithm has one; Run treats them as having no rule otherwise.
type Terminator interface {
	Done(s *State) bool
}

// ruleHolder is implemented by the built-in Terminators whose rule exists in some
// configurations only (Funcs, SpanningTree): hasRule reports whether Done can
// return true.
type ruleHolder interface {
	hasRule() bool
}

// terminatorOf returns b's termination rule, or nil if it has none: b as a Terminator,
// unless it is a ruleHolder without a rule. O(1) plus a wrapper's forwarding.
func terminatorOf(b Balancer) Terminator {
	t, ok := b.(Terminator)
	if !ok {
		return nil
	}
	if h, ok := b.(ruleHolder); ok && !h.hasRule() {
		return nil
	}
	return t
}

// Periodic is implemented by balancers whose steps cycle with a period (χ steps for a
// dimension-exchange round, χ·n for a THRESHOLD-1 phase). Run stops with StatusStable
// when the loads are equal at two snapshots one period apart, checked at every multiple
// of the period (O(n) per check). A period ≤ 0 disables the check. The check is a
// default for balancers without a termination rule of their own: for a Terminator
// that has a rule in this run (see Terminator), Run checks stability only when
// RunOptions.StopWhenStable is set. RunOptions.NoStability disables it always.
type Periodic interface {
	// Period returns the period in steps; Run asks once per run, after Init.
	Period(s *State) int64
}

// StepBudgeter is implemented by balancers with a default step budget, typically the
// number of rounds after which their paper bounds the discrepancy (the diffusion
// schemes budget τ(G, K), BalancingTime). Run asks StepBudget once per run, after Init,
// when RunOptions.MaxSteps is 0 and UseTarget is false, and stops with StatusMaxSteps
// after that many steps. An error stops the run before its first step.
type StepBudgeter interface {
	StepBudget(s *State) (int64, error)
}

// Invariant is a property of loads that Run verifies.
type Invariant uint8

// The invariants Run checks. A balancer keeps both unless it implements Invariants.
const (
	// Conserves: the total is the initial total (or, for an Accountant, ExpectedTotal),
	// plus the workload's arrivals minus its completions (RunOptions.Workload).
	Conserves Invariant = 1 << iota
	// NonNegative: no load is ever negative.
	NonNegative
)

// String names the invariant, or the set of invariants joined by "|".
func (i Invariant) String() string {
	switch i {
	case 0:
		return "none"
	case Conserves:
		return "conservation"
	case NonNegative:
		return "non-negativity"
	case Conserves | NonNegative:
		return "conservation|non-negativity"
	}
	return fmt.Sprintf("Invariant(%d)", uint8(i))
}

// InvariantKeeper is implemented by balancers that keep fewer than both invariants:
// the FGS comparators may make loads negative (Run then counts negative loads in the
// Result instead of failing), and the ring's task queues are not conserved (Run then
// checks the total against Accountant.ExpectedTotal).
type InvariantKeeper interface {
	// Invariants returns the set of invariants the balancer keeps.
	Invariants() Invariant
}

// Reporter is implemented by balancers with figures of their own beyond Result's
// counters: the hypercube schedules' time per activity (CubeTimes), DISCREPANCY-1's
// decisions (Discrepancy1Report), the ring scheduler's speedup (RingStats), the
// perfect-tree protocol's phases and optimum (PerfectTreeReport). Run calls Report
// once, at the end of every run that got past Init (failed and cancelled runs
// included), and stores the value in Result.Report; each balancer's doc comment names
// the type it reports. A report is a plain struct that implements fmt.Stringer, which
// Result.String prints. It costs what the balancer says, at most O(n) for the built-in
// ones.
type Reporter interface {
	Report(s *State) any
}

// Accountant is implemented by balancers whose total changes by design (tasks spawn
// and finish); Run checks the loads' total against ExpectedTotal instead.
type Accountant interface {
	ExpectedTotal(s *State) int64
}

// State is the mutable state of one run, handed to every Step.
type State struct {
	// Net is the network. Balancers that need CSR access call AsGraph(s.Net) in Init.
	Net Network
	// Loads are the current loads, changed in place by Step.
	Loads Loads
	// Steps counts the steps completed so far.
	Steps int64
	// Time is the model time in the paper's units; Step advances it.
	Time int64
	// Moved counts token moves (one token crossing one link counts one).
	Moved int64
	// Messages counts messages sent (algorithms that send control messages).
	Messages int64
	// Seed is the run's seed. Parallel steps derive per-chunk streams from (Seed,
	// Steps, chunk) with internal/rng, so results do not depend on the worker count.
	Seed uint64
	// Rand is the run's sequential random source: a *rand.Rand of math/rand/v2 with a
	// PCG source, seeded from Seed at the start of every run. Steps that run in parallel
	// must not use it (see Seed).
	Rand *rand.Rand
	// Workers is the most goroutines a step may use (from RunOptions.Workers).
	Workers int
	// Workload is RunOptions.Workload (nil in a static run). Balancers that assume a
	// fixed total check it in Init and refuse a workload.
	Workload Workload
	// Arrived and Completed count the tokens the workload has added and removed so far.
	Arrived, Completed int64
	// Live is nil in a run without RunOptions.Churn; otherwise Live[e] says whether the
	// link of edge end e (Graph.EdgeIndex) is up at this step. Both ends of a link agree.
	Live []bool
	// NodeStreams is RunOptions.NodeStreams: the randomized balancers with node
	// programs draw node v's choices of step Steps from node.Random(Seed, Steps, v, ·).
	NodeStreams bool
	// RoundSteps is the number of steps of one round of the algorithm, the unit in
	// which algorithms with different steps compare: a round is over when every node
	// has had its chance at each of its links once. A balancer's Init sets it (χ for
	// dimension exchange and DISCREPANCY-1, where a step is one colour's matching);
	// 0, or a balancer without Init, means one step per round (the diffusions and
	// random matching, whose step is a synchronous round; the ring, whose step is a
	// time unit; the hypercube schedules, whose steps are phases best compared by
	// Time). Run reports Result.Rounds and Sample.Round = Steps / RoundSteps.
	RoundSteps int64
	// Context is the run's context, set by Run before the first step. Run checks it
	// between steps; a Step that can block or run long (the goroutine runtime of
	// PerfectTree runs a whole protocol in one Step) returns its error when it is done,
	// and Run then stops with StatusCanceled.
	Context context.Context
}

// BalancerName returns b's String() if it has one, else its Go type. It costs what b's
// String costs.
func BalancerName(b Balancer) string {
	if s, ok := b.(fmt.Stringer); ok {
		return s.String()
	}
	return fmt.Sprintf("%T", b)
}
