// Package contract holds the contract test that every Balancer in tokendist must pass
// on every generator: conservation, non-negativity, determinism for a seed across
// GOMAXPROCS 1 and 2, inputs untouched, bad input rejected, cancellation honoured.
//
// Use it from an external test package (package tokendist_test):
//
//	contract.Check(t, contract.Case{Name: "threshold2", New: func(g *tokendist.Graph) (tokendist.Balancer, error) { ... }})
package contract

import (
	"context"
	"errors"
	"reflect"
	"runtime"
	"testing"

	"github.com/tokendist/tokendist"
)

// Case describes one balancer under test.
type Case struct {
	// Name labels subtests.
	Name string
	// New builds a fresh balancer for a network. Returning an error that wraps
	// tokendist.ErrNotTree, ErrNotConnected or ErrBadParameter marks the network as not
	// applicable (the test checks the error is a proper tokendist error and skips it).
	New func(g *tokendist.Graph) (tokendist.Balancer, error)
	// Networks overrides the default networks (Networks()).
	Networks []Network
	// MaxSteps per run (default 200).
	MaxSteps int64
	// Loads builds the initial loads for a network of n nodes (default: 0..40 random).
	Loads func(n int, seed uint64) (tokendist.Loads, error)
	// Seeds lists the seeds to run (default 1, 2, 3).
	Seeds []uint64
}

// Network is a named test network.
type Network struct {
	Name  string
	Graph *tokendist.Graph
}

// Networks returns one small instance of every generator.
func Networks() []Network {
	must := func(g *tokendist.Graph, err error) *tokendist.Graph {
		if err != nil {
			panic(err)
		}
		return g
	}
	return []Network{
		{"Path(6)", must(tokendist.Path(6))},
		{"Ring(7)", must(tokendist.Ring(7))},
		{"Ring(8)", must(tokendist.Ring(8))},
		{"Star(6)", must(tokendist.Star(6))},
		{"KaryTree(KaryShape{Height: 3, Arity: 2})", must(tokendist.KaryTree(tokendist.KaryShape{Height: 3, Arity: 2}))},
		{"KaryTree(KaryShape{Height: 2, Arity: 3})", must(tokendist.KaryTree(tokendist.KaryShape{Height: 2, Arity: 3}))},
		{"RandomTree(20)", must(tokendist.RandomTree(20, 7))},
		{"Hypercube(4)", must(tokendist.Hypercube(4))},
		{"ShuffleExchange(4)", must(tokendist.ShuffleExchange(4))},
		{"Torus(4,5)", must(tokendist.Torus(4, 5))},
		{"Mesh(3,4)", must(tokendist.Mesh(3, 4))},
		{"RandomRegular(16,3)", must(tokendist.RandomRegular(16, 3, 5))},
		{"Complete(6)", must(tokendist.Complete(6))},
		{"Path(1)", must(tokendist.Path(1))},
	}
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

// Check runs the contract on every network of the case.
func Check(t *testing.T, c Case) {
	t.Helper()
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
			for _, seed := range c.Seeds {
				checkOne(t, c, nw.Graph, seed)
			}
			checkBadInput(t, c, nw.Graph)
			checkCancel(t, c, nw.Graph)
		})
	}
	if applicable == 0 {
		t.Errorf("%s: no applicable network", c.Name)
	}
}

func checkPrefix(t *testing.T, err error) {
	t.Helper()
	if msg := err.Error(); len(msg) < 11 || msg[:11] != "tokendist: " {
		t.Errorf("error %q does not start with \"tokendist: \"", msg)
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

// runAt runs with GOMAXPROCS set to procs.
func runAt(t *testing.T, procs int, c Case, g *tokendist.Graph, loads tokendist.Loads, seed uint64) (tokendist.Result, error) {
	t.Helper()
	old := runtime.GOMAXPROCS(procs)
	defer runtime.GOMAXPROCS(old)
	opts := &tokendist.RunOptions{MaxSteps: c.MaxSteps, SampleEvery: 1, Seed: seed}
	return tokendist.Run(context.Background(), g, loads, newBalancer(t, c, g), opts)
}

func checkOne(t *testing.T, c Case, g *tokendist.Graph, seed uint64) {
	t.Helper()
	loads, err := c.Loads(g.Order(), seed)
	if err != nil {
		t.Fatalf("Loads: %v", err)
	}
	orig := loads.Clone()
	r1, err := runAt(t, 1, c, g, loads, seed)
	if err != nil {
		t.Fatalf("seed %d: Run: %v", seed, err)
	}
	if !reflect.DeepEqual(loads, orig) {
		t.Fatalf("seed %d: Run changed the caller's loads", seed)
	}
	r2, err := runAt(t, 2, c, g, loads, seed)
	if err != nil {
		t.Fatalf("seed %d: Run with GOMAXPROCS 2: %v", seed, err)
	}
	if !reflect.DeepEqual(r1, r2) {
		t.Fatalf("seed %d: results differ between GOMAXPROCS 1 and 2:\n%v\n%v", seed, r1, r2)
	}
	if r1.Status == tokendist.StatusFailed || r1.Status == tokendist.StatusNotStarted {
		t.Fatalf("seed %d: status %v", seed, r1.Status)
	}
	if len(r1.Trace) == 0 || r1.Trace[len(r1.Trace)-1].Step != r1.Steps {
		t.Fatalf("seed %d: trace does not end at the last step", seed)
	}
	if r1.NegativeSteps == 0 {
		for _, x := range r1.Loads {
			if x < 0 {
				t.Fatalf("seed %d: negative final load without NegativeSteps", seed)
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
	if _, err := tokendist.Run(context.Background(), g, loads, newBalancer(t, c, g), &tokendist.RunOptions{MaxSteps: -1}); err == nil {
		t.Errorf("MaxSteps -1 accepted")
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
