package handoff

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tokendist/tokendist/node"

	"github.com/tokendist/tokendist"
)

// pushProgram sends its whole load, one token per message, to port 0 at Start.
type pushProgram struct{ sent int64 }

func (p *pushProgram) Start(c *node.Context) error {
	for c.Load > 0 {
		if err := c.Send(0, node.Message{Kind: 3, Round: p.sent, Tokens: 1, Counted: true}); err != nil {
			return err
		}
		p.sent++
	}
	return nil
}
func (p *pushProgram) Receive(*node.Context, int, node.Message) error { return nil }
func (p *pushProgram) Tick(*node.Context) error                       { return nil }
func (p *pushProgram) Idle() bool                                     { return true }
func (p *pushProgram) AppendState(b []byte) []byte                    { return append(b, byte(p.sent)) }
func (p *pushProgram) RestoreState(b []byte) error {
	if len(b) != 1 {
		return errors.New("tokendist: push: bad state")
	}
	p.sent = int64(b[0])
	return nil
}

// drain persists nothing and returns the Ready's datagrams (copied).
func drain(n *CountMachine) []Datagram {
	if !n.HasReady() {
		return nil
	}
	rd := mustReady(n)
	out := slices.Clone(rd.Datagrams)
	n.Advance()
	return out
}

// TestHandoffTwoNodes drives two nodes by hand through loss, duplication, reordering
// and a restart of each end from its persisted state.
func TestHandoffTwoNodes(t *testing.T) {
	a, err := NewCountMachine(&pushProgram{}, Config{ID: 0, Degree: 1}, 5)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewCountMachine(&pushProgram{}, Config{ID: 1, Degree: 1}, 0)
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	rd := mustReady(a)
	if rd.State == nil || len(rd.Datagrams) != 5 || a.NodeContext().Load != 0 || a.Unacked() != 5 {
		t.Fatalf("after Start: %d datagrams, load %d, unacked %d", len(rd.Datagrams), a.NodeContext().Load, a.Unacked())
	}
	saved := slices.Clone(rd.State)
	data := slices.Clone(rd.Datagrams)
	a.Advance()
	drain(b)
	// Deliver 3, 1, 1, 2 (reordered, duplicated; 4 and 5 lost).
	for _, i := range []int{2, 0, 0, 1} {
		if err := b.Step(data[i]); err != nil {
			t.Fatal(err)
		}
	}
	if b.NodeContext().Load != 2 || b.Stats().Duplicates != 1 || b.Stats().OutOfOrder != 1 {
		t.Fatalf("load %d, stats %+v", b.NodeContext().Load, b.Stats())
	}
	bState := slices.Clone(mustReady(b).State)
	acks := slices.Clone(mustReady(b).Datagrams)
	b.Advance()
	if len(acks) != 1 || acks[0].Kind != DatagramAck || acks[0].Seq != 2 {
		t.Fatalf("acks %+v", acks)
	}
	// b crashes after persisting: restart it from its state.
	b, err = RestoreCountMachine(&pushProgram{}, Config{ID: 1, Degree: 1}, bState)
	if err != nil {
		t.Fatal(err)
	}
	if b.NodeContext().Load != 2 {
		t.Fatal(b.NodeContext().Load)
	}
	// a crashes before the ack arrives: restart it from its first state; its first
	// tick sends the whole log again.
	a, err = RestoreCountMachine(&pushProgram{}, Config{ID: 0, Degree: 1}, saved)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Tick(1); err != nil {
		t.Fatal(err)
	}
	again := drain(a)
	if len(again) != 5 || a.Stats().Retransmissions != 5 {
		t.Fatalf("retransmitted %d", len(again))
	}
	for _, d := range again {
		if err := b.Step(d); err != nil {
			t.Fatal(err)
		}
	}
	if b.NodeContext().Load != 5 {
		t.Fatalf("b holds %d tokens, want 5", b.NodeContext().Load)
	}
	for _, d := range drain(b) {
		if err := a.Step(d); err != nil {
			t.Fatal(err)
		}
	}
	if a.Unacked() != 0 || !a.Idle() {
		t.Fatalf("a has %d unacknowledged", a.Unacked())
	}
	// An ack beyond what was sent is an error.
	if err := a.Step(Datagram{Port: 0, Kind: DatagramAck, Seq: 9}); !errors.Is(err, tokendist.ErrBadParameter) {
		t.Fatal(err)
	}
}

func TestHandoffRetransmitTimer(t *testing.T) {
	a, _ := NewCountMachine(&pushProgram{}, Config{ID: 0, Degree: 1, RetransmitTicks: 2}, 1)
	_ = a.Start()
	drain(a)
	var sends []int64
	for now := int64(1); now <= 12; now++ {
		_ = a.Tick(now)
		if len(drain(a)) > 0 {
			sends = append(sends, now)
		}
	}
	// The timer starts at tick 1, fires after 2, then 4, then 8 ticks.
	if want := []int64{3, 7}; !slices.Equal(sends, want) {
		t.Fatalf("retransmissions at %v, want %v", sends, want)
	}
}

func TestRestoreCounterRejectsBadState(t *testing.T) {
	a, _ := NewCountMachine(&pushProgram{}, Config{ID: 4, Degree: 2}, 3)
	_ = a.Start()
	good := slices.Clone(mustReady(a).State)
	a.Advance()
	if _, err := RestoreCountMachine(&pushProgram{}, Config{ID: 4, Degree: 2}, good); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		bad := slices.Clone(good)
		switch i % 3 {
		case 0:
			bad = bad[:r.IntN(len(bad))]
		case 1:
			bad[r.IntN(len(bad))] ^= byte(1 + r.IntN(255))
		default:
			bad = append(bad, 0)
		}
		n, err := RestoreCountMachine(&pushProgram{}, Config{ID: 4, Degree: 2}, bad)
		if err != nil {
			if !errors.Is(err, tokendist.ErrBadParameter) || !strings.HasPrefix(err.Error(), "tokendist: ") {
				t.Fatal(err)
			}
			continue
		}
		// A flipped bit may still decode; the node must then be usable.
		_ = n.Tick(1)
	}
	if _, err := RestoreCountMachine(&pushProgram{}, Config{ID: 4, Degree: 3}, good); err == nil {
		t.Fatal("restored with another degree")
	}
	if _, err := StateLoad(nil); err == nil {
		t.Fatal("StateLoad(nil)")
	}
	if l, err := StateLoad(good); err != nil || l != 0 {
		t.Fatal(l, err)
	}
}

func TestMachineErrors(t *testing.T) {
	if _, err := NewCountMachine(nil, Config{}, 0); err == nil {
		t.Fatal("nil program")
	}
	var nilProg *pushProgram
	if _, err := NewCountMachine(nilProg, Config{}, 0); err == nil {
		t.Fatal("typed nil program")
	}
	if _, err := NewCountMachine(&pushProgram{}, Config{Degree: -1}, 0); err == nil {
		t.Fatal("negative degree")
	}
	if _, err := NewCountMachine(&pushProgram{}, Config{}, -1); err == nil {
		t.Fatal("negative load")
	}
	for _, c := range []Config{{Degree: -1}, {RetransmitTicks: -1}, {Rounds: -1}} {
		if _, err := NewItemMachine(&pushProgram{}, c, nil); err == nil {
			t.Fatalf("NewItemMachine accepted %+v", c)
		}
		if _, err := NewCountMachine(&pushProgram{}, c, 0); err == nil {
			t.Fatalf("NewCountMachine accepted %+v", c)
		}
	}
	if _, err := NewItemMachine(nil, Config{}, nil); err == nil {
		t.Fatal("NewItemMachine: nil program")
	}
	var zero Machine
	if err := zero.Start(); err == nil {
		t.Fatal("Start on the zero Machine")
	}
	if err := zero.Step(Datagram{Kind: DatagramData, Seq: 1}); err == nil {
		t.Fatal("Step on the zero Machine")
	}
	if err := zero.Tick(1); err == nil {
		t.Fatal("Tick on the zero Machine")
	}
	if zero.HasReady() || len(mustReady(&zero).Datagrams) != 0 {
		t.Fatal("the zero Machine has something to do")
	}
	zero.Advance()
	n, _ := NewCountMachine(&pushProgram{}, Config{Degree: 1}, 1)
	if err := n.Step(Datagram{Port: 0, Kind: DatagramData, Seq: 1}); err == nil {
		t.Fatal("Step before Start")
	}
	if err := n.Tick(1); err == nil {
		t.Fatal("Tick before Start")
	}
	_ = n.Start()
	if err := n.Start(); err == nil {
		t.Fatal("Start twice")
	}
	if err := n.Step(Datagram{Port: 1, Kind: DatagramData, Seq: 1}); err == nil {
		t.Fatal("port out of range")
	}
	if err := n.Step(Datagram{Port: 0, Kind: 9}); err == nil {
		t.Fatal("unknown kind")
	}
	if err := n.Step(Datagram{Port: 0, Kind: DatagramData, Seq: 1, Msg: node.Message{Tokens: -1}}); err == nil {
		t.Fatal("negative tokens")
	}
	if err := n.SetLoad(-1); err == nil {
		t.Fatal("negative SetLoad")
	}
	if DatagramData.String() != "Data" || DatagramAck.String() != "Ack" || DatagramKind(7).String() != "DatagramKind(7)" {
		t.Fatal("DatagramKind names")
	}
}

// FuzzRestoreCounter: any bytes either restore a usable node or return an error; nothing
// panics.
func FuzzRestoreCounter(f *testing.F) {
	a, _ := NewCountMachine(&shareProgram{}, Config{ID: 1, Degree: 3, Rounds: 2}, 40)
	_ = a.Start()
	f.Add(slices.Clone(mustReady(a).State))
	a.Advance()
	f.Add([]byte{stateMagic, stateVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := RestoreCountMachine(&shareProgram{}, Config{ID: 1, Degree: 3}, b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "tokendist: ") {
				t.Fatal(err)
			}
			return
		}
		_ = n.Tick(5)
		_ = n.Step(Datagram{Port: 1, Kind: DatagramData, Seq: 1, Msg: node.Message{Round: 1, Tokens: 1}})
		_ = n.Step(Datagram{Port: 2, Kind: DatagramAck, Seq: 1})
		if n.HasReady() {
			rd := mustReady(n)
			if rd.State != nil {
				if _, err := RestoreCountMachine(&shareProgram{}, Config{ID: 1, Degree: 3}, rd.State); err != nil {
					t.Fatalf("a state the node wrote does not restore: %v", err)
				}
			}
			n.Advance()
		}
	})
}
