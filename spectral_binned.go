package tokendist

// binnedMinOrder is the smallest order at which Lanczos's pass A uses the
// propagation-blocked mat-vec (binned) on networks without locality (no stencil runs,
// no 16-bit offsets): there the gather of b over the neighbours reads a vector of 8n
// bytes at random, far beyond the caches. BenchmarkLanczosBinned found the gather
// faster at 10^6 nodes (the 8 MB vector mostly hits the last-level cache) and the
// binned pass faster at 10^7 (docs/performance.md); the threshold lies between the two.
const binnedMinOrder = 1 << 22

// binnedMaxBins bounds the number of bins, and so the number of write streams of pass
// 1, which slows down sharply past a few dozen streams (we did not read the hardware
// counters; the first-level TLB and the prefetchers' stream tables are the likely
// limits; docs/performance.md has the measured pass times by bin size).
const binnedMaxBins = 48

// binShiftFor returns the bin size for n nodes, 2^shift: the smallest shift ≥
// binMinShift with at most binnedMaxBins bins. It costs O(log n).
func binShiftFor(n int) int {
	shift := binMinShift
	for (n+1<<shift-1)>>shift > binnedMaxBins {
		shift++
	}
	return shift
}

// binMinShift is the smallest bin size, 2^binMinShift nodes: smaller bins only add
// write streams.
const binMinShift = 16

// binnedWide, when set (by tests), makes newBinned keep 16-bit bins however few.
var binnedWide bool

// binnedSegments is the number of source segments pass 1 splits the nodes into. It is
// fixed, not the number of workers, so that every contribution lands in the same slot
// whatever the number of workers, and the sums are the same bit for bit.
const binnedSegments = 32

// binnedMatVec is a propagation-blocked (Beamer, Asanović and Patterson, "Reducing
// PageRank communication via propagation blocking", IPDPS 2017) computation of
// (d+1)·P·b for Lanczos's pass A. Pass 1 streams over the sources j in segment order and
// appends b[j] to the bin of each neighbour i of j (the bins are written sequentially,
// one write stream per bin); pass 2 takes one bin at a time, adds its values into an
// accumulator of the bin's nodes, which stays in cache, and finishes pass A
// for those nodes (c = sb·(d+1)·(P·b)_i − bsa·a_i and the chunk sums). The slot of every
// contribution, and the destination it adds to, are fixed when the network is prepared:
// bin-major, then segment, then source order. So the additions into (P·b)_i are in a
// fixed order — the self term, then the neighbours in segment and source order — that
// does not depend on the number of workers, but differs from the gather kernels' order
// (the last bits of the sums differ from theirs).
//
// Memory: 8 B per link end for the values, 1 B (2 B beyond 256 bins) for the bin of each
// link end and 4 B for the destination within its bin of each slot: 52 B per node on a
// 4-regular network.
type binned struct {
	shift  int
	nb, ns int
	segLen int
	bin8   []uint8   // bin of adjacency entry e (the bin of its end), when there are ≤ 256 bins
	bin16  []uint16  // the same, when there are more
	dst    []uint32  // destination of slot s within its bin
	vals   []float64 // slot values, written by pass 1
	start  []int     // start[B·ns + s]: first slot of segment s in bin B; start[nb·ns] = total
	cursor []int     // pass 1's cursors, ns·nb
	accs   chan []float64
	self   []float64 // d+1−deg(i) per node, nil on a regular network (all 1)
}

// newBinned prepares the propagation-blocked mat-vec for ln with bins of 2^shift nodes
// (binShiftFor) and room for workers concurrent bins. It costs O(n + m) time and 13 or
// 14 B per link end.
func newBinned(ln *lazyNet, shift, workers int) *binned {
	g, n := ln.g, ln.g.Order()
	bz := &binned{shift: shift}
	bz.nb = (n + 1<<shift - 1) >> shift
	bz.ns = min(binnedSegments, n)
	bz.segLen = (n + bz.ns - 1) / bz.ns
	bz.ns = (n + bz.segLen - 1) / bz.segLen
	m := len(g.adj)
	if bz.nb <= 1<<8 && !binnedWide {
		bz.bin8 = make([]uint8, m)
	} else {
		bz.bin16 = make([]uint16, m)
	}
	bz.dst = make([]uint32, m)
	bz.vals = make([]float64, m)
	counts := make([]int, bz.nb*bz.ns+1)
	for j := 0; j < n; j++ {
		s := j / bz.segLen
		for e := g.off[j]; e < g.off[j+1]; e++ {
			b := int(g.adj[e]) >> shift
			if bz.bin8 != nil {
				bz.bin8[e] = uint8(b)
			} else {
				bz.bin16[e] = uint16(b)
			}
			counts[b*bz.ns+s]++
		}
	}
	bz.start = make([]int, bz.nb*bz.ns+1)
	total := 0
	for i := 0; i < bz.nb*bz.ns; i++ {
		bz.start[i] = total
		total += counts[i]
	}
	bz.start[bz.nb*bz.ns] = total
	bz.cursor = make([]int, bz.ns*bz.nb)
	for s := 0; s < bz.ns; s++ {
		bz.resetCursors(s)
		cur := bz.cursor[s*bz.nb : (s+1)*bz.nb]
		for j := s * bz.segLen; j < min(n, (s+1)*bz.segLen); j++ {
			for e := g.off[j]; e < g.off[j+1]; e++ {
				i := int(g.adj[e])
				b := i >> shift
				bz.dst[cur[b]] = uint32(i & (1<<shift - 1))
				cur[b]++
			}
		}
	}
	if !g.IsRegular() {
		bz.self = make([]float64, n)
		for i := range bz.self {
			bz.self[i] = float64(ln.d + 1 - g.Degree(i))
		}
	}
	bz.accs = make(chan []float64, workers+1)
	for w := 0; w <= workers; w++ {
		bz.accs <- make([]float64, 1<<shift)
	}
	return bz
}

// resetCursors points segment s's cursors at its first slot in every bin.
func (bz *binned) resetCursors(s int) {
	cur := bz.cursor[s*bz.nb : (s+1)*bz.nb]
	for b := range cur {
		cur[b] = bz.start[b*bz.ns+s]
	}
}

// passA is Lanczos's pass A through the bins: it overwrites l.a with c = sb·(d+1)·P·b
// − bsa·a and stores the chunk sums of c·b, c and b in l.parts, like passAChunks.
func (bz *binned) passA(l *lanczos) {
	l.grp.For(bz.ns, l.workers, l.binPass1)
	l.grp.For(bz.nb, l.workers, l.binPass2)
}

// binPass1 scatters b[j] into the bins for the segments lo..hi−1.
func (l *lanczos) binPass1(lo, hi int) {
	bz := l.bin
	for s := lo; s < hi; s++ {
		if bz.bin8 != nil {
			scatterSegment(l, s, bz.bin8)
		} else {
			scatterSegment(l, s, bz.bin16)
		}
	}
}

// scatterSegment appends b[j] to the bin of every neighbour of j, for the sources j of
// segment s, bins[e] being the bin of adjacency entry e.
func scatterSegment[B uint8 | uint16](l *lanczos, s int, bins []B) {
	bz, g, b := l.bin, l.ln.g, l.b
	bz.resetCursors(s)
	cur := bz.cursor[s*bz.nb : (s+1)*bz.nb]
	vals := bz.vals
	j0, j1 := s*bz.segLen, min(len(b), (s+1)*bz.segLen)
	if l.regular {
		d := l.d
		bs := bins[d*j0 : d*j1]
		for k, j := 0, j0; j < j1; j, k = j+1, k+d {
			v := b[j]
			for _, bn := range bs[k : k+d] {
				vals[cur[bn]] = v
				cur[bn]++
			}
		}
		return
	}
	for j := j0; j < j1; j++ {
		v := b[j]
		for _, bn := range bins[g.off[j]:g.off[j+1]] {
			vals[cur[bn]] = v
			cur[bn]++
		}
	}
}

// binPass2 adds up the bins lo..hi−1 and finishes pass A for their nodes.
func (l *lanczos) binPass2(lo, hi int) {
	bz := l.bin
	acc := <-bz.accs
	defer func() { bz.accs <- acc }()
	a, b := l.a, l.b
	n := len(b)
	sb, bsa := l.sb/float64(l.d+1), l.beta*l.sa
	for B := lo; B < hi; B++ {
		v0, v1 := B<<bz.shift, min(n, (B+1)<<bz.shift)
		ac := acc[:v1-v0]
		if bz.self == nil {
			copy(ac, b[v0:v1])
		} else {
			for i := range ac {
				ac[i] = bz.self[v0+i] * b[v0+i]
			}
		}
		s0, s1 := bz.start[B*bz.ns], bz.start[(B+1)*bz.ns]
		vals, dst := bz.vals[s0:s1], bz.dst[s0:s1]
		for k, v := range vals {
			ac[dst[k]] += v
		}
		// c and the chunk sums, chunk by chunk (diffusionChunk divides 2^shift).
		for c0 := v0; c0 < v1; c0 += diffusionChunk {
			c1 := min(v1, c0+diffusionChunk)
			var dot0, sc0, sum0, dot1, sc1, sum1 float64
			i := c0
			for ; i+1 < c1; i += 2 {
				x0 := sb*ac[i-v0] - bsa*a[i]
				x1 := sb*ac[i+1-v0] - bsa*a[i+1]
				a[i], a[i+1] = x0, x1
				dot0, sc0, sum0 = dot0+x0*b[i], sc0+x0, sum0+b[i]
				dot1, sc1, sum1 = dot1+x1*b[i+1], sc1+x1, sum1+b[i+1]
			}
			if i < c1 {
				x0 := sb*ac[i-v0] - bsa*a[i]
				a[i] = x0
				dot0, sc0, sum0 = dot0+x0*b[i], sc0+x0, sum0+b[i]
			}
			ch := c0 / diffusionChunk
			l.parts[3*ch], l.parts[3*ch+1], l.parts[3*ch+2] = dot0+dot1, sc0+sc1, sum0+sum1
		}
	}
}
