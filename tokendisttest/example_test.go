package tokendisttest_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/tokendisttest"
)

// neighbourAverage is a user's own balancer: at step t it visits node t mod n and moves
// one token across each of its edges whose ends differ by at least two.
type neighbourAverage struct{ g *tokendist.Graph }

func (b *neighbourAverage) Init(s *tokendist.State) error {
	g, err := tokendist.AsGraph(s.Net)
	b.g = g
	return err
}

func (b *neighbourAverage) Step(s *tokendist.State) error {
	if b.g == nil || b.g.Order() != len(s.Loads) {
		return fmt.Errorf("tokendist: neighbour-average: %w", tokendist.ErrNotInitialized)
	}
	u := int(s.Steps % int64(b.g.Order()))
	for _, v := range b.g.Neighbors(u) {
		switch d := s.Loads[u] - s.Loads[v]; {
		case d >= 2:
			s.Loads[u], s.Loads[v] = s.Loads[u]-1, s.Loads[v]+1
			s.Moved++
		case d <= -2:
			s.Loads[u], s.Loads[v] = s.Loads[u]+1, s.Loads[v]-1
			s.Moved++
		}
	}
	s.Time++
	return nil
}

func (b *neighbourAverage) String() string { return "neighbour-average" }

// A user checks their own balancer in an ordinary test:
//
//	func TestNeighbourAverage(t *testing.T) {
//		tokendisttest.Check(t, tokendisttest.Case{Name: "neighbour-average", New: ...})
//	}
//
// The example runs that test through testing.RunTests so that its outcome can be
// printed; in a _test.go file, call Check directly.
func Example() {
	test := func(t *testing.T) {
		tokendisttest.Check(t, tokendisttest.Case{
			Name: "neighbour-average",
			New:  func(*tokendist.Graph) (tokendist.Balancer, error) { return &neighbourAverage{}, nil },
		})
	}
	all := func(string, string) (bool, error) { return true, nil }
	ok := testing.RunTests(all, []testing.InternalTest{{Name: "TestNeighbourAverage", F: test}})
	fmt.Println("contract kept:", ok)
	// Output:
	// contract kept: true
}

// Balancers that break one rule each; the contract must catch every one.

// leaky forgets a token at step 5.
type leaky struct{}

func (leaky) Step(s *tokendist.State) error {
	if s.Steps == 5 && len(s.Loads) > 1 && s.Loads[0] > 0 {
		s.Loads[0]--
	}
	return nil
}

// negative moves a token off an empty node.
type negative struct{}

func (negative) Step(s *tokendist.State) error {
	if len(s.Loads) > 1 {
		s.Loads[0]--
		s.Loads[1]++
	}
	return nil
}

// workerDependent moves a token to a node chosen by the worker count.
type workerDependent struct{}

func (workerDependent) Step(s *tokendist.State) error {
	if n := len(s.Loads); n > 1 && s.Steps == 0 && s.Loads[0] > 0 {
		s.Loads[0]--
		s.Loads[1+s.Workers%(n-1)]++
	}
	return nil
}

// needsInit panics in Step when Init has not run.
type needsInit struct{ buf []int64 }

func (b *needsInit) Init(s *tokendist.State) error {
	b.buf = make([]int64, len(s.Loads))
	return nil
}

func (b *needsInit) Step(s *tokendist.State) error {
	b.buf[0] = s.Loads[0] // index out of range before Init
	return nil
}

// leaksGoroutine starts a goroutine that outlives the run.
type leaksGoroutine struct{ stop chan struct{} }

func (b *leaksGoroutine) Step(s *tokendist.State) error {
	if s.Steps == 0 {
		go func() { <-b.stop }()
	}
	return nil
}

// allocates allocates in every step.
type allocates struct{ sink [][]int64 }

func (b *allocates) Step(s *tokendist.State) error {
	b.sink = append(b.sink[:0], make([]int64, 8))
	return nil
}

// TestCheckCatchesBrokenBalancers runs Check on balancers that each break one rule of
// the contract, and requires every one to fail it.
func TestCheckCatchesBrokenBalancers(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	one := tokendisttest.Networks()[:1] // Path(6)
	point := func(n int, _ uint64) (tokendist.Loads, error) { return tokendist.PointMass(n, 10, 0) }
	cases := []struct {
		name string
		new  func() tokendist.Balancer
	}{
		{"loses a token", func() tokendist.Balancer { return leaky{} }},
		{"makes a load negative", func() tokendist.Balancer { return negative{} }},
		{"depends on the worker count", func() tokendist.Balancer { return workerDependent{} }},
		{"panics in Step before Init", func() tokendist.Balancer { return &needsInit{} }},
		{"leaves a goroutine", func() tokendist.Balancer { return &leaksGoroutine{stop: stop} }},
		{"allocates per step", func() tokendist.Balancer { return &allocates{} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if raceOn && tc.name == "allocates per step" {
				t.Skip("-race: the race detector's runtime allocates, so Check does not count allocations")
			}
			test := func(t *testing.T) {
				tokendisttest.Check(t, tokendisttest.Case{
					Name:     tc.name,
					New:      func(*tokendist.Graph) (tokendist.Balancer, error) { return tc.new(), nil },
					Networks: one,
					Loads:    point,
				})
			}
			if passes(t, test) {
				t.Fatalf("a balancer that %s passed the contract", tc.name)
			}
		})
	}
}

// passes runs test as a test of its own and reports whether it passed; its failure
// report goes to /dev/null, where it would otherwise read as a failure of this suite.
func passes(t *testing.T, test func(*testing.T)) bool {
	t.Helper()
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	stdout := os.Stdout
	os.Stdout = devnull
	defer func() { os.Stdout = stdout }()
	all := func(string, string) (bool, error) { return true, nil }
	return testing.RunTests(all, []testing.InternalTest{{Name: "TestInner", F: test}})
}
