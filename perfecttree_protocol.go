package tokendist

// The node program of Margara, Pistocchi and Vassura, "Perfect token distribution on
// trees", section 3, written once as a resumable state machine and driven by both
// runtimes (perfecttree_simulated.go and perfecttree_goroutines.go).
//
// Anonymity is structural: the program never holds a reference to its runtime. It sees
// its degree, its channel numbers 1..deg, its own tokens and the messages queued on its
// channels, and it talks to the world only by returning actions (reserve, release, send,
// wait, ...) that the runtime carries out; the runtime resumes it with the result. The
// memory of the program is the paper's: a constant number of counters plus the arrays
// subTreeT and subTreeN, Θ(deg·(log T + log N)) bits.

// ptKind tags a message.
type ptKind uint8

const (
	ptMsgNone     ptKind = iota
	ptMsgInfo            // phase 1: (T, N) of a subtree or of the whole tree
	ptMsgToken           // one token (phase 2; in the literal program also phase 3)
	ptMsgToken3          // one phase-3 token (corrected program only)
	ptMsgFinished        // phase 3: the sender has finished
)

// ptMsg is what travels on a link. t and n carry phase 1's msg.T and msg.N. A token
// message carries max(n, 1) tokens: n is 0 for the single token of the per-token
// program, and the length of the run of tokens in the batched program (ptNode.batch).
type ptMsg struct {
	kind ptKind
	t, n int64
}

func (m ptMsg) carriesToken() bool { return m.kind == ptMsgToken || m.kind == ptMsgToken3 }

// tokens returns the number of tokens m carries.
func (m ptMsg) tokens() int64 {
	if !m.carriesToken() {
		return 0
	}
	return max(m.n, 1)
}

// ptOp is the kind of action a node program asks its runtime to carry out.
type ptOp uint8

const (
	ptOpReserve  ptOp = iota + 1 // reserve(port); resume with true, or false for busy
	ptOpRelease                  // release(port); resume at once
	ptOpSend                     // send(port, msg) on a reserved port; resume when sent
	ptOpWaitAny                  // resume after the next message arrives on any port
	ptOpWaitPort                 // resume after the next message arrives on port
	ptOpWaitFree                 // resume once port's link is no longer reserved
	ptOpPhase                    // phase `port` has just ended here; resume at once
	ptOpDone                     // the node is Finished
	ptOpFail                     // the program reached a state the paper rules out
)

// ptAction is one request of a node program to its runtime.
type ptAction struct {
	op   ptOp
	port int32 // 1..deg; the phase for ptOpPhase; a failure code for ptOpFail
	msg  ptMsg
}

// Failure codes of ptOpFail.
const (
	ptFailUnexpected int32 = iota + 1 // a message of the wrong kind for the state
	ptFailNoTaker                     // phase 3: no child subtree can take a token
	ptFailState                       // no case of the pseudo-code applies
	ptFailOverflow                    // a link queue broke the FIFO shape of the protocol
)

var ptFailText = [...]string{"", "unexpected message", "no child subtree below Avg+1 (S3.1)", "no case applies", "link queue overflow"}

// Program counters.
const (
	ptPcP1 uint8 = iota
	ptPcP11
	ptPcP12
	ptPcP12Sent
	ptPcP12Rel
	ptPcP12Wait
	ptPcP13
	ptPcP14
	ptPcP15
	ptPcSS
	ptPcSSRes
	ptPcSSSent
	ptPcP2Init
	ptPcP2
	ptPcP2Sent
	ptPcP3Init
	ptPcP3
	ptPcP3Sent
	ptPcP3Fin
	ptPcDone
)

// ptNode is the program state of one node plus its input buffers (in). The buffers are
// the network's, not the program's: the program reads them only through receive and
// peek, the paper's primitives.
type ptNode struct {
	// The paper's variables.
	deg      int32
	own      int64   // the tokens at v when phase 2 starts (= at the start)
	tv, nv   int64   // Tv, Nv
	r, s     int32   // R, S (phase 1)
	parent   int32   // channel to the parent, 0 for a root
	p        int32   // phase 3's p: the parent in the tree of phases 1 and 2
	avg      int64   // Avg = ⌊T/N⌋
	subT     []int64 // subTreeT[1..deg] at index 0..deg-1
	subN     []int64 // subTreeN
	nBig     int32   // |bigger|: children i with subTreeAvg(i) > Avg (phase 2)
	nSmall   int32   // |smaller|: children with subTreeAvg(i) < Avg
	cursor   int32   // scan position for an element of smaller / a phase-3 taker
	i        int32   // loop counter of the safeSend loops
	early    int64   // corrected program: phase-3 tokens that arrived during phase 2
	earlyFin bool    // corrected program: Finished arrived during phase 2
	literal  bool    // run the pseudo-code as printed (see notes: Errata found)
	batch    bool    // send each run of tokens down one link as one message (PerfectTreeOptions.Batch)

	// Control of the state machine.
	pc      uint8
	phase   uint8 // 1, 2, 3; 4 when Finished
	ret     uint8 // where safeSend returns
	outPort int32
	out     ptMsg

	in ptInbox
}

// init sets up the program for a node of degree deg holding tokens, with the arrays
// subT and subN (len deg) and the queues q (len deg) supplied by the runtime, so that
// a runtime can carve them from flat arrays. Phase 1's INITIALIZATION.
func (nd *ptNode) init(tokens int64, subT, subN []int64, q []ptQueue, ring []int32, literal bool) {
	for i := range subT {
		subT[i], subN[i] = 0, 0 // NULL: subN is ≥ 1 once set
	}
	for i := range q {
		q[i] = ptQueue{}
	}
	*nd = ptNode{
		deg: int32(len(subT)), own: tokens, tv: tokens, nv: 1, subT: subT, subN: subN,
		literal: literal, phase: 1, pc: ptPcP1,
		in: ptInbox{q: q, ring: ring},
	}
}

// safeSend runs the paper's safeSend(port, m) and continues at ret.
func (nd *ptNode) safeSend(port int32, m ptMsg, ret uint8) {
	nd.outPort, nd.out, nd.ret, nd.pc = port, m, ret, ptPcSS
}

func ptFail(code int32) ptAction { return ptAction{op: ptOpFail, port: code} }

// resume runs the program until it needs its runtime. ok is the result of the last
// ptOpReserve (ignored otherwise).
func (nd *ptNode) resume(ok bool) ptAction {
	for {
		switch nd.pc {
		case ptPcP1: // while (S < deg or R < deg): case (S, R) of
			switch {
			case nd.s >= nd.deg && nd.r >= nd.deg:
				nd.pc = ptPcP2Init
				return ptAction{op: ptOpPhase, port: 1}
			case nd.s == 0 && nd.r < nd.deg-1:
				nd.pc = ptPcP11
			case nd.s == 0 && nd.r == nd.deg-1:
				nd.parent = nd.missing()
				nd.pc = ptPcP12
				return ptAction{op: ptOpReserve, port: nd.parent}
			case nd.s == 1 && nd.r == nd.deg-1:
				nd.pc = ptPcP13
			case nd.s == 0 && nd.r == nd.deg:
				nd.i, nd.pc = 0, ptPcP14
			case nd.s == 1 && nd.r == nd.deg:
				nd.i, nd.pc = 0, ptPcP15
			default:
				return ptFail(ptFailState)
			}
		case ptPcP11: // S1.1: receive local info from all neighbours but one
			for nd.r < nd.deg-1 {
				c := nd.in.pending()
				if c == 0 {
					return ptAction{op: ptOpWaitAny}
				}
				m := nd.in.receive(c)
				if m.kind != ptMsgInfo {
					return ptFail(ptFailUnexpected)
				}
				nd.absorb(c, m)
			}
			nd.pc = ptPcP1
		case ptPcP12: // S1.2, after reserve(parent)
			if !ok {
				nd.pc = ptPcP12Wait // the other end is sending: wait for its message
				continue
			}
			if nd.in.empty(nd.parent) {
				nd.pc = ptPcP12Sent
				return ptAction{op: ptOpSend, port: nd.parent, msg: ptMsg{kind: ptMsgInfo, t: nd.tv, n: nd.nv}}
			}
			m := nd.in.receive(nd.parent)
			if m.kind != ptMsgInfo {
				return ptFail(ptFailUnexpected)
			}
			c := nd.parent
			nd.absorb(c, m)
			nd.parent = 0 // v is the root
			nd.pc = ptPcP1
			return ptAction{op: ptOpRelease, port: c}
		case ptPcP12Sent:
			nd.pc = ptPcP12Rel
			return ptAction{op: ptOpRelease, port: nd.parent}
		case ptPcP12Rel:
			nd.s++
			nd.pc = ptPcP1
		case ptPcP12Wait:
			if nd.in.empty(nd.parent) {
				return ptAction{op: ptOpWaitPort, port: nd.parent}
			}
			m := nd.in.receive(nd.parent)
			if m.kind != ptMsgInfo {
				return ptFail(ptFailUnexpected)
			}
			nd.absorb(nd.parent, m)
			nd.parent = 0
			nd.pc = ptPcP1
		case ptPcP13: // S1.3: wait for the global message
			if nd.in.empty(nd.parent) {
				return ptAction{op: ptOpWaitPort, port: nd.parent}
			}
			m := nd.in.receive(nd.parent)
			if m.kind != ptMsgInfo {
				return ptFail(ptFailUnexpected)
			}
			nd.subT[nd.parent-1], nd.subN[nd.parent-1] = m.t-nd.tv, m.n-nd.nv
			nd.tv, nd.nv = m.t, m.n
			nd.r++
			nd.pc = ptPcP1
		case ptPcP14, ptPcP15: // S1.4 (root) and S1.5: send global values to the children
			if nd.i == nd.deg {
				nd.s = nd.deg
				nd.pc = ptPcP1
				continue
			}
			nd.i++
			if nd.pc == ptPcP15 && nd.i == nd.parent {
				continue
			}
			nd.safeSend(nd.i, ptMsg{kind: ptMsgInfo, t: nd.tv, n: nd.nv}, nd.pc)

		case ptPcSS: // safeSend: wait until the channel is not busy, reserve, send, release
			nd.pc = ptPcSSRes
			return ptAction{op: ptOpReserve, port: nd.outPort}
		case ptPcSSRes:
			if !ok {
				nd.pc = ptPcSS
				return ptAction{op: ptOpWaitFree, port: nd.outPort}
			}
			nd.pc = ptPcSSSent
			return ptAction{op: ptOpSend, port: nd.outPort, msg: nd.out}
		case ptPcSSSent:
			nd.pc = nd.ret
			return ptAction{op: ptOpRelease, port: nd.outPort}

		case ptPcP2Init: // PHASE 2 INITIALIZATION
			nd.phase = 2
			nd.avg = nd.tv / nd.nv
			nd.tv = nd.own
			nd.r = 0
			nd.nBig, nd.nSmall, nd.cursor = 0, 0, 1
			for c := int32(1); c <= nd.deg; c++ {
				if c != nd.parent {
					nd.count(c, 1)
				}
			}
			nd.pc = ptPcP2
		case ptPcP2:
			if a, ok := nd.phase2(); ok {
				return a
			}
		case ptPcP2Sent: // sendToken's update of the local variables
			k := nd.out.tokens()
			nd.tv -= k
			nd.addSub(nd.outPort, k)
			nd.pc = ptPcP2

		case ptPcP3Init: // PHASE 3 INITIALIZATION
			nd.phase = 3
			nd.p = nd.parent
			nd.cursor = 1
			if !nd.literal {
				// The erratum fix: phase-3 messages set aside during phase 2.
				nd.tv += nd.early
				nd.early = 0
				if nd.earlyFin {
					nd.parent = 0
				}
			}
			nd.pc = ptPcP3
		case ptPcP3:
			if a, ok := nd.phase3(); ok {
				return a
			}
		case ptPcP3Sent:
			k := nd.out.tokens()
			nd.tv -= k
			nd.subT[nd.outPort-1] += k
			nd.pc = ptPcP3
		case ptPcP3Fin: // send Finished to every child
			if nd.i == nd.deg {
				nd.phase = 4
				nd.pc = ptPcDone
				return ptAction{op: ptOpPhase, port: 3}
			}
			nd.i++
			if nd.i != nd.p {
				nd.safeSend(nd.i, ptMsg{kind: ptMsgFinished}, ptPcP3Fin)
			}
		case ptPcDone:
			return ptAction{op: ptOpDone}
		default:
			return ptFail(ptFailState)
		}
	}
}

// missing returns the channel j with subTreeT[j] = NULL (S1.2).
func (nd *ptNode) missing() int32 {
	for c := int32(1); c <= nd.deg; c++ {
		if nd.subN[c-1] == 0 {
			return c
		}
	}
	return 0
}

// absorb records a neighbour's subtree information (S1.1, S1.2).
func (nd *ptNode) absorb(c int32, m ptMsg) {
	nd.tv += m.t
	nd.nv += m.n
	nd.subT[c-1], nd.subN[c-1] = m.t, m.n
	nd.r++
}

// count adds sign to the sizes of bigger and smaller for child c's current entry.
func (nd *ptNode) count(c int32, sign int32) {
	switch d := nd.subT[c-1] - nd.avg*nd.subN[c-1]; {
	case d > 0:
		nd.nBig += sign
	case d < 0:
		nd.nSmall += sign
	}
}

// addSub changes subTreeT[c] by delta, keeping |bigger| and |smaller| current in phase 2.
func (nd *ptNode) addSub(c int32, delta int64) {
	if c == nd.parent || nd.phase != 2 {
		nd.subT[c-1] += delta
		return
	}
	nd.count(c, -1)
	nd.subT[c-1] += delta
	nd.count(c, 1)
}

// phase2 runs one pass of phase 2's loop. It returns an action for the runtime, or
// false to continue.
func (nd *ptNode) phase2() (ptAction, bool) {
	balanced := nd.nBig == 0 && nd.nSmall == 0 // subTreeBalanced
	switch {
	case balanced && (nd.tv == nd.avg || nd.parent == 0):
		nd.pc = ptPcP3Init
		return ptAction{op: ptOpPhase, port: 2}, true
	case !balanced && nd.tv <= nd.avg: // S2.1
		got, bad := nd.receiveTokensFromAll()
		if bad {
			return ptFail(ptFailUnexpected), true
		}
		if got == 0 {
			return ptAction{op: ptOpWaitAny}, true
		}
	case balanced && nd.tv < nd.avg && nd.parent > 0: // S2.2
		got, bad := nd.receiveToken(nd.parent)
		if bad {
			return ptFail(ptFailUnexpected), true
		}
		if got == 0 {
			return ptAction{op: ptOpWaitPort, port: nd.parent}, true
		}
	case !balanced && nd.tv > nd.avg: // S2.3
		got, bad := nd.receiveTokensFromAll()
		if bad {
			return ptFail(ptFailUnexpected), true
		}
		if j := nd.smaller(); j != 0 {
			m := ptMsg{kind: ptMsgToken}
			if nd.batch { // as many tokens as the per-token loop sends to j in a row
				m.n = min(nd.tv-nd.avg, nd.avg*nd.subN[j-1]-nd.subT[j-1])
			}
			nd.safeSend(j, m, ptPcP2Sent)
			return ptAction{}, false
		}
		if got == 0 {
			return ptAction{op: ptOpWaitAny}, true
		}
	case balanced && nd.tv > nd.avg && nd.parent > 0: // S2.4
		m := ptMsg{kind: ptMsgToken}
		if nd.batch { // the whole surplus: nothing more arrives from a balanced subtree
			m.n = nd.tv - nd.avg
		}
		nd.safeSend(nd.parent, m, ptPcP2Sent)
	default:
		return ptFail(ptFailState), true
	}
	return ptAction{}, false
}

// smaller returns an element of smaller (the first child below Avg from the cursor on,
// wrapping once), or 0 if it is empty.
func (nd *ptNode) smaller() int32 {
	if nd.nSmall == 0 {
		return 0
	}
	for k := int32(0); k < nd.deg; k++ {
		c := nd.cursor
		if c != nd.parent && nd.subT[c-1] < nd.avg*nd.subN[c-1] {
			return c
		}
		if nd.cursor++; nd.cursor > nd.deg {
			nd.cursor = 1
		}
	}
	return 0
}

// receiveTokensFromAll receives the tokens queued on every channel (phase 2). It
// returns the messages taken, and bad if a message of the wrong kind was queued.
func (nd *ptNode) receiveTokensFromAll() (got int64, bad bool) {
	for k := nd.in.rlen; k > 0; k-- {
		c := nd.in.popReady()
		g, b := nd.receiveToken(c)
		got += g
		if b {
			return got, true
		}
		if !nd.in.empty(c) {
			nd.in.pushReady(c)
		}
	}
	return got, false
}

// receiveToken receives the tokens queued on channel c (phase 2), a run of equal
// messages at a time (receiving them one by one would change nothing between them). The
// corrected program sets phase-3 messages aside (the erratum fix); the literal one takes
// every token as a phase-2 token and leaves a Finished message queued, as it is not a
// token. It returns the messages taken.
func (nd *ptNode) receiveToken(c int32) (got int64, bad bool) {
	for !nd.in.empty(c) {
		switch nd.in.head(c) {
		case ptMsgToken:
			_, k := nd.in.receiveRun(c)
			nd.tv += k
			nd.addSub(c, -k)
			got += k
		case ptMsgToken3:
			if nd.literal || c != nd.parent {
				return got, true
			}
			_, k := nd.in.receiveRun(c)
			nd.early += k
			nd.subT[c-1] -= k
			got += k
		case ptMsgFinished:
			if nd.literal {
				return got, false
			}
			if c != nd.parent {
				return got, true
			}
			nd.in.receive(c)
			nd.earlyFin = true
			got++
		default:
			return got, true
		}
	}
	return got, false
}

// phase3 runs one pass of phase 3's loop.
func (nd *ptNode) phase3() (ptAction, bool) {
	switch {
	case nd.tv <= nd.avg+1 && nd.parent == 0:
		nd.i, nd.pc = 0, ptPcP3Fin
	case nd.tv > nd.avg+1 && nd.parent == 0: // S3.1
		i := nd.taker()
		if i == 0 {
			return ptFail(ptFailNoTaker), true
		}
		m := ptMsg{kind: ptMsgToken3}
		if nd.literal {
			m.kind = ptMsgToken
		}
		if nd.batch { // up to what i's subtree can take below Avg+1 on average
			m.n = min(nd.tv-nd.avg-1, nd.subN[i-1]-(nd.subT[i-1]-nd.avg*nd.subN[i-1]))
		}
		nd.safeSend(i, m, ptPcP3Sent)
	case nd.parent > 0: // S3.2
		if nd.in.empty(nd.parent) {
			return ptAction{op: ptOpWaitPort, port: nd.parent}, true
		}
		// A run of tokens is received at once: nothing happens between its tokens.
		switch kind, k := nd.in.receiveRun(nd.parent); kind {
		case ptMsgFinished:
			nd.parent = 0 // the parent finished: become a root
		case ptMsgToken, ptMsgToken3:
			nd.tv += k
			nd.subT[nd.parent-1] -= k
		default:
			return ptFail(ptFailUnexpected), true
		}
	default:
		return ptFail(ptFailState), true
	}
	return ptAction{}, false
}

// taker returns a channel i ≠ p with subTreeAvg(i) < Avg+1, or 0. Children only fill up
// in phase 3, so the cursor never needs to move back.
func (nd *ptNode) taker() int32 {
	for ; nd.cursor <= nd.deg; nd.cursor++ {
		c := nd.cursor
		// subTreeT[c]/subTreeN[c] < Avg+1, without overflow.
		if c != nd.p && nd.subT[c-1]-nd.avg*nd.subN[c-1] < nd.subN[c-1] {
			return c
		}
	}
	return 0
}

// ptRun is a run of equal messages in a link queue. Every link of the protocol carries
// at most four runs in FIFO order (info, phase-2 tokens, phase-3 tokens, Finished), so a
// queue is a fixed ring of runs: O(1) memory and no allocation however many tokens wait.
type ptRun struct {
	kind  ptKind
	count int64
	t, n  int64
}

// ptQueue is the FIFO buffer of messages that arrived on one channel.
type ptQueue struct {
	run   [4]ptRun
	first uint8
	runs  uint8
	ready bool // in the inbox's ready ring
}

func (q *ptQueue) push(m ptMsg) bool {
	if q.runs > 0 {
		if last := &q.run[(q.first+q.runs-1)%4]; last.kind == m.kind && m.kind != ptMsgInfo {
			last.count++
			return true
		}
	}
	if q.runs == 4 {
		return false
	}
	q.run[(q.first+q.runs)%4] = ptRun{kind: m.kind, count: 1, t: m.t, n: m.n}
	q.runs++
	return true
}

// pushRun appends a run of equal messages, merging it with the last run as push does.
func (q *ptQueue) pushRun(r ptRun) bool {
	if q.runs > 0 {
		if last := &q.run[(q.first+q.runs-1)%4]; last.kind == r.kind && r.kind != ptMsgInfo {
			last.count += r.count
			return true
		}
	}
	if q.runs == 4 {
		return false
	}
	q.run[(q.first+q.runs)%4] = r
	q.runs++
	return true
}

// popRun removes the head run and returns its kind and length.
func (q *ptQueue) popRun() (ptKind, int64) {
	r := &q.run[q.first]
	q.first = (q.first + 1) % 4
	q.runs--
	return r.kind, r.count
}

func (q *ptQueue) pop() ptMsg {
	r := &q.run[q.first]
	m := ptMsg{kind: r.kind, t: r.t, n: r.n}
	if r.count--; r.count == 0 {
		q.first = (q.first + 1) % 4
		q.runs--
	}
	return m
}

// tokens returns the number of tokens queued.
func (q *ptQueue) tokens() int64 {
	var t int64
	for k := uint8(0); k < q.runs; k++ {
		if r := q.run[(q.first+k)%4]; r.kind == ptMsgToken || r.kind == ptMsgToken3 {
			t += r.count
		}
	}
	return t
}

// ptInbox holds a node's channel queues and a ring of the channels that have messages,
// which is how waitany and receiveTokensFromAll interrogate every channel in O(1) per
// message instead of O(deg).
type ptInbox struct {
	q           []ptQueue
	ring        []int32 // ready channels, circular, capacity deg
	rhead, rlen int32
}

func (b *ptInbox) empty(c int32) bool  { return b.q[c-1].runs == 0 }
func (b *ptInbox) head(c int32) ptKind { q := &b.q[c-1]; return q.run[q.first].kind }

// receive takes the head of channel c's queue, which must not be empty.
func (b *ptInbox) receive(c int32) ptMsg { return b.q[c-1].pop() }

// receiveRun takes the head run of channel c's queue, which must not be empty, and
// returns its kind and length: the messages received.
func (b *ptInbox) receiveRun(c int32) (ptKind, int64) { return b.q[c-1].popRun() }

// deliver appends m to channel c's queue; false means the queue broke the protocol's
// shape (see ptRun).
func (b *ptInbox) deliver(c int32, m ptMsg) bool {
	q := &b.q[c-1]
	if !q.push(m) {
		return false
	}
	if !q.ready {
		b.pushReady(c)
	}
	return true
}

// deliverRun appends a run of equal messages to channel c's queue, as deliver does for
// one.
func (b *ptInbox) deliverRun(c int32, r ptRun) bool {
	q := &b.q[c-1]
	if !q.pushRun(r) {
		return false
	}
	if !q.ready {
		b.pushReady(c)
	}
	return true
}

func (b *ptInbox) pushReady(c int32) {
	b.q[c-1].ready = true
	b.ring[(b.rhead+b.rlen)%int32(len(b.ring))] = c
	b.rlen++
}

func (b *ptInbox) popReady() int32 {
	c := b.ring[b.rhead]
	b.rhead = (b.rhead + 1) % int32(len(b.ring))
	b.rlen--
	b.q[c-1].ready = false
	return c
}

// pending returns a channel with a queued message, or 0 (waitany's interrogation).
func (b *ptInbox) pending() int32 {
	for b.rlen > 0 {
		c := b.ring[b.rhead]
		if !b.empty(c) {
			return c
		}
		b.popReady()
	}
	return 0
}

// tokens returns the number of tokens queued on all channels.
func (b *ptInbox) tokens() int64 {
	var t int64
	for i := range b.q {
		t += b.q[i].tokens()
	}
	return t
}
