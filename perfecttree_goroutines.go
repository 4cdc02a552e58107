package tokendist

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
)

// runPTConcurrent runs the perfect-tree protocol of Margara, Pistocchi and Vassura
// (section 3) with real asynchrony, for PerfectTreeOptions.Goroutines: one goroutine
// per node executes the same node program as the simulated runtime. Each node's
// incoming links end in its mailbox: a mutex-guarded FIFO queue per channel, to which
// senders append (a run of equal messages is one count, so a send never blocks) and
// whose first message of a batch wakes the node, which then moves the whole batch into
// its own queues. A link's reservation is an atomic word shared by its two ends.
//
// The run ends when every node is Finished, or with ErrDeadlock when every unfinished
// node waits and no message is in flight (an exact count of running nodes plus
// uncollected batches detects it), with an ErrProtocol failure, or with ctx's error
// when ctx is cancelled (wrapped with the "tokendist: " prefix, the logical time and
// the number of finished nodes, so errors.Is works with context.Canceled and
// context.DeadlineExceeded). Every goroutine has exited when it returns. Time in the
// report is the logical (Lamport) time: each send takes one unit after the latest
// message its sender received. It returns the final loads, counting tokens queued at a
// node. g and loads were validated by Init.
//
// Cost: O(N) goroutines and memory, O(1) work per message plus the scheduler's (one
// wake-up per batch).
// ptGoroutineBytes is what Init reserves per node for the goroutine runtime: a
// goroutine's stack (2 KiB at least, grown by the scheduler) and its mailbox and
// queues; the peak measured on random trees is in docs/performance.md.
const ptGoroutineBytes = 6 << 10

func runPTConcurrent(ctx context.Context, g *Graph, loads Loads, o *PerfectTreeOptions, seed uint64) (PerfectTreeReport, Loads, error) {
	c := newPTConc(ctx, g, loads, o, seed)
	c.wg.Add(c.n)
	for v := 0; v < c.n; v++ {
		go c.runNode(v)
	}
	c.wg.Wait()
	r, final := c.result(ctx, loads)
	cause := context.Cause(c.ctx)
	switch {
	case r.Finished == r.N:
		return r, final, nil
	case errors.Is(cause, ErrDeadlock) || errors.Is(cause, ErrProtocol):
		return r, final, cause
	default:
		err := ctx.Err()
		if err == nil {
			err = cause
		}
		return r, final, wrapf(err, "goroutine perfect-tree run stopped at logical time %d with %d of %d nodes finished", r.Time, r.Finished, r.N)
	}
}

// ptMailbox is the receiving side of one node's links: what its neighbours have sent and
// it has not yet moved into its own queues. Senders append to the staging queue of the
// link's channel under mu (a run of equal messages stays one ptRun however many tokens
// wait, so a fast sender never blocks on a slow receiver), and the first message of a
// batch wakes the node through wake. The node moves the whole batch into its queues at
// once, taking the latest Lamport stamp in it.
type ptMailbox struct {
	mu     sync.Mutex
	q      []ptQueue // staging queue of every channel
	dirty  []int32   // channels with staged messages (each once)
	stamp  int64     // the latest stamp staged
	notice bool      // a link of this node was released while it waited for it
	bad    bool      // a staged queue broke the protocol's shape (ptRun)
	wake   chan struct{}
	_      [32]byte
}

// What a waiting goroutine waits for.
const (
	ptForNothing = iota // a Finished node, taking what arrives until the run ends
	ptForAny
	ptForPort
	ptForLock
)

// ptSlot is what one goroutine reports; only that goroutine writes it.
type ptSlot struct {
	messages [3]int64
	moves    [3]int64
	clock    int64
	lastMove int64
	_        [64]byte // keep slots of different goroutines on different cache lines
}

type ptConc struct {
	n     int
	g     *Graph
	ports ptPorts
	nodes []ptNode
	box   []ptMailbox
	locks []atomic.Int32 // by lock index: 0 free, else holder+1
	want  []atomic.Bool  // by flat channel index: its node waits for the link
	// active counts the running nodes plus the staged batches (a mailbox that holds
	// messages or a notice counts once): 0 with some node not Finished is a deadlock.
	active atomic.Int64
	done   atomic.Int64 // Finished nodes
	jitter bool
	seed   uint64
	slots  []ptSlot
	stats  ptStats
	ctx    context.Context
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup
}

var errPTAllFinished = errors.New("tokendist: perfect tree: every node finished")

func newPTConc(ctx context.Context, g *Graph, loads Loads, o *PerfectTreeOptions, seed uint64) *ptConc {
	n := g.Order()
	c := &ptConc{n: n, g: g, jitter: o.Jitter, seed: seed}
	c.ctx, c.cancel = context.WithCancelCause(ctx)
	c.ports.build(g, o.ShufflePorts, seed)
	m2 := len(g.adj)
	subT, subN := make([]int64, m2), make([]int64, m2)
	queues, rings := make([]ptQueue, m2), make([]int32, m2)
	staged, dirty := make([]ptQueue, m2), make([]int32, 0, m2)
	c.nodes = make([]ptNode, n)
	c.box = make([]ptMailbox, n)
	for v := 0; v < n; v++ {
		a, b := g.off[v], g.off[v+1]
		c.nodes[v].init(loads[v], subT[a:b:b], subN[a:b:b], queues[a:b:b], rings[a:b:b], o.Literal)
		c.box[v].q = staged[a:b:b]
		c.box[v].dirty = dirty[a:a:b]
		c.box[v].wake = make(chan struct{}, 1)
	}
	c.locks = make([]atomic.Int32, m2)
	c.want = make([]atomic.Bool, m2)
	c.slots = make([]ptSlot, n)
	c.stats.reset(n, loads.Total())
	c.active.Store(int64(n))
	return c
}

// runNode is the goroutine of node v: it carries out the actions of v's program.
func (c *ptConc) runNode(v int) {
	defer c.wg.Done()
	nd := &c.nodes[v]
	slot := &c.slots[v]
	f0 := c.ports.off[v] - 1
	var rng *rand.Rand
	if c.jitter {
		rng = rand.New(rand.NewPCG(c.seed, uint64(v)))
	}
	ok := false
	for {
		a := nd.resume(ok)
		ok = false
		switch a.op {
		case ptOpReserve:
			ok = c.locks[c.ports.lock[f0+int(a.port)]].CompareAndSwap(0, int32(v)+1)
			if ok {
				// What the other end sent before releasing the link is staged: make it
				// visible to receive (phase 1's S1.2 depends on it).
				if _, _, good := c.collect(v, true, ptForNothing, 0); !good {
					return
				}
			}
		case ptOpRelease:
			f := f0 + int(a.port)
			c.locks[c.ports.lock[f]].Store(0)
			w := c.ports.nbr[f]
			if c.want[c.ports.off[w]+int(c.ports.back[f])-1].Load() {
				c.put(int(w), 0, ptMsg{}, 0)
			}
		case ptOpSend:
			if rng != nil && rng.IntN(4) == 0 {
				runtime.Gosched()
			}
			f := f0 + int(a.port)
			slot.clock++
			slot.messages[nd.phase-1]++
			c.put(int(c.ports.nbr[f]), c.ports.back[f], a.msg, slot.clock)
			if a.msg.carriesToken() {
				slot.moves[nd.phase-1]++
				slot.lastMove = slot.clock
			}
		case ptOpWaitAny:
			if !c.await(v, ptForAny, 0) {
				return
			}
		case ptOpWaitPort:
			if !c.await(v, ptForPort, a.port) {
				return
			}
		case ptOpWaitFree:
			f := f0 + int(a.port)
			c.want[f].Store(true)
			if c.locks[c.ports.lock[f]].Load() != 0 && !c.await(v, ptForLock, a.port) {
				return
			}
			c.want[f].Store(false)
		case ptOpPhase:
			c.stats.phaseEnded(nd, v, a.port, slot.clock, &c.ports)
		case ptOpDone:
			if c.done.Add(1) == int64(c.n) {
				c.cancel(errPTAllFinished)
			}
			// A Finished node keeps taking what arrives (the literal program can strand
			// tokens) until the run ends, so the count of batches stays exact.
			c.await(v, ptForNothing, 0)
			return
		default:
			c.cancel(ptNodeError(v, nd, a.port))
			return
		}
	}
}

// put stages message m for w's channel port (or, for kind ptMsgNone, a notice that a
// link of w was released) and wakes w if the batch is new. It never blocks on w.
func (c *ptConc) put(w int, port int32, m ptMsg, stamp int64) {
	b := &c.box[w]
	b.mu.Lock()
	fresh := len(b.dirty) == 0 && !b.notice
	if m.kind == ptMsgNone {
		b.notice = true
	} else {
		q := &b.q[port-1]
		if q.runs == 0 {
			b.dirty = append(b.dirty, port)
		}
		if !q.push(m) {
			b.bad = true
		}
		b.stamp = max(b.stamp, stamp)
	}
	if fresh {
		c.active.Add(1)
	}
	b.mu.Unlock()
	if fresh {
		select {
		case b.wake <- struct{}{}:
		default:
		}
	}
}

// collect moves v's staged batch into its queues and reports whether there was one and
// whether it ends the wait (what, port): any message for ptForAny, one on port for
// ptForPort, a release notice for ptForLock. good is false after a batch that broke the
// queue shape (the run is then cancelled). running says whether v is counted in active:
// the batch's count is then dropped, else it becomes v's.
func (c *ptConc) collect(v int, running bool, what int, port int32) (had, hit, good bool) {
	b := &c.box[v]
	in := &c.nodes[v].in
	b.mu.Lock()
	had = len(b.dirty) > 0 || b.notice
	good = !b.bad
	switch what {
	case ptForAny:
		hit = len(b.dirty) > 0
	case ptForLock:
		hit = b.notice
	}
	for _, p := range b.dirty {
		if what == ptForPort && p == port {
			hit = true
		}
		q := &b.q[p-1]
		for ; q.runs > 0; q.runs-- {
			if !in.deliverRun(p, q.run[q.first]) {
				good = false
			}
			q.first = (q.first + 1) % 4
		}
		q.first = 0
	}
	b.dirty = b.dirty[:0]
	b.notice = false
	stamp := b.stamp
	b.mu.Unlock()
	if had && running {
		c.active.Add(-1)
	}
	slot := &c.slots[v]
	slot.clock = max(slot.clock, stamp)
	if !good {
		c.cancel(ptNodeError(v, &c.nodes[v], ptFailOverflow))
	}
	return had, hit, good
}

// await blocks v until its wait (what, port) is over; false means the run is over.
func (c *ptConc) await(v int, what int, port int32) bool {
	running := true
	for {
		had, hit, good := c.collect(v, running, what, port)
		if !good {
			return false
		}
		if had {
			running = true
		}
		if hit {
			return true
		}
		if running {
			running = false
			if c.active.Add(-1) == 0 && c.done.Load() < int64(c.n) {
				c.cancel(fmt.Errorf("%w: %d of %d nodes finished, every other one waits and no message is in flight",
					ErrDeadlock, c.done.Load(), c.n))
			}
		}
		select {
		case <-c.box[v].wake:
		case <-c.ctx.Done():
			return false
		}
	}
}

// result gathers the metrics and the final loads once every goroutine has exited.
func (c *ptConc) result(ctx context.Context, initial Loads) (PerfectTreeReport, Loads) {
	var r PerfectTreeReport
	loads := make(Loads, c.n)
	for v := range c.nodes {
		nd := &c.nodes[v]
		c.collect(v, false, ptForNothing, 0) // what was staged after the run stopped counts at v
		held := nd.tv
		if nd.phase == 1 { // Tv counts the subtree's tokens in phase 1
			held = nd.own
		}
		loads[v] = held + nd.early + nd.in.tokens()
		s := &c.slots[v]
		r.Time = max(r.Time, s.clock)
		c.stats.lastMove = max(c.stats.lastMove, s.lastMove)
		for k := range s.messages {
			c.stats.messages[k] += s.messages[k]
			c.stats.moves[k] += s.moves[k]
		}
	}
	c.stats.finished = int(c.done.Load())
	c.stats.fill(&r)
	ptFinish(ctx, &r, c.g, initial, loads)
	return r, loads
}
