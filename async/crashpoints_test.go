package async

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/faults"
	"github.com/tokendist/tokendist/handoff"
	"github.com/tokendist/tokendist/node"
)

// spyNode is node v of s with a correct handoff that records, on each crash, where
// the crash struck: a crash whose restore comes in the event of a Ready and before
// its Advance struck before persisting; in the event of an Advance (flush advances and
// then crashes), before sending; in an event that called neither, while idle.
type spyNode struct {
	counter
	s              *sim
	readyEv, advEv int64
	points         *[3]int64      // crashes by faults.CrashPoint
	gone           *handoff.Stats // the summed stats of crashed incarnations (nil: not kept)
	last           []*spyNode     // per node, its latest incarnation (nil: not kept)
}

func (n *spyNode) Ready() (handoff.Ready, error) {
	n.readyEv = n.s.res.Events
	return n.counter.Ready()
}

func (n *spyNode) Advance() {
	n.advEv = n.s.res.Events
	n.counter.Advance()
}

func (n *spyNode) restore(s *sim, v int, prog node.Program, state []byte) (nodeMachine, error) {
	ev := s.res.Events
	switch {
	case n.advEv == ev:
		n.points[faults.CrashBeforeSend]++
	case n.readyEv == ev:
		n.points[faults.CrashBeforePersist]++
	default:
		n.points[faults.CrashIdle]++
	}
	if n.gone != nil {
		st := n.Stats()
		n.gone.Retransmissions += st.Retransmissions
		n.gone.Duplicates += st.Duplicates
		n.gone.OutOfOrder += st.OutOfOrder
	}
	c, err := n.counter.restore(s, v, prog, state)
	if err != nil {
		return nil, err
	}
	nn := &spyNode{counter: c.(counter), s: s, readyEv: -1, advEv: -1, points: n.points, gone: n.gone, last: n.last}
	if n.last != nil {
		n.last[v] = nn
	}
	return nn, nil
}

// simulateSpy is Simulate with a spyNode on every node; it returns the crashes by point.
func simulateSpy(net tokendist.Network, progs node.Programs, loads tokendist.Loads, opts *Options) (Result, [3]int64, error) {
	var points [3]int64
	res, err := simulate(context.Background(), net, progs, loads, opts, func(s *sim, _ int, m *handoff.CountMachine) nodeMachine {
		return &spyNode{counter: counter{m}, s: s, readyEv: -1, advEv: -1, points: &points}
	})
	return res, points, err
}

// TestCrashPointsReached: the simulator's crash model strikes where it says. A listed
// crash of each point strikes at that point (and a run with crashes still ends with
// the synchronous loads); crashes by rate (CrashRate) strike at all three points, each
// drawn with probability 1/3 (a crash armed for the node's next event may be
// overwritten by the next rate crash or never strike if the node stays idle, so
// the shares are checked loosely: each point at least 15 % of the crashes).
func TestCrashPointsReached(t *testing.T) {
	const n, R = 10, 6
	g, err := tokendist.Ring(n)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []faults.CrashPoint{faults.CrashIdle, faults.CrashBeforePersist, faults.CrashBeforeSend} {
		loads := randomLoads(n, uint64(p)+1, 200)
		want, moved, messages := syncPair(loads, R)
		opts := &Options{Seed: 3, Rounds: R, Faults: faults.Model{Crashes: []faults.Crash{
			{Node: 2, At: 0.5, DownFor: 2, Point: p}, {Node: 5, At: 2.5, DownFor: 1, Point: p}}}}
		res, points, err := simulateSpy(g, pairPrograms{n}, loads, opts)
		if err != nil {
			t.Fatalf("point %d: %v", p, err)
		}
		wantPoints := [3]int64{}
		wantPoints[p] = 2
		if points != wantPoints || res.Crashes != 2 || res.Restarts != 2 {
			t.Errorf("listed crashes at point %d: struck %v (idle, before persist, before send), %d crashes, %d restarts; want %v", p, points, res.Crashes, res.Restarts, wantPoints)
		}
		if res.Status != tokendist.StatusDone || fmt.Sprint(res.Loads) != fmt.Sprint(want) || res.Moved != moved || res.Messages != messages {
			t.Errorf("point %d: %v loads %v moved %d messages %d; synchronous %v, %d, %d", p, res.Status, res.Loads, res.Moved, res.Messages, want, moved, messages)
		}
	}
	var total [3]int64
	var crashes int64
	for seed := uint64(0); seed < 20; seed++ {
		loads := randomLoads(n, seed, 200)
		want, _, _ := syncPair(loads, R)
		opts := &Options{Seed: seed, Rounds: R, Faults: faults.Model{CrashRate: 0.05, DownTime: faults.Constant(0.5)}}
		res, points, err := simulateSpy(g, pairPrograms{n}, loads, opts)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if points[0]+points[1]+points[2] != res.Crashes {
			t.Fatalf("seed %d: %v crashes by point, %d in the result", seed, points, res.Crashes)
		}
		if res.Status != tokendist.StatusDone || fmt.Sprint(res.Loads) != fmt.Sprint(want) {
			t.Fatalf("seed %d: %v loads %v; synchronous %v", seed, res.Status, res.Loads, want)
		}
		for i := range total {
			total[i] += points[i]
		}
		crashes += res.Crashes
	}
	t.Logf("rate crashes: %d, by point (idle, before persist, before send) %v", crashes, total)
	if crashes < 60 {
		t.Fatalf("only %d rate crashes: the test needs more", crashes)
	}
	for p, k := range total {
		if 100*k < 15*crashes {
			t.Errorf("rate crashes at point %d: %d of %d, want at least 15 %%", p, k, crashes)
		}
	}
}

// TestCrashKeepsStats: Result's Retransmissions, Duplicates and OutOfOrder count every
// incarnation of every node: the sums of the stats of the machines that crashed and
// of the last ones.
func TestCrashKeepsStats(t *testing.T) {
	const n = 8
	g, err := tokendist.Ring(n)
	if err != nil {
		t.Fatal(err)
	}
	var multi int
	for seed := uint64(0); seed < 4; seed++ {
		var points [3]int64
		var gone handoff.Stats
		last := make([]*spyNode, n)
		opts := &Options{Seed: seed, Rounds: 8, Faults: faults.Model{Loss: 0.3, Duplicate: 0.3, Reorder: 0.3,
			Delay: faults.Uniform(0.5, 2), CrashRate: 0.05, DownTime: faults.Constant(0.5)}}
		res, err := simulate(context.Background(), g, pairPrograms{n}, randomLoads(n, seed, 100), opts,
			func(s *sim, v int, m *handoff.CountMachine) nodeMachine {
				last[v] = &spyNode{counter: counter{m}, s: s, readyEv: -1, advEv: -1, points: &points, gone: &gone, last: last}
				return last[v]
			})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		want := gone
		for _, nd := range last {
			st := nd.Stats()
			want.Retransmissions += st.Retransmissions
			want.Duplicates += st.Duplicates
			want.OutOfOrder += st.OutOfOrder
		}
		if res.Retransmissions != want.Retransmissions || res.Duplicates != want.Duplicates || res.OutOfOrder != want.OutOfOrder {
			t.Errorf("seed %d: result %d retransmissions, %d duplicates, %d out of order; the incarnations' sums %d, %d, %d",
				seed, res.Retransmissions, res.Duplicates, res.OutOfOrder, want.Retransmissions, want.Duplicates, want.OutOfOrder)
		}
		if res.Crashes > n && gone.Retransmissions > 0 && gone.Duplicates > 0 && gone.OutOfOrder > 0 {
			multi++
		}
	}
	if multi == 0 {
		t.Fatal("no run had more crashes than nodes with every count positive in crashed incarnations")
	}
}

// TestStaleTickDropped: a tick scheduled before a crash is dropped after the restart:
// node 1 (beside a silent node 0), down from 0.5 to 0.7, ticks at times 1, 2, ... once
// each, as if it had not crashed.
func TestStaleTickDropped(t *testing.T) {
	g, _ := tokendist.Path(2)
	tp := &tickPrograms{nows: make([][]int64, 2)}
	res, err := Simulate(context.Background(), g, silentFirst{tp}, tokendist.Loads{0, 0}, &Options{Faults: faults.Model{
		Crashes: []faults.Crash{{Node: 1, At: 0.5, DownFor: 0.2, Point: faults.CrashIdle}}}})
	want := []int64{1, 2, 3, 4, 5, 6}
	if err != nil || res.Crashes != 1 || res.Restarts != 1 || !slices.Equal(tp.nows[1], want) || res.Time != 6 || res.Events != 9 {
		t.Fatalf("%v, %d crashes, %d restarts, node 1 ticked %v, time %v, %d events; want ticks %v, time 6, 9 events (6 ticks, a crash, a restart, the stale tick dropped)",
			err, res.Crashes, res.Restarts, tp.nows[1], res.Time, res.Events, want)
	}
}
