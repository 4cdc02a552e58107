package fleet

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/tokendist/tokendist/handoff"
	"github.com/tokendist/tokendist/node"
)

// TestDeferExactRoom: a data datagram whose items, with those the node holds, take
// exactly MaxItemBytes is taken, not deferred (TestDeferOverFrame: one byte more is
// deferred), and Status.FirstDelivery then reports the time to that first delivery,
// SaveSeconds the time spent saving.
func TestDeferExactRoom(t *testing.T) {
	defer goleak.VerifyNone(t)
	nd, ctx, recv, _, stop := startNopNode(t)
	defer stop()
	// Held: MaxItemBytes-20 bytes of items (10-byte IDs, then 1-byte IDs for the rest).
	room := nd.MaxItemBytes() - 20
	var held []uint64
	for i := range room / 10 {
		held = append(held, 1<<63+uint64(i))
	}
	for i := range room % 10 {
		held = append(held, uint64(1+i))
	}
	if got := itemBytes(held); got != room {
		t.Fatalf("held items take %d bytes; want %d", got, room)
	}
	if err := nd.AddItems(ctx, held); err != nil {
		t.Fatal(err)
	}
	// Two 10-byte items from node 1: exactly the room left.
	frame := sealed(AppendFrame(nil, FrameHeader{Fleet: nd.id.Fleet, From: 1, To: 0, Epoch: 1, Incarnation: 1},
		handoff.Datagram{Kind: handoff.DatagramData, Seq: 1, Msg: node.Message{Kind: 1, Tokens: 2}, Items: []uint64{1<<63 + 1<<40, 1<<63 + 1<<40 + 1}}))
	recv(1, frame)
	waitFor(t, "delivered", func() bool { return nd.Snapshot().Delivered == 1 })
	if st := nd.Snapshot(); st.Deferred != 0 {
		t.Errorf("a datagram that exactly fills the frame was deferred: %+v", st)
	}
	if st := nd.Snapshot(); st.FirstDelivery <= 0 || st.Saves < 2 || st.SaveSeconds <= 0 {
		t.Errorf("after AddItems and a delivery: first delivery %v s, %d saves in %v s; want the time to the delivery and to the saves (> 0), at least 2 saves",
			st.FirstDelivery, st.Saves, st.SaveSeconds)
	}
}
