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

// leaky forgets a token at step 5: the contract catches it.
type leaky struct{}

func (leaky) Step(s *tokendist.State) error {
	if s.Steps == 5 && len(s.Loads) > 1 && s.Loads[0] > 0 {
		s.Loads[0]--
	}
	return nil
}

func TestCheckCatchesALeak(t *testing.T) {
	test := func(t *testing.T) {
		tokendisttest.Check(t, tokendisttest.Case{
			Name:     "leaky",
			New:      func(*tokendist.Graph) (tokendist.Balancer, error) { return leaky{}, nil },
			Networks: tokendisttest.Networks()[:1],
			Loads:    func(n int, _ uint64) (tokendist.Loads, error) { return tokendist.PointMass(n, 10, 0) },
		})
	}
	// The inner test's failure report goes to standard output: keep it out of this
	// test's log, where it would read as a failure of the suite.
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	stdout := os.Stdout
	os.Stdout = devnull
	all := func(string, string) (bool, error) { return true, nil }
	ok := testing.RunTests(all, []testing.InternalTest{{Name: "TestLeaky", F: test}})
	os.Stdout = stdout
	if ok {
		t.Fatal("a balancer that loses a token passed the contract")
	}
}
