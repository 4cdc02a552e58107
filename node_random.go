package tokendist

import (
	"github.com/tokendist/tokendist/internal/rng"
)

// This file holds the per-node random draws that the node programs (*_program.go) and
// Run's node-stream mode (RunOptions.NodeStreams) share: one implementation, called
// from both, so that a synchronous host of the programs and Run make the same choices.

// nodeStream serves exactly uniform bounded numbers from one node's stream of one round,
// the words node.Random(seed, round, id, 0), node.Random(…, 1), … in order. It works like
// digits: begin(prod) draws words until one passes Lemire's rejection test for prod,
// and next(r_1), next(r_2), … then return the mixed-radix digits of ⌊x·prod/2^64⌋. It
// caches the stream's key, so a word costs two SplitMix64 finalisers. It does not
// allocate.
type nodeStream struct {
	a, b uint64 // the stream's key (node.Random)
	i    uint64 // the index of the next word
	x    uint64
}

// newNodeStream returns node id's stream of round for the run's seed.
func newNodeStream(seed uint64, round int64, id int) nodeStream {
	a, b := rng.NodeKey(seed, round, id)
	return nodeStream{a: a, b: b}
}

// word returns the stream's next word: node.Random(seed, round, id, i) for i = 0, 1, ….
func (g *nodeStream) word() uint64 {
	w := rng.NodeWord(g.a, g.b, g.i)
	g.i++
	return w
}

// begin starts a batch whose ranges multiply to prod, 1 ≤ prod < 2^64.
func (g *nodeStream) begin(prod uint64) {
	for {
		if x := g.word(); lemireAccepts(x, prod) {
			g.x = x
			return
		}
	}
}

// next returns the batch's next digit, uniform on [0, r).
func (g *nodeStream) next(r uint64) uint64 { return nextDigit(&g.x, r) }

// nodeFixed serves digits of one fixed range r from a node stream, refilling batches of
// r^k ≤ digitLimit (fixedDigits on a node stream).
type nodeFixed struct {
	nodeStream
	r, prod  uint64
	per, off int
}

// reset starts serving digits of range r.
func (f *nodeFixed) reset(r uint64) {
	var fd fixedDigits
	fd.reset(r)
	f.r, f.prod, f.per, f.off = fd.r, fd.prod, fd.per, 0
}

// draw returns a digit uniform on [0, r).
func (f *nodeFixed) draw() uint64 {
	if f.r <= 1 {
		return 0
	}
	if f.off == 0 {
		f.begin(f.prod)
		f.off = f.per
	}
	f.off--
	return f.next(f.r)
}

// rdNodeSlots draws the slots that a node of RandomizedDiffusion gives its r excess
// tokens: a uniform r-subset of the D slots 0..D−1, written as a bit mask into mask
// (⌈D/64⌉ words, cleared first). With D ≤ subsetTableMax it draws the subset's number
// in the table with one digit (none when there is one subset); otherwise it runs
// Floyd's algorithm, several choices per word. Both Run's node-stream mode and the node
// program call it. O(r + D/64), no allocation.
func rdNodeSlots(st *nodeStream, D, r uint64, t *subsetTable, mask []uint64) {
	clear(mask)
	if t.masks != nil {
		if c := t.binom[r]; c > 1 {
			st.begin(c)
			mask[0] = t.masks[t.off[r]+int(st.next(c))]
		} else {
			mask[0] = t.masks[t.off[r]]
		}
		return
	}
	for j := D - r; j < D; {
		prod, e := floydBatch(j, D)
		st.begin(prod)
		for ; j < e; j++ {
			x := st.next(j + 1)
			if mask[x>>6]>>(x&63)&1 != 0 {
				x = j
			}
			mask[x>>6] |= 1 << (x & 63)
		}
	}
}

// rmNodeChoice draws a node's choices of one RandomMatching round from its stream: one
// batch of range 4·max(1, deg) gives whether it is active (1: it proposes), its coin
// (where an odd token goes if its proposal is accepted) and the port it proposes on.
// Both Run's node-stream mode and the node program call it. O(1), no allocation.
func rmNodeChoice(st *nodeStream, deg int) (active, coin, pick uint64) {
	d := uint64(max(1, deg))
	st.begin(4 * d)
	return st.next(2), st.next(2), st.next(d)
}

// rdNodeDraw draws the links of a RandomizedDiffusion node of degree deg (among D
// slots) that its r excess tokens reach, into mask (rdMaskWords(D, deg) words): all D
// slots by rdNodeSlots when rdDrawsAll(D, deg), else the links alone by selection
// sampling (the law of the first deg slots of a uniform r-subset; see selectSlots).
// Bits at or above deg name the node's own slots. Both Run's node-stream mode and the
// node program call it. O(deg), no allocation.
func rdNodeDraw(st *nodeStream, D, deg, r uint64, t *subsetTable, mask []uint64) {
	if rdDrawsAll(D, deg) {
		rdNodeSlots(st, D, r, t, mask)
		return
	}
	clear(mask)
	need := r
	for p := uint64(0); p < deg && need > 0; {
		prod, e := selectBatch(D, p, deg)
		st.begin(prod)
		for ; p < e && need > 0; p++ {
			if st.next(D-p) < need {
				mask[p>>6] |= 1 << (p & 63)
				need--
			}
		}
	}
}
