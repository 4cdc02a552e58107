package async

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/tokendist/tokendist/node"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/faults"
	"github.com/tokendist/tokendist/handoff"
	"github.com/tokendist/tokendist/internal/errs"
	"github.com/tokendist/tokendist/internal/rng"
)

// Defaults of Options.
const (
	// DefaultMaxTime is Options.MaxTime's default, in time units.
	DefaultMaxTime = 1 << 20
	// DefaultMaxEvents is Options.MaxEvents's default.
	DefaultMaxEvents = 1 << 40
	// DefaultCheckEvery is Options.CheckEvery's default.
	DefaultCheckEvery = 1 << 16
	// MaxNodes is the largest network Simulate accepts.
	MaxNodes = 1 << 29
)

// Options configure Simulate. The zero value is a synchronous, fault-free run of
// unbounded rounds with seed 0.
type Options struct {
	// Seed seeds the programs' random streams (node.Context.Seed) and the network's.
	Seed uint64
	// Rounds is node.Context.Rounds (0: no limit).
	Rounds int64
	// Faults is the fault model: delays, loss, duplication, reordering, crashes and
	// clocks (the network itself, the graph, is Simulate's net).
	Faults faults.Model
	// RetransmitTicks is handoff.Config.RetransmitTicks (0:
	// handoff.DefaultRetransmitTicks).
	RetransmitTicks int64
	// Workload, when not nil, changes the loads every WorkloadEvery time units (0: 1;
	// a positive WorkloadEvery below faults.MinInterval, negative, NaN or infinite is an
	// error); its Apply sees a tokendist.State of the current loads with Steps counting
	// its calls; a run with a workload ends only at MaxTime, MaxEvents or the context.
	Workload      tokendist.Workload
	WorkloadEvery float64
	// MaxTime and MaxEvents bound the run (0: DefaultMaxTime, DefaultMaxEvents); the
	// run then stops with tokendist.StatusMaxSteps.
	MaxTime   float64
	MaxEvents int64
	// CheckEvery is the number of events between two full conservation checks (0: the
	// larger of DefaultCheckEvery and 4(n + 2m), so that the O(n + m) full checks cost
	// O(1) per event amortized); the O(1) checks run after every event regardless.
	CheckEvery int64
	// Observer, when not nil, receives a Snapshot of the run at the start, every
	// ObserveEvery time units (0: 1; a positive value below faults.MinInterval,
	// negative, NaN or infinite is an error) and at the end (see Observer for the
	// contract). Each snapshot costs O(n + m + datagrams in flight), so a run makes
	// about Result.Time/ObserveEvery of them at that cost; nil (the zero value) observes
	// nothing and costs nothing (one comparison per event).
	Observer     Observer
	ObserveEvery float64
}

// Result is the outcome of Simulate.
type Result struct {
	// Status is StatusDone when every program became idle with nothing in flight,
	// StatusMaxSteps at MaxTime or MaxEvents, StatusCanceled for the context and
	// StatusFailed with an error.
	Status tokendist.Status
	// Loads are the final loads, the persisted ones (a down node's are its storage's;
	// after a program's failure, the loads of the last persisted states, which with
	// InFlight still account for every token).
	Loads tokendist.Loads
	// Moved and Messages are the sums of the programs' node.Context counters.
	Moved, Messages int64
	// Datagrams counts datagrams handed to the network (data and acks, copies of
	// duplicated ones included); Retransmissions the data datagrams sent again;
	// Duplicates the data datagrams dropped as already delivered; OutOfOrder those
	// dropped as early; Lost those the network lost or a down node dropped.
	Datagrams, Retransmissions, Duplicates, OutOfOrder, Lost int64
	// Crashes and Restarts count node crashes and restarts.
	Crashes, Restarts int64
	// Time is the simulated time at the end, Events the events handled.
	Time   float64
	Events int64
	// InFlight is the number of tokens in data datagrams logged at a sender and not
	// yet delivered at the end; Undelivered the number of such datagrams.
	InFlight, Undelivered int64
	// Arrived and Completed are the tokens the workload added and removed.
	Arrived, Completed int64
}

// ConservationError reports a broken token invariant: the sum of the persisted loads
// and the tokens in flight differs from initial + arrived − completed, a load is
// negative, or a datagram was delivered or acknowledged that the protocol rules out.
type ConservationError struct {
	// Time and Event locate the detection.
	Time  float64
	Event int64
	// Detail says what broke, naming the node and link.
	Detail string
}

// Error describes the broken invariant: the model time, the event and the detail.
func (e *ConservationError) Error() string {
	return fmt.Sprintf("%sasync: token conservation broken at time %g (event %d): %s", errs.Prefix, e.Time, e.Event, e.Detail)
}

// nodeMachine is what the simulator drives on each node: a count machine (counter), or in the
// tests a wrapper of one that breaks the protocol. Peers read each other's sequence
// state and logs through it for the O(1) checks of deliveries and acknowledgements.
type nodeMachine interface {
	Start() error
	Step(handoff.Datagram) error
	Tick(now int64) error
	SetLoad(int64) error
	HasReady() bool
	Ready() (handoff.Ready, error)
	Advance()
	NodeContext() *node.Context
	ProgramIdle() bool
	Stats() handoff.Stats
	Idle() bool
	Unacked() int
	Sequence(port int) handoff.Sequence
	Logged(port int, seq uint64) (node.Message, bool)
	// restore returns a node of the same kind rebuilt from the persisted state, around
	// the fresh program prog, for node v of s (after a crash).
	restore(s *sim, v int, prog node.Program, state []byte) (nodeMachine, error)
}

// counter is the node of every Simulate run: a handoff.CountMachine.
type counter struct{ *handoff.CountMachine }

func (counter) restore(s *sim, v int, prog node.Program, state []byte) (nodeMachine, error) {
	m, err := handoff.RestoreCountMachine(prog, s.config(v), state)
	if err != nil {
		return nil, err
	}
	return counter{m}, nil
}

// newNode makes the node that the simulator drives on node v of s around a new
// machine; Simulate's is plain (counter), the tests' may break the protocol.
type newNode func(s *sim, v int, m *handoff.CountMachine) nodeMachine

func plain(_ *sim, _ int, m *handoff.CountMachine) nodeMachine { return counter{m} }

// simNode is the simulator's view of one node.
type simNode struct {
	nd       nodeMachine
	store    []byte  // the persisted state
	load     int64   // the persisted load
	period   float64 // tick interval
	lastK    int64   // last local tick
	inc      int32   // incarnation: ticks of older ones are stale
	ticking  bool    // a tick event is pending
	down     bool
	busy     bool // program not idle
	armed    faults.CrashPoint
	armedOn  bool
	armedFor float64       // down time of the armed crash
	stats    handoff.Stats // of earlier incarnations
}

type sim struct {
	ctx   context.Context
	g     *tokendist.Graph
	progs node.Programs
	opts  Options
	model faults.Model
	off   []int          // CSR offsets of the edge ends
	rev   []int32        // rev[e]: the receiver's port of edge end e
	link  []faults.Delay // per edge end, when LinkDelay is set
	fifo  []float64      // per edge end: the latest arrival of a datagram sent in order on it
	nodes []simNode
	q     eventHeap
	pool  []handoff.Datagram
	free  []int32
	r     *rand.Rand
	now   float64
	res   Result

	sumLoad, inFlight, undelivered int64
	expected                       int64
	busy, down                     int
	scratch                        handoff.Scratch // shared by every node's machine
	base                           handoff.Stats   // the handled node's stats before the event
	wlState                        tokendist.State
	lastCheck                      int64
	initial                        int64 // Σ initial loads

	// Observation (observe.go): nextObs is +Inf without an Observer.
	nextObs  float64
	obsK     int64    // nextObs = obsK · ObserveEvery
	snap     Snapshot // reused by every snapshot
	linkLost []int64  // per edge end, lost since the last snapshot (nil without an Observer)
	lostMark int64    // Result.Lost at the last snapshot
}

// Simulate runs the node programs progs on net from loads in the event-driven
// simulator, with the handoff protocol (a handoff.CountMachine on every node) on every
// link and the fault model of opts.Faults. A nil opts is the zero Options.
//
// Schedule: with unit delays and no faults the run follows the synchronous schedule:
// at time 0 every node starts, in increasing node order; a datagram sent at time t
// arrives at t+1; at each time t ≥ 1 the nodes are visited in increasing order, each
// receiving its messages of time t by port and then send order, and then ticking (Now =
// t) unless its program is idle. In general, events are ordered by time, then node,
// then (crash, arrivals by port, tick), then scheduling order; node v ticks at the
// multiples of its tick interval while it is not idle. Port p of node v is v's p-th
// neighbour in tokendist.AsGraph(net).
//
// Conservation is checked after every event in O(1) and in full, in O(n + in flight),
// every opts.CheckEvery events and at the end; a violation fails the run with a
// *ConservationError. The run ends when every program is idle, no data is in flight
// and no node is down (StatusDone), or at a bound. Errors start with "tokendist: " and
// name the bad value; a program's error or panic (in any of its methods) fails the run
// naming the node and the method, and a sum of the nodes' Moved or Messages that would
// overflow int64 fails it with an error wrapping tokendist.ErrOverflow, as Run's. The
// run is deterministic in (net, loads, programs, opts) and starts no goroutine. Cost:
// O(log(events pending)) per event plus the programs' calls and a node's state
// encoding per event that changes it; memory O(n + m + pending events + logs).
func Simulate(ctx context.Context, net tokendist.Network, progs node.Programs, loads tokendist.Loads, opts *Options) (Result, error) {
	return simulate(ctx, net, progs, loads, opts, plain)
}

// simulate is Simulate with the nodes that mk makes.
func simulate(ctx context.Context, net tokendist.Network, progs node.Programs, loads tokendist.Loads, opts *Options, mk newNode) (Result, error) {
	s := &sim{ctx: ctx, progs: progs}
	s.res.Status = tokendist.StatusFailed
	if opts != nil {
		s.opts = *opts
	}
	err := s.init(net, loads, mk)
	if err == nil && s.opts.Observer != nil {
		err = s.observe(0, false)
	}
	if err == nil {
		err = s.run()
		if err == nil && s.res.Status == tokendist.StatusDone {
			err = s.fullCheck()
		}
		if err == nil && s.opts.Observer != nil {
			err = s.observe(s.now, true)
		}
	}
	if ferr := s.finish(); err == nil {
		err = ferr
	}
	if err != nil && s.res.Status != tokendist.StatusCanceled {
		s.res.Status = tokendist.StatusFailed
	}
	return s.res, err
}

func (s *sim) init(net tokendist.Network, loads tokendist.Loads, mk newNode) error {
	if s.ctx == nil {
		s.ctx = context.Background()
	}
	if s.progs == nil {
		return errs.BadParam("nil NodePrograms")
	}
	g, err := tokendist.AsGraph(net)
	if err != nil {
		return err
	}
	s.g = g
	n := g.Order()
	if n > MaxNodes {
		return errs.BadParam("network of %d nodes exceeds MaxNodes %d", n, MaxNodes)
	}
	if len(loads) != n {
		return fmt.Errorf("%w: %d loads for %d nodes", tokendist.ErrBadLoads, len(loads), n)
	}
	o := &s.opts
	if o.Rounds < 0 {
		return errs.BadParam("Rounds %d", o.Rounds)
	}
	if o.RetransmitTicks < 0 {
		return errs.BadParam("RetransmitTicks %d", o.RetransmitTicks)
	}
	if !finite(o.WorkloadEvery) || o.WorkloadEvery < 0 || (o.WorkloadEvery > 0 && o.WorkloadEvery < faults.MinInterval) {
		return errs.BadParam("WorkloadEvery %v (want 0 or at least faults.MinInterval %v)", o.WorkloadEvery, faults.MinInterval)
	}
	if !finite(o.MaxTime) || o.MaxTime < 0 {
		return errs.BadParam("MaxTime %v", o.MaxTime)
	}
	if o.MaxEvents < 0 || o.CheckEvery < 0 {
		return errs.BadParam("MaxEvents %d, CheckEvery %d", o.MaxEvents, o.CheckEvery)
	}
	if !finite(o.ObserveEvery) || o.ObserveEvery < 0 || (o.ObserveEvery > 0 && o.ObserveEvery < faults.MinInterval) {
		return errs.BadParam("ObserveEvery %v (want 0 or at least faults.MinInterval %v)", o.ObserveEvery, faults.MinInterval)
	}
	if o.WorkloadEvery == 0 {
		o.WorkloadEvery = 1
	}
	if o.MaxTime == 0 {
		o.MaxTime = DefaultMaxTime
	}
	if o.MaxEvents == 0 {
		o.MaxEvents = DefaultMaxEvents
	}
	if err := o.Faults.Validate(n); err != nil {
		return err
	}
	s.model = o.Faults
	if s.model.ReorderDelay == 0 {
		s.model.ReorderDelay = 4
	}
	var total int64
	for v, x := range loads {
		if x < 0 {
			return fmt.Errorf("%w: load[%d] = %d is negative", tokendist.ErrBadLoads, v, x)
		}
		if total+x < total {
			return fmt.Errorf("%w: the total overflows int64 at node %d", tokendist.ErrBadLoads, v)
		}
		total += x
	}
	s.expected, s.initial = total, total
	if o.CheckEvery == 0 {
		// Amortized O(1) per event: at least 4(n + 2m) events between full checks.
		o.CheckEvery = max(DefaultCheckEvery, 4*int64(n+g.Size()*2))
	}
	// Edge ends and reverse ports.
	s.off = make([]int, n+1)
	for v := range n {
		s.off[v+1] = s.off[v] + len(g.Neighbors(v))
	}
	s.rev = make([]int32, s.off[n])
	s.fifo = make([]float64, s.off[n])
	for v := range n {
		for p, w := range g.Neighbors(v) {
			q, ok := slices.BinarySearch(g.Neighbors(int(w)), int32(v))
			if !ok {
				return errs.BadParam("node %d lists %d, which does not list it", v, w)
			}
			s.rev[s.off[v]+p] = int32(q)
		}
	}
	if s.model.LinkDelay != nil {
		s.link = make([]faults.Delay, s.off[n])
		for v := range n {
			for p, w := range g.Neighbors(v) {
				d := s.model.LinkDelay(v, int(w))
				if err := d.Validate(); err != nil {
					return errs.Wrapf(err, "LinkDelay(%d, %d)", v, w)
				}
				s.link[s.off[v]+p] = d
			}
		}
	}
	a, b := rng.Key(rng.Mix(o.Seed^netDomain), 0, 0)
	s.r = rand.New(rand.NewPCG(a, b))
	s.nodes = make([]simNode, n)
	for v := range s.nodes {
		sn := &s.nodes[v]
		sn.period = 1
		if s.model.TickInterval != nil && s.model.TickInterval[v] > 0 {
			sn.period = s.model.TickInterval[v]
		}
		if s.model.Drift > 0 {
			u := float64(rng.Mix(o.Seed^driftDomain^rng.Mix(uint64(v)))>>11) / (1 << 53)
			sn.period *= 1 + s.model.Drift*(2*u-1)
		}
	}
	if o.Workload != nil {
		s.wlState = tokendist.State{Net: g, Loads: make(tokendist.Loads, n), Seed: o.Seed,
			Rand: rand.New(rand.NewPCG(rng.Key(o.Seed, 0, -100))), Workers: 1, Workload: o.Workload, Context: s.ctx}
		copy(s.wlState.Loads, loads)
		if err := o.Workload.Init(&s.wlState); err != nil {
			return errs.Wrapf(err, "workload %v: Init", o.Workload)
		}
	}
	s.observeStart() // before the starts, whose datagrams may be lost
	// Before its start, a node's storage is its initial load.
	for v := range s.nodes {
		s.nodes[v].load = loads[v]
	}
	s.sumLoad = total
	// Start every node, in increasing order.
	s.res.Status = tokendist.StatusNotStarted
	for v := range s.nodes {
		prog, err := s.program(v)
		if err != nil {
			return err
		}
		m, err := handoff.NewCountMachine(prog, s.config(v), loads[v])
		if err != nil {
			return err
		}
		nd := mk(s, v, m)
		s.nodes[v].nd = nd
		s.begin(v)
		err = nd.Start()
		if err == nil {
			err = s.flush(v)
		}
		if err != nil {
			return err
		}
	}
	for i, c := range s.model.Crashes {
		s.q.push(c.At, nodeKey(c.Node, classCrash, 0), int64(i))
	}
	if s.model.CrashRate > 0 {
		for v := range s.nodes {
			s.scheduleRateCrash(v)
		}
	}
	if o.Workload != nil {
		s.q.push(o.WorkloadEvery, 0, 0)
	}
	return nil
}

const (
	netDomain   = 0x6e65742d72616e64 // "net-rand"
	driftDomain = 0x6472696674000000 // "drift"
)

func (s *sim) config(v int) handoff.Config {
	return handoff.Config{ID: v, Degree: s.off[v+1] - s.off[v], Rounds: s.opts.Rounds,
		Seed: s.opts.Seed, RetransmitTicks: s.opts.RetransmitTicks, Scratch: &s.scratch}
}

func (s *sim) program(v int) (p node.Program, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%sNodePrograms.Program(%d) panicked: %v", errs.Prefix, v, r)
		}
	}()
	// A nil program is refused by handoff.NewCountMachine and RestoreCountMachine.
	p, err = s.progs.Program(v)
	return p, errs.Wrapf(err, "NodePrograms.Program(%d)", v)
}

// conservation returns a *ConservationError.
func (s *sim) conservation(format string, args ...any) error {
	return &ConservationError{Time: s.now, Event: s.res.Events, Detail: fmt.Sprintf(format, args...)}
}

// begin records node v's stats before an event changes its machine, for flush's
// ledger.
func (s *sim) begin(v int) { s.base = s.nodes[v].nd.Stats() }

// flush persists and sends node v's Ready (with the crash points), updates the
// ledger (from the machine's stats since begin) and the node's tick. The O(1)
// conservation check runs here.
func (s *sim) flush(v int) error {
	sn := &s.nodes[v]
	nd := sn.nd
	if nd.HasReady() {
		rd, err := nd.Ready()
		if err != nil {
			return err
		}
		if sn.armedOn && sn.armed == faults.CrashBeforePersist {
			return s.crash(v)
		}
		if rd.State != nil {
			load, err := handoff.StateLoad(rd.State)
			if err != nil {
				return err
			}
			if load < 0 {
				return s.conservation("node %d persisted a negative load %d", v, load)
			}
			sn.store = append(sn.store[:0], rd.State...)
			s.sumLoad += load - sn.load
			sn.load = load
		}
		st := nd.Stats()
		s.inFlight += (st.TokensLogged - s.base.TokensLogged) - (st.TokensDelivered - s.base.TokensDelivered)
		s.undelivered += (st.Logged - s.base.Logged) - (st.Delivered - s.base.Delivered)
		s.base = st
		if s.sumLoad+s.inFlight != s.expected {
			return s.conservation("after node %d persisted: Σ loads %d + in flight %d ≠ initial + arrived − completed = %d",
				v, s.sumLoad, s.inFlight, s.expected)
		}
		if s.inFlight < 0 || s.undelivered < 0 {
			return s.conservation("after node %d persisted: %d tokens in %d datagrams in flight", v, s.inFlight, s.undelivered)
		}
		if sn.armedOn && sn.armed == faults.CrashBeforeSend {
			nd.Advance()
			return s.crash(v)
		}
		s.sendAll(v, rd.Datagrams, 0)
		nd.Advance()
	}
	s.refresh(v)
	return nil
}

// refresh updates the busy count and schedules the node's next tick.
func (s *sim) refresh(v int) {
	s.refreshBusy(v)
	sn := &s.nodes[v]
	if !sn.down && !sn.ticking && (sn.busy || sn.nd.Unacked() > 0) {
		// The next multiple of the period at or after now, after the last tick.
		k := int64(math.Ceil(s.now / sn.period))
		if float64(k)*sn.period < s.now {
			k++
		}
		if k <= sn.lastK {
			k = sn.lastK + 1
		}
		if k == 0 {
			k = 1
		}
		sn.ticking = true
		s.q.push(float64(k)*sn.period, nodeKey(v, classTick, 0), int64(sn.inc))
	}
}

// sendAll hands v's datagrams of the given kind (0: all) to the network.
func (s *sim) sendAll(v int, ds []handoff.Datagram, kind handoff.DatagramKind) {
	for i := range ds {
		d := &ds[i]
		if kind != 0 && d.Kind != kind {
			continue
		}
		e := s.off[v] + d.Port
		w := int(s.g.Neighbors(v)[d.Port])
		copies := 1
		if s.model.Duplicate > 0 && s.r.Float64() < s.model.Duplicate {
			copies = 2
		}
		for range copies {
			s.res.Datagrams++
			if s.model.Loss > 0 && s.r.Float64() < s.model.Loss {
				s.lose(e)
				continue
			}
			var delay float64
			if s.link != nil {
				delay = s.link[e].Sample(s.r)
			} else {
				delay = s.model.Delay.Sample(s.r)
			}
			at := s.now + delay
			if s.model.Reorder > 0 && s.r.Float64() < s.model.Reorder {
				at += s.model.ReorderDelay * s.r.Float64() // held back: later ones overtake it
			} else {
				at = max(at, s.fifo[e]) // a link keeps its order unless a datagram is reordered
				s.fifo[e] = at
			}
			if d.Kind == handoff.DatagramAck {
				s.q.push(at, nodeKey(w, classArrival, int(s.rev[e]))|ackBit, int64(d.Seq))
				continue
			}
			slot := s.alloc()
			s.pool[slot] = *d
			s.pool[slot].Port = int(s.rev[e])
			s.q.push(at, nodeKey(w, classArrival, int(s.rev[e])), int64(slot))
		}
	}
}

func (s *sim) alloc() int32 {
	if k := len(s.free); k > 0 {
		slot := s.free[k-1]
		s.free = s.free[:k-1]
		return slot
	}
	s.pool = append(s.pool, handoff.Datagram{})
	return int32(len(s.pool) - 1)
}

// crash takes node v down: its memory is rebuilt from its persisted state at once (a
// down node's state is its storage) and it restarts after its down time.
func (s *sim) crash(v int) error {
	sn := &s.nodes[v]
	downFor := sn.armedFor
	sn.armedOn = false
	old := sn.nd
	prog, err := s.program(v)
	if err != nil {
		return err
	}
	nd, err := old.restore(s, v, prog, sn.store)
	if err != nil {
		return err
	}
	st := old.Stats()
	sn.stats.Retransmissions += st.Retransmissions
	sn.stats.Duplicates += st.Duplicates
	sn.stats.OutOfOrder += st.OutOfOrder
	sn.nd = nd
	sn.down = true
	sn.inc++
	sn.ticking = false
	s.down++
	s.res.Crashes++
	s.refreshBusy(v)
	s.q.push(s.now+downFor, nodeKey(v, classCrash, 1), -1)
	return nil
}

// refreshBusy updates the count of nodes whose program is not idle.
func (s *sim) refreshBusy(v int) {
	sn := &s.nodes[v]
	busy := !sn.nd.ProgramIdle()
	if busy != sn.busy {
		if busy {
			s.busy++
		} else {
			s.busy--
		}
		sn.busy = busy
	}
}

func (s *sim) scheduleRateCrash(v int) {
	t := s.now + s.r.ExpFloat64()/s.model.CrashRate
	s.q.push(t, nodeKey(v, classCrash, 2), -2)
}

func (s *sim) run() error {
	s.res.Status = tokendist.StatusNotStarted
	for {
		if s.done() {
			s.res.Status = tokendist.StatusDone
			return nil
		}
		if s.q.len() == 0 {
			return s.conservation("no event pending, yet %d programs are busy and %d datagrams in flight", s.busy, s.undelivered)
		}
		next := s.q.peek().t
		if next > s.opts.MaxTime || s.res.Events >= s.opts.MaxEvents {
			if next > s.opts.MaxTime {
				// The snapshots before MaxTime; the final one is at MaxTime.
				if err := s.observeBefore(s.opts.MaxTime); err != nil {
					return err
				}
				s.now = s.opts.MaxTime
			}
			s.res.Status = tokendist.StatusMaxSteps
			return s.fullCheck()
		}
		if next > s.nextObs {
			if err := s.observeBefore(next); err != nil {
				return err
			}
		}
		if s.res.Events&1023 == 0 {
			if err := s.ctx.Err(); err != nil {
				s.res.Status = tokendist.StatusCanceled
				return errs.Wrapf(err, "async: simulation canceled at time %g", s.now)
			}
		}
		ev := s.q.pop()
		s.now = ev.t
		s.res.Events++
		if err := s.handle(&ev); err != nil {
			return err
		}
		if s.res.Events-s.lastCheck >= s.opts.CheckEvery {
			if err := s.fullCheck(); err != nil {
				return err
			}
		}
	}
}

func (s *sim) done() bool {
	return s.busy == 0 && s.undelivered == 0 && s.down == 0 && s.opts.Workload == nil
}

func (s *sim) handle(ev *event) error {
	if ev.key == 0 {
		return s.workload()
	}
	v := ev.node()
	sn := &s.nodes[v]
	switch ev.class() {
	case classCrash:
		return s.crashEvent(v, ev)
	case classArrival:
		var d handoff.Datagram
		if ev.ack() {
			d = handoff.Datagram{Port: ev.port(), Kind: handoff.DatagramAck, Seq: uint64(ev.ref)}
		} else {
			slot := int32(ev.ref)
			d = s.pool[slot]
			s.pool[slot] = handoff.Datagram{}
			s.free = append(s.free, slot)
		}
		if sn.down {
			// Dropped by the down receiver: lost on the link from its sender.
			s.lose(s.off[s.g.Neighbors(v)[ev.port()]] + int(s.rev[s.off[v]+ev.port()]))
			return nil
		}
		return s.arrive(v, d)
	case classTick:
		if ev.ref != int64(sn.inc) || sn.down || !sn.ticking {
			return nil
		}
		sn.ticking = false
		k := int64(math.Round(ev.t / sn.period))
		if k <= sn.lastK {
			k = sn.lastK + 1
		}
		sn.lastK = k
		if sn.nd.Idle() {
			return nil
		}
		s.begin(v)
		if err := sn.nd.Tick(k); err != nil {
			return err
		}
		return s.flush(v)
	}
	return nil
}

// arrive hands datagram d to node v and checks it against the sender's persisted log.
func (s *sim) arrive(v int, d handoff.Datagram) error {
	nd := s.nodes[v].nd
	e := s.off[v] + d.Port
	u := int(s.g.Neighbors(v)[d.Port])
	pnd, pport := s.nodes[u].nd, int(s.rev[e]) // the other end of the link, as persisted
	peer := pnd.Sequence(pport)
	if d.Kind == handoff.DatagramAck && d.Seq > peer.Delivered {
		return s.conservation("node %d port %d received ack %d from node %d, which has delivered only %d: the tokens of %d..%d are lost",
			v, d.Port, d.Seq, u, peer.Delivered, peer.Delivered+1, d.Seq)
	}
	s.begin(v)
	had := nd.Sequence(d.Port).Delivered
	err := nd.Step(d)
	// A delivery is checked even when the program then failed on it.
	if nd.Stats().Delivered != s.base.Delivered {
		if d.Seq <= had {
			return s.conservation("node %d delivered datagram %d (%d tokens) from node %d again: it had delivered %d",
				v, d.Seq, d.Msg.Tokens, u, had)
		}
		if m, ok := pnd.Logged(pport, d.Seq); !ok || m.Tokens != d.Msg.Tokens {
			return s.conservation("node %d delivered datagram %d (%d tokens) from node %d, whose persisted log holds %d..%d",
				v, d.Seq, d.Msg.Tokens, u, peer.Acked+1, peer.Next-1)
		}
	}
	if err != nil {
		return err
	}
	return s.flush(v)
}

func (s *sim) crashEvent(v int, ev *event) error {
	sn := &s.nodes[v]
	switch ev.port() {
	case 1: // restart
		if ev.ref != -1 || !sn.down {
			return nil
		}
		sn.down = false
		s.down--
		s.res.Restarts++
		if s.model.CrashRate > 0 {
			s.scheduleRateCrash(v)
		}
		s.refresh(v)
		return nil
	case 2: // a rate crash
		if sn.down {
			return nil
		}
		p := faults.CrashPoint(s.r.IntN(3))
		sn.armedFor = s.model.DownTime.Sample(s.r)
		if p == faults.CrashIdle {
			sn.armedOn = true
			return s.crash(v)
		}
		sn.armed, sn.armedOn = p, true
		return nil
	}
	c := s.model.Crashes[ev.ref]
	if sn.down {
		return nil
	}
	sn.armedFor = c.DownFor
	sn.armed, sn.armedOn = c.Point, true
	if c.Point == faults.CrashIdle {
		return s.crash(v)
	}
	return nil
}

// workload applies the workload to every node's load.
func (s *sim) workload() error {
	st := &s.wlState
	for v := range s.nodes {
		st.Loads[v] = s.nodes[v].nd.NodeContext().Load
	}
	st.Steps++
	st.Time = int64(s.now)
	a, c, err := s.opts.Workload.Apply(st)
	if err != nil {
		return errs.Wrapf(err, "workload %v at time %g", s.opts.Workload, s.now)
	}
	if a < 0 || c < 0 {
		return errs.BadParam("workload %v reported %d arrivals and %d completions at time %g", s.opts.Workload, a, c, s.now)
	}
	if a > math.MaxInt64-s.res.Arrived || s.expected > math.MaxInt64-a {
		// As Run refuses it (the run's total must fit an int64).
		return fmt.Errorf("%w: workload %v overflows the total at time %g", tokendist.ErrBadLoads, s.opts.Workload, s.now)
	}
	st.Arrived += a
	st.Completed += c
	s.res.Arrived += a
	s.res.Completed += c
	var delta int64
	for v := range s.nodes {
		sn := &s.nodes[v]
		if st.Loads[v] == sn.nd.NodeContext().Load {
			continue
		}
		delta += st.Loads[v] - sn.nd.NodeContext().Load
		s.expected += st.Loads[v] - sn.nd.NodeContext().Load
		s.begin(v)
		if err := sn.nd.SetLoad(st.Loads[v]); err != nil {
			return errs.Wrapf(err, "workload %v", s.opts.Workload)
		}
		armed := sn.armedOn
		sn.armedOn = false // the workload's change is persisted at once
		if sn.down {
			// A down node's storage takes the change; nothing is sent (SetLoad
			// logs and delivers nothing, so the ledger's in-flight part stays).
			rd, err := sn.nd.Ready()
			if err != nil {
				return err
			}
			sn.store = append(sn.store[:0], rd.State...)
			s.sumLoad += st.Loads[v] - sn.load
			sn.load = st.Loads[v]
			sn.nd.Advance()
			s.refreshBusy(v)
		} else if err := s.flush(v); err != nil {
			return err
		}
		sn.armedOn = armed
	}
	if delta != a-c {
		return s.conservation("workload %v reported %d arrivals and %d completions but changed the loads by %d", s.opts.Workload, a, c, delta)
	}
	s.q.push(s.now+s.opts.WorkloadEvery, 0, 0)
	return nil
}

// fullCheck recomputes the ledger from the persisted states in O(n + in flight).
func (s *sim) fullCheck() error {
	s.lastCheck = s.res.Events
	var sum, fl, cnt int64
	for v := range s.nodes {
		sn := &s.nodes[v]
		load, err := handoff.StateLoad(sn.store)
		if err != nil {
			return err
		}
		if load < 0 || load != sn.nd.NodeContext().Load {
			return s.conservation("node %d: persisted load %d, in memory %d", v, load, sn.nd.NodeContext().Load)
		}
		sum += load
		nb := s.g.Neighbors(v)
		for p := range nb {
			l := sn.nd.Sequence(p)
			peer := s.nodes[nb[p]].nd.Sequence(int(s.rev[s.off[v]+p]))
			if l.Acked > peer.Delivered {
				return s.conservation("node %d port %d: datagrams up to %d acknowledged, node %d delivered only %d", v, p, l.Acked, nb[p], peer.Delivered)
			}
			if peer.Delivered >= l.Next {
				return s.conservation("node %d delivered %d datagrams from node %d, which sent %d", nb[p], peer.Delivered, v, l.Next-1)
			}
			for seq := max(l.Acked, peer.Delivered) + 1; seq < l.Next; seq++ {
				m, _ := sn.nd.Logged(p, seq)
				fl += m.Tokens
				cnt++
			}
		}
	}
	if sum != s.sumLoad || fl != s.inFlight || cnt != s.undelivered {
		return s.conservation("full check: Σ loads %d (ledger %d), in flight %d tokens in %d datagrams (ledger %d in %d)",
			sum, s.sumLoad, fl, cnt, s.inFlight, s.undelivered)
	}
	if sum+fl != s.expected {
		return s.conservation("full check: Σ loads %d + in flight %d ≠ initial + arrived − completed = %d", sum, fl, s.expected)
	}
	return nil
}

// finish fills the result; it returns an error wrapping ErrOverflow when a sum of the
// nodes' counters (Moved, Messages) exceeds the int64 range, as Run refuses one.
func (s *sim) finish() error {
	if s.nodes == nil {
		return nil
	}
	s.res.Time = s.now
	s.res.Loads = make(tokendist.Loads, len(s.nodes))
	var err error
	ovf := false
	for v := range s.nodes {
		sn := &s.nodes[v]
		s.res.Loads[v] = sn.load // the persisted load: after a failure, memory may be ahead
		if sn.nd == nil {
			continue
		}
		c := sn.nd.NodeContext()
		if !ovf {
			if s.res.Moved > math.MaxInt64-c.Moved || s.res.Messages > math.MaxInt64-c.Messages {
				ovf = true
				err = errs.Overflowf("async: the total of Moved (%d + node %d's %d) or Messages (%d + %d) overflows int64", s.res.Moved, v, c.Moved, s.res.Messages, c.Messages)
			} else {
				s.res.Moved += c.Moved
				s.res.Messages += c.Messages
			}
		}
		st := sn.nd.Stats()
		s.res.Retransmissions += sn.stats.Retransmissions + st.Retransmissions
		s.res.Duplicates += sn.stats.Duplicates + st.Duplicates
		s.res.OutOfOrder += sn.stats.OutOfOrder + st.OutOfOrder
	}
	s.res.InFlight = s.inFlight
	s.res.Undelivered = s.undelivered
	return err
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
