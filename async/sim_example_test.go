package async_test

import (
	"context"
	"fmt"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/async"
)

// gift is a one-shot node program: at Start a node gives half its load to its first
// neighbour, then it is idle. Its state is empty: it never sends again.
type gift struct{}

func (gift) Start(c *tokendist.NodeContext) error {
	return c.Send(0, tokendist.Message{Tokens: c.Load / 2, Counted: true})
}
func (gift) Receive(*tokendist.NodeContext, int, tokendist.Message) error { return nil }
func (gift) Tick(*tokendist.NodeContext) error                            { return nil }
func (gift) Idle() bool                                                   { return true }
func (gift) AppendState(b []byte) []byte                                  { return b }
func (gift) RestoreState([]byte) error                                    { return nil }

type gifts struct{}

func (gifts) Program(int) (tokendist.NodeProgram, error) { return gift{}, nil }

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

	faulty := &async.Options{Seed: 1, Network: async.NetworkModel{
		Delay: async.Pareto(0.5, 1.5), Loss: 0.3, Duplicate: 0.2, Reorder: 0.2,
		Crashes: []async.Crash{{Node: 1, At: 0.2, DownFor: 5, Point: async.CrashBeforePersist}},
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

// A host of one Node: persist the Ready's state, then send its datagrams, then Advance;
// after a crash, rebuild the node from the persisted bytes.
func ExampleNode() {
	a, _ := async.NewNode(gift{}, async.NodeConfig{ID: 0, Degree: 1, Load: 10})
	b, _ := async.NewNode(gift{}, async.NodeConfig{ID: 1, Degree: 1})
	_ = a.Start()
	_ = b.Start()
	var storeA []byte
	var wire []async.Datagram
	host := func(n *async.Node, store *[]byte) {
		if !n.HasReady() {
			return
		}
		rd := n.Ready()
		if rd.State != nil {
			*store = append((*store)[:0], rd.State...) // persist first
		}
		wire = append(wire, rd.Datagrams...) // then send
		n.Advance()
	}
	var storeB []byte
	host(a, &storeA)
	host(b, &storeB)
	fmt.Println("a holds", a.Context().Load, "and logs", a.Unacked(), "datagram")

	// a crashes; it restarts from its persisted state and sends its log again.
	a, _ = async.RestoreNode(gift{}, async.NodeConfig{ID: 0, Degree: 1}, storeA)
	_ = a.Tick(1)
	host(a, &storeA)
	for _, d := range wire { // the first copy and the retransmission, both to b
		if d.Kind == async.Data && d.Msg.Tokens == 5 {
			_ = b.Step(d)
		}
	}
	host(b, &storeB)
	fmt.Println("b holds", b.Context().Load, "duplicates dropped", b.Stats().Duplicates)
	for _, d := range wire {
		if d.Kind == async.Ack {
			_ = a.Step(d)
		}
	}
	fmt.Println("a logs", a.Unacked())
	// Output:
	// a holds 5 and logs 1 datagram
	// b holds 5 duplicates dropped 1
	// a logs 0
}
