package fleet

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tokendist/tokendist/registry"
)

// The round clock with patience (issue 36, item 4; docs/fleet.md, "The round clock"):
// in-process fleets (InmemNetwork, MemoryStores) whose clocks disagree because a node
// was paused, was down, ticks slower or started late. Before the catch-up such a node
// stayed rounds behind its neighbours for good: their messages were always of another
// round, every link to it carried no flow, and the fleet never balanced again.

// patienceTicks is the patience of these tests, as in the report: with the
// in-process fleet's 1 ms tick a round's window is 15 ms.
const patienceTicks = 15

// patienceSpec: RSW diffusion sends on every link in every round, so a node that is
// out of step with a neighbour exchanges no flow with it; from a point mass at node 0
// every other node needs tokens to arrive, which a node out of step never gets.
func patienceSpec() registry.Spec {
	return registry.Spec{Network: choice("torus", map[string]any{"sides": []int{3, 3}}), Loads: choice("point-mass", map[string]any{"tokens": 360}),
		Algorithm: choice("rsw-diffusion", nil), Seed: 36}
}

func newPatienceFleet(t *testing.T) *memFleet {
	f := newMemFleet(t, patienceSpec())
	for v := range f.cfgs {
		f.cfgs[v].Patience = patienceTicks
	}
	return f
}

// clock reads node v's round clock on its goroutine (zero once it has stopped).
func (f *memFleet) clock(v int) int64 {
	var now int64
	_ = f.nodes[v].do(context.Background(), func() { now = f.nodes[v].now })
	return now
}

// rounds returns every node's round (clock / patience).
func (f *memFleet) rounds() []int64 {
	out := make([]int64, len(f.nodes))
	for v := range f.nodes {
		out[v] = f.clock(v) / patienceTicks
	}
	return out
}

// waitInStep waits (at most limit) until every node is in the same round as every
// other, give or take one (a window boundary passed between two readings, or a
// message on its way), twice in a row, and returns the time it took; it fails the
// test past the limit. It also checks that no clock goes back.
func (f *memFleet) waitInStep(limit time.Duration, what string) time.Duration {
	f.t.Helper()
	t0 := time.Now()
	last := make([]int64, len(f.nodes))
	var rs []int64
	for ok := 0; ok < 2; time.Sleep(5 * time.Millisecond) {
		rs = f.rounds()
		for v, r := range rs {
			if r < last[v] {
				f.t.Fatalf("%s: node %d's round went back from %d to %d", what, v, last[v], r)
			}
			last[v] = r
		}
		if slices.Max(rs)-slices.Min(rs) <= 1 {
			ok++
		} else {
			ok = 0
		}
		if time.Since(t0) > limit {
			f.t.Fatalf("%s: the nodes are not in step %v later: rounds %v", what, limit, rs)
		}
	}
	return time.Since(t0)
}

// balanced waits (at most limit) for the loads to meet RSW's bound and returns the time
// it took; it fails the test past the limit.
func (f *memFleet) balanced(limit time.Duration, what string) time.Duration {
	f.t.Helper()
	t0 := time.Now()
	// Within the bound with no token on its way, three polls in a row: a live poll is
	// not a consistent cut, and tokens in flight (a late-started node's neighbours
	// retransmitting what it missed) can unbalance loads that looked balanced.
	for ok := 0; ok < 3 && time.Since(t0) < limit; time.Sleep(50 * time.Millisecond) {
		var inFlight int64
		for _, nd := range f.nodes {
			inFlight += nd.Snapshot().InFlight
		}
		if inFlight == 0 && f.b.withinBound(f.loads()) {
			ok++
		} else {
			ok = 0
		}
	}
	if l := f.loads(); !f.b.withinBound(l) {
		disc, local := f.b.discrepancy(l)
		f.t.Fatalf("%s: not balanced %v later: loads %v, discrepancy %d (local %d), bound %d (local %d); rounds %v",
			what, limit, l, disc, local, f.b.bound, f.b.local, f.rounds())
	}
	return time.Since(t0)
}

// inStepLimit and balanceLimit are the wall-clock limits of these tests. The bound
// they check is far shorter (in step one window, 15 ms, plus a message delay after the
// fault; balanced as a fault-free run of the remaining rounds, a few dozen rounds):
// the slack is for a loaded CI machine. Before the catch-up no limit was enough.
const (
	inStepLimit  = 2 * time.Second
	balanceLimit = 10 * time.Second
)

// TestPatienceCatchUp: a node paused for 20 windows (its goroutine blocked, as a
// SIGSTOPped process: its ticks are lost, its frames wait), a node down for 20 windows
// and restarted from its store (its clock restored where it stopped), a node whose
// clock ticks three times slower than the others', and a node started 20 windows late
// (its clock starts at 0). Each time the nodes are in step again and the fleet
// balances the work that arrives after the fault, then every item is found exactly
// once in the persisted states and when drained.
func TestPatienceCatchUp(t *testing.T) {
	defer goleak.VerifyNone(t)
	const fault = 20 * patienceTicks * time.Millisecond // 20 windows of the 1 ms tick
	cases := []struct {
		name   string
		before func(f *memFleet) // configure before the start
		fault  func(f *memFleet) // the fault, from the start; returns when it ends
	}{
		{"pause", nil, func(f *memFleet) {
			// Node 4 is paused at once, while node 0's tokens start to spread.
			if err := f.nodes[4].do(context.Background(), func() { time.Sleep(fault) }); err != nil {
				f.t.Fatal(err)
			}
		}},
		{"down", nil, func(f *memFleet) {
			time.Sleep(5 * patienceTicks * time.Millisecond)
			before := f.clock(4)
			if err := f.stop(4); err != nil {
				f.t.Fatal(err)
			}
			time.Sleep(fault) // frames to it are dropped
			f.start(4)
			if st := f.nodes[4].Snapshot(); !st.Restored {
				f.t.Fatalf("node 4 did not restore: %+v", st)
			}
			if now := f.nodes[4].Snapshot().Now; now < before {
				f.t.Fatalf("node 4's clock restored at %d, before %d where it stopped", now, before)
			}
		}},
		{"slow-clock", func(f *memFleet) {
			f.cfgs[4].Tick = Duration(3 * time.Millisecond)
		}, func(*memFleet) {
			time.Sleep(fault)
		}},
		{"late-start", nil, nil}, // see below
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newPatienceFleet(t)
			defer f.close()
			if tc.before != nil {
				tc.before(f)
			}
			l := newLedger(f.b)
			if tc.name == "late-start" {
				for v := range f.nodes {
					if v != 4 {
						f.start(v)
					}
				}
				time.Sleep(fault)
				f.start(4)
			} else {
				f.startAll()
				tc.fault(f)
			}
			// Work arrives at node 0 after the fault: every node needs a share of it.
			ids := l.newIDs(9 * 20)
			if err := f.nodes[0].AddItems(context.Background(), ids); err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				l.expected[id] = true
			}
			inStep := f.waitInStep(inStepLimit, tc.name)
			bal := f.balanced(balanceLimit, tc.name)
			var caught []int64
			for _, nd := range f.nodes {
				caught = append(caught, nd.Snapshot().CaughtUp)
			}
			t.Logf("%s: in step %.3f s after the fault ended, balanced %.3f s after that (loads %v, rounds %v); ticks caught up per node %v",
				tc.name, inStep.Seconds(), bal.Seconds(), f.loads(), f.rounds(), caught)
			f.finish(l)
		})
	}
}

// TestPatienceCatchUpClock: the catch-up's arithmetic. A data datagram of round r moves
// the clock to r·p and no further; an older round or zero patience do not move it; one
// message moves it at most maxCatchUpRounds rounds, and an overflowing product stops at
// maxClock instead of wrapping.
func TestPatienceCatchUpClock(t *testing.T) {
	defer goleak.VerifyNone(t)
	// A patience that does not divide maxClock. (The program skips the rounds from its
	// round 0 to the clock's one by one: these clocks are at most a few million rounds.)
	const pq = 1<<40 - 1
	for _, tc := range []struct {
		patience, now int64
		rounds        []int64 // one catch-up per round, in order
		want          int64
	}{
		{15, 0, []int64{3}, 45},
		{15, 44, []int64{3}, 45},
		{15, 45, []int64{3}, 45},
		{15, 50, []int64{3}, 50},                                                 // never back
		{15, 50, []int64{0}, 50},                                                 // round 0
		{15, 50, []int64{-7}, 50},                                                // a negative round: nothing
		{0, 50, []int64{9}, 50},                                                  // zero patience: no pacing, no catch-up
		{15, 0, []int64{1 << 40}, maxCatchUpRounds * 15},                         // at most maxCatchUpRounds per message
		{15, 7 * 15, []int64{1 << 40}, (7 + maxCatchUpRounds) * 15},              // counted from the clock's round
		{1 << 40, 1<<62 - 5, []int64{1 << 62}, maxClock},                         // r·p overflows: maxClock, not a wrap
		{1 << 40, maxClock, []int64{1 << 62}, maxClock},                          // and no further
		{15, 0, []int64{3, 5}, 75},                                               // the ticks caught up add up
		{pq, (maxClock/pq - 5) * pq, []int64{maxClock / pq}, maxClock / pq * pq}, // the last round below maxClock: its first tick
	} {
		t.Run(fmt.Sprintf("p%d-now%d-r%v", tc.patience, tc.now, tc.rounds), func(t *testing.T) {
			f := newMemFleet(t, patienceSpec())
			defer f.close()
			f.cfgs[4].Patience = tc.patience
			f.start(4)
			nd := f.nodes[4]
			var got, caught int64
			var err error
			if e := nd.do(context.Background(), func() {
				nd.now = tc.now
				for _, r := range tc.rounds {
					if err = nd.catchUp(r); err != nil {
						return
					}
				}
				got = nd.now
				caught = nd.st.CaughtUp
			}); e != nil {
				t.Fatal(e)
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want || caught != tc.want-tc.now {
				t.Errorf("clock %d, caught up %d; want %d, %d", got, caught, tc.want, tc.want-tc.now)
			}
		})
	}
}
