package async_test

import (
	"fmt"

	"github.com/tokendist/tokendist/async"
)

// Two nodes in item mode hand items over by hand: node 0 gives half its items to node
// 1 (the gift program above), the datagram carries their IDs, node 1 delivers them and
// acknowledges, and node 0 frees its log. A host persists each Ready's State before it
// sends the Ready's datagrams.
func ExampleNode_items() {
	a, _ := async.NewNode(gift{}, async.NodeConfig{ID: 0, Degree: 1, ItemMode: true, Items: []uint64{101, 102, 103, 104}})
	b, _ := async.NewNode(gift{}, async.NodeConfig{ID: 1, Degree: 1, ItemMode: true})
	_ = a.Start()
	_ = b.Start()
	rd := a.Ready() // persist rd.State, then send:
	data := rd.Datagrams[0]
	fmt.Println("sent", data.Kind, data.Seq, data.Items, "in flight", a.InFlight())
	a.Advance()
	b.Advance()

	_ = b.Step(data)
	rd = b.Ready() // the delivery is persisted before the ack goes out
	ack := rd.Datagrams[0]
	b.Advance()
	_ = a.Step(ack)
	fmt.Println("held", a.Items(), b.Items(), "in flight", a.InFlight())

	_ = b.AddItems([]uint64{900})
	done, _ := b.CompleteItems(2)
	fmt.Println("completed", done, "held", b.Items(), "load", b.Context().Load)
	// Output:
	// sent Data 1 [103 104] in flight 2
	// held [101 102] [103 104] in flight 0
	// completed [103 104] held [900] load 1
}
