package tokendist

import (
	"fmt"
	"math"
	"math/bits"
	"unsafe"

	"github.com/tokendist/tokendist/internal/par"
	"github.com/tokendist/tokendist/internal/rng"
)

// RandomizedDiffusion is the vertex-based randomized diffusion of Berenbrink et al.,
// section 2.1: in every round, node i with load X sends ⌊X/(d+1)⌋ tokens to each
// neighbour and keeps as many, and hands its X mod (d+1) excess tokens to distinct
// slots drawn uniformly without replacement among its d+1 slots (its neighbours and
// itself). On a non-regular network d is the maximum degree and node i owns its
// d+1−deg(i) surplus slots (the lazy walk of TransitionMatrix), so E[X(t) | X(t−1)] =
// X(t−1)·P as in the paper. Loads never go negative and tokens are conserved.
//
// A round is synchronous (every node decides from the loads at the start of the round)
// and costs O(n + m) time whatever the degrees: node v does O(deg v) work, not O(Δ).
// Only the slots among its links move tokens, so a node whose own slots outnumber its
// links (2·deg(v) + 1 < d+1, on a network with d+1 > 12) draws which of its links get
// an excess token alone, with exactly the law of a uniform subset of all d+1 slots cut
// to the links (selection sampling; the proof is in diffusion_digits.go); the other
// nodes draw a subset of all d+1 slots. Step adds to State.Moved the tokens sent along links, both
// ways (⌊X/(d+1)⌋ per link plus the excess tokens that go to neighbours), and to
// State.Messages the directed links that carried at least one token. Step uses up to
// State.Workers goroutines on large networks; results do not depend on the number of
// workers. Step does not allocate, except once if the loads spread over more than
// 2^(64−d)·(d+1) tokens (d+1 ≤ 64). Run's default budget is τ(G, K) rounds (StepBudget).
//
// Theorem 1.1 bounds its discrepancy after τ(G, K) rounds (BalancingTime) by
// O(Υ_2(G)·√(d log n)) (LocalDivergence) and O(d·log log n/(1 − λ_max)); Theorem 1.2
// gives O(log n) on hypercubes, O(√log n) on constant-dimensional tori and
// O(d log log n) on expanders. See docs/implementation.md for how a round is laid out.
//
// Dynamic runs: it accepts a Workload (a round diffuses the loads the workload left;
// when they no longer fit the cached load range, the round rescans it, O(n)) and Churn:
// the share a node draws for a neighbour whose link is down stays at the node (as if
// the slot were one of its own), so the slots and their probabilities are unchanged and
// only the live links carry tokens. Under churn a round makes a third, sequential pass
// over the links, O(n + m), that returns the shares of the links that are down and
// removes them from Moved and Messages.
//
// Node programs: NodePrograms. With RunOptions.NodeStreams node v draws its slots of
// round t from node.Random(seed, t, v, ·), as its program does, into unpacked records
// (16 bytes per node for Δ < 64, made once by Init; one share per link end beyond),
// slower than the default per-chunk
// streams (no packed fast path; docs/performance.md has the factor).
type RandomizedDiffusion struct {
	ln    *lazyNet
	d     uint   // maximum degree
	slots uint64 // d+1
	div   divider
	table subsetTable

	// Records of the current round in one of six formats. Packed (d+1 ≤ 64):
	// (q − qmin) << d | nb, where nb has bit p set when the node's p-th neighbour gets an
	// excess token. Wide (d+1 ≤ 64): wide[2i] = q, wide[2i+1] the slot mask (bits ≥
	// deg(i), the node's own slots, are clear when it drew its links alone). Ends (d+1 >
	// 64): ends, below.
	// The four packed views (8 to 64 bits) share one buffer of 8 bytes per node: a round uses one.
	format rdFormat
	qmin   uint64
	p8     []uint8
	p16    []uint16
	p32    []uint32
	p64    []uint64
	wide   []uint64
	stride int
	// rdEnds (d+1 > 64): ends[e] is what the node sends over its link end e this round,
	// q plus its excess bit; rev[e] is the reverse of end e.
	// The narrower views e8, e16, e32 alias ends (one format is live per round) and
	// hold q − qmin plus the excess bit (rdEnds8, rdEnds16, rdEnds32).
	ends []uint64
	e8   []uint8
	e16  []uint16
	e32  []uint32
	rev  []int32
	// nodeProd[k] is the product of node k's digit ranges D, D−1, …, D−deg+1 when it
	// draws its links alone and they fit one word (≤ digitLimit), else 0.
	nodeProd []uint64
	pre      []uint64 // ends formats: scratch for the slot masks of the spread, one word per link end
	// sel lists selection sampling's batches of digits from slot 0 for a node of degree
	// ≥ d+1 (selectBatch), and selFac[p] the product of the ranges of its batch before
	// slot p: the digit of slot p is the high word of (x·selFac[p] mod 2^64)·(D − p).
	sel    []selStep
	selFac []uint64
	// link[e] for the end e = (k → j) is j<<6 | (the position of k in j's list), when
	// d+1 ≤ 64 and n ≤ 2^26: the second pass then reads one array per link end.
	link        []uint32
	pos32       []int32    // the positions alone, otherwise
	r8          *rdTables8 // on a regular network with d < 8 (8-bit records), else nil
	regular     bool       // the ends of node k are d·k..d·k+d−1
	known       bool       // xmin, xmax hold the current loads' extremes
	xmin, xmax  int64
	streams     []digits
	moved, msgs []int64
	lo, hi      []int64
	bad         []bool
	grp         par.Group
	workers     int
	s           *State
	spreadFn    func(lo, hi int)
	gatherFn    func(lo, hi int)
	rangeFn     func(lo, hi int)
	blocked     *blockedGather // the blocked gather's slots, on large networks (diffusion_blocked.go)
	scatterFn   func(lo, hi int)
	sumFn       func(lo, hi int)
	nodeFn      func(lo, hi int) // spreadNodeChunks, for State.NodeStreams
	ready       initGuard
}

var (
	_ Balancer     = (*RandomizedDiffusion)(nil)
	_ Initializer  = (*RandomizedDiffusion)(nil)
	_ StepBudgeter = (*RandomizedDiffusion)(nil)
	_ fmt.Stringer = (*RandomizedDiffusion)(nil)
)

// rdTables8 holds the small tables of the 8-bit passes on a regular network with d < 8
// (so d+1 ≤ 8 slots and 2^(d+1) ≤ 256 subsets). They replace shifts by d and by link
// positions with loads from L1, which leaves the loops few enough live values to stay
// in registers; the sums are the same as those of spreadPacked and gatherPacked.
type rdTables8 struct {
	binom [9]uint64 // C(d+1, r), r = 0..d+1
	moff  [9]uint16 // where the r-subsets start in sub
	// sub[moff[r]+i] is subset number i of the subset table, cut to the d neighbour
	// bits, with its number of set bits (the excess tokens sent to neighbours) << 8.
	sub [256]uint16
	// keep[w] = d·(w>>d) + the excess tokens record w sends to neighbours.
	keep [256]uint16
	// share[p<<8|w] = w>>d + bit p of w: what record w sends to the neighbour at
	// position p.
	share [8 << 8]uint8
}

func newRDTables8(d uint, t *subsetTable) *rdTables8 {
	r8 := new(rdTables8)
	for r := range t.binom {
		r8.binom[r], r8.moff[r] = t.binom[r], uint16(t.off[r])
	}
	for i, m := range t.masks {
		nb := uint(m) & (1<<d - 1)
		r8.sub[i] = uint16(nb | uint(bits.OnesCount(nb))<<8)
	}
	for w := uint(0); w < 256; w++ {
		r8.keep[w] = uint16(d*(w>>d) + uint(bits.OnesCount(w&(1<<d-1))))
		for p := uint(0); p < 8; p++ {
			r8.share[p<<8|w] = uint8(w>>d + w>>p&1)
		}
	}
	return r8
}

// rdFormat is the record format of a round.
type rdFormat uint8

const (
	rdWide rdFormat = iota
	rd8
	rd16
	rd32
	rd64
	rdEnds   // d+1 > 64: one share per link end (ends)
	rdEnds8  // d+1 > 64, shares q − qmin + bit in 8 bits (e8)
	rdEnds16 // the same in 16 bits (e16)
	rdEnds32 // the same in 32 bits (e32)
)

// packedWord is the word of a packed record.
type packedWord interface {
	~uint8 | ~uint16 | ~uint32 | ~uint64
}

// NewRandomizedDiffusion returns the randomized diffusion balancer for net. It rejects
// a nil, empty or disconnected network and isolated nodes (ErrNotConnected). It costs
// O(n + m) time and memory: 16 bytes per node of round records for Δ < 64, else 20
// bytes per link end and 8 per node (refused beyond the memory budget); the balancer
// can be reused for many runs on net. Run with MaxSteps 0 and UseTarget false stops it after τ(G, K) rounds with
// StatusMaxSteps (StepBudget), or fails before the first step if τ exceeds
// DefaultMaxSteps.
func NewRandomizedDiffusion(net Network) (*RandomizedDiffusion, error) {
	ln, err := newLazyNet(net)
	if err != nil {
		return nil, err
	}
	D := ln.d + 1
	b := &RandomizedDiffusion{ln: ln, d: uint(ln.d), slots: uint64(D), div: newDivider(uint64(D)), stride: 2}
	// d+1 ≤ 64: the wide record format, used when the packed ones do not fit, takes 2
	// words per node. d+1 > 64: per link end its share, a prefix sum of the gather and
	// its reverse, 20 bytes, and 8 bytes per node.
	what := fmt.Sprintf("RandomizedDiffusion records of %d nodes of maximum degree %d", ln.g.Order(), ln.d)
	if D > 64 {
		if err := checkAlloc(what, int64(len(ln.g.adj))*20+int64(ln.g.Order())*8, 1); err != nil {
			return nil, err
		}
		b.rev = ln.reverseEnds()
		b.nodeProd = make([]uint64, ln.g.Order())
		b.sel, b.selFac = selectTable(uint64(D))
		for k := range b.nodeProd {
			deg := uint64(ln.g.Degree(k))
			if prod, e := selectBatch(uint64(D), 0, deg); !rdDrawsAll(uint64(D), deg) && e == deg {
				b.nodeProd[k] = prod
			}
		}
	} else {
		if err := checkAlloc(what, 2*int64(ln.g.Order()), 8); err != nil {
			return nil, err
		}
		pos := ln.backPositions()
		if ln.g.Order() <= 1<<26 {
			b.link = make([]uint32, len(pos))
			for e, p := range pos {
				b.link[e] = uint32(ln.g.adj[e])<<6 | uint32(p)
			}
		} else {
			b.pos32 = pos
		}
	}
	b.regular = ln.g.IsRegular()
	if D <= 64 && ln.g.Order() >= blockedMinNodes && len(ln.g.adj) <= math.MaxUint32 { // slots are uint32
		b.blocked = newBlockedGather(ln.g)
	}
	if D <= subsetTableMax {
		b.table = newSubsetTable(D)
	}
	if b.regular && (b.link != nil || b.blocked != nil) && b.d < 8 { // the 8-bit gather needs link; the spread and the blocked sum do not
		b.r8 = newRDTables8(b.d, &b.table)
	}
	b.spreadFn, b.gatherFn, b.rangeFn = b.spreadChunks, b.gatherChunks, b.rangeChunks
	b.scatterFn, b.sumFn = b.scatterChunks, b.sumBlocks
	b.nodeFn = b.spreadNodeChunks
	return b, nil
}

// String names the scheme.
func (b *RandomizedDiffusion) String() string { return "RandomizedDiffusion" }

// StepBudget returns Run's default step budget (StepBudgeter): τ(G, K) rounds
// (BalancingTime), the horizon after which Theorem 1.1 of Berenbrink et al. bounds the discrepancy,
// with K the discrepancy of s.Loads (at least 1) and λ_max replaced by the certified
// upper bound Spectrum.Upper of LambdaMax (IntervalTol 0.01, Delta 1e-6), computed once
// per balancer: with probability ≥ 1 − 10^-6 over Lanczos's random start the budget is
// not short, and it is at most about 1 % longer than τ from the exact λ_max. It fails
// with ErrBadParameter, naming τ, when τ exceeds DefaultMaxSteps (decided as soon as the
// certified lower bound on λ_max shows it), and with ErrNotConverged when 100000
// Lanczos iterations do not certify λ_max: set RunOptions.MaxSteps or UseTarget there.
// It costs O((n + m)·i) the first time, with i Lanczos iterations (about
// ln(√n·10^6)/√(0.01·gap) at most, far fewer than τ), and O(n) after.
func (b *RandomizedDiffusion) StepBudget(s *State) (int64, error) { return b.ln.stepBudget(s) }

// Init checks that the run's network is the one b was built for and prepares buffers. It
// costs O(n) the first time and O(1) after, plus O(n + m) for a network that is not the
// same *Graph.
func (b *RandomizedDiffusion) Init(s *State) error {
	if b == nil {
		return nilReceiver("RandomizedDiffusion", "Init")
	}
	b.ready.reset()
	if err := b.ln.same(s.Net); err != nil {
		return err
	}
	n, c := b.ln.g.Order(), b.ln.chunks()
	if b.streams == nil {
		b.streams = make([]digits, c)
		b.moved, b.msgs = make([]int64, c), make([]int64, c)
		b.lo, b.hi, b.bad = make([]int64, c), make([]int64, c), make([]bool, c)
		// Packed formats need the link array (or the blocked gather, for 8 and 16 bits)
		// and at least one bit for the quotient. The narrower views alias p64 (one
		// format is live per round), so records cost 8 bytes per node whatever the format.
		switch {
		case b.slots > 64:
			b.ends, b.pre = make([]uint64, len(b.ln.g.adj)), make([]uint64, len(b.ln.g.adj))
			if m := len(b.ends); m > 0 {
				base := unsafe.Pointer(unsafe.SliceData(b.ends))
				b.e8 = unsafe.Slice((*uint8)(base), m)
				b.e16 = unsafe.Slice((*uint16)(base), m)
				b.e32 = unsafe.Slice((*uint32)(base), m)
			}
		case b.link == nil && b.blocked == nil:
			b.wide = make([]uint64, b.stride*n)
		default:
			b.p64 = make([]uint64, n)
			base := unsafe.Pointer(unsafe.SliceData(b.p64))
			b.p8 = unsafe.Slice((*uint8)(base), n)
			b.p16 = unsafe.Slice((*uint16)(base), n)
			b.p32 = unsafe.Slice((*uint32)(base), n)
		}
	}
	if s.NodeStreams && b.slots <= 64 && len(b.wide) == 0 {
		b.wide = make([]uint64, b.stride*n)
	}
	b.workers = b.ln.workers(s.Workers)
	b.known = false
	b.ready.set(s)
	return nil
}

// Step performs one synchronous round. It costs O(n + m) (see the type). Before Init it
// returns an error wrapping ErrNotInitialized.
func (b *RandomizedDiffusion) Step(s *State) error {
	if b == nil {
		return nilReceiver("RandomizedDiffusion", "Step")
	}
	if err := b.ready.check(s, b); err != nil {
		return err
	}
	b.s = s
	c := b.ln.chunks()
	if s.NodeStreams {
		return b.stepNodeStreams(s, c)
	}
	for attempt := 0; ; attempt++ {
		// d+1 > 64: the spread changes the loads in place, so it cannot be redone, and
		// the narrow ends formats need the extremes of the loads as they are now.
		if !b.known || attempt > 0 || b.slots > 64 {
			b.grp.For(c, b.workers, b.rangeFn)
			b.xmin, b.xmax = minMaxChunks(b.lo, b.hi)
		}
		b.chooseFormat()
		b.grp.For(c, b.workers, b.spreadFn)
		if !anyTrue(b.bad) {
			break
		}
		// The loads changed outside Step since the last round: rescan and redo.
	}
	if b.useBlocked() {
		b.grp.For(c, b.workers, b.scatterFn)
		b.grp.For(len(b.blocked.start)-1, b.workers, b.sumFn)
	} else {
		b.grp.For(c, b.workers, b.gatherFn)
	}
	b.xmin, b.xmax = minMaxChunks(b.lo, b.hi)
	b.known = true
	if s.Live != nil {
		b.returnDeadShares(s)
		b.known = false
	}
	b.s = nil
	s.Moved += sumChunks(b.moved)
	s.Messages += sumChunks(b.msgs)
	s.Time++
	return nil
}

// chooseFormat picks the smallest record format that holds the quotient spread.
func (b *RandomizedDiffusion) chooseFormat() {
	b.qmin = uint64(b.xmin) / b.slots
	spread := uint64(b.xmax)/b.slots - b.qmin
	fits := func(w uint) bool {
		return (b.link != nil || b.blocked != nil && w <= 16) && b.d < w && spread>>(w-b.d) == 0
	}
	switch {
	case b.slots > 64:
		switch {
		case spread < 1<<8-1: // q − qmin + bit ≤ spread + 1
			b.format = rdEnds8
		case spread < 1<<16-1:
			b.format = rdEnds16
		case spread < 1<<32-1:
			b.format = rdEnds32
		default:
			b.format = rdEnds
		}
	case fits(8):
		b.format = rd8
	case fits(16):
		b.format = rd16
	case fits(32):
		b.format = rd32
	case fits(64):
		b.format = rd64
	default:
		b.format = rdWide
		if len(b.wide) == 0 {
			b.wide = make([]uint64, b.stride*b.ln.g.Order())
		}
	}
}

func minMaxChunks(lo, hi []int64) (int64, int64) {
	mn, mx := lo[0], hi[0]
	for c := range lo {
		mn, mx = min(mn, lo[c]), max(mx, hi[c])
	}
	return mn, mx
}

func anyTrue(xs []bool) bool {
	for _, x := range xs {
		if x {
			return true
		}
	}
	return false
}

// rangeChunks computes each chunk's smallest and largest load.
func (b *RandomizedDiffusion) rangeChunks(lo, hi int) {
	for c := lo; c < hi; c++ {
		v0, v1 := b.ln.chunkRange(c)
		mn, mx := b.s.Loads[v0], b.s.Loads[v0]
		for _, x := range b.s.Loads[v0:v1] {
			mn, mx = min(mn, x), max(mx, x)
		}
		b.lo[c], b.hi[c] = mn, mx
	}
}

// spreadChunks is the first pass: every node draws its excess slots and writes its
// record. It reads the loads and does not change them.
func (b *RandomizedDiffusion) spreadChunks(lo, hi int) {
	for c := lo; c < hi; c++ {
		st := &b.streams[c]
		rng.Reseed(&st.src, b.s.Seed, b.s.Steps, c)
		v0, v1 := b.ln.chunkRange(c)
		ok := true
		switch {
		case b.format == rdEnds:
			b.moved[c], b.msgs[c] = spreadEnds(b, st, v0, v1, b.ends, 0)
		case b.format == rdEnds8:
			b.moved[c], b.msgs[c] = spreadEnds(b, st, v0, v1, b.e8, b.qmin)
		case b.format == rdEnds16:
			b.moved[c], b.msgs[c] = spreadEnds(b, st, v0, v1, b.e16, b.qmin)
		case b.format == rdEnds32:
			b.moved[c], b.msgs[c] = spreadEnds(b, st, v0, v1, b.e32, b.qmin)
		case b.format == rd8 && b.r8 != nil:
			b.moved[c], b.msgs[c], ok = spreadRegular8(b, st, v0, v1)
		case b.format == rd8:
			b.moved[c], b.msgs[c], ok = spreadPacked(b, st, v0, v1, b.p8)
		case b.format == rd16:
			b.moved[c], b.msgs[c], ok = spreadPacked(b, st, v0, v1, b.p16)
		case b.format == rd32:
			b.moved[c], b.msgs[c], ok = spreadPacked(b, st, v0, v1, b.p32)
		case b.format == rd64:
			b.moved[c], b.msgs[c], ok = spreadPacked(b, st, v0, v1, b.p64)
		default:
			b.moved[c], b.msgs[c] = b.spreadWide(st, v0, v1)
		}
		b.bad[c] = !ok
	}
}

// rdBatch is the size of a batch of nodes drawn together.
const rdBatch = 64

// drawBatch computes the quotients, remainders and slot masks of nodes i, i+1, ...
// (d+1 ≤ 64) and returns the end of the batch. With the subset table, nodes are taken
// while their subset counts C(d+1, r) multiply to at most digitLimit, so that one draw
// picks the excess slots of the whole batch; otherwise a batch is one node, which draws
// all d+1 slots by Floyd's algorithm or, when rdDrawsAll says no, its links alone
// (selectSlots: bits at or above its degree stay clear).
func (b *RandomizedDiffusion) drawBatch(st *digits, i, v1 int, qs *[rdBatch]uint64, rs *[rdBatch]uint8, ms *[rdBatch]uint64) int {
	loads, D, t := b.s.Loads, b.slots, &b.table
	if t.masks == nil {
		x := uint64(loads[i])
		q := b.div.div(x)
		qs[0], rs[0] = q, uint8(x-q*D)
		if deg := uint64(b.ln.g.off[i+1] - b.ln.g.off[i]); rdDrawsAll(D, deg) {
			ms[0] = floydMask(st, D, x-q*D)
		} else {
			selectSlots(st, D, deg, x-q*D, ms[:1])
		}
		return i + 1
	}
	prod, j := uint64(1), i
	for ; j < v1 && j-i < rdBatch; j++ {
		x := uint64(loads[j])
		q := b.div.div(x)
		r := x - q*D
		hi, lo := bits.Mul64(prod, t.binom[r])
		if hi != 0 || lo > digitLimit {
			break
		}
		prod = lo
		qs[j-i], rs[j-i] = q, uint8(r)
	}
	if prod > 1 {
		st.begin(prod)
	}
	for k := 0; k < j-i; k++ {
		r := rs[k]
		ms[k] = t.masks[t.off[r]+int(st.next(t.binom[r]))]
	}
	return j
}

// floydBatch returns how many consecutive Floyd draws, for ranges j+1, j+2, ..., e,
// one random number serves: their product prod stays within digitLimit.
func floydBatch(j, D uint64) (prod, e uint64) {
	prod, e = j+1, j+1
	for e < D {
		hi, lo := bits.Mul64(prod, e+1)
		if hi != 0 || lo > digitLimit {
			break
		}
		prod, e = lo, e+1
	}
	return prod, e
}

// floydMask returns a uniform r-subset of {0..D−1} (D ≤ 64) as a mask, by Floyd's
// algorithm: for j = D−r..D−1 pick t uniform in 0..j and take t, or j if t is taken.
func floydMask(st *digits, D, r uint64) uint64 {
	var m uint64
	for j := D - r; j < D; {
		prod, e := floydBatch(j, D)
		st.begin(prod)
		for ; j < e; j++ {
			t := st.next(j + 1)
			if m>>t&1 != 0 {
				t = j
			}
			m |= 1 << t
		}
	}
	return m
}

// tally adds a node's sends to the round's counters: deg·q + sent tokens, along all
// its links when q > 0, else along those that get an excess token.
func tally(deg, q, sent uint64, moved, msgs *int64) {
	*moved += int64(deg*q + sent)
	if q > 0 {
		*msgs += int64(deg)
	} else {
		*msgs += int64(sent)
	}
}

// spreadPacked writes packed records; it reports false if a quotient does not fit the
// format (the loads changed since their extremes were taken). With the subset table
// it fuses drawBatch's work into one loop: scan a batch (quotients, remainders, the
// product of the subset counts), draw its word, then draw each subset and pack.
func spreadPacked[T packedWord](b *RandomizedDiffusion, st *digits, v0, v1 int, out []T) (moved, msgs int64, ok bool) {
	if b.table.masks == nil {
		return spreadPackedFloyd(b, st, v0, v1, out)
	}
	loads, off, D, div, qmin := b.s.Loads, b.ln.g.off, b.slots, b.div, b.qmin
	d := b.d & 63
	maxDelta := uint64(^T(0)) >> d
	masks, moff, binom := b.table.masks, b.table.off, b.table.binom
	deg := uint64(b.d)
	var qs [rdBatch]uint64
	var rs [rdBatch]uint8
	for i := v0; i < v1; {
		prod, j := uint64(1), i
		for ; j < v1 && j-i < rdBatch; j++ {
			x := uint64(loads[j])
			q := div.div(x)
			r := x - q*D
			hi, lo := bits.Mul64(prod, binom[r])
			if hi != 0 || lo > digitLimit {
				break
			}
			prod = lo
			qs[j-i], rs[j-i] = q, uint8(r)
		}
		if prod > 1 {
			st.begin(prod)
		}
		for k := i; k < j; k++ {
			q, r := qs[k-i], rs[k-i]
			m := masks[moff[r]+int(st.next(binom[r]))]
			if q-qmin > maxDelta { // also catches q < qmin, by wrapping around
				return 0, 0, false
			}
			if !b.regular {
				deg = uint64(off[k+1] - off[k])
			}
			nb := m & (1<<(deg&63) - 1)
			out[k] = T((q-qmin)<<d | nb)
			tally(deg, q, uint64(bits.OnesCount64(nb)), &moved, &msgs)
		}
		i = j
	}
	return moved, msgs, true
}

// spreadRegular8 is spreadPacked for 8-bit records on a regular network with d < 8: the
// same draws and records, read from rdTables8. Moved and Messages are summed per chunk:
// Σ(d·q + sent) = d·(Σ(q − qmin) + count·qmin) + Σ sent (mod 2^64, as the int64 sums),
// and when qmin > 0 every node sends along all its d links.
func spreadRegular8(b *RandomizedDiffusion, st *digits, v0, v1 int) (moved, msgs int64, ok bool) {
	loads, D, div, qmin, r8 := b.s.Loads, b.slots, b.div, b.qmin, b.r8
	d := b.d & 7
	maxDelta := uint64(0xff) >> d
	out := b.p8[:v1]
	var qr [rdBatch]uint16 // (q − qmin) << d << 3 | r: the record's quotient part, and r
	// sums holds Σ(q − qmin)<<d << 32 + Σ sent; a chunk has at most diffusionChunk = 4096
	// nodes, so both sums stay below 2^32.
	var sums, zeroNodes, zeroSent uint64
	for i := v0; i < v1; {
		prod, j := uint64(1), i
		for ; j < v1 && j-i < rdBatch; j++ {
			x := uint64(loads[j])
			q := div.div(x)
			r := x - q*D
			hi, lo := bits.Mul64(prod, r8.binom[r&7])
			if hi != 0 || lo > digitLimit {
				break
			}
			prod = lo
			if q-qmin > maxDelta { // also catches q < qmin, by wrapping around
				return 0, 0, false
			}
			qr[(j-i)&(rdBatch-1)] = uint16((q-qmin)<<d<<3 | r)
		}
		if prod > 1 {
			st.begin(prod)
		}
		x, batch := st.x, qr[:j-i]
		if qmin > 0 {
			for k, t := range batch {
				hi, lo := bits.Mul64(x, r8.binom[t&7])
				x = lo
				e := r8.sub[(uint64(r8.moff[t&7])+hi)&255]
				out[i+k] = uint8(t>>3 | e&0xff)
				sums += uint64(t>>3)<<32 + uint64(e>>8)
			}
		} else {
			for k, t := range batch {
				hi, lo := bits.Mul64(x, r8.binom[t&7])
				x = lo
				e := r8.sub[(uint64(r8.moff[t&7])+hi)&255]
				out[i+k] = uint8(t>>3 | e&0xff)
				sums += uint64(t>>3)<<32 + uint64(e>>8)
				if t>>3 == 0 { // q = 0: only the links that get an excess token carry any
					zeroNodes++
					zeroSent += uint64(e >> 8)
				}
			}
		}
		st.x = x
		i = j
	}
	nodes, dd := uint64(v1-v0), uint64(d)
	moved = int64(dd*(sums>>32>>d+nodes*qmin) + sums&(1<<32-1))
	msgs = int64(dd*(nodes-zeroNodes) + zeroSent)
	return moved, msgs, true
}

// spreadPackedFloyd is spreadPacked for 12 < d+1 ≤ 64 (Floyd's algorithm per node).
func spreadPackedFloyd[T packedWord](b *RandomizedDiffusion, st *digits, v0, v1 int, out []T) (moved, msgs int64, ok bool) {
	off, d, qmin := b.ln.g.off, b.d, b.qmin
	maxDelta := uint64(^T(0)) >> d
	var qs, ms [rdBatch]uint64
	var rs [rdBatch]uint8
	for k := v0; k < v1; k++ {
		b.drawBatch(st, k, v1, &qs, &rs, &ms)
		q := qs[0]
		if q-qmin > maxDelta {
			return 0, 0, false
		}
		deg := uint64(off[k+1] - off[k])
		nb := ms[0] & (1<<deg - 1)
		out[k] = T((q-qmin)<<d | nb)
		tally(deg, q, uint64(bits.OnesCount64(nb)), &moved, &msgs)
	}
	return moved, msgs, true
}

// spreadWide writes wide records for d+1 ≤ 64 (stride 2).
func (b *RandomizedDiffusion) spreadWide(st *digits, v0, v1 int) (moved, msgs int64) {
	off, w := b.ln.g.off, b.wide
	var qs, ms [rdBatch]uint64
	var rs [rdBatch]uint8
	for i := v0; i < v1; {
		j := b.drawBatch(st, i, v1, &qs, &rs, &ms)
		for k := i; k < j; k++ {
			q, m := qs[k-i], ms[k-i]
			w[2*k], w[2*k+1] = q, m
			deg := uint64(off[k+1] - off[k])
			tally(deg, q, uint64(bits.OnesCount64(m&(1<<deg-1))), &moved, &msgs)
		}
		i = j
	}
	return moved, msgs
}

// spreadEnds writes the shares of nodes v0..v1-1 for d+1 > 64 (rdEnds) and leaves
// each node's load at what it keeps, X − deg·q − its excess sent. Node k draws all d+1
// slots by Floyd's algorithm when rdDrawsAll, into the start of its own ends
// (⌈(d+1)/64⌉ ≤ deg words), and expands the mask into its shares in place; otherwise
// it draws its links alone by selection sampling: consecutive such nodes whose digit
// ranges (D, D−1, …, D−deg+1 for each node with excess, none without) multiply to at
// most digitLimit share one word, a node whose ranges do not fit one word draws alone
// (selectShares). O(deg) per node.
//
// A batch is scanned once. Its word x is drawn before its extent is known and each
// node's digits are taken as the batch goes: the state of the mixed-radix digits at
// the start of node i is x·P_i mod 2^64, with P_i the product of the ranges of the
// nodes before it (exact, below 2^60), which is what x·r_1 mod 2^64 · r_2 … reaches,
// so every node starts from one multiplication and the nodes' chains are independent.
// When the batch ends, x must pass Lemire's test for the whole product (begin): if it
// does not (probability below 1/16) the batch is redone with the next accepted word,
// from the quotients and remainders kept; if no node had excess, no word is drawn and
// the stream's state is restored. A node of degree ≤ 4 whose first end has 4 ends of
// the chunk from it draws 4 digits and writes 4 shares without a loop, the bits of
// positions at or above its degree masked off (the writes past its degree land in later
// nodes' ends of the chunk, which those nodes overwrite). Other nodes of a batch take
// selectFac, and a node alone spreadAlone.
func spreadEnds[T packedWord](b *RandomizedDiffusion, st *digits, v0, v1 int, ends []T, qmin uint64) (moved, msgs int64) {
	loads, off, D, div, nodeProd := b.s.Loads, b.ln.g.off, b.slots, b.div, b.nodeProd
	eLim, fac := off[v1], b.selFac
	f1, f2, f3 := fac[1], fac[2], fac[3] // fac[0] = 1; D > 64 slots
	for k := v0; k < v1; {
		if nodeProd[k] == 0 { // draws all slots, or its ranges do not fit one word
			spreadAlone(b, st, k, ends, qmin, &moved, &msgs)
			k++
			continue
		}
		saved := st.src
		x := st.src.Uint64()
		prod, j := uint64(1), k
		var bm, bs uint64 // the batch's Moved and Messages
		for ; j < v1 && j-k < rdBatch; j++ {
			p := nodeProd[j]
			if p == 0 {
				break
			}
			xl := uint64(loads[j])
			q := div.div(xl)
			r := xl - q*D
			pre := prod
			if r > 0 {
				hi, lo := bits.Mul64(prod, p)
				if hi != 0 || lo > digitLimit {
					break
				}
				prod = lo
			}
			o0, o1 := off[j], off[j+1]
			deg := uint64(o1 - o0)
			var sent uint64
			if deg <= 4 && o0+4 <= eLim { // 4 digits, masked at deg: no loop
				w, need, qq := x*pre, r, q-qmin
				out := (*[4]T)(ends[o0 : o0+4])
				h0, _ := bits.Mul64(w, D)
				h1, _ := bits.Mul64(w*f1, D-1)
				h2, _ := bits.Mul64(w*f2, D-2)
				h3, _ := bits.Mul64(w*f3, D-3)
				bit := (h0 - need) >> 63 // hi < need: both are below 2^63
				need -= bit
				out[0] = T(qq + bit)
				bit = (h1 - need) >> 63 & ((1 - deg) >> 63)
				need -= bit
				out[1] = T(qq + bit)
				bit = (h2 - need) >> 63 & ((2 - deg) >> 63)
				need -= bit
				out[2] = T(qq + bit)
				bit = (h3 - need) >> 63 & ((3 - deg) >> 63)
				need -= bit
				out[3] = T(qq + bit)
				sent = r - need
			} else {
				sent = selectFac(x*pre, D, r, q-qmin, fac, ends[o0:o1])
			}
			loads[j] = int64(xl - deg*q - sent)
			bm += deg*q + sent
			m := sent
			if q > 0 {
				m = deg
			}
			bs += m
		}
		switch {
		case prod == 1: // no node with excess: no word drawn
			st.src = saved
		case !lemireAccepts(x, prod): // begin draws on; redo the batch with its word
			st.begin(prod)
			bm, bs = redoBatch(b, st.x, k, j, ends, qmin)
		}
		moved += int64(bm)
		msgs += int64(bs)
		k = j
	}
	return moved, msgs
}

// spreadAlone is spreadEnds for node k when it draws alone: all D slots by Floyd's
// algorithm (the mask in the node's share of pre, unused until the gather) when
// rdDrawsAll, else its links by selectShares. It adds to *moved and *msgs.
func spreadAlone[T packedWord](b *RandomizedDiffusion, st *digits, k int, ends []T, qmin uint64, moved, msgs *int64) {
	loads, off, D := b.s.Loads, b.ln.g.off, b.slots
	x := uint64(loads[k])
	q := b.div.div(x)
	r := x - q*D
	out := ends[off[k]:off[k+1]]
	deg := uint64(len(out))
	var sent uint64
	if rdDrawsAll(D, deg) {
		m := b.pre[off[k] : off[k]+int((D+63)/64)]
		floydWords(st, D, r, m)
		sent = maskShares(out, m, q-qmin)
	} else {
		sent = selectShares(b, st, D, r, q-qmin, out)
	}
	loads[k] = int64(x - deg*q - sent)
	tally(deg, q, sent, moved, msgs)
}

// redoBatch redraws the batch of nodes k..j-1 of spreadEnds from the accepted word x,
// after a word that failed Lemire's test, and returns the batch's Moved and Messages.
// Each node's load at the start of the round is what it kept plus its shares
// (X = kept + Σ(q − qmin + bit) + deg·qmin); the products of the ranges before each node
// are taken again as the batch was built.
func redoBatch[T packedWord](b *RandomizedDiffusion, x uint64, k, j int, ends []T, qmin uint64) (bm, bs uint64) {
	loads, off, D := b.s.Loads, b.ln.g.off, b.slots
	prod := uint64(1)
	for i := k; i < j; i++ {
		out := ends[off[i]:off[i+1]]
		deg := uint64(len(out))
		xl := uint64(loads[i]) + deg*qmin
		for _, v := range out {
			xl += uint64(v)
		}
		q := b.div.div(xl)
		r := xl - q*D
		w := x * prod
		if r > 0 {
			prod *= b.nodeProd[i] // within digitLimit: the batch was built so
		}
		sent := selectBatched(&w, D, r, q-qmin, out)
		loads[i] = int64(xl - deg*q - sent)
		var mv, mg int64
		tally(deg, q, sent, &mv, &mg)
		bm, bs = bm+uint64(mv), bs+uint64(mg)
	}
	return bm, bs
}

// selectFac is selectBatched with the digit of slot p taken as the high word of
// (w·fac[p] mod 2^64)·(D − p), fac = selFac: the same digits when the node's ranges fit
// one word (its batch from slot 0 covers its links), without a chain of multiplications
// from one digit to the next.
func selectFac[T packedWord](w, D, r, q uint64, fac []uint64, out []T) (sent uint64) {
	need := r
	fac = fac[:len(out)]
	for p := range out {
		hi, _ := bits.Mul64(w*fac[p], D-uint64(p))
		bit := (hi - need) >> 63 // hi < need: both are below 2^63
		out[p] = T(q + bit)
		need -= bit
	}
	return r - need
}

// selectBatched draws the links of one node of a batch (r excess tokens among D slots,
// len(out) < D links, its ranges inside the batch's word x) and writes its shares; it
// returns the excess sent. No digit is drawn when r = 0.
func selectBatched[T packedWord](x *uint64, D, r, q uint64, out []T) (sent uint64) {
	if r == 0 {
		for p := range out {
			out[p] = T(q)
		}
		return 0
	}
	need, w := r, *x
	for p := range out {
		hi, lo := bits.Mul64(w, D-uint64(p))
		w = lo
		bit := (hi - need) >> 63 // hi < need: both are below 2^63
		out[p] = T(q + bit)
		need -= bit
	}
	*x = w
	return r - need
}

// selStep is one batch of selection sampling's digits: slots up to e (exclusive) from
// the end of the previous one, whose ranges multiply to prod.
type selStep struct{ e, prod uint64 }

// selectTable returns the batches selectBatch makes from slot 0 for a node of degree
// D (each batch of a node of smaller degree deg is the same up to deg, where it is cut),
// and for every slot p < D the product of the ranges of its batch before p. O(D).
func selectTable(D uint64) ([]selStep, []uint64) {
	var tab []selStep
	fac := make([]uint64, D)
	for p := uint64(0); p < D; {
		prod, e := selectBatch(D, p, D)
		tab = append(tab, selStep{e: e, prod: prod})
		f := uint64(1)
		for ; p < e; p++ {
			fac[p] = f
			f *= D - p
		}
	}
	return tab, fac
}

// selectShares is selectSlots for a node of degree len(out) < D that writes its shares
// q + (1 if the link gets an excess token) into out instead of a mask: the same draws
// and the same links. It returns the excess sent. A batch's digits are drawn whole and
// compared without a branch (a digit below need = 0 takes nothing).
func selectShares[T packedWord](b *RandomizedDiffusion, st *digits, D, r, q uint64, out []T) (sent uint64) {
	need, deg, p := r, uint64(len(out)), uint64(0)
	tab, fac := b.sel, b.selFac[:deg]
	for i := 0; p < deg && need > 0; i++ {
		prod, e := tab[i].prod, tab[i].e
		if e > deg { // the node's last batch, cut at its degree
			prod, e = selectBatch(D, p, deg)
		}
		st.begin(prod)
		x := st.x
		for ; p < e; p++ { // the digits of a batch do not wait for each other
			hi, _ := bits.Mul64(x*fac[p], D-p)
			bit := (hi - need) >> 63 // hi < need: both are below 2^63
			out[p] = T(q + bit)
			need -= bit
		}
	}
	for ; p < deg; p++ {
		out[p] = T(q)
	}
	return r - need
}

// floydWords is floydMask over a mask of ⌈D/64⌉ words (cleared first), for D > 64.
func floydWords(st *digits, D, r uint64, m []uint64) {
	clear(m)
	for j := D - r; j < D; {
		prod, e := floydBatch(j, D)
		st.begin(prod)
		for ; j < e; j++ {
			t := st.next(j + 1)
			if m[t>>6]>>(t&63)&1 != 0 {
				t = j
			}
			m[t>>6] |= 1 << (t & 63)
		}
	}
}

// gatherEnds is the second pass over the shares of the ends formats (q − qmin + bit;
// qmin = 0 for rdEnds): node k, whose load the first pass left at what it keeps, takes
// what came over the reverses of its ends. The chunk's ends are summed in blocks of
// gatherBlock in one flat pass into prefix sums (a buffer on the stack, in L1), and each
// node whose ends end in the block then takes the difference of two of them: no loop
// per node, whose exit a network of varied degrees would mispredict at every node, and
// no array of prefix sums in memory. O(deg) per node.
func gatherEnds[T packedWord](b *RandomizedDiffusion, v0, v1 int, ends []T, qmin uint64) (mn, mx uint64) {
	loads, off, rev := b.s.Loads, b.ln.g.off, b.rev
	e1 := off[v1]
	var buf [gatherBlock]uint64
	var sum, last uint64 // the prefix sum so far, and before node k's ends
	mn, mx = math.MaxUint64, 0
	k := v0
	for b0 := off[v0]; b0 < e1; b0 += gatherBlock {
		b1 := min(b0+gatherBlock, e1)
		pre := buf[:b1-b0]
		for i, r := range rev[b0:b1] {
			sum += uint64(ends[r])
			pre[i] = sum
		}
		for ; k < v1 && off[k+1] <= b1; k++ {
			end := pre[off[k+1]-b0-1]
			acc := uint64(loads[k]) + end - last + uint64(off[k+1]-off[k])*qmin
			last = end
			loads[k] = int64(acc)
			mn, mx = min(mn, acc), max(mx, acc)
		}
	}
	return mn, mx
}

// gatherBlock is the number of link ends whose prefix sums gatherEnds holds at once.
const gatherBlock = 512

// maskShares writes into out the shares q + bit p of the slot mask m, p < len(out), and
// returns the excess sent.
func maskShares[T packedWord](out []T, m []uint64, q uint64) (sent uint64) {
	for p := range out {
		bit := m[p>>6] >> (uint(p) & 63) & 1
		out[p] = T(q + bit)
		sent += bit
	}
	return sent
}

// maskCount counts the set bits below bit n of a multi-word mask.
func maskCount(m []uint64, n uint64) uint64 {
	c := uint64(0)
	for w := uint64(0); w*64 < n; w++ {
		word := m[w]
		if rest := n - w*64; rest < 64 {
			word &= 1<<rest - 1
		}
		c += uint64(bits.OnesCount64(word))
	}
	return c
}

// gatherChunks is the second pass: every node keeps its share and adds what its
// neighbours sent it; the chunk's load extremes are recorded for the next round.
func (b *RandomizedDiffusion) gatherChunks(lo, hi int) {
	for c := lo; c < hi; c++ {
		v0, v1 := b.ln.chunkRange(c)
		var mn, mx uint64 // the new loads are non-negative
		switch {
		case b.format == rdEnds:
			mn, mx = gatherEnds(b, v0, v1, b.ends, 0)
		case b.format == rdEnds8:
			mn, mx = gatherEnds(b, v0, v1, b.e8, b.qmin)
		case b.format == rdEnds16:
			mn, mx = gatherEnds(b, v0, v1, b.e16, b.qmin)
		case b.format == rdEnds32:
			mn, mx = gatherEnds(b, v0, v1, b.e32, b.qmin)
		case b.format == rd8 && b.r8 != nil && b.link != nil:
			mn, mx = gatherRegular8(b, v0, v1)
		case b.format == rd8:
			mn, mx = gatherPacked(b, v0, v1, b.p8)
		case b.format == rd16:
			mn, mx = gatherPacked(b, v0, v1, b.p16)
		case b.format == rd32:
			mn, mx = gatherPacked(b, v0, v1, b.p32)
		case b.format == rd64:
			mn, mx = gatherPacked(b, v0, v1, b.p64)
		default:
			mn, mx = b.gatherWide(v0, v1)
		}
		b.lo[c], b.hi[c] = int64(mn), int64(mx)
	}
}

// gatherPacked is the second pass over packed records. A node keeps
// X − deg·q − (excess tokens it sent to neighbours) and receives q_j plus its bit of
// every neighbour j's record; the common qmin cancels between the two. It returns the
// extremes of the new loads.
func gatherPacked[T packedWord](b *RandomizedDiffusion, v0, v1 int, in []T) (mn, mx uint64) {
	loads, off, link := b.s.Loads, b.ln.g.off, b.link
	d := b.d & 63 // shift counts below 64 spare the compiler's guards
	dd := int(d)
	mn, mx = math.MaxUint64, 0
	for k := v0; k < v1; k++ {
		var ends []uint32
		if b.regular {
			ends = link[dd*k : dd*k+dd]
		} else {
			ends = link[off[k]:off[k+1]]
		}
		rec := uint64(in[k])
		acc := uint64(loads[k]) - uint64(len(ends))*(rec>>d) - uint64(bits.OnesCount64(rec&(1<<(uint(len(ends))&63)-1)))
		for len(ends) >= 4 { // four independent loads in flight
			w0, w1, w2, w3 := uint64(in[ends[0]>>6]), uint64(in[ends[1]>>6]), uint64(in[ends[2]>>6]), uint64(in[ends[3]>>6])
			acc += w0>>d + w0>>(ends[0]&63)&1 + w1>>d + w1>>(ends[1]&63)&1 +
				w2>>d + w2>>(ends[2]&63)&1 + w3>>d + w3>>(ends[3]&63)&1
			ends = ends[4:]
		}
		for _, l := range ends {
			w := uint64(in[l>>6])
			acc += w>>d + w>>(l&63)&1
		}
		loads[k] = int64(acc)
		mn, mx = min(mn, acc), max(mx, acc)
	}
	return mn, mx
}

// gatherRegular8 is gatherPacked for 8-bit records on a regular network with d < 8:
// the same sums, with the shifts by d and by the positions read from keep8 and share8,
// which leaves the loop few enough live values to stay in registers.
func gatherRegular8(b *RandomizedDiffusion, v0, v1 int) (mn, mx uint64) {
	d := int(b.d)
	loads, in := b.s.Loads[v0:v1], b.p8
	link := b.link[d*v0 : d*v1]
	keep, share := &b.r8.keep, &b.r8.share
	mn, mx = math.MaxUint64, 0
	if d == 4 { // 2-D tori and 4-regular graphs: the loop below without its inner loop
		for i, x := range loads {
			// One link end per statement: fewer live values, and the four reads
			// are still independent.
			l := link[4*i : 4*i+4 : 4*i+4]
			acc := uint64(x) - uint64(keep[in[v0+i]])
			acc += uint64(share[(l[0]<<8|uint32(in[l[0]>>6]))&(8<<8-1)])
			acc += uint64(share[(l[1]<<8|uint32(in[l[1]>>6]))&(8<<8-1)])
			acc += uint64(share[(l[2]<<8|uint32(in[l[2]>>6]))&(8<<8-1)])
			acc += uint64(share[(l[3]<<8|uint32(in[l[3]>>6]))&(8<<8-1)])
			loads[i] = int64(acc)
			mn, mx = min(mn, acc), max(mx, acc)
		}
		return mn, mx
	}
	for i, x := range loads {
		ends := link[d*i : d*i+d]
		acc := uint64(x) - uint64(keep[in[v0+i]])
		for len(ends) >= 4 { // four independent loads in flight
			l0, l1, l2, l3 := ends[0], ends[1], ends[2], ends[3]
			w0, w1, w2, w3 := uint32(in[l0>>6]), uint32(in[l1>>6]), uint32(in[l2>>6]), uint32(in[l3>>6])
			acc += uint64(share[(l0<<8|w0)&(8<<8-1)]) + uint64(share[(l1<<8|w1)&(8<<8-1)]) +
				uint64(share[(l2<<8|w2)&(8<<8-1)]) + uint64(share[(l3<<8|w3)&(8<<8-1)])
			ends = ends[4:]
		}
		for _, l := range ends {
			acc += uint64(share[(l<<8|uint32(in[l>>6]))&(8<<8-1)])
		}
		loads[i] = int64(acc)
		mn, mx = min(mn, acc), max(mx, acc)
	}
	return mn, mx
}

// gatherWide is the second pass over wide records; it returns the new loads' extremes.
func (b *RandomizedDiffusion) gatherWide(v0, v1 int) (mn, mx uint64) {
	loads, off, adj, w, stride := b.s.Loads, b.ln.g.off, b.ln.g.adj, b.wide, b.stride
	mn, mx = math.MaxUint64, 0
	for k := v0; k < v1; k++ {
		e0, e1 := off[k], off[k+1]
		acc := uint64(loads[k]) - uint64(e1-e0)*w[stride*k] - maskCount(w[stride*k+1:stride*(k+1)], uint64(e1-e0))
		for e := e0; e < e1; e++ {
			j, p := int(adj[e]), b.position(e)
			acc += w[stride*j] + w[stride*j+1+int(p>>6)]>>(p&63)&1
		}
		loads[k] = int64(acc)
		mn, mx = min(mn, acc), max(mx, acc)
	}
	return mn, mx
}

// position returns the position of the end e = (k → j)'s k in j's neighbour list.
func (b *RandomizedDiffusion) position(e int) uint64 {
	switch {
	case b.link != nil:
		return uint64(b.link[e] & 63)
	case b.rev != nil:
		return uint64(int(b.rev[e]) - b.ln.g.off[b.ln.g.adj[e]])
	}
	return uint64(b.pos32[e])
}

// share returns the tokens node k's record of this round sends to the neighbour at
// position p of its list.
func (b *RandomizedDiffusion) share(k int, p uint64) uint64 {
	d := b.d & 63
	var rec uint64
	switch b.format {
	case rd8:
		rec = uint64(b.p8[k])
	case rd16:
		rec = uint64(b.p16[k])
	case rd32:
		rec = uint64(b.p32[k])
	case rd64:
		rec = b.p64[k]
	case rdEnds:
		return b.ends[b.ln.g.off[k]+int(p)]
	case rdEnds8:
		return uint64(b.e8[b.ln.g.off[k]+int(p)]) + b.qmin
	case rdEnds16:
		return uint64(b.e16[b.ln.g.off[k]+int(p)]) + b.qmin
	case rdEnds32:
		return uint64(b.e32[b.ln.g.off[k]+int(p)]) + b.qmin
	default:
		w := b.wide[b.stride*k:]
		return w[0] + w[1+int(p>>6)]>>(p&63)&1
	}
	return rec>>d + b.qmin + rec>>(p&63)&1
}

// returnDeadShares undoes, for every link that is down, the shares its two ends sent
// each other in the gather pass, and takes them out of Moved and Messages. O(n + m).
func (b *RandomizedDiffusion) returnDeadShares(s *State) {
	g := b.ln.g
	var moved, msgs int64
	for k := 0; k < g.Order(); k++ {
		for e := g.off[k]; e < g.off[k+1]; e++ {
			if s.Live[e] {
				continue
			}
			j := int(g.adj[e])
			out := b.share(k, uint64(e-g.off[k])) // k → j, returned to k
			in := b.share(j, b.position(e))       // j → k, taken back from k
			s.Loads[k] += int64(out) - int64(in)
			moved += int64(out)
			if out > 0 {
				msgs++
			}
		}
	}
	s.Moved -= moved
	s.Messages -= msgs
}

// stepNodeStreams is Step with RunOptions.NodeStreams: every node draws its excess slots
// from its own stream of the round (rdNodeSlots, as its node program does) into wide
// records, and the gather pass is gatherWide. Same counters, same churn handling, no
// allocation (Init made the wide records).
func (b *RandomizedDiffusion) stepNodeStreams(s *State, c int) error {
	b.format = rdEnds
	if b.slots <= 64 {
		b.format = rdWide
		if len(b.wide) < b.stride*b.ln.g.Order() {
			b.wide = make([]uint64, b.stride*b.ln.g.Order()) // Step without Init's NodeStreams: once
		}
	}
	b.grp.For(c, b.workers, b.nodeFn)
	b.grp.For(c, b.workers, b.gatherFn)
	b.known = false
	if s.Live != nil {
		b.returnDeadShares(s)
	}
	b.s = nil
	s.Moved += sumChunks(b.moved)
	s.Messages += sumChunks(b.msgs)
	s.Time++
	return nil
}

// spreadNodeChunks is the first pass in node-stream mode: node k draws from
// node.Random(Seed, Steps, k, ·) and writes its wide record.
func (b *RandomizedDiffusion) spreadNodeChunks(lo, hi int) {
	loads, off, D, stride, w := b.s.Loads, b.ln.g.off, b.slots, b.stride, b.wide
	for c := lo; c < hi; c++ {
		v0, v1 := b.ln.chunkRange(c)
		var moved, msgs int64
		for k := v0; k < v1; k++ {
			x := uint64(loads[k])
			q := x / D
			deg := uint64(off[k+1] - off[k])
			st := newNodeStream(b.s.Seed, b.s.Steps, k)
			if b.format == rdEnds { // the mask at the start of k's ends, then its shares
				out := b.ends[off[k]:off[k+1]]
				rdNodeDraw(&st, D, deg, x-q*D, &b.table, out[:rdMaskWords(D, deg)])
				sent := expandShares(out, q)
				loads[k] = int64(x - deg*q - sent)
				tally(deg, q, sent, &moved, &msgs)
				continue
			}
			m := w[stride*k+1 : stride*(k+1)]
			rdNodeDraw(&st, D, deg, x-q*D, &b.table, m)
			w[stride*k] = q
			tally(deg, q, maskCount(m, deg), &moved, &msgs)
		}
		b.moved[c], b.msgs[c] = moved, msgs
	}
}
