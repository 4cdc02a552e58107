package tokendist

import (
	"context"
	"fmt"
	"math/rand/v2"
)

// ptWait is what a node of the simulated runtime is waiting for.
type ptWait uint8

const (
	ptReady   ptWait = iota // queued to run, or running
	ptSending               // its message is in flight
	ptOnAny                 // a message on any channel
	ptOnPort                // a message on channel warg
	ptOnLock                // the release of lock warg
	ptFinished
)

// ptPorts maps every node's channels to the network: the flat index f = off[v] + c − 1
// stands for channel c of node v, in both runtimes.
type ptPorts struct {
	off  []int   // CSR offsets of the graph
	nbr  []int32 // f → the neighbour w the channel leads to
	back []int32 // f → the channel number at w of the link back to v
	lock []int32 // f → the link's index, shared by both ends (the smaller f)
}

// build numbers the channels of every node, in ascending neighbour order or shuffled
// with a generator fixed by seed. O(N + M log Δ).
func (p *ptPorts) build(g *Graph, shuffle bool, seed uint64) {
	n := g.Order()
	p.off = g.off
	m2 := len(g.adj)
	p.nbr = ptGrow(p.nbr, m2)
	p.back = ptGrow(p.back, m2)
	p.lock = ptGrow(p.lock, m2)
	pos := make([]int32, m2) // CSR end e → flat index f of the same channel
	copy(p.nbr, g.adj)
	if shuffle {
		r := rand.New(rand.NewPCG(seed, 0x706f727473))
		for v := 0; v < n; v++ {
			nb := p.nbr[g.off[v]:g.off[v+1]]
			r.Shuffle(len(nb), func(i, j int) { nb[i], nb[j] = nb[j], nb[i] })
		}
	}
	for v := 0; v < n; v++ {
		for f := g.off[v]; f < g.off[v+1]; f++ {
			pos[g.EdgeIndex(v, int(p.nbr[f]))] = int32(f)
		}
	}
	for v := 0; v < n; v++ {
		for f := g.off[v]; f < g.off[v+1]; f++ {
			w := int(p.nbr[f])
			fb := pos[g.EdgeIndex(w, v)]
			p.back[f] = fb - int32(g.off[w]) + 1
			p.lock[f] = min(int32(f), fb)
		}
	}
}

func ptGrow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}

// ptStats collects the metrics both runtimes report, in per-node slots so that the
// concurrent runtime's goroutines never share one.
type ptStats struct {
	n        int
	total    int64
	parent   []int32 // -2 until the node ends phase 1, then -1 (root) or its parent
	known    []bool  // ended phase 1 with Tv = T and Nv = N
	phase2   Loads   // tokens at the end of phase 2, -1 before
	end      []int64 // end[3v+k]: when node v ended phase k+1
	messages [3]int64
	moves    [3]int64
	lastMove int64
	finished int
}

func (st *ptStats) reset(n int, total int64) {
	st.n, st.total, st.finished = n, total, 0
	st.parent, st.known = ptGrow(st.parent, n), ptGrow(st.known, n)
	st.phase2, st.end = ptGrow(st.phase2, n), ptGrow(st.end, 3*n)
	for v := range st.parent {
		st.parent[v], st.known[v], st.phase2[v] = -2, false, -1
	}
	clear(st.end)
	st.messages, st.moves, st.lastMove = [3]int64{}, [3]int64{}, 0
}

// phaseEnded records that node v ended phase k at time t; it writes v's slots only.
func (st *ptStats) phaseEnded(nd *ptNode, v int, k int32, t int64, p *ptPorts) {
	st.end[3*v+int(k)-1] = t
	switch k {
	case 1:
		st.known[v] = nd.tv == st.total && nd.nv == int64(st.n)
		st.parent[v] = -1
		if nd.parent != 0 {
			st.parent[v] = p.nbr[p.off[v]+int(nd.parent)-1]
		}
	case 2:
		st.phase2[v] = nd.tv
	}
}

func (st *ptStats) fill(r *PerfectTreeReport) {
	r.N, r.T = st.n, st.total
	if st.n > 0 {
		r.Avg, r.Extra = st.total/int64(st.n), st.total%int64(st.n)
	}
	r.Root, r.Roots, r.GlobalKnown, r.Finished = -1, 0, 0, st.finished
	r.Parent = make([]int32, st.n)
	for v, p := range st.parent {
		r.Parent[v] = max(p, -1)
		if p == -1 {
			r.Roots++
			r.Root = v
		}
		if st.known[v] {
			r.GlobalKnown++
		}
		for k := range r.PhaseTime {
			r.PhaseTime[k] = max(r.PhaseTime[k], st.end[3*v+k])
		}
	}
	r.Phase2Tokens = st.phase2.Clone()
	r.Messages, r.Moves, r.LastMove = st.messages, st.moves, st.lastMove
}

// ptNodeError describes a failed node program.
func ptNodeError(v int, nd *ptNode, code int32) error {
	return fmt.Errorf("%w: node %d in phase %d: %s", ErrProtocol, v, nd.phase, ptFailText[code])
}

// ptSim is the discrete-event scheduler of PerfectTree.
type ptSim struct {
	n      int
	g      *Graph
	st     *State
	delays Delays
	ports  ptPorts
	nodes  []ptNode
	subT   []int64
	subN   []int64
	queues []ptQueue
	rings  []int32
	init0  Loads // the initial loads, for the optimum

	holder []int32 // lock index → node holding it, or -1
	wait   []ptWait
	warg   []int32
	res    []bool  // the result to resume a node with
	out    []ptMsg // the message a sending node has in flight
	outF   []int32 // its flat channel index

	runq   []int32 // ring of ready nodes
	rqHead int
	rqLen  int
	queued []bool

	// Messages in flight, in heap: while every delay has been 1 it is a FIFO queue in
	// send order (every message in it is due at the next time unit; sorted by (evTime,
	// evSeq), so it is also a valid heap), and after the first other delay a min-heap by
	// (evTime, evSeq) for the rest of the run.
	unit    bool    // the delay policy is NewUnitDelays: no call per message
	batch   bool    // PerfectTreeOptions.Batch: runs of tokens travel as one event
	multi   int64   // batched mode: events that carried more than one token
	useHeap bool    // a delay other than 1 has occurred: heap is a heap
	heap    []int32 // sending nodes, a min-heap by (evTime, evSeq)
	evTime  []int64
	evSeq   []int64
	seq     int64
	now     int64

	finished int
	err      error
	stats    ptStats
}

func (sm *ptSim) init(g *Graph, s *State, o *PerfectTreeOptions) error {
	n := g.Order()
	sm.n, sm.g, sm.st, sm.delays = n, g, s, o.Delays
	sm.delays.Reset(n, s.Seed)
	sm.ports.build(g, o.ShufflePorts, s.Seed)
	m2 := len(g.adj)
	sm.subT, sm.subN = ptGrow(sm.subT, m2), ptGrow(sm.subN, m2)
	sm.queues, sm.rings = ptGrow(sm.queues, m2), ptGrow(sm.rings, m2)
	sm.nodes = ptGrow(sm.nodes, n)
	sm.init0 = append(sm.init0[:0], s.Loads...)
	for v := 0; v < n; v++ {
		a, b := g.off[v], g.off[v+1]
		sm.nodes[v].init(s.Loads[v], sm.subT[a:b:b], sm.subN[a:b:b], sm.queues[a:b:b], sm.rings[a:b:b], o.Literal)
		sm.nodes[v].batch = o.Batch
	}
	sm.holder = ptGrow(sm.holder, m2)
	for i := range sm.holder {
		sm.holder[i] = -1
	}
	sm.wait, sm.warg, sm.res = ptGrow(sm.wait, n), ptGrow(sm.warg, n), ptGrow(sm.res, n)
	sm.out, sm.outF = ptGrow(sm.out, n), ptGrow(sm.outF, n)
	sm.runq, sm.queued = ptGrow(sm.runq, n), ptGrow(sm.queued, n)
	sm.heap = sm.heap[:0]
	if cap(sm.heap) < n {
		sm.heap = make([]int32, 0, n)
	}
	sm.evTime, sm.evSeq = ptGrow(sm.evTime, n), ptGrow(sm.evSeq, n)
	_, sm.unit = sm.delays.(ptUnitDelays)
	sm.batch, sm.multi = o.Batch, 0
	sm.useHeap = false
	sm.rqHead, sm.rqLen, sm.seq, sm.now, sm.finished, sm.err = 0, 0, 0, 0, 0, nil
	sm.stats.reset(n, s.Loads.Total())
	for v := 0; v < n; v++ {
		sm.wait[v], sm.res[v], sm.queued[v] = ptReady, false, false
		sm.enqueue(int32(v))
	}
	sm.runReady()
	return sm.check()
}

// step is one time unit: deliver what is due, then run every node that is ready. In
// batched mode it is the next time at which a message arrives: the time units between
// carry no event (every node waits), so skipping them changes Steps only.
func (sm *ptSim) step(s *State) error {
	if sm.err != nil {
		return sm.err
	}
	sm.now = s.Time + 1
	if sm.batch && sm.useHeap && len(sm.heap) > 0 {
		sm.now = max(sm.now, sm.evTime[sm.heap[0]])
	}
	if sm.useHeap {
		for len(sm.heap) > 0 && sm.evTime[sm.heap[0]] <= sm.now {
			sm.deliver(sm.popEvent())
		}
	} else {
		// Every message in the queue was sent at the last time unit with delay 1, so
		// all are due now, in send order (delivering sends nothing).
		for _, v := range sm.heap {
			sm.deliver(v)
		}
		sm.heap = sm.heap[:0]
	}
	sm.runReady()
	s.Time = sm.now
	return sm.check()
}

// check returns the run's error, and detects a deadlock: nothing in flight, nobody
// ready, and some node not Finished.
func (sm *ptSim) check() error {
	if sm.err == nil && len(sm.heap) == 0 && sm.rqLen == 0 && sm.finished < sm.n {
		sm.err = fmt.Errorf("%w at time %d: %d of %d nodes finished, none can move", ErrDeadlock, sm.now, sm.finished, sm.n)
	}
	return sm.err
}

func (sm *ptSim) enqueue(v int32) {
	if sm.queued[v] {
		return
	}
	sm.queued[v] = true
	sm.wait[v] = ptReady
	i := sm.rqHead + sm.rqLen
	if i >= sm.n {
		i -= sm.n
	}
	sm.runq[i] = v
	sm.rqLen++
}

func (sm *ptSim) runReady() {
	for sm.rqLen > 0 && sm.err == nil {
		v := sm.runq[sm.rqHead]
		if sm.rqHead++; sm.rqHead == sm.n {
			sm.rqHead = 0
		}
		sm.rqLen--
		sm.queued[v] = false
		sm.run(int(v))
	}
}

// run resumes node v until it waits, carrying out its actions.
func (sm *ptSim) run(v int) {
	nd := &sm.nodes[v]
	f0 := sm.ports.off[v] - 1 // f = f0 + channel
	ok := sm.res[v]
	for {
		a := nd.resume(ok)
		ok = false
		switch a.op {
		case ptOpReserve:
			if l := sm.ports.lock[f0+int(a.port)]; sm.holder[l] < 0 {
				sm.holder[l] = int32(v)
				ok = true
			}
		case ptOpRelease:
			f := f0 + int(a.port)
			l := sm.ports.lock[f]
			sm.holder[l] = -1
			if w := sm.ports.nbr[f]; sm.wait[w] == ptOnLock && sm.warg[w] == l {
				sm.res[w] = false
				sm.enqueue(w)
			}
		case ptOpSend:
			f := f0 + int(a.port)
			if k := a.msg.tokens(); k > 1 {
				sm.sendRun(v, f, a.msg, k)
				return
			}
			sm.stats.messages[nd.phase-1]++
			sm.st.Messages++
			d := int64(1)
			if !sm.unit {
				d = sm.delays.Delay(sm.now, v, int(sm.ports.nbr[f]), sm.seq)
			}
			sm.out[v], sm.outF[v] = a.msg, int32(f)
			if d > MaxDelay {
				sm.err = badParam("delay policy %v gave message %d a delay of %d > MaxDelay = %d", sm.delays, sm.seq, d, MaxDelay)
				return
			}
			sm.schedule(int32(v), sm.now+max(d, 1))
			sm.wait[v] = ptSending
			return
		case ptOpWaitAny:
			sm.wait[v] = ptOnAny
			return
		case ptOpWaitPort:
			sm.wait[v], sm.warg[v] = ptOnPort, a.port
			return
		case ptOpWaitFree:
			l := sm.ports.lock[f0+int(a.port)]
			if sm.holder[l] >= 0 {
				sm.wait[v], sm.warg[v] = ptOnLock, l
				return
			}
		case ptOpPhase:
			sm.stats.phaseEnded(nd, v, a.port, sm.now, &sm.ports)
		case ptOpDone:
			sm.wait[v] = ptFinished
			sm.finished++
			sm.stats.finished++
			return
		default:
			sm.err = ptNodeError(v, nd, a.port)
			return
		}
	}
}

// sendRun puts node v's message m carrying a run of k > 1 tokens (batched mode) in
// flight on flat channel f as one event. For the delay policy and the counts its tokens
// are k messages, numbered seq, seq+1, ..., sent back to back as the single-port model
// sends them one at a time (each when the previous one arrives); the event arrives when
// the last would, and is ordered among simultaneous arrivals by the last one's number.
func (sm *ptSim) sendRun(v, f int, m ptMsg, k int64) {
	nd := &sm.nodes[v]
	sm.stats.messages[nd.phase-1] += k
	sm.st.Messages += k
	sm.multi++
	t := sm.now + k
	if !sm.unit {
		w := int(sm.ports.nbr[f])
		t = sm.now
		for i := int64(0); i < k; i++ {
			d := sm.delays.Delay(t, v, w, sm.seq+i)
			if d > MaxDelay {
				sm.err = badParam("delay policy %v gave message %d a delay of %d > MaxDelay = %d", sm.delays, sm.seq+i, d, MaxDelay)
				return
			}
			t += max(d, 1)
		}
	}
	sm.out[v], sm.outF[v] = m, int32(f)
	sm.seq += k - 1
	sm.useHeap = true
	sm.pushEvent(int32(v), t)
	sm.wait[v] = ptSending
}

// deliver completes the send of node v: the message joins the receiver's queue, the
// receiver wakes if it waits for it, and v resumes.
func (sm *ptSim) deliver(v int32) {
	f := sm.outF[v]
	m := sm.out[v]
	w := sm.ports.nbr[f]
	c := sm.ports.back[f]
	k := m.tokens()
	var ok bool
	if k > 1 {
		ok = sm.nodes[w].in.deliverRun(c, ptRun{kind: m.kind, count: k})
	} else {
		ok = sm.nodes[w].in.deliver(c, m)
	}
	if !ok {
		sm.err = ptNodeError(int(w), &sm.nodes[w], ptFailOverflow)
		return
	}
	if k > 0 {
		sm.st.Loads[v] -= k
		sm.st.Loads[w] += k
		sm.st.Moved += k
		sm.stats.moves[sm.nodes[v].phase-1] += k
		sm.stats.lastMove = sm.now
	}
	if sm.wait[w] == ptOnAny || (sm.wait[w] == ptOnPort && sm.warg[w] == c) {
		sm.res[w] = false
		sm.enqueue(w)
	}
	sm.res[v] = false
	sm.enqueue(v)
}

// schedule puts node v's message in flight until time t (> now): appended to the FIFO
// queue while every delay has been 1, else pushed on the heap. The queue is sorted by
// (time, seq), so it becomes the heap as it stands at the first other delay, and the
// delivery order is the same either way.
func (sm *ptSim) schedule(v int32, t int64) {
	if !sm.useHeap {
		if t == sm.now+1 {
			sm.evTime[v], sm.evSeq[v] = t, sm.seq
			sm.seq++
			sm.heap = append(sm.heap, v)
			return
		}
		sm.useHeap = true
	}
	sm.pushEvent(v, t)
}

func (sm *ptSim) less(a, b int32) bool {
	return sm.evTime[a] < sm.evTime[b] || (sm.evTime[a] == sm.evTime[b] && sm.evSeq[a] < sm.evSeq[b])
}

func (sm *ptSim) pushEvent(v int32, t int64) {
	sm.evTime[v], sm.evSeq[v] = t, sm.seq
	sm.seq++
	h := append(sm.heap, v)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !sm.less(h[i], h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	sm.heap = h
}

func (sm *ptSim) popEvent() int32 {
	h := sm.heap
	v := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		if r := l + 1; r < len(h) && sm.less(h[r], h[l]) {
			l = r
		}
		if !sm.less(h[l], h[i]) {
			break
		}
		h[i], h[l] = h[l], h[i]
		i = l
	}
	sm.heap = h
	return v
}

func (sm *ptSim) result() PerfectTreeReport {
	var r PerfectTreeReport
	if sm.n == 0 {
		return r
	}
	sm.stats.fill(&r)
	r.Time = sm.now
	ptFinish(context.Background(), &r, sm.g, sm.init0, sm.st.Loads)
	return r
}
