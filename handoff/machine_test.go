package handoff

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tokendist/tokendist/node"
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
	ps, err := DecodeState(mustReady(a).State)
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
			rd := mustReady(m)
			out = append(out, slices.Clone(rd.State))
			dgs = append(dgs, rd.Datagrams...)
			m.Advance()
		}
		// a takes b's first datagram on both ports.
		for _, d := range dgs[2:] {
			if err := a.Step(d); err != nil {
				t.Fatal(err)
			}
			rd := mustReady(a)
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
	if rd := mustReady(y); len(rd.Datagrams) != 0 {
		t.Fatalf("y's Ready holds x's datagrams: %+v", rd.Datagrams)
	}
	y.Advance()
	if x.HasReady() && len(mustReady(x).Datagrams) != 0 {
		t.Fatal("x kept datagrams after y used the Scratch")
	}
}

// failProgram fails (or panics) in the method named by what.
type failProgram struct {
	what  string
	panic bool
}

func (p *failProgram) fail(what string) error {
	if p.what != what {
		return nil
	}
	if p.panic {
		panic("boom in " + what)
	}
	return errors.New("tokendist: failing in " + what)
}
func (p *failProgram) Start(*node.Context) error { return p.fail("Start") }
func (p *failProgram) Receive(*node.Context, int, node.Message) error {
	return p.fail("Receive")
}
func (p *failProgram) Tick(*node.Context) error    { return p.fail("Tick") }
func (p *failProgram) Idle() bool                  { return false }
func (p *failProgram) AppendState(b []byte) []byte { return b }
func (p *failProgram) RestoreState([]byte) error   { return p.fail("RestoreState") }

// TestProgramErrors: a program's error or panic is returned naming the node, the method
// and (for Receive) the port, wrapping the program's error.
func TestProgramErrors(t *testing.T) {
	for _, c := range []struct {
		what, want string
	}{
		{"Start", "program of node 5: Start: "},
		{"Receive", "program of node 5: Receive on port 1: "},
		{"Tick", "program of node 5: Tick: "},
		{"RestoreState", "program of node 5: RestoreState: "},
	} {
		for _, panics := range []bool{false, true} {
			p := &failProgram{what: c.what, panic: panics}
			m, _ := NewCountMachine(p, Config{ID: 5, Degree: 2}, 1)
			var err error
			switch c.what {
			case "Start":
				err = m.Start()
			case "Receive", "Tick":
				p.what = ""
				_ = m.Start()
				p.what = c.what
				if c.what == "Receive" {
					err = m.Step(Datagram{Port: 1, Kind: DatagramData, Seq: 1, Msg: node.Message{Tokens: 1}})
					if err0 := m.Step(Datagram{Port: 0, Kind: DatagramData, Seq: 1, Msg: node.Message{Tokens: 1}}); err0 == nil ||
						!strings.Contains(err0.Error(), "on port 0") {
						t.Errorf("Receive on port 0 (panic %t): %v", panics, err0)
					}
				} else {
					err = m.Tick(1)
				}
			case "RestoreState":
				p.what = ""
				_ = m.Start()
				st := slices.Clone(mustReady(m).State)
				_, err = RestoreCountMachine(&failProgram{what: c.what, panic: panics}, Config{ID: 5, Degree: 2}, st)
			}
			want := c.want
			if panics {
				want = "program of node 5 panicked in " + c.what + ": boom"
				if c.what == "Receive" {
					want = "program of node 5 panicked in Receive on port 1: boom"
				}
			}
			if err == nil || !strings.HasPrefix(err.Error(), "tokendist: ") || !strings.Contains(err.Error(), want) {
				t.Errorf("%s (panic %t): %v, want %q", c.what, panics, err, want)
			}
			if !panics && !strings.Contains(err.Error(), "failing in "+c.what) {
				t.Errorf("%s: the program's error is lost: %v", c.what, err)
			}
		}
	}
}

// TestRetransmitTimerStartsAtFirstTick: the retransmission timer of a new log starts
// at the first tick after the send, whatever its local time, and a node of degree 0 is
// valid (an isolated node).
func TestRetransmitTimerStartsAtFirstTick(t *testing.T) {
	a, _ := NewCountMachine(&pushProgram{}, Config{ID: 0, Degree: 1, RetransmitTicks: 3}, 1)
	_ = a.Start()
	drain(a)
	var sends []int64
	for now := int64(10); now <= 20; now++ {
		_ = a.Tick(now)
		if len(drain(a)) > 0 {
			sends = append(sends, now)
		}
	}
	// Started at 10: fires after 3 ticks (13), then after 6 (19).
	if want := []int64{13, 19}; !slices.Equal(sends, want) {
		t.Fatalf("retransmissions at %v, want %v", sends, want)
	}
	lone, err := NewCountMachine(&pushProgram{}, Config{ID: 1}, 0)
	if err != nil {
		t.Fatalf("degree 0: %v", err)
	}
	if err := lone.Start(); err != nil || !lone.Idle() {
		t.Fatalf("degree 0: Start %v, idle %t", err, lone.Idle())
	}
	if _, err := NewItemMachine(&pushProgram{}, Config{ID: 1}, nil); err != nil {
		t.Fatalf("degree 0 item machine: %v", err)
	}
}

// TestBackoffAndAcks: the retransmission interval doubles up to 64 times the base and
// stays there; a restored machine resends at its first tick and then waits the base
// interval; a stale ack changes nothing (no state to persist, no timer reset); an ack
// that frees part of the log restarts the timer at the next tick.
func TestBackoffAndAcks(t *testing.T) {
	a, _ := NewCountMachine(&pushProgram{}, Config{ID: 0, Degree: 1, RetransmitTicks: 1}, 3)
	_ = a.Start()
	if a.Idle() || a.InFlight() != 3 || a.Unacked() != 3 {
		t.Fatalf("after Start: idle %t, in flight %d, unacked %d", a.Idle(), a.InFlight(), a.Unacked())
	}
	saved := slices.Clone(mustReady(a).State)
	a.Advance()
	if a.HasReady() {
		t.Fatal("HasReady after Advance with nothing new")
	}
	var sends []int64
	for now := int64(1); now <= 400; now++ {
		_ = a.Tick(now)
		if len(drain(a)) > 0 {
			sends = append(sends, now)
		}
	}
	var gaps []int64
	for i := 1; i < len(sends); i++ {
		gaps = append(gaps, sends[i]-sends[i-1])
	}
	if want := []int64{2, 4, 8, 16, 32, 64, 64, 64, 64, 64}; len(gaps) < len(want) || !slices.Equal(gaps[:len(want)], want) {
		t.Fatalf("gaps between retransmissions %v, want %v first", gaps, want)
	}
	if got := a.Stats().Retransmissions; got != 3*int64(len(sends)) {
		t.Fatalf("Retransmissions %d, want %d", got, 3*len(sends))
	}
	// A restored machine resends at its first tick, then after the base interval.
	r, err := RestoreCountMachine(&pushProgram{}, Config{ID: 0, Degree: 1, RetransmitTicks: 2}, saved)
	if err != nil {
		t.Fatal(err)
	}
	sends = sends[:0]
	for now := int64(50); now <= 56; now++ {
		_ = r.Tick(now)
		if len(drain(r)) > 0 {
			sends = append(sends, now)
		}
	}
	if want := []int64{50, 52, 56}; !slices.Equal(sends, want) {
		t.Fatalf("restored: retransmissions at %v, want %v", sends, want)
	}
	// An ack of 1: progress. The timer restarts at the next tick (60), fires at 62.
	if err := r.Step(Datagram{Port: 0, Kind: DatagramAck, Seq: 1}); err != nil {
		t.Fatal(err)
	}
	drain(r)
	if r.InFlight() != 2 {
		t.Fatalf("in flight %d after ack 1", r.InFlight())
	}
	// The same ack again: stale, nothing to persist or send.
	if err := r.Step(Datagram{Port: 0, Kind: DatagramAck, Seq: 1}); err != nil || r.HasReady() {
		t.Fatalf("a stale ack: %v, HasReady %t", err, r.HasReady())
	}
	sends = sends[:0]
	for now := int64(60); now <= 63; now++ {
		_ = r.Tick(now)
		if len(drain(r)) > 0 {
			sends = append(sends, now)
		}
	}
	if want := []int64{62}; !slices.Equal(sends, want) {
		t.Fatalf("after the ack: retransmissions at %v, want %v", sends, want)
	}
	if err := r.SetLoad(r.NodeContext().Load); err != nil || r.HasReady() {
		t.Fatalf("SetLoad of the same load: %v, HasReady %t", err, r.HasReady())
	}
	if err := r.SetLoad(0); err != nil {
		t.Fatalf("SetLoad(0): %v", err)
	}
	// The cap is 64 times the base, for any base.
	b, _ := NewCountMachine(&pushProgram{}, Config{ID: 0, Degree: 1, RetransmitTicks: 2}, 1)
	_ = b.Start()
	drain(b)
	sends = sends[:0]
	for now := int64(1); now <= 700; now++ {
		_ = b.Tick(now)
		if len(drain(b)) > 0 {
			sends = append(sends, now)
		}
	}
	if n := len(sends); n < 3 || sends[n-1]-sends[n-2] != 128 || sends[n-2]-sends[n-3] != 128 {
		t.Fatalf("base 2: retransmissions at %v, want the gaps capped at 128", sends)
	}
	if _, err := StateLoad(saved[:loadOffset+8]); err != nil {
		t.Fatalf("StateLoad of the header and load alone: %v", err)
	}
}

// kthPanic is a program that panics in the k-th call of Idle or AppendState (what).
type kthPanic struct {
	what string
	k, n int
}

func (p *kthPanic) hit(what string) {
	if p.what == what {
		if p.n++; p.n == p.k {
			panic(fmt.Sprintf("boom %d", p.n))
		}
	}
}
func (p *kthPanic) Start(*node.Context) error                      { return nil }
func (p *kthPanic) Receive(*node.Context, int, node.Message) error { return nil }
func (p *kthPanic) Tick(*node.Context) error                       { return nil }
func (p *kthPanic) Idle() bool                                     { p.hit("Idle"); return false }
func (p *kthPanic) AppendState(b []byte) []byte                    { p.hit("AppendState"); return b }
func (p *kthPanic) RestoreState([]byte) error                      { return nil }

// TestPanicsInIdleAndAppendState: the machine calls Idle only right after a program
// call, under a recover (Idle and ProgramIdle do not call it), and AppendState in Ready
// under a recover; a panic in either is an error naming the node and the method, and a
// failed Ready has nothing to persist or send, so the last persisted state stands.
func TestPanicsInIdleAndAppendState(t *testing.T) {
	data := Datagram{Port: 1, Kind: DatagramData, Seq: 1, Msg: node.Message{Tokens: 4}}

	p := &kthPanic{what: "Idle", k: 3}
	m, _ := NewCountMachine(p, Config{ID: 5, Degree: 2}, 1)
	if err := m.Start(); err != nil { // Idle call 1
		t.Fatal(err)
	}
	for range 10 {
		if m.Idle() || m.ProgramIdle() {
			t.Fatal("idle")
		}
	}
	if err := m.Tick(1); err != nil { // Idle call 2
		t.Fatal(err)
	}
	if err := m.Step(data); err == nil || err.Error() != "tokendist: program of node 5 panicked in Idle: boom 3" {
		t.Errorf("Idle's panic in Step: %v", err)
	}
	st := slices.Clone(mustReady(m).State)
	if _, err := RestoreCountMachine(&kthPanic{what: "Idle", k: 1}, Config{ID: 5, Degree: 2}, st); err == nil ||
		err.Error() != "tokendist: program of node 5 panicked in Idle: boom 1" {
		t.Errorf("Idle's panic after RestoreState: %v", err)
	}

	p = &kthPanic{what: "AppendState", k: 2}
	m, _ = NewCountMachine(p, Config{ID: 5, Degree: 2}, 1)
	_ = m.Start()
	rd, err := m.Ready() // AppendState call 1
	if err != nil {
		t.Fatal(err)
	}
	saved := slices.Clone(rd.State)
	m.Advance()
	if err := m.Step(data); err != nil {
		t.Fatal(err)
	}
	rd, err = m.Ready() // call 2: the delivery is not persisted, so no ack goes out
	if err == nil || err.Error() != "tokendist: program of node 5 panicked in AppendState: boom 2" ||
		rd.State != nil || len(rd.Datagrams) != 0 {
		t.Fatalf("AppendState's panic: %v, Ready %+v", err, rd)
	}
	if !m.HasReady() {
		t.Error("the failed Ready's state is no longer due")
	}
	if load, _ := StateLoad(saved); load != 1 {
		t.Errorf("persisted load %d, want 1 (the datagram's 4 tokens stay in the sender's log)", load)
	}
	if rd, err = m.Ready(); err != nil || len(rd.Datagrams) != 1 || rd.Datagrams[0].Kind != DatagramAck {
		t.Errorf("the next Ready: %v, %+v", err, rd)
	}
}
