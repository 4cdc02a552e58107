package async

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/faults"
	"github.com/tokendist/tokendist/handoff"
	"github.com/tokendist/tokendist/node"
)

// Tests written against the mutants gremlins left alive in package async
// (docs/mutation.md, "Issue 36: async and the node programs").

// aheadNode is a correct node whose in-memory load, as the simulator reads it, is one
// token above the load it persists from event from of s on (s nil: from the start):
// only a full check can see it.
type aheadNode struct {
	counter
	s    *sim
	from int64
}

func (n aheadNode) NodeContext() *node.Context {
	c := *n.counter.NodeContext()
	if n.s == nil || n.s.res.Events >= n.from {
		c.Load++
	}
	return &c
}

// TestFinalFullCheck: a run that ends with StatusDone is checked in full at the end,
// whatever CheckEvery says: a node whose memory is ahead of its storage fails the run
// with a *ConservationError naming it, even when no periodic full check ran.
func TestFinalFullCheck(t *testing.T) {
	g, err := tokendist.Ring(6)
	if err != nil {
		t.Fatal(err)
	}
	loads := randomLoads(6, 4, 50)
	opts := &Options{Rounds: 3, CheckEvery: math.MaxInt64}
	res, err := simulate(context.Background(), g, pairPrograms{6}, loads, opts, func(s *sim, v int, m *handoff.CountMachine) nodeMachine {
		if v == 3 {
			return aheadNode{counter: counter{m}}
		}
		return counter{m}
	})
	var ce *ConservationError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "node 3: persisted load") || res.Status != tokendist.StatusFailed {
		t.Fatalf("memory ahead of storage at the end: %v, %v; want a *ConservationError naming node 3", res.Status, err)
	}
	if res.Events == 0 || res.Events >= opts.CheckEvery {
		t.Fatalf("%d events", res.Events)
	}
}

// TestOptionsRanges: every Options field out of its range is refused with an error
// wrapping ErrBadParameter that names the field; the smallest valid intervals
// (faults.MinInterval) are accepted.
func TestOptionsRanges(t *testing.T) {
	g, err := tokendist.Ring(4)
	if err != nil {
		t.Fatal(err)
	}
	loads := randomLoads(4, 2, 10)
	wl, err := tokendist.NewPoissonArrivals(0.3, true)
	if err != nil {
		t.Fatal(err)
	}
	obs := ObserverFunc(func(*Snapshot) error { return nil })
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []struct {
		name string
		o    Options
	}{
		{"RetransmitTicks", Options{RetransmitTicks: -1}},
		{"WorkloadEvery", Options{Workload: wl, WorkloadEvery: nan}},
		{"WorkloadEvery", Options{Workload: wl, WorkloadEvery: inf}},
		{"WorkloadEvery", Options{Workload: wl, WorkloadEvery: -1}},
		{"WorkloadEvery", Options{Workload: wl, WorkloadEvery: faults.MinInterval / 2}},
		{"MaxTime", Options{MaxTime: nan}},
		{"MaxTime", Options{MaxTime: inf}},
		{"MaxTime", Options{MaxTime: -1}},
		{"MaxEvents", Options{MaxEvents: -1}},
		{"CheckEvery", Options{CheckEvery: -1}},
		{"ObserveEvery", Options{Observer: obs, ObserveEvery: nan}},
		{"ObserveEvery", Options{Observer: obs, ObserveEvery: -inf}},
		{"ObserveEvery", Options{Observer: obs, ObserveEvery: -1}},
		{"ObserveEvery", Options{Observer: obs, ObserveEvery: faults.MinInterval / 2}},
	} {
		res, err := Simulate(context.Background(), g, sharePrograms{}, loads, &c.o)
		if !errors.Is(err, tokendist.ErrBadParameter) || !strings.HasPrefix(err.Error(), "tokendist: ") ||
			!strings.Contains(err.Error(), c.name) || res.Status != tokendist.StatusFailed {
			t.Errorf("%s %+v: %v, %v; want an ErrBadParameter naming %s", c.name, c.o, res.Status, err, c.name)
		}
	}
	for _, o := range []Options{
		{Workload: wl, WorkloadEvery: faults.MinInterval, MaxTime: 20 * faults.MinInterval},
		{Observer: obs, ObserveEvery: faults.MinInterval, MaxTime: 20 * faults.MinInterval},
	} {
		if res, err := Simulate(context.Background(), g, sharePrograms{}, loads, &o); err != nil || res.Status != tokendist.StatusMaxSteps {
			t.Errorf("%+v: %v, %v; want a run to MaxTime", o, res.Status, err)
		}
	}
}

// countingWorkload counts its calls and records their times; it changes nothing.
type countingWorkload struct{ times *[]int64 }

func (countingWorkload) Init(*tokendist.State) error { return nil }
func (w countingWorkload) Apply(s *tokendist.State) (int64, int64, error) {
	*w.times = append(*w.times, s.Time)
	if s.Steps != int64(len(*w.times)) {
		return 0, 0, errors.New("Steps does not count the calls")
	}
	return 0, 0, nil
}

// TestWorkloadEvery: the workload runs at every multiple of WorkloadEvery up to
// MaxTime (0 meaning 1), with Steps counting its calls and Time the whole part of the
// model time.
func TestWorkloadEvery(t *testing.T) {
	g, err := tokendist.Ring(4)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		every float64
		want  []int64
	}{
		{0, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
		{2.5, []int64{2, 5, 7, 10}},
		{4, []int64{4, 8}},
	} {
		var times []int64
		res, err := Simulate(context.Background(), g, sharePrograms{}, tokendist.Loads{3, 0, 1, 2},
			&Options{Workload: countingWorkload{&times}, WorkloadEvery: c.every, MaxTime: 10, MaxEvents: 1 << 14})
		if err != nil || res.Status != tokendist.StatusMaxSteps || !slices.Equal(times, c.want) {
			t.Errorf("WorkloadEvery %v: %v %v, calls at %v; want %v", c.every, res.Status, err, times, c.want)
		}
	}
}

// TestCheckEverySchedule: full checks run every CheckEvery events, by default every
// max(DefaultCheckEvery, 4(n + 2m)): a node whose memory is ahead of its storage from
// the start is caught by the first full check, at event CheckEvery, or at the end when
// the run is shorter.
func TestCheckEverySchedule(t *testing.T) {
	ahead := func(s *sim, v int, m *handoff.CountMachine) nodeMachine {
		if v == 0 {
			return aheadNode{counter: counter{m}}
		}
		return counter{m}
	}
	small, err := tokendist.Ring(6)
	if err != nil {
		t.Fatal(err)
	}
	big, err := tokendist.Ring(10000) // 4(n + 2m) = 120,000 > DefaultCheckEvery
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		g                           *tokendist.Graph
		checkEvery, maxEvents, want int64
	}{
		{small, 5, 0, 5},
		{small, 1, 0, 1},
		{small, 0, 2000, 2000}, // the default 65,536: only the check at MaxEvents
		{big, 0, 130000, 120000},
	} {
		n := c.g.Order()
		res, err := simulate(context.Background(), c.g, sharePrograms{}, randomLoads(n, 1, 9),
			&Options{CheckEvery: c.checkEvery, MaxEvents: c.maxEvents}, ahead)
		var ce *ConservationError
		if !errors.As(err, &ce) || ce.Event != c.want {
			t.Errorf("n %d, CheckEvery %d, MaxEvents %d: %v after %d events; want a *ConservationError at event %d",
				n, c.checkEvery, c.maxEvents, err, res.Events, c.want)
		}
	}
	// Ahead from event 7 on: with CheckEvery 5 the full check at event 10 sees it.
	res, err := simulate(context.Background(), small, sharePrograms{}, randomLoads(6, 1, 9), &Options{CheckEvery: 5},
		func(s *sim, v int, m *handoff.CountMachine) nodeMachine {
			if v == 0 {
				return aheadNode{counter{m}, s, 7}
			}
			return counter{m}
		})
	var ce *ConservationError
	if !errors.As(err, &ce) || ce.Event != 10 {
		t.Errorf("ahead from event 7, CheckEvery 5: %v after %d events; want a *ConservationError at event 10", err, res.Events)
	}
}

// TestTickIntervalZero: a TickInterval entry of 0 means the default interval 1.
func TestTickIntervalZero(t *testing.T) {
	g, _ := tokendist.Path(2)
	tp := &tickPrograms{nows: make([][]int64, 2)}
	res, err := Simulate(context.Background(), g, tp, tokendist.Loads{0, 0},
		&Options{Faults: faults.Model{TickInterval: []float64{0, 0.5}}})
	want := []int64{1, 2, 3, 4, 5, 6}
	if err != nil || !slices.Equal(tp.nows[0], want) || !slices.Equal(tp.nows[1], want) || res.Time != 6 {
		t.Fatalf("TickInterval {0, 0.5}: %v, Now %v %v, time %v; want Now %v, time 6", err, tp.nows[0], tp.nows[1], res.Time, want)
	}
}

// TestRateCrashesScheduled: a model with a crash rate schedules one rate crash per
// node at the start, each at a finite time; one without a rate (or listed crashes)
// schedules no crash at all.
func TestRateCrashesScheduled(t *testing.T) {
	g, err := tokendist.Ring(5)
	if err != nil {
		t.Fatal(err)
	}
	for _, rate := range []float64{0, 0.1} {
		s := &sim{ctx: context.Background(), progs: sharePrograms{}}
		s.opts = Options{Seed: 1, Faults: faults.Model{CrashRate: rate, DownTime: faults.Constant(1)}}
		if err := s.init(g, randomLoads(5, 1, 9), plain); err != nil {
			t.Fatal(err)
		}
		var crashes []int
		for _, e := range s.q.h {
			if e.class() == classCrash {
				if e.port() != 2 || math.IsInf(e.t, 0) || e.t <= 0 {
					t.Errorf("rate %v: crash event %+v", rate, e)
				}
				crashes = append(crashes, e.node())
			}
		}
		slices.Sort(crashes)
		want := []int{0, 1, 2, 3, 4}
		if rate == 0 {
			want = nil
		}
		if !slices.Equal(crashes, want) {
			t.Errorf("rate %v: rate crashes scheduled for nodes %v, want %v", rate, crashes, want)
		}
	}
}

// wakeProgram: node 0 sends one empty message at Start and is idle; node 1 is idle
// until a message arrives, then busy for two ticks, recording Now.
type wakeProgram struct {
	v    int
	nows *[]int64
	busy int
}

func (p *wakeProgram) Start(c *node.Context) error {
	if p.v == 0 {
		return c.Send(0, node.Message{Kind: 1})
	}
	return nil
}
func (p *wakeProgram) Receive(*node.Context, int, node.Message) error { p.busy = 2; return nil }
func (p *wakeProgram) Tick(c *node.Context) error {
	*p.nows = append(*p.nows, c.Now)
	p.busy--
	return nil
}
func (p *wakeProgram) Idle() bool                  { return p.busy == 0 }
func (p *wakeProgram) AppendState(b []byte) []byte { return append(b, byte(p.busy)) }
func (p *wakeProgram) RestoreState(b []byte) error { p.busy = int(b[0]); return nil }

type wakePrograms struct{ nows []int64 }

func (wp *wakePrograms) Program(v int) (node.Program, error) {
	return &wakeProgram{v: v, nows: &wp.nows}, nil
}

// TestTickAfterWakeUp: a node that wakes up (a message makes its program busy) at
// time t ticks next at the first multiple of its tick interval at or after t, its
// local tick number (Now) being that multiple's index: at t itself when t is a
// multiple, after the message (arrivals come before the tick).
func TestTickAfterWakeUp(t *testing.T) {
	g, _ := tokendist.Path(2)
	for _, c := range []struct {
		delay, period float64
		want          []int64
	}{
		{1, 1, []int64{1, 2}},   // arrives at 1: ticks at 1 and 2
		{3, 1, []int64{3, 4}},   // at 3: ticks at 3 and 4
		{3, 2, []int64{2, 3}},   // at 3, period 2: ticks at 4 and 6
		{4, 2, []int64{2, 3}},   // at 4: ticks at 4 and 6
		{1, 0.5, []int64{2, 3}}, // at 1, period 0.5: ticks at 1 and 1.5
	} {
		wp := &wakePrograms{}
		res, err := Simulate(context.Background(), g, wp, tokendist.Loads{0, 0}, &Options{Faults: faults.Model{
			Delay: faults.Constant(c.delay), TickInterval: []float64{1, c.period}}})
		if err != nil || res.Status != tokendist.StatusDone || !slices.Equal(wp.nows, c.want) {
			t.Errorf("delay %v, period %v: %v %v, Now %v; want %v", c.delay, c.period, res.Status, err, wp.nows, c.want)
		}
	}
}

// TestNoTicksForIdleNodes: a node whose program is idle and which has nothing
// unacknowledged gets no tick events: a silent node beside one that ticks six times
// adds no event.
func TestNoTicksForIdleNodes(t *testing.T) {
	g, _ := tokendist.Path(2)
	tp := &tickPrograms{nows: make([][]int64, 2)}
	res, err := Simulate(context.Background(), g, silentFirst{tp}, tokendist.Loads{0, 0}, nil)
	if err != nil || res.Events != 6 || len(tp.nows[1]) != 6 || res.Time != 6 {
		t.Fatalf("%v, %d events, node 1 ticked at %v, time %v; want 6 events (node 1's ticks)", err, res.Events, tp.nows[1], res.Time)
	}
}

// silentFirst gives node 0 a silent program and the others tp's.
type silentFirst struct{ tp *tickPrograms }

func (s silentFirst) Program(v int) (node.Program, error) {
	if v == 0 {
		return silent{}, nil
	}
	return s.tp.Program(v)
}

// inventNode is a broken node that, on its first datagram, adds 1000 tokens to its
// load and reports them as delivered: the ledger's sum still holds, but the tokens
// in flight go negative.
type inventNode struct {
	counter
	invented *bool
}

func (n inventNode) Step(d handoff.Datagram) error {
	if !*n.invented {
		*n.invented = true
		if err := n.SetLoad(n.NodeContext().Load + 1000); err != nil {
			return err
		}
	}
	return n.counter.Step(d)
}

func (n inventNode) Stats() handoff.Stats {
	st := n.counter.Stats()
	if *n.invented {
		st.TokensDelivered += 1000
	}
	return st
}

// TestNegativeInFlightCaughtAtOnce: the O(1) check after every event catches tokens
// in flight going negative in the event that does it, not at a later full check.
func TestNegativeInFlightCaughtAtOnce(t *testing.T) {
	g, err := tokendist.Ring(6)
	if err != nil {
		t.Fatal(err)
	}
	invented := false
	_, err = simulate(context.Background(), g, pairPrograms{6}, randomLoads(6, 3, 20), &Options{Rounds: 4, CheckEvery: math.MaxInt64},
		func(s *sim, v int, m *handoff.CountMachine) nodeMachine {
			if v == 2 {
				return inventNode{counter{m}, &invented}
			}
			return counter{m}
		})
	var ce *ConservationError
	if !errors.As(err, &ce) || !strings.HasPrefix(ce.Detail, "after node 2 persisted: -") || !strings.Contains(ce.Detail, "tokens in") {
		t.Fatalf("invented tokens: %v; want a *ConservationError at node 2's event, tokens in flight negative", err)
	}
}

// TestSendAllKind: sendAll hands the network only the datagrams of the kind asked
// for (0: all of them).
func TestSendAllKind(t *testing.T) {
	g, err := tokendist.Path(2)
	if err != nil {
		t.Fatal(err)
	}
	ds := []handoff.Datagram{
		{Port: 0, Kind: handoff.DatagramData, Seq: 1},
		{Port: 0, Kind: handoff.DatagramAck, Seq: 7},
		{Port: 0, Kind: handoff.DatagramData, Seq: 2},
		{Port: 0, Kind: handoff.DatagramAck, Seq: 8},
	}
	for _, c := range []struct {
		kind handoff.DatagramKind
		want []uint64 // the sequence numbers handed over, in order
	}{
		{0, []uint64{1, 2, 7, 8}}, // at one instant a port's data come before its acks
		{handoff.DatagramData, []uint64{1, 2}},
		{handoff.DatagramAck, []uint64{7, 8}},
	} {
		s := &sim{ctx: context.Background(), progs: silents{}}
		if err := s.init(g, tokendist.Loads{0, 0}, plain); err != nil {
			t.Fatal(err)
		}
		s.q.h = s.q.h[:0]
		s.sendAll(0, ds, c.kind)
		var got []uint64
		for s.q.len() > 0 {
			e := s.q.pop()
			if e.ack() {
				got = append(got, uint64(e.ref))
			} else {
				got = append(got, s.pool[e.ref].Seq)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("kind %d: handed over %v, want %v", c.kind, got, c.want)
		}
	}
}

// TestDuplicatedAcksArrive: acks are duplicated like data: every copy counted in
// Result.Datagrams arrives, and about Duplicate of the acks arrive twice.
func TestDuplicatedAcksArrive(t *testing.T) {
	const n = 4000
	g, err := tokendist.Path(2)
	if err != nil {
		t.Fatal(err)
	}
	s := &sim{ctx: context.Background(), progs: silents{}}
	s.opts = Options{Seed: 5, Faults: faults.Model{Duplicate: 0.5}}
	if err := s.init(g, tokendist.Loads{0, 0}, plain); err != nil {
		t.Fatal(err)
	}
	s.q.h = s.q.h[:0]
	ds := make([]handoff.Datagram, n)
	for i := range ds {
		ds[i] = handoff.Datagram{Port: 0, Kind: handoff.DatagramAck, Seq: uint64(i + 1)}
	}
	s.sendAll(0, ds, 0)
	arrived := int64(s.q.len())
	for s.q.len() > 0 {
		if e := s.q.pop(); !e.ack() || e.node() != 1 {
			t.Fatalf("event %+v: want an ack arriving at node 1", e)
		}
	}
	if arrived != s.res.Datagrams {
		t.Fatalf("%d acks arrived of %d handed to the network", arrived, s.res.Datagrams)
	}
	requireRate(t, "acks duplicated", arrived-n, n, 0.5)
}

// TestMaxEventsTime: a run stopped by MaxEvents ends at the time of its last event,
// even when the next event is due exactly at MaxTime; one stopped by MaxTime ends at
// MaxTime.
func TestMaxEventsTime(t *testing.T) {
	g, _ := tokendist.Path(2)
	for _, c := range []struct {
		maxEvents   int64
		maxTime     float64
		events      int64
		time        float64
		nows0, nows []int64
	}{
		{4, 3, 4, 2, []int64{1, 2}, nil}, // events at 1, 1, 2, 2; the next at 3 = MaxTime
		{0, 2.5, 4, 2.5, []int64{1, 2}, nil},
		{0, 3, 6, 3, []int64{1, 2, 3}, nil}, // the events at MaxTime are handled
	} {
		tp := &tickPrograms{nows: make([][]int64, 2)}
		res, err := Simulate(context.Background(), g, tp, tokendist.Loads{0, 0}, &Options{MaxEvents: c.maxEvents, MaxTime: c.maxTime})
		if err != nil || res.Status != tokendist.StatusMaxSteps || res.Events != c.events || res.Time != c.time || !slices.Equal(tp.nows[0], c.nows0) {
			t.Errorf("MaxEvents %d, MaxTime %v: %v %v, %d events, time %v, node 0 ticked %v; want %d events, time %v, ticks %v",
				c.maxEvents, c.maxTime, res.Status, err, res.Events, res.Time, tp.nows[0], c.events, c.time, c.nows0)
		}
	}
}

// TestSnapshotAfterEventsAtItsTime: the periodic snapshot at time T shows the state
// after every event at or before T (Snapshot.Time's doc): with both nodes of a path
// ticking once per time unit, the snapshot at time k has seen 2k events.
func TestSnapshotAfterEventsAtItsTime(t *testing.T) {
	g, _ := tokendist.Path(2)
	tp := &tickPrograms{nows: make([][]int64, 2)}
	var times []float64
	var events []int64
	obs := ObserverFunc(func(sp *Snapshot) error {
		times = append(times, sp.Time)
		events = append(events, sp.Events)
		return nil
	})
	if _, err := Simulate(context.Background(), g, tp, tokendist.Loads{0, 0}, &Options{Observer: obs, MaxTime: 3}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(times, []float64{0, 1, 2, 3}) || !slices.Equal(events, []int64{0, 2, 4, 6}) {
		t.Fatalf("snapshots at %v after %v events; want at 0, 1, 2 and 3 (the final one), after 0, 2, 4 and 6", times, events)
	}
}

// TestCanceledBeforeAnyEvent: a context canceled before the run stops it before its
// first event.
func TestCanceledBeforeAnyEvent(t *testing.T) {
	g, _ := tokendist.Ring(6)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Simulate(ctx, g, sharePrograms{}, randomLoads(6, 1, 10), &Options{})
	if !errors.Is(err, context.Canceled) || res.Status != tokendist.StatusCanceled || res.Events != 0 {
		t.Fatalf("%v %v after %d events; want StatusCanceled after 0 events", res.Status, err, res.Events)
	}
}

// scripted adds arrive[i] tokens to node 0 and removes done[i] from it at its i-th
// call; it fails when the State's Arrived and Completed are not the sums of its earlier
// calls.
type scripted struct {
	arrive, done []int64
	calls        *int
}

func (scripted) Init(*tokendist.State) error { return nil }
func (w scripted) Apply(s *tokendist.State) (int64, int64, error) {
	i := *w.calls
	*w.calls++
	var a, c int64
	for j := range i {
		a += w.arrive[j]
		c += w.done[j]
	}
	if s.Arrived != a || s.Completed != c {
		return 0, 0, fmt.Errorf("call %d: State.Arrived %d, Completed %d; want %d, %d", i, s.Arrived, s.Completed, a, c)
	}
	if i >= len(w.arrive) {
		return 0, 0, nil
	}
	s.Loads[0] += w.arrive[i]
	s.Loads[0] -= w.done[i]
	return w.arrive[i], w.done[i], nil
}

// TestWorkloadTotals: the workload's State carries the arrivals and completions so
// far; arrivals whose sum, or whose total with the loads, is exactly the int64 maximum
// are accepted, and one more token is refused with ErrBadLoads, for either sum alone.
func TestWorkloadTotals(t *testing.T) {
	g, err := tokendist.Ring(4)
	if err != nil {
		t.Fatal(err)
	}
	const big = 1 << 62
	for _, c := range []struct {
		arrive, done []int64
		ok           bool
	}{
		{[]int64{5, 7, 0, 3}, []int64{2, 0, 10, 1}, true},
		{[]int64{big, big - 1}, []int64{big, big - 1}, true}, // Σ arrivals = MaxInt64, loads small
		{[]int64{big, big}, []int64{big, big}, false},        // Σ arrivals overflows, loads small
		{[]int64{math.MaxInt64 - 10}, []int64{0}, true},      // the total is MaxInt64
		{[]int64{math.MaxInt64 - 9}, []int64{0}, false},      // the total overflows
	} {
		calls := 0
		res, err := Simulate(context.Background(), g, silents{}, tokendist.Loads{4, 3, 2, 1},
			&Options{Workload: scripted{c.arrive, c.done, &calls}, MaxTime: float64(len(c.arrive) + 1)})
		if c.ok && (err != nil || res.Status != tokendist.StatusMaxSteps || calls != len(c.arrive)+1) {
			t.Errorf("arrivals %v, completions %v: %v %v after %d calls; want a run to MaxTime", c.arrive, c.done, res.Status, err, calls)
		}
		if !c.ok && (!errors.Is(err, tokendist.ErrBadLoads) || !strings.Contains(err.Error(), "overflows the total")) {
			t.Errorf("arrivals %v, completions %v: %v; want ErrBadLoads, the total overflowing", c.arrive, c.done, err)
		}
	}
}
