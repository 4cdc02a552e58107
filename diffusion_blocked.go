package tokendist

import (
	"math"
	"math/bits"
	"runtime"
	"unsafe"
)

// The blocked gather replaces the second pass of RandomizedDiffusion on large networks
// (propagation blocking). The plain gather reads, for every link end, the record of a
// random neighbour: once the records outgrow the caches, every one of those m reads is a
// cache (and, past a few hundred MB, a TLB) miss. The blocked gather instead writes each
// share into a slot fixed once per network, grouped by the block of nodes that receives
// it (2^18 nodes), then adds every block's slots into its loads: into a spare 1 MB
// accumulator of uint32 that stays in L2 (a 2 MB block of int64 loads does not), then
// one pass per chunk updates the loads (about half the time of summing into the int64
// loads directly: docs/performance.md).
// Both passes stream: the scatter writes to one sequential run per block, the sum reads
// them back in order. A node's new load is the same sum of the same shares in another
// order, and the arithmetic is modular, so the loads are bit for bit those of the plain
// gather, for every worker count.

// blockShift sets the receiving blocks of the blocked gather: 2^18 nodes each, the
// fastest of the sizes measured (docs/performance.md): fewer blocks mean fewer write
// streams in the scatter, larger ones a sum whose block of loads (2 MB at 2^18) no
// longer fits L2.
const blockShift = 18

// accumulators is the number of spare accumulators of a blocked gather (see acc).
var accumulators = max(1, min(runtime.GOMAXPROCS(0), 8))

// blockedMinNodes is the least number of nodes for which RandomizedDiffusion uses the
// blocked gather: below it the records stay in cache and the plain gather is faster
// (measured at 10^6 and 10^7 nodes: docs/performance.md).
const blockedMinNodes = 1 << 22

// blockedGather holds the fixed slot layout of the blocked gather.
type blockedGather struct {
	slot  []uint32 // slot[e]: where the share sent over link end e is written
	tgt   []uint32 // tgt[s]: the node receiving slot s, relative to its block
	start []int    // the slots of block B are start[B]..start[B+1]-1
	val   []uint16 // the shares of the current round, by slot (16-bit records)
	val8  []uint8  // the same memory as bytes, for 8-bit records (shares < 2^7)
	// acc holds spare accumulators of 2^blockShift entries, one per sum that may run at
	// once: a block's shares add up in 1 MB of uint32 instead of its 2 MB of int64 loads
	// (a block's in-shares total below 2^32: below 2^16 + 1 per link end, at most 64
	// ends per node). A sum that finds none adds into the loads directly.
	acc chan *[1 << blockShift]uint32
}

// newBlockedGather lays out the slots for g: the ends pointing into each block in
// increasing order of end, so that each block's slots fill sequentially. O(n + m) time,
// 10 bytes per link end (2 for the shares, 1 of them used by 8-bit records), plus 1 MB
// per spare accumulator (at most 8, GOMAXPROCS when it is lower).
func newBlockedGather(g *Graph) *blockedGather {
	n, m2 := g.Order(), len(g.adj)
	blocks := (n + 1<<blockShift - 1) >> blockShift
	bg := &blockedGather{slot: make([]uint32, m2), tgt: make([]uint32, m2), start: make([]int, blocks+1), val: make([]uint16, m2)}
	bg.acc = make(chan *[1 << blockShift]uint32, accumulators)
	for range accumulators {
		bg.acc <- new([1 << blockShift]uint32)
	}
	bg.val8 = unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(bg.val))), m2)
	for _, k := range g.adj {
		bg.start[k>>blockShift+1]++
	}
	for b := 0; b < blocks; b++ {
		bg.start[b+1] += bg.start[b]
	}
	fill := make([]int, blocks)
	copy(fill, bg.start[:blocks])
	for e, k := range g.adj {
		s := fill[k>>blockShift]
		fill[k>>blockShift]++
		bg.slot[e] = uint32(s)
		bg.tgt[s] = uint32(k & (1<<blockShift - 1))
	}
	return bg
}

// useBlocked reports whether this round's second pass is the blocked gather: a packed
// format whose shares fit 16 bits, on a large network.
func (b *RandomizedDiffusion) useBlocked() bool {
	return b.blocked != nil && (b.format == rd8 || b.format == rd16)
}

// scatterChunks writes the shares of chunks lo..hi-1 into their slots.
func (b *RandomizedDiffusion) scatterChunks(lo, hi int) {
	for c := lo; c < hi; c++ {
		v0, v1 := b.ln.chunkRange(c)
		if b.format == rd8 {
			scatterShares(b, v0, v1, b.p8, b.blocked.val8)
		} else {
			scatterShares(b, v0, v1, b.p16, b.blocked.val)
		}
	}
}

// scatterShares writes, for every link end e = (j → k) of nodes v0..v1-1, what j's
// record sends to k: its quotient above qmin plus its excess bit for k's position p.
// A share of a T-bit record is below 2^(T−d) + 1, so it fits a V of T bits.
func scatterShares[T packedWord, V uint8 | uint16](b *RandomizedDiffusion, v0, v1 int, in []T, val []V) {
	off, slot := b.ln.g.off, b.blocked.slot
	d := b.d & 63
	if b.regular { // the ends of j are d·j..d·j+d−1: no offsets to read
		dd := int(d)
		slot = slot[dd*v0 : dd*v1]
		for j, rec := range in[v0:v1] {
			q := uint64(rec) >> d
			for p, s := range slot[dd*j : dd*j+dd] {
				val[s] = V(q + uint64(rec)>>(uint(p)&63)&1)
			}
		}
		return
	}
	for j := v0; j < v1; j++ {
		rec := uint64(in[j])
		q := rec >> d
		ends := slot[off[j]:off[j+1]]
		for p, s := range ends {
			val[s] = V(q + rec>>(uint(p)&63)&1)
		}
	}
}

// addShares adds the shares val[s] to blk[tgt[s]].
func addShares[V uint8 | uint16](blk []int64, tgt []uint32, val []V) {
	val = val[:len(tgt)]
	for s, t := range tgt {
		blk[t] += int64(val[s])
	}
}

// accShares adds the shares val[s] to acc[tgt[s]] (tgt[s] < 2^blockShift).
func accShares[V uint8 | uint16](acc *[1 << blockShift]uint32, tgt []uint32, val []V) {
	val = val[:len(tgt)]
	for s, t := range tgt {
		acc[t&(1<<blockShift-1)] += uint32(val[s])
	}
}

// kept returns what node k keeps of its load: deg·q plus the excess it sent, for the
// record rec of degree deg.
func kept(rec, d, deg uint64) uint64 {
	return deg*(rec>>(d&63)) + uint64(bits.OnesCount64(rec&(1<<(deg&63)-1)))
}

// sumBlocks finishes blocks lo..hi-1: every node keeps X − deg·q − its excess sent (as
// in gatherPacked), adds the shares in its block's slots, and each chunk's load
// extremes are recorded for the next round. With a spare accumulator the shares add up
// there first and one pass per chunk then updates the loads and their extremes.
func (b *RandomizedDiffusion) sumBlocks(lo, hi int) {
	var acc *[1 << blockShift]uint32
	select {
	case acc = <-b.blocked.acc:
	default:
	}
	bg, loads := b.blocked, b.s.Loads
	n := b.ln.g.Order()
	for B := lo; B < hi; B++ {
		v0, v1 := B<<blockShift, min(n, (B+1)<<blockShift)
		s0, s1 := bg.start[B], bg.start[B+1]
		if acc == nil {
			b.subtractKept(v0, v1)
			if b.format == rd8 {
				addShares(loads[v0:v1], bg.tgt[s0:s1], bg.val8[s0:s1])
			} else {
				addShares(loads[v0:v1], bg.tgt[s0:s1], bg.val[s0:s1])
			}
		} else if b.format == rd8 {
			accShares(acc, bg.tgt[s0:s1], bg.val8[s0:s1])
		} else {
			accShares(acc, bg.tgt[s0:s1], bg.val[s0:s1])
		}
		for c := v0 / diffusionChunk; c*diffusionChunk < v1; c++ {
			c0, c1 := b.ln.chunkRange(c)
			var mn, mx uint64
			if acc != nil {
				mn, mx = b.addAccumulated(c0, c1, acc[c0-v0:c1-v0])
			} else {
				mn, mx = uint64(math.MaxUint64), 0
				for _, x := range loads[c0:c1] {
					mn, mx = min(mn, uint64(x)), max(mx, uint64(x))
				}
			}
			b.lo[c], b.hi[c] = int64(mn), int64(mx)
		}
	}
	if acc != nil {
		b.blocked.acc <- acc
	}
}

// subtractKept takes from nodes v0..v1-1 what they sent this round.
func (b *RandomizedDiffusion) subtractKept(v0, v1 int) {
	loads, off, d := b.s.Loads, b.ln.g.off, uint64(b.d)
	for k := v0; k < v1; k++ {
		var rec uint64
		if b.format == rd8 {
			rec = uint64(b.p8[k])
		} else {
			rec = uint64(b.p16[k])
		}
		loads[k] = int64(uint64(loads[k]) - kept(rec, d, uint64(off[k+1]-off[k])))
	}
}

// addAccumulated sets the loads of nodes c0..c1-1 to X − what they sent + their
// accumulated shares a (which it clears) and returns the new loads' extremes.
func (b *RandomizedDiffusion) addAccumulated(c0, c1 int, a []uint32) (mn, mx uint64) {
	loads, off, d := b.s.Loads[c0:c1], b.ln.g.off, uint64(b.d)
	a = a[:len(loads)]
	mn = math.MaxUint64
	switch {
	case b.format == rd8 && b.r8 != nil: // regular, d < 8: what a node keeps from a table
		keep, in := &b.r8.keep, b.p8[c0:c1]
		in = in[:len(loads)]
		for i, x := range loads {
			y := uint64(x) - uint64(keep[in[i]]) + uint64(a[i])
			a[i] = 0
			loads[i] = int64(y)
			mn, mx = min(mn, y), max(mx, y)
		}
	case b.regular:
		for i, x := range loads {
			var rec uint64
			if b.format == rd8 {
				rec = uint64(b.p8[c0+i])
			} else {
				rec = uint64(b.p16[c0+i])
			}
			y := uint64(x) - kept(rec, d, d) + uint64(a[i])
			a[i] = 0
			loads[i] = int64(y)
			mn, mx = min(mn, y), max(mx, y)
		}
	default:
		for i, x := range loads {
			var rec uint64
			if b.format == rd8 {
				rec = uint64(b.p8[c0+i])
			} else {
				rec = uint64(b.p16[c0+i])
			}
			y := uint64(x) - kept(rec, d, uint64(off[c0+i+1]-off[c0+i])) + uint64(a[i])
			a[i] = 0
			loads[i] = int64(y)
			mn, mx = min(mn, y), max(mx, y)
		}
	}
	return mn, mx
}
