package tokendist

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/tokendist/tokendist/internal/nilcheck"
)

// RingPolicy is a balancing-plus-scheduling policy for growing dags on a ring of PEs.
// Every policy keeps a spawning task's left child, executes in breadth-first order (one
// task per PE per time unit) and differs in where the right child goes.
type RingPolicy int

const (
	// RingPolicyKSBF is Gao and Rosenberg's KS-BF (section 1.3): Keep left, Send right to
	// the clockwise neighbour, execute Breadth-First.
	RingPolicyKSBF RingPolicy = iota
	// RingPolicyKeepAll keeps both children (no balancing): PE 0 does all the work.
	RingPolicyKeepAll
	// RingPolicyLessLoaded sends the right child to the neighbour with the shorter queue
	// (measured after this step's executions, before its deliveries; ties go clockwise).
	RingPolicyLessLoaded
	// RingPolicyRandom sends the right child to a uniformly random neighbour (the run's
	// seed fixes the choices).
	RingPolicyRandom
)

// RingPolicies returns the four policies, KS-BF first. It costs O(1).
func RingPolicies() []RingPolicy {
	return []RingPolicy{RingPolicyKSBF, RingPolicyKeepAll, RingPolicyLessLoaded, RingPolicyRandom}
}

var ringPolicyNames = [...]string{"KS-BF", "keep-all", "less-loaded", "random-neighbour"}

// String names the policy.
func (p RingPolicy) String() string {
	if p < 0 || int(p) >= len(ringPolicyNames) {
		return fmt.Sprintf("RingPolicy(%d)", int(p))
	}
	return ringPolicyNames[p]
}

// MarshalText encodes the policy by name.
func (p RingPolicy) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// DefaultRingMaxTasks is the task budget when RingOptions.MaxTasks is 0 (enough for T_25).
const DefaultRingMaxTasks = 1 << 25

// ringMaxTasks bounds any budget so that steps and schedule indices fit an int32.
const ringMaxTasks = 1<<31 - 1

// RingOptions configures a RingScheduler; the zero value is KS-BF with the default budget,
// recording the schedule.
type RingOptions struct {
	// Policy chooses where right children go (default KS-BF).
	Policy RingPolicy
	// MaxTasks bounds the number of tasks the dag may create (0: DefaultRingMaxTasks, at
	// most 2^31-1). A run that would exceed it fails with ErrTaskBudget.
	MaxTasks int64
	// NoSchedule skips recording the schedule (12 bytes per task); Work and Stats remain.
	NoSchedule bool
}

// RingTask is one executed task of a schedule.
type RingTask struct {
	// Node names the task: a tree node's heap number (TreeNode, Table 1's names) or a
	// grid node's breadth-first ID (GridNode.ID).
	Node uint64 `json:"node"`
	// PE is the processor that executed it and Step the time step (the root runs at 0).
	PE   int   `json:"pe"`
	Step int64 `json:"step"`
}

// RingStats summarises a run of a growing dag on a ring.
type RingStats struct {
	// Policy is the policy that ran.
	Policy RingPolicy `json:"policy"`
	// P is the number of PEs.
	P int `json:"p"`
	// Tasks is the number of executed tasks N, Depth the number of levels of the dag (its
	// longest path in tasks), Time the completion time in steps.
	Tasks int64 `json:"tasks"`
	Depth int64 `json:"depth"`
	Time  int64 `json:"time"`
	// Work[i] is the number of tasks PE i executed; Start[i] and Finish[i] are its first
	// step and one past its last (-1 and -1 for an idle PE), so PE i worked without
	// interruption exactly when Finish[i]-Start[i] == Work[i].
	Work   []int64 `json:"work"`
	Start  []int64 `json:"start"`
	Finish []int64 `json:"finish"`
	// Idle is p·Time - Tasks, the PE-steps without work.
	Idle int64 `json:"idle"`
	// Moved counts task transmissions (one task crossing one link counts one).
	Moved int64 `json:"moved"`
	// Speedup is Tasks/Time (one PE needs Tasks steps) and Efficiency Speedup/p.
	Speedup    float64 `json:"speedup"`
	Efficiency float64 `json:"efficiency"`
	// LowerBound is max(⌈Tasks/p⌉, Depth): no schedule on p PEs is faster.
	LowerBound int64 `json:"lower_bound"`
	// Levels[l] is the number of tasks of level l (the root is level 0); len(Levels) is
	// Depth.
	Levels []int64 `json:"levels"`
	// RingLowerBound is RingScheduleLowerBound(P, Levels): the lower bound that also
	// charges the ring's start-up (a PE at distance k from PE 0 cannot work before step
	// k). It is at least LowerBound; no schedule on R_P is faster.
	RingLowerBound int64 `json:"ring_lower_bound"`
	// Spills counts tasks that reached a PE out of breadth-first order (the queue's
	// fallback heap took them); KS-BF on T_n and G_n has none.
	Spills int64 `json:"spills"`
}

// String summarises the statistics: tasks, completion time, speedup and efficiency.
func (st RingStats) String() string {
	return fmt.Sprintf("executed %d tasks in time %d, speedup %.2f, efficiency %.2f, moved %d",
		st.Tasks, st.Time, st.Speedup, st.Efficiency, st.Moved)
}

// RingScheduler executes a dynamically growing binary tree-dag or grid-dag on the ring R_p
// under a balancing-plus-scheduling policy, by default Gao and Rosenberg's KS-BF (section
// 1.3): at every step each PE with a nonempty queue executes the first task in
// breadth-first order; a spawning task's left child stays and its right child goes to the
// clockwise neighbour, available there from the next step. One step is one time unit.
//
// It runs through Run (use RunRing, or Run with Ring(p) and loads [1 0 ... 0]: the root
// task on PE 0); the loads are the numbers of queued (active) tasks per PE. Tasks spawn
// and execute, so the total is not conserved: Run checks it against the balancer's own
// count of tasks activated minus tasks executed. The run stops (StatusDone) when every
// task has executed. Result.Report is its RingStats (work per PE, completion and idle
// time, speedup, efficiency, lower bounds), and Schedule gives the exact schedule (PE and
// step of every task).
//
// A grid node with two parents (a binary task) becomes active when both have executed;
// it lives on the PE its first arriving arc chose (under KS-BF both arcs go to PE k mod p,
// Lemma 1.1(b)). A step costs O(p + tasks executed) and does not allocate once its
// buffers have grown (they are kept across runs).
type RingScheduler struct {
	p    int
	tree TreeDag
	grid GridDag
	opts RingOptions
	ring *Graph

	q        []bfQueue
	execPE   []int32
	execKey  []uint64
	snap     []int
	waiting  map[uint64]int32
	created  int64
	spawned  int64
	executed int64
	moved    int64
	depth    int64
	levels   []int64 // levels[l]: tasks of level l executed
	work     []int64
	start    []int64
	finish   []int64
	// The schedule: per PE, the executed nodes in order and the runs of consecutive
	// busy steps (one run per PE under KS-BF on T_n and G_n, Theorems 2.2 and 3.2).
	log  []idLog
	runs [][]ringRun

	ready initGuard
}

var (
	_ Balancer        = (*RingScheduler)(nil)
	_ Initializer     = (*RingScheduler)(nil)
	_ Terminator      = (*RingScheduler)(nil)
	_ InvariantKeeper = (*RingScheduler)(nil)
	_ Accountant      = (*RingScheduler)(nil)
	_ Reporter        = (*RingScheduler)(nil)
	_ fmt.Stringer    = (*RingScheduler)(nil)
)

// ringRun is a run of consecutive busy steps of one PE.
type ringRun struct{ start, n int64 }

// idLog is an append-only list of node IDs in chunks that double up to 64K entries, so
// appending never copies and a reset keeps the memory for the next run.
type idLog struct {
	chunks [][]uint64
	cur    int
}

func (l *idLog) reset() {
	for i := range l.chunks {
		l.chunks[i] = l.chunks[i][:0]
	}
	l.cur = 0
}

func (l *idLog) add(x uint64) {
	if len(l.chunks) == 0 {
		l.chunks = append(l.chunks, make([]uint64, 0, 256))
	}
	if c := l.chunks[l.cur]; len(c) == cap(c) {
		l.cur++
		if l.cur == len(l.chunks) {
			l.chunks = append(l.chunks, make([]uint64, 0, min(2*cap(c), 1<<16)))
		}
	}
	l.chunks[l.cur] = append(l.chunks[l.cur], x)
}

// NewRingTree returns the policy of opts (default KS-BF) on the ring R_p for the tree-dag
// grown by dag. It needs p ≥ 1 and a non-nil dag. It costs O(p).
func NewRingTree(p int, dag TreeDag, opts *RingOptions) (*RingScheduler, error) {
	if dag == nil {
		return nil, badParam("RingScheduler needs a tree growth rule, got nil")
	}
	return newRing(p, dag, nil, opts)
}

// NewRingGrid returns the policy of opts (default KS-BF) on the ring R_p for the grid-dag
// grown by dag. It needs p ≥ 1 and a non-nil dag. It costs O(p).
func NewRingGrid(p int, dag GridDag, opts *RingOptions) (*RingScheduler, error) {
	if dag == nil {
		return nil, badParam("RingScheduler needs a grid growth rule, got nil")
	}
	return newRing(p, nil, dag, opts)
}

func newRing(p int, tree TreeDag, grid GridDag, opts *RingOptions) (*RingScheduler, error) {
	b := &RingScheduler{p: p, tree: tree, grid: grid}
	if opts != nil {
		b.opts = *opts
	}
	if p < 1 || p >= maxNodes {
		return nil, badParam("RingScheduler needs p ≥ 1 PEs, got p = %d", p)
	}
	// A typed nil (a nil TreeDagFunc or GridDagFunc) would panic in the first step.
	if tree != nil && nilcheck.IsNil(tree) {
		return nil, badParam("RingScheduler needs a tree growth rule, got a nil %T", tree)
	}
	if grid != nil && nilcheck.IsNil(grid) {
		return nil, badParam("RingScheduler needs a grid growth rule, got a nil %T", grid)
	}
	if b.opts.Policy < 0 || int(b.opts.Policy) >= len(ringPolicyNames) {
		return nil, badParam("unknown ring policy %d", int(b.opts.Policy))
	}
	if b.opts.MaxTasks < 0 || b.opts.MaxTasks > ringMaxTasks {
		return nil, badParam("ring task budget MaxTasks = %d outside 0..%d", b.opts.MaxTasks, int64(ringMaxTasks))
	}
	if b.opts.MaxTasks == 0 {
		b.opts.MaxTasks = DefaultRingMaxTasks
	}
	return b, nil
}

// P returns the number of PEs.
func (b *RingScheduler) P() int { return b.p }

// Policy returns the policy.
func (b *RingScheduler) Policy() RingPolicy { return b.opts.Policy }

// String names the policy and the ring, e.g. "KS-BF on R_8".
func (b *RingScheduler) String() string { return fmt.Sprintf("%v on R_%d", b.opts.Policy, b.p) }

// RunRing runs b through Run on Ring(p) from the root task on PE 0 and returns Run's
// Result (Time is the number of steps, Total the tasks still queued). With opts nil or
// opts.MaxSteps 0 the step budget is MaxTasks+1, enough for any dag within the task
// budget. Cost: O(T·p) for T steps, plus the dag's task count.
func RunRing(ctx context.Context, b *RingScheduler, opts *RunOptions) (Result, error) {
	if b == nil {
		return Result{Status: StatusFailed}, fmt.Errorf("%w: RunRing of a nil *RingScheduler", ErrNilBalancer)
	}
	if b.ring == nil {
		g, err := Ring(b.p)
		if err != nil {
			return Result{Status: StatusFailed, Balancer: b.String()}, err
		}
		b.ring = g
	}
	var o RunOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxSteps == 0 {
		o.MaxSteps = b.opts.MaxTasks + 1
	}
	loads := make(Loads, b.p)
	loads[0] = 1
	return Run(ctx, b.ring, loads, b, &o)
}

// checkRing verifies that net is R_p with node i's clockwise neighbour i+1 mod p. It does
// not allocate unless it fails.
func checkRing(net Network, p int) error {
	if net.Order() != p {
		return badParam("RingScheduler for p = %d PEs needs the ring R_%d, got a network of %d nodes", p, p, net.Order())
	}
	for i := 0; i < p; i++ {
		want := ringNeighbours(i, p)
		got := net.Neighbors(i)
		ok := len(got) == want.len()
		for j := 0; ok && j < len(got); j++ {
			ok = got[j] == want.v[j]
		}
		if !ok {
			return badParam("RingScheduler needs the ring R_%d (node i adjacent to i±1 mod %d): node %d has neighbours %v, want %v", p, p, i, got, want)
		}
	}
	return nil
}

// ringNeighbours returns the ascending neighbours of i in the simple graph R_p (a view of
// an array, so that the caller's check does not allocate).
func ringNeighbours(i, p int) ringNb {
	switch p {
	case 1:
		return ringNb{}
	case 2:
		return ringNb{n: 1, v: [2]int32{int32(1 - i)}}
	}
	a, c := int32((i+p-1)%p), int32((i+1)%p)
	if a > c {
		a, c = c, a
	}
	return ringNb{n: 2, v: [2]int32{a, c}}
}

// ringNb is a short neighbour list.
type ringNb struct {
	n int
	v [2]int32
}

func (r ringNb) len() int { return r.n }

func (r ringNb) String() string { return fmt.Sprint(r.v[:r.n]) }

// Init validates the network (R_p) and the loads (the root on PE 0), resets the run state
// and the rule (Resetter), and queues the root. It refuses a Workload and Churn: its
// loads are the tasks of a dag, which spawn and finish by the dag's own rule.
func (b *RingScheduler) Init(s *State) error {
	if b == nil {
		return nilReceiver("RingScheduler", "Init")
	}
	b.ready.reset()
	if err := refuseDynamic(s, "RingScheduler", false, false, "its loads are the tasks of a growing dag, accounted by the dag"); err != nil {
		return err
	}
	if err := checkRing(s.Net, b.p); err != nil {
		return err
	}
	for i, x := range s.Loads {
		if (i == 0 && x != 1) || (i > 0 && x != 0) {
			return fmt.Errorf("%w: RingScheduler starts with the root task on PE 0 (loads [1 0 ... 0]), got load %d on PE %d", ErrBadLoads, x, i)
		}
	}
	if b.q == nil {
		b.q = make([]bfQueue, b.p)
		b.work = make([]int64, b.p)
		b.start = make([]int64, b.p)
		b.finish = make([]int64, b.p)
		b.snap = make([]int, b.p)
		b.execPE = make([]int32, 0, b.p)
		b.execKey = make([]uint64, 0, b.p)
		b.waiting = make(map[uint64]int32)
		b.log = make([]idLog, b.p)
		b.runs = make([][]ringRun, b.p)
	}
	for i := range b.q {
		b.q[i].reset()
		b.work[i], b.start[i], b.finish[i] = 0, -1, -1
		b.log[i].reset()
		b.runs[i] = b.runs[i][:0]
	}
	clear(b.waiting)
	b.created, b.spawned, b.executed, b.moved, b.depth = 1, 1, 0, 0, 0
	b.levels = b.levels[:0]
	if r, ok := b.tree.(Resetter); ok {
		r.Reset()
	}
	if r, ok := b.grid.(Resetter); ok {
		r.Reset()
	}
	root := uint64(TreeRoot)
	if b.grid != nil {
		root = 0 // ⟨0,0⟩
	}
	b.q[0].push(0, root)
	b.ready.set(s)
	return nil
}

// Invariants declares that queue lengths stay non-negative; the total changes by design.
func (b *RingScheduler) Invariants() Invariant { return NonNegative }

// ExpectedTotal is the number of tasks activated minus the number executed, from the
// balancer's own counters.
func (b *RingScheduler) ExpectedTotal(*State) int64 { return b.spawned - b.executed }

// Done reports whether every task has executed (no active and no waiting task).
func (b *RingScheduler) Done(*State) bool {
	return b.executed == b.spawned && len(b.waiting) == 0
}

// Report returns the run's RingStats (Reporter): completion time, work per PE, idle
// time, speedup, efficiency and the lower bounds, in O(p).
func (b *RingScheduler) Report(*State) any { return b.stats() }

// Step executes one time unit: every PE with work executes its first task in
// breadth-first order, then the spawned children are delivered (available next step). It
// costs O(p) plus, per queue operation, O(1) while tasks arrive in breadth-first order
// (always for KS-BF on T_n and G_n, Theorems 2.2 and 3.2) and O(log q) otherwise, for a
// queue of q tasks. Before Init it returns an error wrapping ErrNotInitialized.
func (b *RingScheduler) Step(s *State) error {
	if b == nil {
		return nilReceiver("RingScheduler", "Step")
	}
	if err := b.ready.check(s, b); err != nil {
		return err
	}
	b.execPE, b.execKey = b.execPE[:0], b.execKey[:0]
	for i, x := range s.Loads {
		if x > 0 {
			b.execPE = append(b.execPE, int32(i))
			b.execKey = append(b.execKey, b.q[i].pop())
			s.Loads[i]--
		}
	}
	if len(b.execPE) == 0 {
		return b.stuck()
	}
	if b.opts.Policy == RingPolicyLessLoaded {
		for i := range b.q {
			b.snap[i] = b.q[i].len()
		}
	}
	step := s.Steps
	for e, pe := range b.execPE {
		i := int(pe)
		key := b.execKey[e]
		var err error
		if b.grid != nil {
			err = b.execGrid(s, i, key)
		} else {
			err = b.execTree(s, i, key)
		}
		if err != nil {
			return err
		}
		b.executed++
		b.work[i]++
		if b.start[i] < 0 {
			b.start[i] = step
		}
		if !b.opts.NoSchedule {
			if b.finish[i] == step {
				b.runs[i][len(b.runs[i])-1].n++
			} else {
				b.runs[i] = append(b.runs[i], ringRun{step, 1})
			}
		}
		b.finish[i] = step + 1
	}
	s.Time++
	s.Moved = b.moved
	return nil
}

// dest returns the PE that receives the right child of a task executed on PE i.
func (b *RingScheduler) dest(s *State, i int) int {
	cw, ccw := (i+1)%b.p, (i+b.p-1)%b.p
	switch b.opts.Policy {
	case RingPolicyKeepAll:
		return i
	case RingPolicyLessLoaded:
		if b.snap[ccw] < b.snap[cw] {
			return ccw
		}
	case RingPolicyRandom:
		if s.Rand.IntN(2) == 1 {
			return ccw
		}
	}
	return cw
}

// send queues key on PE d, coming from PE i, and counts the link crossings.
func (b *RingScheduler) send(s *State, i, d int, key uint64) {
	stream := 2
	switch d {
	case i:
		stream = 0
	case (i + 1) % b.p:
		stream = 1
	}
	b.q[d].push(stream, key)
	s.Loads[d]++
	b.spawned++
	b.moved += int64(ringDistance(i, d, b.p))
}

func ringDistance(i, d, p int) int {
	x := (d - i + p) % p
	return min(x, p-x)
}

// create counts n new tasks against the budget.
func (b *RingScheduler) create(s *State, n int64) error {
	if b.created+n > b.opts.MaxTasks {
		return fmt.Errorf("%w: MaxTasks = %d tasks created by step %d and the growth rule is still spawning (raise RingOptions.MaxTasks if the dag is finite)", ErrTaskBudget, b.opts.MaxTasks, s.Steps)
	}
	b.created += n
	return nil
}

func (b *RingScheduler) record(i int, id uint64) {
	if !b.opts.NoSchedule {
		b.log[i].add(id)
	}
}

// countLevel counts an executed task of level l (and the depth). The slice grows only
// when a run goes deeper than every earlier run of b.
func (b *RingScheduler) countLevel(l int) {
	for len(b.levels) <= l {
		b.levels = append(b.levels, 0)
	}
	b.levels[l]++
	if int64(l)+1 > b.depth {
		b.depth = int64(l) + 1
	}
}

func (b *RingScheduler) execTree(s *State, i int, key uint64) error {
	x := TreeNode(key)
	b.record(i, key)
	b.countLevel(x.Level())
	if !b.tree.Spawns(x) {
		return nil
	}
	if x.Level() >= TreeMaxLevel {
		return fmt.Errorf("%w: tree node at level %d spawns, deeper than TreeMaxLevel = %d", ErrBadDag, x.Level(), TreeMaxLevel)
	}
	if err := b.create(s, 2); err != nil {
		return err
	}
	b.send(s, i, i, key*2)
	b.send(s, i, b.dest(s, i), key*2+1)
	return nil
}

// gridKey orders grid nodes breadth-first: by level, then by k.
func gridKey(x GridNode) uint64 { return uint64(x.Level())<<32 | uint64(x.K) }

func gridNodeOfKey(key uint64) GridNode {
	k := int(key & (1<<32 - 1))
	return GridNode{K: k, L: int(key>>32) - k}
}

func (b *RingScheduler) execGrid(s *State, i int, key uint64) error {
	x := gridNodeOfKey(key)
	b.record(i, x.ID())
	b.countLevel(x.Level())
	if !b.grid.Spawns(x) {
		return nil
	}
	if x.Level() >= math.MaxInt32-1 {
		return fmt.Errorf("%w: grid node %v spawns beyond level 2^31-2", ErrBadDag, x)
	}
	left, right := x.Left(), x.Right()
	leftBinary := x.K > 0 && b.grid.Spawns(GridNode{x.K - 1, x.L + 1})
	rightBinary := x.L > 0 && b.grid.Spawns(GridNode{x.K + 1, x.L - 1})
	if err := b.arc(s, i, i, left, leftBinary); err != nil {
		return err
	}
	return b.arc(s, i, b.dest(s, i), right, rightBinary)
}

// arc delivers a task-arc from a task on PE i to child c, sent to PE d: a unary arc
// creates an active task on d; a binary arc creates an inactive task on d, or activates
// the waiting one wherever it lives.
func (b *RingScheduler) arc(s *State, i, d int, c GridNode, binary bool) error {
	key := gridKey(c)
	if !binary {
		if err := b.create(s, 1); err != nil {
			return err
		}
		b.send(s, i, d, key)
		return nil
	}
	if e, ok := b.waiting[key]; ok {
		delete(b.waiting, key)
		b.send(s, i, int(e), key)
		return nil
	}
	if err := b.create(s, 1); err != nil {
		return err
	}
	b.waiting[key] = int32(d)
	b.moved += int64(ringDistance(i, d, b.p))
	return nil
}

// stuck reports the first waiting grid node when no task is active.
func (b *RingScheduler) stuck() error {
	if len(b.waiting) == 0 {
		return nil
	}
	first := ^uint64(0)
	for k := range b.waiting {
		first = min(first, k)
	}
	x := gridNodeOfKey(first)
	return fmt.Errorf("%w: grid node %v waits for its second parent, but no task is left: the rule says both %v and %v spawn, and one of them is never created",
		ErrBadDag, x, GridNode{x.K, x.L - 1}, GridNode{x.K - 1, x.L})
}

// Schedule returns every executed task of the last run with its PE and step, in
// execution order (by step, then PE). It is empty with RingOptions.NoSchedule. It costs
// O(tasks + steps) and allocates 24 bytes per task (the run itself stores 8).
func (b *RingScheduler) Schedule() []RingTask {
	if b.opts.NoSchedule || b.q == nil {
		return nil
	}
	// Counting sort by step: off[t] is where step t's tasks start.
	var steps int64
	for i := range b.finish {
		steps = max(steps, b.finish[i])
	}
	off := make([]int64, steps+1)
	for _, runs := range b.runs {
		for _, r := range runs {
			for t := r.start; t < r.start+r.n; t++ {
				off[t+1]++
			}
		}
	}
	for t := int64(1); t <= steps; t++ {
		off[t] += off[t-1]
	}
	out := make([]RingTask, off[steps])
	for pe, runs := range b.runs {
		ci, cj := 0, 0
		chunks := b.log[pe].chunks
		for _, r := range runs {
			for t := r.start; t < r.start+r.n; t++ {
				for cj == len(chunks[ci]) {
					ci, cj = ci+1, 0
				}
				out[off[t]] = RingTask{Node: chunks[ci][cj], PE: pe, Step: t}
				off[t]++
				cj++
			}
		}
	}
	return out
}

// stats summarises the last run: completion time, work, idle time, speedup, efficiency.
// It costs O(p).
func (b *RingScheduler) stats() RingStats {
	st := RingStats{
		Policy: b.opts.Policy, P: b.p, Tasks: b.executed, Depth: b.depth,
		Work: slices.Clone(b.work), Start: slices.Clone(b.start), Finish: slices.Clone(b.finish),
		Moved: b.moved, Levels: slices.Clone(b.levels),
	}
	for i := range b.q {
		st.Time = max(st.Time, b.finish[i])
		st.Spills += b.q[i].spills
	}
	st.Idle = int64(b.p)*st.Time - st.Tasks
	if st.Time > 0 {
		st.Speedup = float64(st.Tasks) / float64(st.Time)
		st.Efficiency = st.Speedup / float64(b.p)
	}
	st.LowerBound = max((st.Tasks+int64(b.p)-1)/int64(b.p), st.Depth)
	st.RingLowerBound, _ = RingScheduleLowerBound(b.p, st.Levels) // valid input by construction
	return st
}
