package fleet

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tokendist/tokendist/internal/errs"
)

// Transport carries frames (opaque byte strings: the handoff's datagrams) between the
// nodes of a fleet. It is best effort, like the network it runs on: a frame may be
// lost, and the handoff protocol above it retransmits, drops duplicates and reorders.
//
// Rules: Send never blocks for long (a frame that cannot be queued is dropped and
// counted) and may be called from one goroutine at a time; frames that arrive are
// handed to the receive function given to the constructor, one at a time, in the
// order they were read from each connection. Close stops every goroutine the
// transport started and waits for them.
type Transport interface {
	// Send queues frame for node to; it reports an error only for an unknown node or
	// a frame over the size limit. The transport owns frame after the call.
	Send(to int, frame []byte) error
	// Close stops the transport and waits for its goroutines.
	Close() error
}

// TCPOptions configure NewTCPTransport. The zero value takes the defaults.
type TCPOptions struct {
	// MaxFrame bounds a frame's size in bytes, without the 8 bytes of length and
	// sender (0: DefaultMaxFrame; at most MaxMaxFrame). It means the same on both
	// ends: Send refuses a larger frame, and a larger incoming frame closes its
	// connection; a frame of exactly MaxFrame bytes goes through.
	MaxFrame int
	// Queue is the number of frames queued per peer before Send drops (0: 1024).
	Queue int
	// DialTimeout bounds one connection attempt (0: 1 s); a failed peer is retried
	// after a backoff that doubles from 10 ms to 1 s.
	DialTimeout time.Duration
	// WriteTimeout bounds one frame's write (0: 2 s); a write that times out closes
	// the connection and drops the frame.
	WriteTimeout time.Duration
	// IdleTimeout closes an incoming connection on which a frame (its header and its
	// bytes) does not arrive within this time (0: DefaultIdleTimeout). The sender
	// dials again for its next frame.
	IdleTimeout time.Duration
	// MaxConns bounds the open incoming connections (0: 256); one more is closed
	// as soon as it is accepted.
	MaxConns int
	// MaxBuffered bounds the bytes of frames being read, over all incoming
	// connections (0: 64 MiB, and at least MaxFrame); a frame that would pass it
	// closes its connection (the sender dials again and retransmits). Each connection
	// holds besides a 4 KiB read buffer.
	MaxBuffered int64

	// listener, when not nil, is listened on instead of the listen address (tests).
	listener net.Listener
}

// DefaultIdleTimeout is TCPOptions.IdleTimeout's default.
const DefaultIdleTimeout = time.Minute

// maxAcceptBackoff bounds the wait after a failed Accept (EMFILE, ENFILE, ...).
const maxAcceptBackoff = time.Second

func (o *TCPOptions) withDefaults() (TCPOptions, error) {
	var t TCPOptions
	if o != nil {
		t = *o
	}
	if t.MaxFrame < 0 || t.Queue < 0 || t.DialTimeout < 0 || t.WriteTimeout < 0 || t.IdleTimeout < 0 || t.MaxConns < 0 || t.MaxBuffered < 0 {
		return t, errs.BadParam("negative TCPOptions %+v", t)
	}
	if t.MaxFrame > MaxMaxFrame {
		return t, errs.BadParam("TCPOptions.MaxFrame %d over the limit %d", t.MaxFrame, MaxMaxFrame)
	}
	if t.MaxFrame == 0 {
		t.MaxFrame = DefaultMaxFrame
	}
	if t.Queue == 0 {
		t.Queue = 1024
	}
	if t.DialTimeout == 0 {
		t.DialTimeout = time.Second
	}
	if t.WriteTimeout == 0 {
		t.WriteTimeout = 2 * time.Second
	}
	if t.IdleTimeout == 0 {
		t.IdleTimeout = DefaultIdleTimeout
	}
	if t.MaxConns == 0 {
		t.MaxConns = 256
	}
	if t.MaxBuffered == 0 {
		t.MaxBuffered = max(64<<20, int64(t.MaxFrame))
	}
	if t.MaxBuffered < int64(t.MaxFrame) {
		return t, errs.BadParam("TCPOptions.MaxBuffered %d under MaxFrame %d: no frame of that size could be read", t.MaxBuffered, t.MaxFrame)
	}
	return t, nil
}

// TCPStats counts a TCP transport's traffic.
type TCPStats struct {
	// Sent and Received count frames written and read; Dropped counts frames Send
	// dropped (full queue, failed connection); Dials counts connection attempts.
	Sent, Received, Dropped, Dials int64
	// Closed counts incoming connections the transport closed: idle past
	// IdleTimeout, a frame over MaxFrame or over MaxBuffered, or over MaxConns.
	// AcceptErrors counts failed Accepts (each followed by a backoff and a retry).
	Closed, AcceptErrors int64
}

// TCPTransport is the reference Transport: one listening socket, and one outgoing TCP
// connection per peer, each fed by its own goroutine from a bounded queue. A frame on
// the wire is its length and the sender's ID (two big-endian uint32) and its bytes.
// Incoming connections may come from any address (a proxy may stand in between): the
// sender's ID is in every frame. What it reads is bounded (TCPOptions): at most
// MaxConns incoming connections, each holding a 4 KiB buffer and one frame of at most
// MaxFrame bytes, all frames being read at most MaxBuffered bytes, and a connection
// idle past IdleTimeout closed; a failed Accept (EMFILE) is retried after a backoff.
type TCPTransport struct {
	self  int
	opts  TCPOptions
	ln    net.Listener
	recv  func(from int, frame []byte)
	peers map[int]*tcpPeer
	ctx   context.Context
	stop  context.CancelFunc
	wg    sync.WaitGroup
	mu    sync.Mutex // guards conns
	conns map[net.Conn]struct{}
	rmu   sync.Mutex // serialises recv calls
	stats struct{ sent, received, dropped, dials, closed, acceptErrors atomic.Int64 }
	nconn atomic.Int64 // open incoming connections
	inUse atomic.Int64 // bytes of frames being read
}

type tcpPeer struct {
	addr string
	q    chan []byte
}

// NewTCPTransport listens on listen (host:port; port 0 picks one, see Addr) as node
// self and sends to the peers' addresses (node ID → host:port). recv is called for
// every frame read, never concurrently; it must not call Close. The transport runs
// until Close.
func NewTCPTransport(self int, listen string, peers map[int]string, recv func(from int, frame []byte), opts *TCPOptions) (*TCPTransport, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if recv == nil {
		return nil, errs.BadParam("nil receive function")
	}
	if self < 0 {
		return nil, errs.BadParam("node ID %d is negative", self)
	}
	for id, a := range peers {
		if id < 0 || id == self {
			return nil, errs.BadParam("peer ID %d (node %d)", id, self)
		}
		if _, _, err := net.SplitHostPort(a); err != nil {
			return nil, errs.BadParam("peer %d address %q: %v", id, a, err)
		}
	}
	ln := o.listener
	if ln == nil {
		if ln, err = net.Listen("tcp", listen); err != nil {
			return nil, errs.Wrapf(err, "node %d listen on %q", self, listen)
		}
	}
	ctx, stop := context.WithCancel(context.Background())
	t := &TCPTransport{self: self, opts: o, ln: ln, recv: recv, peers: make(map[int]*tcpPeer, len(peers)),
		ctx: ctx, stop: stop, conns: map[net.Conn]struct{}{}}
	for id, a := range peers {
		p := &tcpPeer{addr: a, q: make(chan []byte, o.Queue)}
		t.peers[id] = p
		t.wg.Add(1)
		go t.writeLoop(p)
	}
	t.wg.Add(1)
	go t.acceptLoop()
	return t, nil
}

// Addr returns the address the transport listens on.
func (t *TCPTransport) Addr() string { return t.ln.Addr().String() }

// Stats returns the counters so far.
func (t *TCPTransport) Stats() TCPStats {
	return TCPStats{Sent: t.stats.sent.Load(), Received: t.stats.received.Load(), Dropped: t.stats.dropped.Load(), Dials: t.stats.dials.Load(),
		Closed: t.stats.closed.Load(), AcceptErrors: t.stats.acceptErrors.Load()}
}

// Send queues frame for node to, or drops it if the peer's queue is full.
func (t *TCPTransport) Send(to int, frame []byte) error {
	p, ok := t.peers[to]
	if !ok {
		return errs.BadParam("node %d sends to %d, not one of its peers", t.self, to)
	}
	if len(frame) > t.opts.MaxFrame {
		return errs.BadParam("frame of %d bytes over the limit %d", len(frame), t.opts.MaxFrame)
	}
	if t.ctx.Err() != nil {
		t.stats.dropped.Add(1)
		return nil
	}
	select {
	case p.q <- frame:
	default:
		t.stats.dropped.Add(1)
	}
	return nil
}

// Close stops listening, closes every connection and waits for the goroutines.
func (t *TCPTransport) Close() error {
	t.stop()
	err := t.ln.Close()
	t.mu.Lock()
	for c := range t.conns {
		_ = c.Close()
	}
	t.mu.Unlock()
	t.wg.Wait()
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return errs.Wrapf(err, "close transport")
	}
	return nil
}

func (t *TCPTransport) track(c net.Conn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ctx.Err() != nil {
		_ = c.Close()
		return false
	}
	t.conns[c] = struct{}{}
	return true
}

func (t *TCPTransport) untrack(c net.Conn) {
	_ = c.Close()
	t.mu.Lock()
	delete(t.conns, c)
	t.mu.Unlock()
}

// writeLoop keeps one connection to p and writes its queue, redialling with backoff.
func (t *TCPTransport) writeLoop(p *tcpPeer) {
	defer t.wg.Done()
	var c net.Conn
	var w *bufio.Writer
	backoff := 10 * time.Millisecond
	var hdr [8]byte
	for {
		var frame []byte
		select {
		case <-t.ctx.Done():
			if c != nil {
				t.untrack(c)
			}
			return
		case frame = <-p.q:
		}
		if c == nil {
			t.stats.dials.Add(1)
			d := net.Dialer{Timeout: t.opts.DialTimeout}
			conn, err := d.DialContext(t.ctx, "tcp", p.addr)
			if err != nil {
				t.stats.dropped.Add(1)
				select {
				case <-t.ctx.Done():
				case <-time.After(backoff):
				}
				backoff = min(2*backoff, time.Second)
				continue
			}
			if !t.track(conn) {
				return
			}
			c, w, backoff = conn, bufio.NewWriter(conn), 10*time.Millisecond
		}
		binary.BigEndian.PutUint32(hdr[:4], uint32(len(frame)))
		binary.BigEndian.PutUint32(hdr[4:], uint32(t.self))
		_ = c.SetWriteDeadline(time.Now().Add(t.opts.WriteTimeout))
		_, err := w.Write(hdr[:])
		if err == nil {
			_, err = w.Write(frame)
		}
		if err == nil && len(p.q) == 0 {
			err = w.Flush()
		}
		if err != nil {
			t.stats.dropped.Add(1)
			t.untrack(c)
			c, w = nil, nil
			continue
		}
		t.stats.sent.Add(1)
	}
}

// acceptLoop accepts connections until Close. A failed Accept (EMFILE, ENFILE, a
// connection reset before it was accepted) is counted and retried after a backoff
// that doubles from 5 ms to maxAcceptBackoff; only Close ends the loop.
func (t *TCPTransport) acceptLoop() {
	defer t.wg.Done()
	backoff := time.Duration(0)
	for {
		c, err := t.ln.Accept()
		if err != nil {
			if t.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return // Close is stopping us
			}
			t.stats.acceptErrors.Add(1)
			backoff = min(max(2*backoff, 5*time.Millisecond), maxAcceptBackoff)
			select {
			case <-t.ctx.Done():
				return
			case <-time.After(backoff):
			}
			continue
		}
		backoff = 0
		if t.nconn.Load() >= int64(t.opts.MaxConns) {
			t.stats.closed.Add(1)
			_ = c.Close()
			continue
		}
		if !t.track(c) {
			return
		}
		t.nconn.Add(1)
		t.wg.Add(1)
		go t.readLoop(c)
	}
}

// readLoop reads frames from one incoming connection until it fails, idles past
// IdleTimeout, sends a frame over MaxFrame or over the MaxBuffered budget, or Close.
// It holds at most a 4 KiB buffer and one frame.
func (t *TCPTransport) readLoop(c net.Conn) {
	defer t.wg.Done()
	defer t.untrack(c)
	defer t.nconn.Add(-1) // before the close: a peer that sees it may dial at once
	r := bufio.NewReaderSize(c, 4096)
	var hdr [8]byte
	for {
		_ = c.SetReadDeadline(time.Now().Add(t.opts.IdleTimeout))
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.stats.closed.Add(1)
			}
			return
		}
		n, from := binary.BigEndian.Uint32(hdr[:4]), int(binary.BigEndian.Uint32(hdr[4:]))
		if int64(n) > int64(t.opts.MaxFrame) {
			t.stats.closed.Add(1)
			return // a corrupt or hostile stream: drop the connection
		}
		if t.inUse.Add(int64(n)) > t.opts.MaxBuffered {
			t.inUse.Add(-int64(n))
			t.stats.closed.Add(1)
			return // over the budget: the sender dials again and retransmits
		}
		frame := make([]byte, n)
		_, err := io.ReadFull(r, frame)
		if err != nil {
			t.inUse.Add(-int64(n))
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.stats.closed.Add(1)
			}
			return
		}
		t.stats.received.Add(1)
		t.rmu.Lock()
		if t.ctx.Err() == nil {
			t.recv(from, frame)
		}
		t.rmu.Unlock()
		t.inUse.Add(-int64(n))
	}
}
