package handoff

import (
	"slices"
	"testing"
)

// TestStatsSequenceLogged: the ledger counters count each logged and delivered datagram
// once (retransmissions and duplicates excluded), and Sequence and Logged report the
// links as the state records them.
func TestStatsSequenceLogged(t *testing.T) {
	a, _ := NewCountMachine(&pushProgram{}, Config{ID: 0, Degree: 1, RetransmitTicks: 1}, 3)
	b, _ := NewCountMachine(&pushProgram{}, Config{ID: 1, Degree: 1}, 0)
	_ = a.Start()
	_ = b.Start()
	data := drain(a)
	drain(b)
	if st := a.Stats(); st.Logged != 3 || st.TokensLogged != 3 || st.Delivered != 0 {
		t.Fatalf("sender stats %+v", st)
	}
	if sq := a.Sequence(0); sq != (Sequence{Next: 4, Acked: 0, Delivered: 0}) {
		t.Fatalf("sender sequence %+v", sq)
	}
	for seq := uint64(0); seq <= 4; seq++ {
		m, ok := a.Logged(0, seq)
		if want := seq >= 1 && seq <= 3; ok != want || (ok && (m.Tokens != 1 || m.Round != int64(seq-1))) {
			t.Fatalf("Logged(0, %d) = %+v, %t", seq, m, ok)
		}
	}
	_ = a.Tick(1)
	_ = a.Tick(2) // a retransmission: not logged again
	if st := a.Stats(); st.Logged != 3 || st.Retransmissions == 0 {
		t.Fatalf("after a retransmission: %+v", st)
	}
	drain(a)
	for _, d := range []Datagram{data[0], data[0], data[2], data[1]} { // a duplicate, an early one
		if err := b.Step(d); err != nil {
			t.Fatal(err)
		}
	}
	if st := b.Stats(); st.Delivered != 2 || st.TokensDelivered != 2 || st.Duplicates != 1 || st.OutOfOrder != 1 {
		t.Fatalf("receiver stats %+v", st)
	}
	if sq := b.Sequence(0); sq.Delivered != 2 || sq.Next != 1 {
		t.Fatalf("receiver sequence %+v", sq)
	}
	for _, d := range drain(b) {
		_ = a.Step(d)
	}
	if sq := a.Sequence(0); sq.Acked != 2 {
		t.Fatalf("acked %d", sq.Acked)
	}
	if _, ok := a.Logged(0, 2); ok {
		t.Fatal("an acknowledged datagram is still logged")
	}
	if m, ok := a.Logged(0, 3); !ok || m.Round != 2 {
		t.Fatalf("Logged(0, 3) = %+v, %t", m, ok)
	}
	ps, err := DecodeState(a.Ready().State)
	a.Advance()
	if err != nil || ps.Links[0].Sequence != a.Sequence(0) || len(ps.Links[0].Log) != 1 {
		t.Fatalf("DecodeState: %+v, %v", ps, err)
	}
}

// TestScratchShared: machines sharing a Scratch give the same Readys as machines with
// their own buffers, one machine at a time; a machine discarded before its Advance
// leaves nothing behind for the next.
func TestScratchShared(t *testing.T) {
	var sh Scratch
	run := func(scratch *Scratch) (out [][]byte, dgs []Datagram) {
		a, _ := NewCountMachine(&shareProgram{}, Config{ID: 0, Degree: 2, Rounds: 3, Scratch: scratch}, 30)
		b, _ := NewCountMachine(&shareProgram{}, Config{ID: 1, Degree: 2, Rounds: 3, Scratch: scratch}, 9)
		for _, m := range []*CountMachine{a, b} {
			if err := m.Start(); err != nil {
				t.Fatal(err)
			}
			rd := m.Ready()
			out = append(out, slices.Clone(rd.State))
			dgs = append(dgs, rd.Datagrams...)
			m.Advance()
		}
		// a takes b's first datagram on both ports.
		for _, d := range dgs[2:] {
			if err := a.Step(d); err != nil {
				t.Fatal(err)
			}
			rd := a.Ready()
			out = append(out, slices.Clone(rd.State))
			dgs = append(dgs, rd.Datagrams...)
			a.Advance()
		}
		return out, dgs
	}
	ownS, ownD := run(nil)
	shS, shD := run(&sh)
	if len(ownS) != len(shS) || !slices.EqualFunc(ownS, shS, slices.Equal[[]byte]) || !slices.EqualFunc(ownD, shD, func(x, y Datagram) bool {
		return x.Port == y.Port && x.Kind == y.Kind && x.Seq == y.Seq && x.Msg == y.Msg
	}) {
		t.Fatalf("shared buffers changed the Readys:\n%v\n%v", ownD, shD)
	}
	// A machine with pending datagrams is discarded (a crash before its Advance): the
	// next machine sharing the Scratch starts empty.
	x, _ := NewCountMachine(&pushProgram{}, Config{ID: 2, Degree: 1, Scratch: &sh}, 4)
	_ = x.Start()
	if !x.HasReady() {
		t.Fatal("x has nothing to send")
	}
	y, _ := NewCountMachine(&pushProgram{}, Config{ID: 3, Degree: 1, Scratch: &sh}, 0)
	if y.HasReady() {
		t.Fatal("y sees x's datagrams before any call")
	}
	_ = y.Start()
	if rd := y.Ready(); len(rd.Datagrams) != 0 {
		t.Fatalf("y's Ready holds x's datagrams: %+v", rd.Datagrams)
	}
	y.Advance()
	if x.HasReady() && len(x.Ready().Datagrams) != 0 {
		t.Fatal("x kept datagrams after y used the Scratch")
	}
}
