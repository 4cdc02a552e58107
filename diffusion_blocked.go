package tokendist

import (
	"math"
	"math/bits"
	"unsafe"
)

// The blocked gather replaces the second pass of RandomizedDiffusion on large networks
// (propagation blocking). The plain gather reads, for every link end, the record of a
// random neighbour: once the records outgrow the caches, every one of those m reads is a
// cache (and, past a few hundred MB, a TLB) miss. The blocked gather instead writes each
// share into a slot fixed once per network, grouped by the block of nodes that receives
// it (2^18 nodes), then adds every block's slots into its loads.
// Both passes stream: the scatter writes to one sequential run per block, the sum reads
// them back in order. A node's new load is the same sum of the same shares in another
// order, and the arithmetic is modular, so the loads are bit for bit those of the plain
// gather, for every worker count.

// blockShift sets the receiving blocks of the blocked gather: 2^18 nodes each. On
// RandomRegular(10^7, 4), one worker, a round took 388, 313, 252 and 264 ms with blocks
// of 2^14, 2^16, 2^18 and 2^20 nodes: fewer blocks mean fewer write streams in the
// scatter, larger ones a sum whose block of loads (2 MB at 2^18) no longer fits L2.
const blockShift = 18

// blockedMinNodes is the least number of nodes for which RandomizedDiffusion uses the
// blocked gather: below it the records stay in cache and the plain gather is faster
// (RandomRegular(10^6, 4): 17–18 ms plain against 18–21 ms blocked on one worker, and
// the plain gather scales to two workers better; at 10^7: 0.43–0.93 s plain, 0.29 s
// blocked).
const blockedMinNodes = 1 << 22

// blockedGather holds the fixed slot layout of the blocked gather.
type blockedGather struct {
	slot  []uint32 // slot[e]: where the share sent over link end e is written
	tgt   []uint32 // tgt[s]: the node receiving slot s, relative to its block
	start []int    // the slots of block B are start[B]..start[B+1]-1
	val   []uint16 // the shares of the current round, by slot (16-bit records)
	val8  []uint8  // the same memory as bytes, for 8-bit records (shares < 2^7)
}

// newBlockedGather lays out the slots for g: the ends pointing into each block in
// increasing order of end, so that each block's slots fill sequentially. O(n + m) time,
// 10 bytes per link end (2 for the shares, 1 of them used by 8-bit records).
func newBlockedGather(g *Graph) *blockedGather {
	n, m2 := g.Order(), len(g.adj)
	blocks := (n + 1<<blockShift - 1) >> blockShift
	bg := &blockedGather{slot: make([]uint32, m2), tgt: make([]uint32, m2), start: make([]int, blocks+1), val: make([]uint16, m2)}
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

// sumBlocks finishes blocks lo..hi-1: every node keeps X − deg·q − its excess sent (as
// in gatherPacked), adds the shares in its block's slots, and each chunk's load
// extremes are recorded for the next round.
func (b *RandomizedDiffusion) sumBlocks(lo, hi int) {
	bg, loads, off := b.blocked, b.s.Loads, b.ln.g.off
	d := b.d & 63
	n := b.ln.g.Order()
	for B := lo; B < hi; B++ {
		v0, v1 := B<<blockShift, min(n, (B+1)<<blockShift)
		for k := v0; k < v1; k++ {
			var rec uint64
			if b.format == rd8 {
				rec = uint64(b.p8[k])
			} else {
				rec = uint64(b.p16[k])
			}
			deg := uint64(off[k+1] - off[k])
			loads[k] = int64(uint64(loads[k]) - deg*(rec>>d) - uint64(bits.OnesCount64(rec&(1<<(deg&63)-1))))
		}
		blk := loads[v0:v1]
		s0, s1 := bg.start[B], bg.start[B+1]
		if b.format == rd8 {
			addShares(blk, bg.tgt[s0:s1], bg.val8[s0:s1])
		} else {
			addShares(blk, bg.tgt[s0:s1], bg.val[s0:s1])
		}
		for c := v0 / diffusionChunk; c*diffusionChunk < v1; c++ {
			c0, c1 := b.ln.chunkRange(c)
			mn, mx := uint64(math.MaxUint64), uint64(0)
			for _, x := range loads[c0:c1] {
				mn, mx = min(mn, uint64(x)), max(mx, uint64(x))
			}
			b.lo[c], b.hi[c] = int64(mn), int64(mx)
		}
	}
}
