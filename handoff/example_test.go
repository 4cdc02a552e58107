package handoff_test

import (
	"fmt"

	"github.com/tokendist/tokendist/node"

	"github.com/tokendist/tokendist/handoff"
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

// Two count machines, driven by hand as a host would: node 0 gives half its load to
// node 1; the data datagram is lost and retransmitted on the timer; node 1 delivers
// it once although it arrives twice, and its ack frees node 0's log. A host persists
// each Ready's State before it sends the Ready's datagrams.
func Example() {
	a, _ := handoff.NewCountMachine(gift{}, handoff.Config{ID: 0, Degree: 1, RetransmitTicks: 2}, 6)
	b, _ := handoff.NewCountMachine(gift{}, handoff.Config{ID: 1, Degree: 1}, 0)
	_ = a.Start()
	_ = b.Start()
	rd, _ := a.Ready() // persist rd.State, then send rd.Datagrams (this one is lost)
	fmt.Println("sent", rd.Datagrams[0].Kind, rd.Datagrams[0].Seq, "tokens", rd.Datagrams[0].Msg.Tokens)
	a.Advance()
	b.Advance()

	var again []handoff.Datagram
	for now := int64(1); len(again) == 0; now++ {
		_ = a.Tick(now)
		rd, _ = a.Ready()
		again = append(again, rd.Datagrams...)
		a.Advance()
		if len(again) > 0 {
			fmt.Println("retransmitted at tick", now)
		}
	}
	_ = b.Step(again[0])
	_ = b.Step(again[0]) // a duplicate: dropped
	rd, _ = b.Ready()    // the delivery is persisted before the ack goes out
	ack := rd.Datagrams[0]
	b.Advance()
	_ = a.Step(ack)
	fmt.Println("loads", a.NodeContext().Load, b.NodeContext().Load, "in flight", a.InFlight(),
		"duplicates", b.Stats().Duplicates, "delivered", b.Stats().Delivered)
	// Output:
	// sent Data 1 tokens 3
	// retransmitted at tick 3
	// loads 3 3 in flight 0 duplicates 1 delivered 1
}

// Two item machines hand items over by hand: node 0 gives half its items to node 1,
// the datagram carries their IDs, node 1 delivers them and acknowledges, and node 0
// frees its log.
func ExampleItemMachine() {
	a, _ := handoff.NewItemMachine(gift{}, handoff.Config{ID: 0, Degree: 1}, []uint64{101, 102, 103, 104})
	b, _ := handoff.NewItemMachine(gift{}, handoff.Config{ID: 1, Degree: 1}, nil)
	_ = a.Start()
	_ = b.Start()
	rd, _ := a.Ready() // persist rd.State, then send:
	data := rd.Datagrams[0]
	fmt.Println("sent", data.Kind, data.Seq, data.Items, "in flight", a.InFlight())
	a.Advance()
	b.Advance()

	_ = b.Step(data)
	rd, _ = b.Ready() // the delivery is persisted before the ack goes out
	ack := rd.Datagrams[0]
	b.Advance()
	_ = a.Step(ack)
	fmt.Println("held", a.Items(), b.Items(), "in flight", a.InFlight())

	b.AddItems([]uint64{900})
	done, _ := b.CompleteItems(2)
	fmt.Println("completed", done, "held", b.Items(), "load", b.NodeContext().Load)
	// Output:
	// sent Data 1 [103 104] in flight 2
	// held [101 102] [103 104] in flight 0
	// completed [103 104] held [900] load 1
}

// A host of one machine: persist the Ready's state, then send its datagrams, then
// Advance; after a crash, rebuild the machine from the persisted bytes.
func ExampleRestoreCountMachine() {
	a, _ := handoff.NewCountMachine(gift{}, handoff.Config{ID: 0, Degree: 1}, 10)
	b, _ := handoff.NewCountMachine(gift{}, handoff.Config{ID: 1, Degree: 1}, 0)
	_ = a.Start()
	_ = b.Start()
	var storeA []byte
	var wire []handoff.Datagram
	host := func(n *handoff.CountMachine, store *[]byte) {
		if !n.HasReady() {
			return
		}
		rd, err := n.Ready()
		if err != nil { // the program panicked in AppendState: stop the node
			fmt.Println(err)
			return
		}
		if rd.State != nil {
			*store = append((*store)[:0], rd.State...) // persist first
		}
		wire = append(wire, rd.Datagrams...) // then send
		n.Advance()
	}
	var storeB []byte
	host(a, &storeA)
	host(b, &storeB)
	fmt.Println("a holds", a.NodeContext().Load, "and logs", a.Unacked(), "datagram")

	// a crashes; it restarts from its persisted state and sends its log again.
	a, _ = handoff.RestoreCountMachine(gift{}, handoff.Config{ID: 0, Degree: 1}, storeA)
	_ = a.Tick(1)
	host(a, &storeA)
	for _, d := range wire { // the first copy and the retransmission, both to b
		if d.Kind == handoff.DatagramData && d.Msg.Tokens == 5 {
			_ = b.Step(d)
		}
	}
	host(b, &storeB)
	fmt.Println("b holds", b.NodeContext().Load, "duplicates dropped", b.Stats().Duplicates)
	for _, d := range wire {
		if d.Kind == handoff.DatagramAck {
			_ = a.Step(d)
		}
	}
	fmt.Println("a logs", a.Unacked())
	// Output:
	// a holds 5 and logs 1 datagram
	// b holds 5 duplicates dropped 1
	// a logs 0
}
