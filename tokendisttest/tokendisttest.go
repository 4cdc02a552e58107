// Package tokendisttest checks that a tokendist.Balancer keeps the contract that Run
// relies on, in the way gonum's graph/testgraph checks a graph implementation and
// etcd's rafttest exercises a raft node: a user who writes a Balancer calls Check from
// an ordinary test, and every built-in balancer of the module passes the same suite.
//
//	func TestMyBalancer(t *testing.T) {
//		tokendisttest.Check(t, tokendisttest.Case{
//			Name: "mine",
//			New:  func(g *tokendist.Graph) (tokendist.Balancer, error) { return NewMine(g) },
//		})
//	}
//
// On every network of the case (by default one small instance of every generator) and
// for every seed, Check verifies:
//
//   - conservation and non-negativity after every step: the runs sample every step, so
//     Run's own invariant check (tokendist.InvariantError) runs after each one; a
//     balancer that declares fewer invariants through tokendist.InvariantKeeper is held
//     to the ones it declares, an Accountant to its ExpectedTotal;
//   - determinism: the same seed gives the same Result, trace included, with GOMAXPROCS 1
//     and 2 and with 1, 2 and 3 workers;
//   - the caller's loads are never changed;
//   - bad input (loads of the wrong length, a negative load, MaxSteps < 0) is refused
//     with an error that starts with "tokendist: ";
//   - cancellation: a context cancelled from a Recorder stops the run at that step with
//     StatusCanceled (or the balancer finished first);
//   - Step before Init never panics (it may return an error, or initialise itself);
//   - no goroutine outlives Run;
//   - no allocation per step: a run of 256 steps allocates at most two objects more
//     than a run of 128 steps (the end-of-run summary's formatting; skipped under the race detector, whose runtime allocates on its own;
//     Case.MayAllocate opts a balancer out, with a reason).
//
// The package uses only the standard library and the exported API of tokendist, so a
// user's module needs nothing else to run it.
package tokendisttest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tokendist/tokendist"
)

// Case describes one balancer under test. Only Name and New are required; every other
// field's zero value means the default.
type Case struct {
	// Name labels the subtests.
	Name string
	// New builds a fresh balancer for a network; Check calls it once per run. Returning
	// an error that wraps tokendist.ErrNotTree, ErrNotConnected or ErrBadParameter marks
	// the network as not applicable (Check verifies that the error starts with
	// "tokendist: " and skips the network); any other error fails the test.
	New func(g *tokendist.Graph) (tokendist.Balancer, error)
	// Networks overrides the default networks (Networks()).
	Networks []Network
	// MaxSteps bounds every run (default 200).
	MaxSteps int64
	// Loads builds the initial loads for a network of n nodes (default: uniform random
	// loads in 0..40 from the seed).
	Loads func(n int, seed uint64) (tokendist.Loads, error)
	// Seeds lists the seeds to run (default 1, 2, 3).
	Seeds []uint64
	// MayAllocate, when not empty, exempts the balancer from the no-allocation-per-step
	// check and says why (for example "task queues grow with the dag").
	MayAllocate string
}

// Network is a named test network.
type Network struct {
	// Name labels the subtest.
	Name string
	// Graph is the network.
	Graph *tokendist.Graph
}

// Networks returns one small instance of every generator of the root package, plus the
// one-node path (the degenerate case every balancer must accept or refuse cleanly).
func Networks() []Network {
	type gen struct {
		name string
		g    func() (*tokendist.Graph, error)
	}
	gens := []gen{
		{"Path(6)", func() (*tokendist.Graph, error) { return tokendist.Path(6) }},
		{"Ring(7)", func() (*tokendist.Graph, error) { return tokendist.Ring(7) }},
		{"Ring(8)", func() (*tokendist.Graph, error) { return tokendist.Ring(8) }},
		{"Star(6)", func() (*tokendist.Graph, error) { return tokendist.Star(6) }},
		{"KaryTree(KaryShape{Height: 3, Arity: 2})", func() (*tokendist.Graph, error) {
			return tokendist.KaryTree(tokendist.KaryShape{Height: 3, Arity: 2})
		}},
		{"KaryTree(KaryShape{Height: 2, Arity: 3})", func() (*tokendist.Graph, error) {
			return tokendist.KaryTree(tokendist.KaryShape{Height: 2, Arity: 3})
		}},
		{"RandomTree(20)", func() (*tokendist.Graph, error) { return tokendist.RandomTree(20, 7) }},
		{"Hypercube(4)", func() (*tokendist.Graph, error) { return tokendist.Hypercube(4) }},
		{"ShuffleExchange(4)", func() (*tokendist.Graph, error) { return tokendist.ShuffleExchange(4) }},
		{"Torus(4,5)", func() (*tokendist.Graph, error) { return tokendist.Torus(4, 5) }},
		{"Mesh(3,4)", func() (*tokendist.Graph, error) { return tokendist.Mesh(3, 4) }},
		{"RandomRegular(16,3)", func() (*tokendist.Graph, error) { return tokendist.RandomRegular(16, 3, 5) }},
		{"Complete(6)", func() (*tokendist.Graph, error) { return tokendist.Complete(6) }},
		{"Path(1)", func() (*tokendist.Graph, error) { return tokendist.Path(1) }},
	}
	nets := make([]Network, len(gens))
	for i, g := range gens {
		graph, err := g.g()
		if err != nil {
			// The generators' arguments are constants that they accept; reaching this
			// line means a generator broke its own contract.
			panic(fmt.Sprintf("tokendisttest: %s: %v", g.name, err))
		}
		nets[i] = Network{Name: g.name, Graph: graph}
	}
	return nets
}

func (c *Case) defaults() {
	if c.MaxSteps == 0 {
		c.MaxSteps = 200
	}
	if c.Loads == nil {
		c.Loads = func(n int, seed uint64) (tokendist.Loads, error) { return tokendist.RandomRange(n, 0, 40, seed) }
	}
	if len(c.Seeds) == 0 {
		c.Seeds = []uint64{1, 2, 3}
	}
	if c.Networks == nil {
		c.Networks = Networks()
	}
}

// Check runs the contract on every network of the case, one subtest per network, and
// fails if no network applies. It costs a few dozen runs of MaxSteps steps per network.
func Check(t *testing.T, c Case) {
	t.Helper()
	if c.New == nil {
		t.Fatalf("tokendisttest: Case %q has no New function", c.Name)
	}
	c.defaults()
	applicable := 0
	for _, nw := range c.Networks {
		t.Run(c.Name+"/"+nw.Name, func(t *testing.T) {
			if _, err := c.New(nw.Graph); err != nil {
				if errors.Is(err, tokendist.ErrNotTree) || errors.Is(err, tokendist.ErrNotConnected) || errors.Is(err, tokendist.ErrBadParameter) {
					checkPrefix(t, err)
					t.Skipf("not applicable: %v", err)
				}
				t.Fatalf("New: %v", err)
			}
			applicable++
			before := runtime.NumGoroutine()
			for _, seed := range c.Seeds {
				checkOne(t, c, nw.Graph, seed)
			}
			checkBadInput(t, c, nw.Graph)
			checkCancel(t, c, nw.Graph)
			checkStepBeforeInit(t, c, nw.Graph)
			checkGoroutines(t, before)
			checkAllocs(t, c, nw.Graph)
		})
	}
	if applicable == 0 {
		t.Errorf("%s: no applicable network", c.Name)
	}
}

func checkPrefix(t *testing.T, err error) {
	t.Helper()
	if !strings.HasPrefix(err.Error(), "tokendist: ") {
		t.Errorf("error %q does not start with \"tokendist: \"", err)
	}
}

func newBalancer(t *testing.T, c Case, g *tokendist.Graph) tokendist.Balancer {
	t.Helper()
	b, err := c.New(g)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return b
}

// runWith runs a fresh balancer with GOMAXPROCS procs and the given worker count. With
// SampleEvery 1, Run checks the invariants the balancer declares after every step and
// fails the run with an *InvariantError when one breaks.
func runWith(t *testing.T, procs, workers int, c Case, g *tokendist.Graph, loads tokendist.Loads, seed uint64) (tokendist.Result, error) {
	t.Helper()
	old := runtime.GOMAXPROCS(procs)
	defer runtime.GOMAXPROCS(old)
	b := newBalancer(t, c, g)
	opts := &tokendist.RunOptions{MaxSteps: c.MaxSteps, SampleEvery: 1, Seed: seed, Workers: workers}
	return tokendist.Run(context.Background(), g, loads, b, opts)
}

func checkOne(t *testing.T, c Case, g *tokendist.Graph, seed uint64) {
	t.Helper()
	loads, err := c.Loads(g.Order(), seed)
	if err != nil {
		t.Fatalf("Loads: %v", err)
	}
	orig := loads.Clone()
	r1, err := runWith(t, 1, 1, c, g, loads, seed)
	if err != nil {
		t.Fatalf("seed %d: Run: %v", seed, err)
	}
	if !reflect.DeepEqual(loads, orig) {
		t.Fatalf("seed %d: Run changed the caller's loads", seed)
	}
	for _, pw := range [][2]int{{2, 0}, {2, 2}, {2, 3}, {1, 3}} {
		r2, err := runWith(t, pw[0], pw[1], c, g, loads, seed)
		if err != nil {
			t.Fatalf("seed %d: Run with GOMAXPROCS %d, %d workers: %v", seed, pw[0], pw[1], err)
		}
		if !reflect.DeepEqual(r1, r2) {
			t.Fatalf("seed %d: results differ between GOMAXPROCS 1 with 1 worker and GOMAXPROCS %d with %d workers:\n%v\n%v",
				seed, pw[0], pw[1], r1, r2)
		}
	}
	if r1.Status == tokendist.StatusFailed || r1.Status == tokendist.StatusNotStarted {
		t.Fatalf("seed %d: status %v", seed, r1.Status)
	}
	if len(r1.Trace) == 0 || r1.Trace[len(r1.Trace)-1].Step != r1.Steps {
		t.Fatalf("seed %d: trace does not end at the last step", seed)
	}
	if r1.NegativeSteps == 0 {
		for v, x := range r1.Loads {
			if x < 0 {
				t.Fatalf("seed %d: node %d ends at %d but Result.NegativeSteps is 0", seed, v, x)
			}
		}
	}
}

func checkBadInput(t *testing.T, c Case, g *tokendist.Graph) {
	t.Helper()
	bad := []struct {
		name  string
		loads tokendist.Loads
	}{
		{"short", make(tokendist.Loads, g.Order()-1)},
		{"long", make(tokendist.Loads, g.Order()+1)},
		{"negative", func() tokendist.Loads { l := make(tokendist.Loads, g.Order()); l[0] = -1; return l }()},
	}
	for _, tc := range bad {
		_, err := tokendist.Run(context.Background(), g, tc.loads, newBalancer(t, c, g), nil)
		if err == nil {
			t.Errorf("%s loads accepted", tc.name)
			continue
		}
		checkPrefix(t, err)
	}
	loads, _ := c.Loads(g.Order(), 1)
	_, err := tokendist.Run(context.Background(), g, loads, newBalancer(t, c, g), &tokendist.RunOptions{MaxSteps: -1})
	if err == nil {
		t.Errorf("MaxSteps -1 accepted")
	} else {
		checkPrefix(t, err)
	}
}

func checkCancel(t *testing.T, c Case, g *tokendist.Graph) {
	t.Helper()
	loads, _ := c.Loads(g.Order(), 9)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopAt := int64(3)
	rec := tokendist.RecorderFunc(func(s *tokendist.State, _ tokendist.Sample) error {
		if s.Steps >= stopAt {
			cancel()
		}
		return nil
	})
	r, err := tokendist.Run(ctx, g, loads, newBalancer(t, c, g), &tokendist.RunOptions{MaxSteps: 1 << 40, NoStability: true, SampleEvery: 1, Recorder: rec})
	switch r.Status {
	case tokendist.StatusCanceled:
		if !errors.Is(err, context.Canceled) || r.Steps != stopAt {
			t.Errorf("cancelled run: err %v, steps %d, want context.Canceled at step %d", err, r.Steps, stopAt)
		}
	case tokendist.StatusDone, tokendist.StatusTarget:
		if r.Steps > stopAt {
			t.Errorf("status %v after %d steps past cancellation", r.Status, r.Steps)
		}
	default:
		t.Errorf("cancelled run ended with %v, err %v", r.Status, err)
	}
	if r.String() == "" {
		t.Errorf("empty Result.String")
	}
}

// checkStepBeforeInit calls Step on a fresh balancer whose Init has not run: it may
// return an error or initialise itself, but it must not panic.
func checkStepBeforeInit(t *testing.T, c Case, g *tokendist.Graph) {
	t.Helper()
	loads, err := c.Loads(g.Order(), 1)
	if err != nil {
		t.Fatalf("Loads: %v", err)
	}
	b := newBalancer(t, c, g)
	s := &tokendist.State{Net: g, Loads: loads.Clone(), Seed: 1, Rand: rand.New(rand.NewPCG(1, 0)), Workers: 1}
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Errorf("Step before Init panicked: %v", p)
			}
		}()
		if err := b.Step(s); err != nil {
			checkPrefix(t, err)
		}
	}()
}

// checkGoroutines waits (at most two seconds) for the goroutine count to fall back to
// what it was before the network's runs.
func checkGoroutines(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		now := runtime.NumGoroutine()
		if now <= before {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%d goroutines outlived Run (%d before the runs, %d after)", now-before, before, now)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// checkAllocs compares the allocations of a run of 128 steps with one of 256 steps on
// one worker. A balancer whose Step does not allocate makes them equal up to the end of
// the run: the result's summary is formatted once, and larger counters can grow its
// buffer once or twice. So the check allows two extra allocations over the 128 extra
// steps: it catches an allocation per step, and one per round of up to 64 steps.
func checkAllocs(t *testing.T, c Case, g *tokendist.Graph) {
	t.Helper()
	if raceEnabled || c.MayAllocate != "" || testing.Short() && g.Order() > 64 {
		return
	}
	loads, err := c.Loads(g.Order(), 1)
	if err != nil {
		t.Fatalf("Loads: %v", err)
	}
	const k = 128
	measure := func(steps int64) (float64, int64) {
		var last tokendist.Result
		allocs := testing.AllocsPerRun(3, func() {
			r, err := tokendist.Run(context.Background(), g, loads, newBalancer(t, c, g),
				&tokendist.RunOptions{MaxSteps: steps, NoStability: true, Seed: 1, Workers: 1})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			last = r
		})
		return allocs, last.Steps
	}
	a1, s1 := measure(k)
	a2, s2 := measure(2 * k)
	if s2 <= s1 {
		return // the balancer finished within k steps: nothing to compare
	}
	if a2 > a1+2 {
		t.Errorf("steps allocate: %d steps made %.0f allocations, %d steps %.0f (%.2f per step); set Case.MayAllocate with the reason if that is by design",
			s1, a1, s2, a2, (a2-a1)/float64(s2-s1))
	}
}
