package tokendist

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"sync"

	"github.com/tokendist/tokendist/internal/nilcheck"
	"github.com/tokendist/tokendist/internal/par"
)

// DefaultMaxSteps is the step budget when RunOptions.MaxSteps is 0 and the balancer has
// no default budget of its own (StepBudgeter), or UseTarget is set.
const DefaultMaxSteps = 1 << 20

// RunOptions configures Run. The zero value runs until the first of: the balancer's own
// termination rule fires (Terminator, StatusDone); for a Periodic balancer without such
// a rule, the loads are stable (StatusStable); the balancer's default step budget runs
// out (StepBudgeter, StatusMaxSteps: τ(G, K) rounds for the diffusion schemes); or, for
// balancers without a default budget, DefaultMaxSteps steps (StatusMaxSteps). It records
// the first and last sample.
type RunOptions struct {
	// MaxSteps bounds the number of steps; negative is an error. 0 means the balancer's
	// default budget (StepBudgeter) when UseTarget is false and the run has no Workload
	// or Churn (the budget is for a fixed total on fixed links), else DefaultMaxSteps.
	MaxSteps int64
	// UseTarget enables stopping once the discrepancy is ≤ TargetDiscrepancy, checked
	// before every step (an O(n) scan per step).
	UseTarget bool
	// TargetDiscrepancy is the target for UseTarget.
	TargetDiscrepancy int64
	// NoStability disables the stability stop of Periodic balancers.
	NoStability bool
	// StopWhenStable enables the stability stop also for Periodic balancers with their
	// own termination rule (Terminator), which by default stop by that rule only.
	// NoStability takes precedence.
	StopWhenStable bool
	// SampleEvery records a Sample every that many steps (0: only the first and last).
	SampleEvery int64
	// Recorder, if not nil, receives every Sample as it is taken; an error stops the run.
	Recorder Recorder
	// Seed fixes every random choice of the run.
	Seed uint64
	// Workers bounds the goroutines a step may use; 0 means GOMAXPROCS. Results never
	// depend on it.
	Workers int
	// Workload, if not nil, adds and removes tokens after every step (see Workload);
	// Result.Arrived and Result.Completed count them and the Conserves check becomes
	// exact accounting. A run with a workload or churn has no stability stop.
	Workload Workload
	// Churn, if not nil, fails and recovers links before every step (see Churn).
	Churn Churn
	// Steady, if not nil, measures steady-state metrics after a warm-up into
	// Result.Steady (see SteadyOptions); it costs an O(n) scan per measured step.
	Steady *SteadyOptions
	// NodeStreams makes the randomized balancers that have node programs
	// (RandomizedDiffusion, RandomMatching, FGSRandomized) draw node v's choices of
	// step t from node.Random(Seed, t, v, ·), the stream its node program draws from,
	// instead of the default per-chunk streams, so that a synchronous host of the node
	// programs (NodeAlgorithm) gives exactly Run's loads, Moved and Messages. Results
	// still do not depend on Workers, and a step still does not allocate. It changes
	// the random choices (not their distribution) and costs time: no packed fast path,
	// one stream per node, still O(n + m) per step (docs/performance.md, "Figures moved
	// from doc comments", has the measured factors). So it is off by default (and then
	// every result is as before); other balancers ignore it (State.NodeStreams).
	NodeStreams bool
}

// Recorder receives samples during a run (progress bars, live plots, custom checks).
type Recorder interface {
	// Record receives one sample; s is the run's state, read-only, valid during the
	// call. An error stops the run with StatusFailed, wrapped.
	Record(s *State, smp Sample) error
}

// RecorderFunc adapts a function to Recorder.
type RecorderFunc func(s *State, smp Sample) error

// Record calls f.
func (f RecorderFunc) Record(s *State, smp Sample) error { return f(s, smp) }

// Run runs balancer b on network net from the given loads until one of the stop rules of
// opts fires, and returns the result. It validates its inputs (nil network or balancer,
// loads of the wrong length, negative loads, an int64 overflow, MaxSteps < 0), works on a
// copy of loads, and verifies the balancer's invariants at every sample and at the end
// (and, for balancers that may go negative, counts negative loads after every step).
// On failure it returns the partial Result (trace and loads so far) with StatusFailed
// and an error naming the balancer and step. Cancelling ctx stops the run between steps
// with StatusCanceled, the partial Result, and an error wrapping ctx's error (errors.Is
// works with context.Canceled and context.DeadlineExceeded). Cost: O(n) to set up (plus
// the balancer's Init and StepBudget), then per step the balancer's Step, O(n) more when
// UseTarget is set or the balancer may go negative, O(n) per sample and per stability
// check, and O(1) otherwise; the Trace grows by one Sample per sample.
//
// With RunOptions.Workload, Run applies it after every step and checks exact
// accounting (total = initial + arrivals − completions); with RunOptions.Churn, it
// updates State.Live before every step; a balancer that cannot honour either refuses it
// in Init, and Run returns that error. With RunOptions.Steady, a measured step costs
// O(n) more. See docs/dynamic.md.
//
// A nil ctx is an error. A balancer that changes the length of s.Loads fails the run
// with an *InvariantError. The counters Steps, Time, Moved and Messages never wrap: a
// Step that makes one of them decrease (an int64 overflow, or a buggy balancer) fails
// the run with an error wrapping ErrOverflow, and the Result keeps the last counters
// Run saw before the failing step. A panic in a balancer on one of the run's worker
// goroutines is re-raised on the caller's goroutine, after the other workers stopped;
// the balancer can then be reused (its Init starts afresh).
//
// One balancer value serves one run at a time: while b (a comparable value, in practice
// a pointer) is inside one Run, another Run with the same value returns at once with
// StatusFailed and an error wrapping ErrConcurrentUse that names the balancer. A run
// with more than one worker (RunOptions.Workers, 0 meaning GOMAXPROCS) holds the worker
// pool of GOMAXPROCS goroutines for its duration; a run with one worker starts none.
func Run(ctx context.Context, net Network, loads Loads, b Balancer, opts *RunOptions) (Result, error) {
	if ctx == nil {
		return Result{Status: StatusFailed, Balancer: safeName(b)}, errNilContext
	}
	if !nilcheck.IsNil(b) {
		release, err := claim(b)
		if err != nil {
			return Result{Status: StatusFailed, Balancer: safeName(b)}, err
		}
		defer release()
	}
	r, err := newRunner(net, loads, b, opts)
	if err != nil {
		return Result{Status: StatusFailed, Balancer: r.res.Balancer}, err
	}
	if r.s.Workers > 1 {
		par.Acquire()
		defer par.Release()
	}
	return r.run(ctx)
}

// running holds the balancer values inside a Run (keys), so that a second Run of the
// same value is refused (claim).
var running sync.Map

// claim marks b as running and returns the function that unmarks it, or an error
// wrapping ErrConcurrentUse if b is already running. Only pointers are tracked: a
// balancer passed by value is a copy per call, and two equal values (two nop{} of a
// stateless type, say) are not one balancer used twice. O(1).
func claim(b Balancer) (func(), error) {
	if reflect.TypeOf(b).Kind() != reflect.Pointer {
		return func() {}, nil
	}
	if _, busy := running.LoadOrStore(b, struct{}{}); busy {
		return nil, fmt.Errorf("%w: %s is already inside another Run (build one balancer per goroutine)", ErrConcurrentUse, BalancerName(b))
	}
	return func() { running.Delete(b) }, nil
}

// initGuard records the network and load count a balancer's Init prepared, so that Step
// refuses a State Init has not prepared (ErrNotInitialized) instead of indexing buffers
// that are missing or sized for another network. check costs O(1) and does not allocate
// unless it fails.
type initGuard struct {
	net  Network
	n    int
	ends int  // the length State.Live must have (the *Graph's edge ends; -1: unknown)
	cmp  bool // net is a pointer, so check can compare networks without a panic
	ok   bool
}

// set records s as prepared; call it at the end of a successful Init.
func (g *initGuard) set(s *State) {
	*g = initGuard{net: s.Net, n: len(s.Loads), ends: -1, ok: true}
	if gr, isGraph := s.Net.(*Graph); isGraph && gr != nil {
		g.ends = len(gr.adj)
	}
	// Only pointers are compared: == on an interface holding a struct whose fields hold
	// uncomparable values panics, and a value network is a copy per call anyway.
	g.cmp = s.Net != nil && reflect.TypeOf(s.Net).Kind() == reflect.Pointer
}

// reset forgets the prepared network; call it at the start of Init.
func (g *initGuard) reset() { *g = initGuard{} }

// check returns nil if s is the State Init prepared (the same network and load count),
// else an error wrapping ErrNotInitialized that names b (b.String is called only then);
// a nil State or a negative step count is an error wrapping ErrBadParameter.
func (g *initGuard) check(s *State, b fmt.Stringer) error {
	if s != nil && s.Steps >= 0 && g.ok && len(s.Loads) == g.n && (!g.cmp || s.Net == g.net) && (s.Live == nil || g.ends < 0 || len(s.Live) == g.ends) {
		return nil
	}
	return g.fail(s, b)
}

// fail explains why check refused s.
func (g *initGuard) fail(s *State, b fmt.Stringer) error {
	switch {
	case s == nil:
		return badParam("%s: Step of a nil *State", b)
	case s.Steps < 0:
		return badParam("%s: State.Steps is %d (want ≥ 0)", b, s.Steps)
	case !g.ok:
		return fmt.Errorf("%w: %s has not been initialised (call Run, or Init before Step)", ErrNotInitialized, b)
	case len(s.Loads) != g.n:
		return fmt.Errorf("%w: %s was initialised for %d loads, Step got %d (call Init again)", ErrNotInitialized, b, g.n, len(s.Loads))
	case s.Live != nil && g.ends >= 0 && len(s.Live) != g.ends:
		return badParam("%s: State.Live has %d flags, the network has %d edge ends", b, len(s.Live), g.ends)
	}
	return fmt.Errorf("%w: %s was initialised for another network (call Init again)", ErrNotInitialized, b)
}

// errNilContext reports a nil context.Context passed to a runner.
var errNilContext = badParam("nil context.Context")

// safeName is BalancerName for a possibly nil balancer.
func safeName(b Balancer) string {
	if b == nil {
		return ""
	}
	return BalancerName(b)
}

// nilReceiver is the error of a balancer method called on a nil pointer (a typed nil
// Balancer): it wraps ErrNilBalancer instead of panicking.
func nilReceiver(typ, method string) error {
	return fmt.Errorf("%w: %s on a nil *%s", ErrNilBalancer, method, typ)
}

// runner is one execution of Run.
type runner struct {
	roundSteps float64 // State.RoundSteps after Init, at least 1
	opts       RunOptions
	b          Balancer
	s          State
	res        Result
	keeps      Invariant
	total      int64
	done       Terminator
	period     int64
	snapshot   Loads
	n          int   // the network's order, the length of s.Loads
	checked    int64 // the step count at the last successful invariant check
	down       int
	steady     *steadyMeter
	rounder    rounder // non-nil when whole rounds may replace steps (setRounder)
	roundLen   int64   // the steps in one of its rounds
	saved      Loads   // the loads before a workload step near overflow (applyWorkload)
}

// rounder is a Balancer that can also perform a whole round of Colors() steps at once,
// with the same effect as that many calls of Step (the fused round of THRESHOLD-1 and
// THRESHOLD-2, DimensionExchange.round). round leaves s.Steps alone and returns the
// number of steps it completed, which Run adds.
type rounder interface {
	round(s *State) (int64, error)
	Colors() int
}

// setRounder lets the loop use b's Round when nothing in the run looks at the steps
// inside a round: no termination rule or target to test after each step, no workload,
// churn, steady-state meter or negative-load count, and samples and stability checks
// that fall on round boundaries.
func (r *runner) setRounder() {
	rb, ok := r.b.(rounder)
	if !ok {
		return
	}
	chi := int64(rb.Colors())
	if chi < 2 || r.done != nil || r.opts.UseTarget || r.opts.Workload != nil || r.opts.Churn != nil ||
		r.steady != nil || r.keeps&NonNegative == 0 || r.opts.SampleEvery%chi != 0 || r.period%chi != 0 {
		return
	}
	r.rounder, r.roundLen = rb, chi
}

// roundable reports whether the next iteration of the loop may be a whole round.
func (r *runner) roundable() bool {
	return r.rounder != nil && r.s.Steps%r.roundLen == 0 && r.s.Steps <= r.opts.MaxSteps-r.roundLen
}

// counters are State's counters before a step.
type counters struct{ steps, time, moved, messages int64 }

func newRunner(net Network, loads Loads, b Balancer, opts *RunOptions) (*runner, error) {
	r := &runner{}
	if opts != nil {
		r.opts = *opts
	}
	if nilcheck.IsNil(b) {
		return r, fmt.Errorf("%w (%T)", ErrNilBalancer, b)
	}
	r.b = b
	r.res.Balancer = BalancerName(b)
	if nilcheck.IsNil(net) {
		return r, fmt.Errorf("%w (%T)", ErrNilNetwork, net)
	}
	if n := net.Order(); n < 0 {
		return r, badParam("network order %d is negative", n)
	}
	if r.opts.MaxSteps < 0 {
		return r, badParam("MaxSteps %d is negative", r.opts.MaxSteps)
	}
	if r.opts.SampleEvery < 0 {
		return r, badParam("SampleEvery %d is negative", r.opts.SampleEvery)
	}
	if len(loads) != net.Order() {
		return r, fmt.Errorf("%w: %d loads for a network of %d nodes", ErrBadLoads, len(loads), net.Order())
	}
	total, err := loads.Validate()
	if err != nil {
		return r, err
	}
	r.total = total
	r.res.Initial = total
	r.keeps = Conserves | NonNegative
	if k, ok := b.(InvariantKeeper); ok {
		r.keeps = k.Invariants()
	}
	workers := r.opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	r.s = State{
		Net:         net,
		Loads:       loads.Clone(),
		Seed:        r.opts.Seed,
		Rand:        rand.New(rand.NewPCG(r.opts.Seed, 0x746f6b656e64)),
		Workers:     workers,
		NodeStreams: r.opts.NodeStreams,
	}
	r.n = len(loads)
	if err := r.initDynamics(); err != nil {
		return r, err
	}
	if in, ok := b.(Initializer); ok {
		if err := in.Init(&r.s); err != nil {
			return r, wrapf(err, "%s", r.res.Balancer)
		}
		if len(r.s.Loads) != r.n {
			return r, &InvariantError{Balancer: r.res.Balancer, CheckEvery: r.opts.SampleEvery, Invariant: Conserves,
				Detail: fmt.Sprintf("Init resized the load vector from %d to %d", r.n, len(r.s.Loads))}
		}
	}
	if r.s.RoundSteps < 0 {
		return r, badParam("%s set State.RoundSteps to %d (want ≥ 0: the steps of one round, 0 for one)", r.res.Balancer, r.s.RoundSteps)
	}
	r.roundSteps = float64(max(r.s.RoundSteps, 1))
	if r.opts.MaxSteps == 0 {
		r.opts.MaxSteps = DefaultMaxSteps
		dynamic := r.opts.Workload != nil || r.opts.Churn != nil
		if sb, ok := b.(StepBudgeter); ok && !r.opts.UseTarget && !dynamic {
			budget, err := sb.StepBudget(&r.s)
			if err != nil {
				return r, wrapf(err, "%s has no default step budget (set RunOptions.MaxSteps or UseTarget)", r.res.Balancer)
			}
			if budget < 0 {
				return r, badParam("%s returned a negative default step budget %d", r.res.Balancer, budget)
			}
			r.opts.MaxSteps = budget
		}
	}
	if w := r.opts.Workload; w != nil {
		if err := w.Init(&r.s); err != nil {
			return r, wrapf(err, "workload %s", workloadName(w))
		}
	}
	if err := r.initSteady(); err != nil {
		return r, err
	}
	r.done = terminatorOf(b)
	dynamic := r.opts.Workload != nil || r.opts.Churn != nil
	if p, ok := b.(Periodic); ok && !r.opts.NoStability && !dynamic && (r.done == nil || r.opts.StopWhenStable) {
		r.period = p.Period(&r.s)
		if r.period > 0 {
			r.snapshot = r.s.Loads.Clone()
		}
	}
	r.setRounder()
	return r, nil
}

func (r *runner) run(ctx context.Context) (Result, error) {
	r.s.Context = ctx
	s := &r.s
	status, err := r.loop(ctx)
	if err == nil {
		err = r.check()
	}
	if n := len(r.res.Trace); n == 0 || r.res.Trace[n-1].Step != s.Steps {
		// The last sample is taken even on failure, so nothing is lost.
		if serr := r.sample(); err == nil {
			err = serr
		}
	}
	if err != nil && status != StatusCanceled {
		status = StatusFailed
	}
	r.res.Status = status
	r.res.Loads = s.Loads
	r.res.Steps, r.res.Time, r.res.Moved, r.res.Messages = s.Steps, s.Time, s.Moved, s.Messages
	r.res.Rounds = float64(s.Steps) / r.roundSteps
	r.res.Arrived, r.res.Completed = s.Arrived, s.Completed
	if r.steady != nil {
		r.res.Steady = r.steady.stats()
	}
	if rep, ok := r.b.(Reporter); ok && len(s.Loads) == r.n {
		r.res.Report = rep.Report(s)
	}
	return r.res, err
}

// loop steps until a stop rule fires. It does not allocate per step.
func (r *runner) loop(ctx context.Context) (Status, error) {
	s := &r.s
	if err := r.sample(); err != nil {
		return StatusFailed, err
	}
	checkNeg := r.keeps&NonNegative == 0
	for {
		if err := ctx.Err(); err != nil {
			return StatusCanceled, wrapf(err, "%s stopped at step %d", r.res.Balancer, s.Steps)
		}
		if r.done != nil && r.done.Done(s) {
			return StatusDone, nil
		}
		if r.opts.UseTarget && s.Loads.Discrepancy() <= r.opts.TargetDiscrepancy {
			return StatusTarget, nil
		}
		if s.Steps >= r.opts.MaxSteps {
			return StatusMaxSteps, nil
		}
		if r.opts.Churn != nil {
			if err := r.applyChurn(); err != nil {
				return StatusFailed, err
			}
		}
		before := counters{s.Steps, s.Time, s.Moved, s.Messages}
		steps := int64(1)
		round := r.roundable()
		var err error
		if round {
			steps, err = r.rounder.round(s)
		} else {
			err = r.b.Step(s)
		}
		if err != nil {
			if round {
				s.Steps += steps // the steps of the round before the failing one
			}
			if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
				return StatusCanceled, wrapf(err, "%s stopped at step %d", r.res.Balancer, s.Steps)
			}
			return StatusFailed, wrapf(err, "%s failed at step %d", r.res.Balancer, s.Steps)
		}
		if len(s.Loads) != r.n {
			return StatusFailed, &InvariantError{Balancer: r.res.Balancer, Step: s.Steps + 1, LastChecked: s.Steps, CheckEvery: r.opts.SampleEvery,
				Invariant: Conserves, Detail: fmt.Sprintf("load vector resized from %d to %d", r.n, len(s.Loads))}
		}
		if s.Time < before.time || s.Moved < before.moved || s.Messages < before.messages || s.Steps > math.MaxInt64-steps {
			bad := counters{s.Steps, s.Time, s.Moved, s.Messages}
			s.Steps, s.Time, s.Moved, s.Messages = before.steps, before.time, before.moved, before.messages
			return StatusFailed, overflow("%s at step %d: counters (time, moved, messages) went from (%d, %d, %d) to (%d, %d, %d)",
				r.res.Balancer, before.steps, before.time, before.moved, before.messages, bad.time, bad.moved, bad.messages)
		}
		s.Steps += steps
		if r.opts.Workload != nil {
			if err := r.applyWorkload(); err != nil {
				return StatusFailed, err
			}
		}
		if r.steady != nil {
			r.steady.observe(s)
		}
		if checkNeg {
			r.countNegative()
		}
		if r.opts.SampleEvery > 0 && s.Steps%r.opts.SampleEvery == 0 {
			if err := r.check(); err != nil {
				return StatusFailed, err
			}
			if err := r.sample(); err != nil {
				return StatusFailed, err
			}
		}
		if r.period > 0 && s.Steps%r.period == 0 {
			if stable := r.stableSince(); stable {
				return StatusStable, nil
			}
		}
	}
}

// stableSince compares the loads with the snapshot one period ago and takes a new one.
func (r *runner) stableSince() bool {
	same := true
	for v, x := range r.s.Loads {
		if r.snapshot[v] != x {
			same = false
			r.snapshot[v] = x
		}
	}
	return same
}

func (r *runner) countNegative() {
	neg := false
	for _, x := range r.s.Loads {
		if x < 0 {
			neg = true
			r.res.MostNegative = min(r.res.MostNegative, x)
		}
	}
	if neg {
		r.res.NegativeSteps++
	}
}

// check verifies the declared invariants.
func (r *runner) check() error {
	s := &r.s
	if len(s.Loads) != r.n {
		return r.broke(Conserves, fmt.Sprintf("load vector resized to %d", len(s.Loads)))
	}
	if r.keeps&NonNegative != 0 {
		for v, x := range s.Loads {
			if x < 0 {
				return r.broke(NonNegative, fmt.Sprintf("load %d at node %d", x, v))
			}
		}
	}
	want := r.total + s.Arrived - s.Completed
	if a, ok := r.b.(Accountant); ok && r.keeps&Conserves == 0 {
		want = a.ExpectedTotal(s) + s.Arrived - s.Completed
	} else if r.keeps&Conserves == 0 {
		r.checked = s.Steps
		return nil
	}
	if got := s.Loads.Total(); got != want {
		return r.broke(Conserves, fmt.Sprintf("total %d, want %d", got, want))
	}
	r.checked = s.Steps
	return nil
}

// broke returns the InvariantError for a check failing now.
func (r *runner) broke(inv Invariant, detail string) error {
	return &InvariantError{
		Balancer: r.res.Balancer, Step: r.s.Steps, LastChecked: r.checked,
		CheckEvery: r.opts.SampleEvery, Invariant: inv, Detail: detail,
	}
}

func (r *runner) sample() error {
	s := &r.s
	mx, mn := s.Loads.extremes()
	smp := Sample{
		Step: s.Steps, Round: float64(s.Steps) / r.roundSteps, Time: s.Time, Discrepancy: mx - mn, Max: mx, Min: mn,
		Potential: s.Loads.Potential(), Moved: s.Moved, Messages: s.Messages,
		Arrived: s.Arrived, Completed: s.Completed, Down: r.down,
	}
	if mn < 0 {
		for _, x := range s.Loads {
			if x < 0 {
				smp.Negative++
			}
		}
	}
	r.res.Trace = append(r.res.Trace, smp)
	if r.opts.Recorder != nil {
		if err := r.opts.Recorder.Record(s, smp); err != nil {
			return wrapf(err, "recorder stopped %s at step %d", r.res.Balancer, s.Steps)
		}
	}
	return nil
}
