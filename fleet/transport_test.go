package fleet

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

type inbox struct {
	mu     sync.Mutex
	frames map[int][]string
}

func (b *inbox) recv(from int, frame []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.frames == nil {
		b.frames = map[int][]string{}
	}
	b.frames[from] = append(b.frames[from], string(frame))
}

func (b *inbox) count(from int) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.frames[from])
}

// waitFor polls cond every millisecond for at most 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; i < 5000; i++ {
		if cond() {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

// TestTCPTransportLoopback: frames between two transports on loopback arrive, in
// order, with their sender's ID; Close leaves no goroutine behind.
func TestTCPTransportLoopback(t *testing.T) {
	defer goleak.VerifyNone(t)
	var in0, in1 inbox
	a, err := NewTCPTransport(0, "127.0.0.1:0", map[int]string{}, in0.recv, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewTCPTransport(1, "127.0.0.1:0", map[int]string{0: a.Addr()}, in1.recv, nil)
	if err != nil {
		t.Fatal(err)
	}
	const n = 500
	for i := 0; i < n; i++ {
		if err := b.Send(0, []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
		if i%100 == 99 {
			waitFor(t, "frames", func() bool { return in0.count(1) == i+1 })
		}
	}
	for i, f := range in0.frames[1] {
		if f != fmt.Sprint(i) {
			t.Fatalf("frame %d = %q", i, f)
		}
	}
	if st := b.Stats(); st.Sent != n || st.Dropped != 0 || st.Dials != 1 {
		t.Errorf("sender stats %+v; want %d sent, 0 dropped, 1 dial", st, n)
	}
	if st := a.Stats(); st.Received != n {
		t.Errorf("receiver stats %+v; want %d received", st, n)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Send(0, []byte("late")); err != nil {
		t.Errorf("Send after Close = %v; want a silent drop", err)
	}
}

// TestTCPTransportReconnects: when the receiving node dies and comes back on the same
// address, the sender's frames flow again (frames sent meanwhile may be lost: the
// handoff protocol retransmits).
func TestTCPTransportReconnects(t *testing.T) {
	defer goleak.VerifyNone(t)
	var in0 inbox
	a, err := NewTCPTransport(0, "127.0.0.1:0", nil, in0.recv, nil)
	if err != nil {
		t.Fatal(err)
	}
	addr := a.Addr()
	b, err := NewTCPTransport(1, "127.0.0.1:0", map[int]string{0: addr}, func(int, []byte) {}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_ = b.Send(0, []byte("one"))
	waitFor(t, "first frame", func() bool { return in0.count(1) == 1 })
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	var in0b inbox
	var a2 *TCPTransport
	waitFor(t, "the address to be free", func() bool {
		a2, err = NewTCPTransport(0, addr, nil, in0b.recv, nil)
		return err == nil
	})
	defer a2.Close()
	// Each Send may find the old connection broken; keep sending, bounded, until one
	// arrives on the new listener.
	for i := 0; i < 2000 && in0b.count(1) == 0; i++ {
		_ = b.Send(0, []byte("again"))
		time.Sleep(2 * time.Millisecond)
	}
	if in0b.count(1) == 0 {
		t.Fatal("no frame reached the restarted node")
	}
	if st := b.Stats(); st.Dials < 2 {
		t.Errorf("stats %+v: want a second dial", st)
	}
}

func TestTCPTransportBadInput(t *testing.T) {
	defer goleak.VerifyNone(t)
	recv := func(int, []byte) {}
	for _, tc := range []struct {
		self  int
		peers map[int]string
		recv  func(int, []byte)
		opts  *TCPOptions
		want  string
	}{
		{0, nil, nil, nil, "nil receive"},
		{-1, nil, recv, nil, "node ID -1"},
		{0, map[int]string{0: "127.0.0.1:1"}, recv, nil, "peer ID 0"},
		{0, map[int]string{2: "nowhere"}, recv, nil, `"nowhere"`},
		{0, nil, recv, &TCPOptions{Queue: -1}, "negative"},
	} {
		tr, err := NewTCPTransport(tc.self, "127.0.0.1:0", tc.peers, tc.recv, tc.opts)
		if err == nil {
			tr.Close()
			t.Errorf("%+v: no error", tc)
			continue
		}
		if !strings.HasPrefix(err.Error(), "tokendist: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %q; want the prefix and %q", err, tc.want)
		}
	}
	tr, err := NewTCPTransport(0, "127.0.0.1:0", map[int]string{1: "127.0.0.1:9"}, recv, &TCPOptions{MaxFrame: 4, Queue: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if err := tr.Send(5, []byte("x")); err == nil || !strings.Contains(err.Error(), "5") {
		t.Errorf("Send to an unknown node = %v", err)
	}
	if err := tr.Send(1, []byte("12345")); err == nil || !strings.Contains(err.Error(), "5 bytes") {
		t.Errorf("Send of an oversized frame = %v", err)
	}
}
