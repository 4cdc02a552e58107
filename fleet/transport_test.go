package fleet

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
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
	// The sender counts a frame once its write returns, which may be after the
	// receiver has it.
	waitFor(t, "the sender's count", func() bool { return b.Stats().Sent == n })
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

// flakyListener fails its first fails Accepts with a temporary error, as a listener
// out of file descriptors does (EMFILE), then accepts.
type flakyListener struct {
	net.Listener
	mu    sync.Mutex
	fails int
	calls []time.Time
}

func (l *flakyListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	l.calls = append(l.calls, time.Now())
	fail := l.fails > 0
	if fail {
		l.fails--
	}
	l.mu.Unlock()
	if fail {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept", syscall.EMFILE)}
	}
	return l.Listener.Accept()
}

// TestTCPTransportAcceptEMFILE: on main, acceptLoop returned on the first Accept
// error, so a node that ran out of file descriptors once never accepted a connection
// again. Now it backs off (5 ms doubling, at most 1 s) and retries until Close.
func TestTCPTransportAcceptEMFILE(t *testing.T) {
	defer goleak.VerifyNone(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const fails = 5 // backoffs 5+10+20+40+80 ms
	fl := &flakyListener{Listener: ln, fails: fails}
	var in0, in1 inbox
	a, err := NewTCPTransport(0, "", map[int]string{}, in0.recv, &TCPOptions{listener: fl})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := NewTCPTransport(1, "127.0.0.1:0", map[int]string{0: a.Addr()}, in1.recv, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Send(0, []byte("x")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a frame after the accept errors", func() bool { return in0.count(1) == 1 })
	if got := a.Stats().AcceptErrors; got != fails {
		t.Errorf("AcceptErrors = %d; want %d", got, fails)
	}
	fl.mu.Lock()
	calls := slices.Clone(fl.calls)
	fl.mu.Unlock()
	if len(calls) < fails+1 {
		t.Fatalf("%d Accept calls; want at least %d", len(calls), fails+1)
	}
	// The waits double: the k-th retry comes at least 5·2^(k-1) ms after the one before.
	for k := 1; k <= fails; k++ {
		if gap, want := calls[k].Sub(calls[k-1]), 5*time.Millisecond<<(k-1); gap < want {
			t.Errorf("retry %d after %v; want at least %v", k, gap, want)
		}
	}
}

// TestTCPTransportBounds: on main, an incoming connection could stay open and idle
// for ever, and a reader allocated MaxFrame bytes per connection with no total bound.
// Now an idle connection is closed after IdleTimeout, one over MaxConns at once, and
// a frame over MaxBuffered closes its connection; a frame of exactly MaxFrame bytes
// goes through, and Send refuses one byte more.
func TestTCPTransportBounds(t *testing.T) {
	defer goleak.VerifyNone(t)
	var in inbox
	a, err := NewTCPTransport(0, "127.0.0.1:0", map[int]string{}, in.recv,
		&TCPOptions{MaxFrame: 100, IdleTimeout: 100 * time.Millisecond, MaxConns: 2, MaxBuffered: 150})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", a.Addr())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	frame := func(n int) []byte {
		b := make([]byte, 8+n)
		binary.BigEndian.PutUint32(b, uint32(n))
		binary.BigEndian.PutUint32(b[4:], 7)
		return b
	}
	closed := func(c net.Conn) bool { // the transport closed c within 2 s
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, err := c.Read(make([]byte, 1))
		return err == io.EOF
	}
	// Exactly MaxFrame: received.
	c1 := dial()
	defer c1.Close()
	if _, err := c1.Write(frame(100)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a frame of MaxFrame bytes", func() bool { return in.count(7) == 1 })
	// Idle: closed after IdleTimeout.
	t0 := time.Now()
	if !closed(c1) {
		t.Fatal("an idle connection stayed open")
	}
	if d := time.Since(t0); d < 50*time.Millisecond {
		t.Errorf("idle connection closed after %v; want about 100ms", d)
	}
	// The rest on a transport with a long IdleTimeout: a connection closed within
	// 2 s is closed for the bound under test.
	a2, err := NewTCPTransport(0, "127.0.0.1:0", map[int]string{}, in.recv,
		&TCPOptions{MaxFrame: 100, IdleTimeout: time.Minute, MaxConns: 2, MaxBuffered: 150})
	if err != nil {
		t.Fatal(err)
	}
	defer a2.Close()
	dial = func() net.Conn {
		c, err := net.Dial("tcp", a2.Addr())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// Over MaxFrame: closed.
	c2 := dial()
	defer c2.Close()
	_, _ = c2.Write(frame(101))
	if !closed(c2) {
		t.Error("a frame over MaxFrame left its connection open")
	}
	// Over MaxConns: the third open connection is closed at once.
	c3, c4, c5 := dial(), dial(), dial()
	defer c3.Close()
	defer c4.Close()
	defer c5.Close()
	if !closed(c5) {
		t.Error("a connection over MaxConns stayed open")
	}
	// MaxBuffered: with 60 of 150 bytes held by c3's half-read frame, c4's frame of
	// 100 bytes is over the budget.
	_, _ = c3.Write(frame(60)[:20])
	time.Sleep(20 * time.Millisecond)
	_, _ = c4.Write(frame(100))
	if !closed(c4) {
		t.Error("a frame over MaxBuffered left its connection open")
	}
	waitFor(t, "the counters", func() bool { return a.Stats().Closed == 1 && a2.Stats().Closed == 3 })
	if in.count(7) != 1 {
		t.Errorf("%d frames received; want 1", in.count(7))
	}
	// The loop goes on accepting after those; a frame that brings the budget to
	// exactly MaxBuffered (60 + 90) is read.
	c6 := dial()
	defer c6.Close()
	if _, err := c6.Write(frame(90)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a frame up to MaxBuffered", func() bool { return in.count(7) == 2 })
	// Every byte counted is given back: once c3 and c6 close (c3 mid-frame), a
	// frame of MaxFrame bytes fits the budget again.
	_ = c3.Close()
	_ = c6.Close()
	deadline := time.Now().Add(2 * time.Second)
	for in.count(7) < 3 && time.Now().Before(deadline) {
		c := dial()
		_, _ = c.Write(frame(100))
		for i := 0; i < 100 && in.count(7) < 3; i++ {
			time.Sleep(time.Millisecond)
		}
		_ = c.Close()
	}
	if in.count(7) != 3 {
		t.Errorf("no frame of MaxFrame bytes read after the connections closed: the budget leaked (%d frames)", in.count(7))
	}
	// The option bounds, at their edges.
	for _, o := range []TCPOptions{{MaxFrame: MaxMaxFrame + 1}, {MaxFrame: 100, MaxBuffered: 99}} {
		if tr, err := NewTCPTransport(0, "127.0.0.1:0", nil, in.recv, &o); err == nil {
			_ = tr.Close()
			t.Errorf("NewTCPTransport with %+v succeeded", o)
		}
	}
	for _, o := range []TCPOptions{{MaxFrame: MaxMaxFrame}, {MaxFrame: 100, MaxBuffered: 100}} {
		tr, err := NewTCPTransport(0, "127.0.0.1:0", nil, in.recv, &o)
		if err != nil {
			t.Errorf("NewTCPTransport with %+v: %v", o, err)
			continue
		}
		_ = tr.Close()
	}
	// Send refuses one byte over MaxFrame, the same limit.
	b, err := NewTCPTransport(1, "127.0.0.1:0", map[int]string{0: a.Addr()}, in.recv, &TCPOptions{MaxFrame: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Send(0, make([]byte, 101)); err == nil || !strings.Contains(err.Error(), "frame of 101 bytes over the limit 100") {
		t.Errorf("Send of 101 bytes: %v", err)
	}
	if err := b.Send(0, make([]byte, 100)); err != nil {
		t.Errorf("Send of 100 bytes: %v", err)
	}
}
