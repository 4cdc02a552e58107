package fleet

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/tokendist/tokendist/internal/errs"
)

// InmemOptions configure NewInmemNetwork. The zero value takes the defaults and drops
// nothing but what a full queue cannot hold.
type InmemOptions struct {
	// Queue is the number of frames queued on one directed link before Send drops
	// (0: 1024).
	Queue int
	// MaxFrame bounds a frame's size in bytes (0: 1 MiB, TCPOptions' default); Send
	// refuses a larger frame with an error.
	MaxFrame int
	// Drop, when not nil, is asked about every frame Send accepts; true drops it
	// (counted in InmemStats.Dropped): loss, partitions, a link that is down. It is
	// called on the sender's goroutine, concurrently for different senders.
	Drop func(from, to int, frame []byte) bool
}

// InmemStats counts an in-memory network's traffic. Once every transport is closed,
// Sent = Delivered + Dropped.
type InmemStats struct {
	// Sent counts the frames Send accepted; Delivered those handed to a receive
	// function; Dropped those lost: told by InmemOptions.Drop, over a full queue, to a
	// node that is not attached (down), or queued when their transport closed.
	Sent, Delivered, Dropped int64
}

// InmemNetwork is an in-process network of Transports, the counterpart of MemoryStore
// for a fleet in one process: Attach (or Transport, for Options.Transport) hands out
// one connected InmemTransport per node ID. Every directed link that carries a frame
// gets a bounded queue (InmemOptions.Queue) and one goroutine that delivers its frames,
// asynchronously and in order, to the receiver's receive function; a frame is lost
// only when InmemOptions.Drop says so, when its queue is full, when the receiver is not
// attached (a node that is down: detach it by closing its transport, attach the
// restarted node under the same ID), or when its sender's transport closes first.
// Nothing else is lost, duplicated, reordered or corrupted: faults are the test's to
// inject, through Drop.
//
// Its methods are safe for concurrent use. Close closes every transport still
// attached; no goroutine of the network outlives Close.
type InmemNetwork struct {
	opts  InmemOptions
	mu    sync.Mutex // guards nodes and closed
	nodes map[int]*InmemTransport
	// closed: no Attach after Close.
	closed bool
	stats  struct{ sent, delivered, dropped atomic.Int64 }
}

// NewInmemNetwork returns an empty network with the options opts (nil: the defaults).
// It fails with an error naming the value for a negative Queue or MaxFrame. O(1).
func NewInmemNetwork(opts *InmemOptions) (*InmemNetwork, error) {
	var o InmemOptions
	if opts != nil {
		o = *opts
	}
	if o.Queue < 0 {
		return nil, errs.BadParam("InmemOptions.Queue %d is negative", o.Queue)
	}
	if o.MaxFrame < 0 {
		return nil, errs.BadParam("InmemOptions.MaxFrame %d is negative", o.MaxFrame)
	}
	if o.Queue == 0 {
		o.Queue = 1024
	}
	if o.MaxFrame == 0 {
		o.MaxFrame = 1 << 20
	}
	return &InmemNetwork{opts: o, nodes: map[int]*InmemTransport{}}, nil
}

// InmemTransport is one node's Transport on an InmemNetwork (see there). It keeps the
// Transport rules: Send never blocks (a frame a full queue cannot take is dropped and
// counted) and may be called from any goroutine; the frames that arrive are handed to
// the receive function one at a time, in the order they were sent on each link;
// Close stops the transport's goroutines (one per outgoing link used) and waits for
// them, and no receive call begins after it or is still running when it returns.
type InmemTransport struct {
	nw   *InmemNetwork
	self int
	recv func(from int, frame []byte)

	rmu      sync.Mutex // serialises recv calls; guards detached
	detached bool

	mu     sync.Mutex // guards links and closed
	links  map[int]chan []byte
	closed bool
	ctx    context.Context
	stop   context.CancelFunc
	wg     sync.WaitGroup
}

// Attach connects node id to the network: frames sent to id are handed to recv (never
// concurrently; recv must not block for long and must not call Close). It fails with
// an error for a negative id, a nil recv, an id already attached (close its transport
// first) or a closed network. O(1).
func (nw *InmemNetwork) Attach(id int, recv func(from int, frame []byte)) (*InmemTransport, error) {
	if id < 0 {
		return nil, errs.BadParam("in-memory node ID %d is negative", id)
	}
	if recv == nil {
		return nil, errs.BadParam("node %d: nil receive function", id)
	}
	nw.mu.Lock()
	defer nw.mu.Unlock()
	if nw.closed {
		return nil, errs.BadParam("node %d: the in-memory network is closed", id)
	}
	if _, ok := nw.nodes[id]; ok {
		return nil, errs.BadParam("node %d is already attached to the in-memory network", id)
	}
	ctx, stop := context.WithCancel(context.Background())
	t := &InmemTransport{nw: nw, self: id, recv: recv, links: map[int]chan []byte{}, ctx: ctx, stop: stop}
	nw.nodes[id] = t
	return t, nil
}

// Transport returns the Options.Transport function that attaches node id (Attach).
// O(1).
func (nw *InmemNetwork) Transport(id int) func(recv func(from int, frame []byte)) (Transport, error) {
	return func(recv func(from int, frame []byte)) (Transport, error) {
		t, err := nw.Attach(id, recv)
		if err != nil {
			return nil, err
		}
		return t, nil
	}
}

// Stats returns the counters so far. O(1).
func (nw *InmemNetwork) Stats() InmemStats {
	return InmemStats{Sent: nw.stats.sent.Load(), Delivered: nw.stats.delivered.Load(), Dropped: nw.stats.dropped.Load()}
}

// Close closes every transport still attached (InmemTransport.Close) and refuses later
// Attach calls; it returns when every goroutine of the network has stopped. Closing
// twice is harmless. O(transports + links).
func (nw *InmemNetwork) Close() error {
	nw.mu.Lock()
	nw.closed = true
	ts := make([]*InmemTransport, 0, len(nw.nodes))
	for _, t := range nw.nodes {
		ts = append(ts, t)
	}
	nw.mu.Unlock()
	for _, t := range ts {
		_ = t.Close()
	}
	return nil
}

// receiver returns the transport attached as node id, nil if none.
func (nw *InmemNetwork) receiver(id int) *InmemTransport {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	return nw.nodes[id]
}

// Send queues frame on the link to node to, or drops it (see InmemNetwork); it fails
// with an error only for a negative or its own ID, or a frame over
// InmemOptions.MaxFrame. A frame to a node that is not attached is accepted and
// dropped on delivery, as a frame to a process that is down. The transport owns frame
// after the call. O(1); the first frame on a link starts its goroutine.
func (t *InmemTransport) Send(to int, frame []byte) error {
	if to < 0 || to == t.self {
		return errs.BadParam("node %d sends to %d, not a peer", t.self, to)
	}
	if len(frame) > t.nw.opts.MaxFrame {
		return errs.BadParam("frame of %d bytes over the limit %d", len(frame), t.nw.opts.MaxFrame)
	}
	nw := t.nw
	nw.stats.sent.Add(1)
	if nw.opts.Drop != nil && nw.opts.Drop(t.self, to, frame) {
		nw.stats.dropped.Add(1)
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		nw.stats.dropped.Add(1)
		return nil
	}
	q, ok := t.links[to]
	if !ok {
		q = make(chan []byte, nw.opts.Queue)
		t.links[to] = q
		t.wg.Add(1)
		go t.deliverLoop(to, q)
	}
	select {
	case q <- frame:
	default:
		nw.stats.dropped.Add(1)
	}
	return nil
}

// deliverLoop hands the frames of the link to node to to its receiver, until Close.
func (t *InmemTransport) deliverLoop(to int, q chan []byte) {
	defer t.wg.Done()
	for {
		select {
		case <-t.ctx.Done():
			return
		case frame := <-q:
			if t.ctx.Err() != nil { // closing: this frame and the queued ones are dropped
				t.nw.stats.dropped.Add(1)
				return
			}
			if r := t.nw.receiver(to); r == nil || !r.deliver(t.self, frame) {
				t.nw.stats.dropped.Add(1)
			}
		}
	}
}

// deliver hands one frame to the receive function; false if the transport is closed.
func (t *InmemTransport) deliver(from int, frame []byte) bool {
	t.rmu.Lock()
	defer t.rmu.Unlock()
	if t.detached {
		return false
	}
	t.recv(from, frame)
	t.nw.stats.delivered.Add(1)
	return true
}

// Close detaches the node from the network (its ID may be attached again), waits for
// a receive call in progress, stops the transport's link goroutines and waits for
// them; the frames still queued are dropped. Closing twice is harmless.
// O(links + queued frames).
func (t *InmemTransport) Close() error {
	nw := t.nw
	nw.mu.Lock()
	if nw.nodes[t.self] == t {
		delete(nw.nodes, t.self)
	}
	nw.mu.Unlock()
	t.rmu.Lock()
	t.detached = true
	t.rmu.Unlock()
	t.mu.Lock()
	already := t.closed
	t.closed = true
	t.mu.Unlock()
	if already {
		t.wg.Wait()
		return nil
	}
	t.stop()
	t.wg.Wait()
	t.mu.Lock()
	for _, q := range t.links {
		nw.stats.dropped.Add(int64(len(q)))
	}
	t.mu.Unlock()
	return nil
}
