package fleet

import (
	"fmt"
	"math"
	"slices"
	"syscall"
	"time"

	"github.com/tokendist/tokendist/registry"
)

// The patience case of TestChaosIdentity (issue 36, item 4; docs/fleet.md, "The round
// clock"): real tokendist-node processes with patience 15 (150 ms rounds of the
// default 10 ms tick). One node is SIGSTOPped for 3 s and SIGCONTed, another kill -9'd
// and restarted 3 s later, while work arrives; before the round clock caught up, the
// two stayed 20 rounds behind their neighbours for good and the fleet never balanced
// again.

// chaosPatience is the case's patience, in ticks (the report).
const chaosPatience = 15

// patienceChaosSpec is the case's fleet: RSW diffusion sends on every link in every
// round, so a node out of step with its neighbours exchanges no flow with them.
func patienceChaosSpec() registry.Spec {
	return registry.Spec{Network: choice("torus", map[string]any{"sides": []int{4, 4}}), Loads: choice("uniform-random", map[string]any{"tokens": 16 * 20}),
		Algorithm: choice("rsw-diffusion", nil), Seed: 36}
}

// chaos limits of the case. The bound is far shorter (in step one window, 150 ms, plus
// a message delay and a reconnection after the fault; balanced as a fault-free run,
// measured first); the slack is for a loaded CI machine. Before the catch-up no limit
// was enough.
const (
	patienceInStepLimit  = 10 * time.Second
	patienceBalanceLimit = 30 * time.Second
)

// roundsOf returns every node's round (Status.Now / patience); a node that does not
// answer, or answers without a clock (a binary before Status.Now), is round -1.
func (c *chaos) roundsOf() []int64 {
	out := make([]int64, len(c.cfgs))
	for v := range c.cfgs {
		out[v] = -1
		if s, err := c.status(v); err == nil && s.Now > 0 {
			out[v] = s.Now / chaosPatience
		}
	}
	return out
}

// waitRoundsInStep waits (at most limit) until every node answers and all are in one
// round, give or take one, twice in a row; it returns the time it took and whether
// they got there.
func (c *chaos) waitRoundsInStep(limit time.Duration) (time.Duration, []int64, bool) {
	t0 := time.Now()
	var rs []int64
	for ok := 0; time.Since(t0) < limit; time.Sleep(20 * time.Millisecond) {
		rs = c.roundsOf()
		if slices.Min(rs) >= 0 && slices.Max(rs)-slices.Min(rs) <= 1 {
			if ok++; ok == 2 {
				return time.Since(t0), rs, true
			}
		} else {
			ok = 0
		}
	}
	return time.Since(t0), rs, false
}

// waitLiveBalanced waits (at most limit) for the live loads to meet the bound with no
// token in flight three times in a row, and returns the time, the loads and whether
// they did. (A live poll is not a consistent cut: tokens on their way to a restarted
// node can unbalance loads that looked balanced.)
func (c *chaos) waitLiveBalanced(limit time.Duration) (time.Duration, []int64, bool) {
	t0 := time.Now()
	quiet := func() []int64 {
		l := c.liveLoads()
		for v := range c.cfgs {
			if s, err := c.status(v); err != nil || s.InFlight != 0 {
				l[v] = math.MaxInt32 // not balanced while tokens are on their way
			}
		}
		return l
	}
	waitBalanced(c.t, c.b, quiet, limit)
	l := quiet()
	return time.Since(t0), l, c.b.withinBound(l)
}

// drainComplete restarts nothing: the fleet must run. It completes every item through
// /complete until every node holds nothing and has nothing in flight (drain), at most
// limit, and checks that the items completed are the expected ones, each exactly once.
func (c *chaos) drainComplete(limit time.Duration) {
	got := c.drain(limit)
	expected := make([]uint64, 0, len(c.expected))
	for id := range c.expected {
		expected = append(expected, id)
	}
	if lost, doubled, unknown := exactlyOnce(expected, got); len(lost)+len(doubled)+len(unknown) > 0 {
		c.t.Fatalf("drained through /complete: lost %d %v, doubled %d %v, unknown %d %v", len(lost), head(lost), len(doubled), head(doubled), len(unknown), head(unknown))
	}
	c.t.Logf("drained through /complete: %d payloads exactly once", len(expected))
}

// patience: see the top of this file. The fleet first balances one burst of work
// without faults (the reference); then node a is SIGSTOPped and node b kill -9'd at once,
// work arrives at node 0 during the 3 s, a is SIGCONTed and b restarted, and more work
// arrives. Within the limits the nodes must be in step again (rounds within one of
// each other, Status.Now), a and b must have caught up (Status.CaughtUp), and the
// loads must meet RSW's bound again — the bound the fault-free phase met: RSW moves
// tokens across a link until its two loads differ by at most the degree d, so its
// stable states have local differences ≤ d and discrepancy ≤ d·diameter, and a run
// whose rounds go through reaches one. Then the persisted states and a drain through
// /complete hold every item exactly once.
func (c *chaos) patience() {
	t := c.t
	for v := range c.cfgs {
		c.cfgs[v].Patience = chaosPatience
		c.writeConfig(v)
	}
	c.startAll()
	// The reference: a burst of work, balanced without faults.
	c.work(0, 16*10)
	d0, l0, ok := c.waitLiveBalanced(patienceBalanceLimit)
	if !ok {
		t.Fatalf("without faults the fleet did not balance within %v: loads %v", patienceBalanceLimit, l0)
	}
	disc0, local0 := c.b.discrepancy(l0)
	t.Logf("patience: without faults balanced %.2f s after the work arrived: discrepancy %d (local %d), bound %d (local %d), rounds %v",
		d0.Seconds(), disc0, local0, c.b.bound, c.b.local, c.roundsOf())

	// The faults: a paused, b down, 3 s each; work arrives meanwhile.
	a, b := 5, 10 // not neighbours on the 4x4 torus
	if err := c.procs[a].Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	c.kill(b)
	faultStart := time.Now()
	c.work(0, 16*5)
	time.Sleep(3*time.Second - time.Since(faultStart))
	if err := c.procs[a].Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	c.start(b)
	c.waitUp(b)
	ended := time.Now()
	c.work(0, 16*10)
	behind := c.roundsOf()
	inStep, rs, ok := c.waitRoundsInStep(patienceInStepLimit)
	if !ok { // go on: the balance shows what being out of step does
		t.Errorf("the nodes are not in step %v after the faults: rounds %v (right after: %v)", patienceInStepLimit, rs, behind)
	}
	bal, l1, ok := c.waitLiveBalanced(patienceBalanceLimit)
	if !ok {
		disc, local := c.b.discrepancy(l1)
		t.Fatalf("after the faults the fleet did not balance within %v: loads %v, discrepancy %d (local %d), bound %d (local %d); rounds %v",
			patienceBalanceLimit, l1, disc, local, c.b.bound, c.b.local, c.roundsOf())
	}
	disc1, local1 := c.b.discrepancy(l1)
	var caught []string
	for _, v := range []int{a, b} {
		s, err := c.status(v)
		if err != nil {
			t.Fatal(err)
		}
		if s.CaughtUp < 10*chaosPatience { // 3 s is 20 windows behind
			t.Errorf("node %d caught up %d ticks; want at least %d (10 of the 20 windows it missed)", v, s.CaughtUp, 10*chaosPatience)
		}
		caught = append(caught, fmt.Sprintf("node %d %d ticks", v, s.CaughtUp))
	}
	t.Logf("patience: node %d paused and node %d down for %.1f s; rounds right after %v; in step %.2f s after they were back (rounds %v); balanced %.2f s after that: discrepancy %d (local %d), bound %d (local %d); caught up: %v",
		a, b, ended.Sub(faultStart).Seconds(), behind, inStep.Seconds(), rs, bal.Seconds(), disc1, local1, c.b.bound, c.b.local, caught)

	// Exactly once: in the persisted states, then drained through /complete.
	c.stopAll()
	c.auditExactlyOnce("after the pause and the restart")
	c.startAll()
	c.drainComplete(30 * time.Second)
	c.stopAll()
}
