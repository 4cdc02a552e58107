package fleet

import (
	"net"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestTCPTransportDialBackoffReset: a connection made resets the redial backoff. The
// backoff first grows to 640 ms while the peer is down; the peer comes back and takes
// a frame; once it is down again the sender redials after 10, 20, 40 ms..., so it dials
// 3 to 20 times in 400 ms (it would dial once, then wait a second, if the grown backoff
// were kept, and for every frame if it were reset to 0).
func TestTCPTransportDialBackoffReset(t *testing.T) {
	defer goleak.VerifyNone(t)
	var in inbox
	r, err := NewTCPTransport(0, "127.0.0.1:0", nil, in.recv, nil)
	if err != nil {
		t.Fatal(err)
	}
	addr := r.Addr()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := NewTCPTransport(1, "127.0.0.1:0", map[int]string{0: addr}, func(int, []byte) {}, &TCPOptions{DialTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// sendUntil sends a frame every 2 ms until cond holds or limit passes.
	sendUntil := func(limit time.Duration, cond func() bool) bool {
		for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
			if cond() {
				return true
			}
			_ = s.Send(0, []byte("x"))
		}
		return cond()
	}
	// Down: six failed dials (backoffs 10+20+...+160 ms between them), the next wait
	// 640 ms.
	t0 := time.Now()
	if !sendUntil(10*time.Second, func() bool { return s.Stats().Dials >= 6 }) {
		t.Fatalf("stats %+v: want 6 dials to the closed port", s.Stats())
	}
	if d := time.Since(t0); d < 300*time.Millisecond {
		t.Errorf("6 dials to a closed port within %v; want the backoff to space them (10+20+40+80+160 ms)", d)
	}
	// Up again: a frame arrives (after the 640 ms wait at most).
	var r2 *TCPTransport
	waitFor(t, "the address to be free", func() bool {
		r2, err = NewTCPTransport(0, addr, nil, in.recv, nil)
		return err == nil
	})
	if !sendUntil(10*time.Second, func() bool { return in.count(1) > 0 }) {
		_ = r2.Close()
		t.Fatal("no frame reached the peer once it was up")
	}
	if err := r2.Close(); err != nil {
		t.Fatal(err)
	}
	// Down again: the backoff starts over at 10 ms.
	d0 := s.Stats().Dials
	sendUntil(400*time.Millisecond, func() bool { return false })
	// At 0, 10, 30, 70, 150 and 310 ms: 6, give or take one; a backoff reset to 0
	// would dial for every frame (one each 2 ms).
	if d := s.Stats().Dials - d0; d < 3 || d > 20 {
		t.Errorf("%d dials in 400 ms after the peer went down again; want 3 to 20 (the backoff reset to 10 ms by the connection made)", d)
	}
}

// TestTCPTransportAcceptBackoffReset: an accepted connection resets the accept
// backoff. Seven failed Accepts grow it to 320 ms; after two accepted connections, the
// next failure waits 5 ms again (not 640 ms).
func TestTCPTransportAcceptBackoffReset(t *testing.T) {
	defer goleak.VerifyNone(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fl := &flakyListener{Listener: ln, fails: 7}
	var in inbox
	a, err := NewTCPTransport(0, "", map[int]string{}, in.recv, &TCPOptions{listener: fl})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	calls := func() []time.Time {
		fl.mu.Lock()
		defer fl.mu.Unlock()
		return slices.Clone(fl.calls)
	}
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	dial := func() {
		c, err := net.Dial("tcp", a.Addr())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	// Calls 0-6 fail, call 7 accepts this connection, call 8 waits in Accept.
	dial()
	waitFor(t, "the accept after 7 failures", func() bool { return len(calls()) >= 9 })
	fl.mu.Lock()
	fl.fails = 1
	fl.mu.Unlock()
	// Call 8 accepts this one, call 9 fails, call 10 comes after the backoff.
	dial()
	waitFor(t, "the retry after the next failure", func() bool { return len(calls()) >= 11 })
	c := calls()
	if got := a.Stats().AcceptErrors; got != 8 {
		t.Errorf("AcceptErrors = %d; want 8", got)
	}
	if gap := c[10].Sub(c[9]); gap > 250*time.Millisecond {
		t.Errorf("retry after %v; want about 5 ms (the backoff reset by the accepted connections), at most 250 ms", gap)
	}
}
