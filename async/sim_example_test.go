package async_test

import (
	"context"
	"fmt"

	"github.com/tokendist/tokendist/node"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/async"
	"github.com/tokendist/tokendist/faults"
)

// gift is a one-shot node program: at Start a node gives half its load to its first
// neighbour, then it is idle. Its state is empty: it never sends again.
type gift struct{}

func (gift) Start(c *node.Context) error {
	return c.Send(0, node.Message{Tokens: c.Load / 2, Counted: true})
}
func (gift) Receive(*node.Context, int, node.Message) error { return nil }
func (gift) Tick(*node.Context) error                       { return nil }
func (gift) Idle() bool                                     { return true }
func (gift) AppendState(b []byte) []byte                    { return b }
func (gift) RestoreState([]byte) error                      { return nil }

type gifts struct{}

func (gifts) Program(int) (node.Program, error) { return gift{}, nil }

// Simulate a one-shot program on a ring, first on the synchronous network and then on a
// lossy, duplicating, reordering network with heavy-tailed delays and crashes: the
// handoff delivers every token exactly once, so the loads are the same.
func ExampleSimulate() {
	ring, _ := tokendist.Ring(4)
	loads := tokendist.Loads{8, 0, 4, 2}
	res, err := async.Simulate(context.Background(), ring, gifts{}, loads, &async.Options{Seed: 1})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Status, res.Loads, "moved", res.Moved, "time", res.Time)

	faulty := &async.Options{Seed: 1, Faults: faults.Model{
		Delay: faults.Pareto(0.5, 1.5), Loss: 0.3, Duplicate: 0.2, Reorder: 0.2,
		Crashes: []faults.Crash{{Node: 1, At: 0.2, DownFor: 5, Point: faults.CrashBeforePersist}},
	}}
	res, err = async.Simulate(context.Background(), ring, gifts{}, loads, faulty)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Status, res.Loads, "moved", res.Moved, "in flight", res.InFlight)
	fmt.Println("lost", res.Lost > 0, "retransmitted", res.Retransmissions > 0, "crashes", res.Crashes)
	// Output:
	// Done [5 6 2 1] moved 7 time 1
	// Done [5 6 2 1] moved 7 in flight 0
	// lost true retransmitted true crashes 1
}
