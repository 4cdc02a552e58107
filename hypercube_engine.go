package tokendist

import (
	"math/bits"

	"github.com/tokendist/tokendist/internal/par"
)

// Chunk sizes of the parallel kernels. Every kernel works on fixed chunks and keeps
// per-chunk results, so a step's outcome never depends on the number of workers (the
// kernels are deterministic anyway; the chunks only make the reductions exact).
const (
	cubeNodeChunk = 1024 // nodes or pairs per chunk
	cubeSelWork   = 4096 // gathered rows per selection chunk
	cubeNeckChunk = 256  // necklaces per chunk
)

// cubeEngine performs the parallel operations of the cube balancers on node-major rows
// of w counts: balancing pairs across a dimension (Definition 2.5, and 3.1 for w > 1),
// choosing the least-discrepancy dimension of every subcube of a recursion level
// (Definition 2.6 and 3.2), emulating an unshuffle on the shuffle-exchange, and
// Leighton's phases on one column. Buffers are allocated once per balancer.
type cubeEngine struct {
	d, p, w int
	topo    cubeTopology
	rows    []int64
	totals  Loads
	split   bool // rows are not the totals (NewMultiBalance): keep both up to date
	workers int
	grp     par.Group

	// Per-chunk results of the current kernel.
	n, size, nChunks int
	chTime, chMoved  []int64
	scratch          []int64 // 2w words per chunk

	// Kernel parameters.
	dim, level int

	// Recursion. The rows of every subcube of the current level lie contiguously in
	// cur (subcube c at c·2^l, in the order of its free dimensions), with their node IDs
	// in ids (nil at level 0: cur is the rows themselves); nxt and nids receive the next
	// level, fold is scratch. free holds every subcube's free dimensions, dims the chosen
	// dimension of every subcube of levels 0..d−2 (heap order: level k starts at
	// 2^k − 1), leaf every node's subcube index at level d−1.
	cur, nxt, fold []int64
	ids, nids      []int32
	free, nfree    []uint32
	dims           []uint8
	leaf           []uint32
	selA, selB     []int64
	idsA, idsB     []int32

	// Shuffle-exchange: necklaces (cycles of the unshuffle), listed n0, U(n0), ...
	neck, neckStart []int32
	neckMsgs        int64

	moved int64

	kAscend, kLeaf, kTree, kSelect, kUnshuffle func(lo, hi int)
}

// prepare sizes the buffers for c (first run, or after a change of shape) and binds
// the rows: the given ones, or State.Loads itself if rows is nil.
func (e *cubeEngine) prepare(c *cubeCore, s *State, rows []int64) {
	if e.p != c.p || e.w != c.w || e.d != c.d || e.topo != c.shape.topo || e.chTime == nil {
		e.d, e.p, e.w, e.topo = c.d, c.p, c.w, c.shape.topo
		chunks := e.p/cubeNeckChunk + 1
		e.chTime, e.chMoved = make([]int64, chunks), make([]int64, chunks)
		e.scratch = make([]int64, chunks*2*e.w)
		half := max(1, e.p/2)
		if c.algo == algoRecursive {
			e.free, e.nfree = make([]uint32, half), make([]uint32, half)
			e.dims = make([]uint8, half)
			e.leaf = make([]uint32, e.p)
			e.selA, e.selB = make([]int64, e.p*e.w), make([]int64, e.p*e.w)
			e.idsA, e.idsB = make([]int32, e.p), make([]int32, e.p)
			e.fold = make([]int64, half*e.w)
		}
		if e.topo == topoShuffleExchange {
			e.necklaces()
		}
		e.kAscend, e.kLeaf, e.kTree = e.ascendChunks, e.leafChunks, e.treeChunks
		e.kSelect, e.kUnshuffle = e.selectChunks, e.unshuffleChunks
	}
	e.rows, e.split = rows, rows != nil
	e.bind(s)
}

// bind points the engine at the run's state (State.Loads is the same slice for a whole
// run; binding per step keeps the engine honest if a caller swaps it).
func (e *cubeEngine) bind(s *State) {
	e.totals = s.Loads
	if !e.split {
		e.rows = s.Loads
	}
	e.workers = max(1, s.Workers)
}

// necklaces lists the cycles of Unshuffle, each as n0, U(n0), U²(n0), ...
func (e *cubeEngine) necklaces() {
	e.neck = make([]int32, 0, e.p)
	e.neckStart = e.neckStart[:0]
	seen := make([]bool, e.p)
	e.neckMsgs = 0
	for v := 0; v < e.p; v++ {
		if seen[v] {
			continue
		}
		e.neckStart = append(e.neckStart, int32(len(e.neck)))
		x := v
		for !seen[x] {
			seen[x] = true
			e.neck = append(e.neck, int32(x))
			x = unshuffle(x, e.d)
		}
		l := int64(len(e.neck)) - int64(e.neckStart[len(e.neckStart)-1])
		e.neckMsgs += l * (l - 1) * int64(e.w)
	}
	e.neckStart = append(e.neckStart, int32(len(e.neck)))
}

// run calls fn on fixed chunks of size items covering [0, n).
func (e *cubeEngine) run(fn func(lo, hi int), n, size int) (tmax, moved int64) {
	e.n, e.size = n, size
	e.nChunks = (n + size - 1) / size
	workers := min(e.workers, e.nChunks)
	e.grp.For(e.nChunks, workers, fn)
	for ch := 0; ch < e.nChunks; ch++ {
		tmax = max(tmax, e.chTime[ch])
		moved += e.chMoved[ch]
	}
	return tmax, moved
}

func (e *cubeEngine) chunk(ch int) (lo, hi int) {
	return ch * e.size, min(e.n, (ch+1)*e.size)
}

// pair balances processors u and v (Definition 2.5; Definition 3.1 group by group for
// w > 1) and returns the pair's model time and the tokens moved. Each group splits
// evenly; the odd tokens of the groups with an odd sum go alternately to the two sides,
// the first to the side with fewer tokens in total (u on a tie), so the totals split
// evenly too. The time is the larger number of tokens either side sends plus the w
// steps of the count exchange; for w = 1 it is PairTime(a, b).
func (e *cubeEngine) pair(u, v int) (t, moved int64) {
	if e.w == 1 {
		l := e.rows
		a, b := l[u], l[v]
		s := a + b
		na := s >> 1
		if s&1 != 0 && a < b {
			na++
		}
		l[u], l[v] = na, s-na
		if e.split {
			e.totals[u], e.totals[v] = na, s-na
		}
		m := na - a
		if m < 0 {
			m = -m
		}
		return m + PairOverhead, m
	}
	w := e.w
	x, y := e.rows[u*w:(u+1)*w], e.rows[v*w:(v+1)*w]
	tu, tv := e.totals[u], e.totals[v]
	toX := tu <= tv
	var su, sv int64
	for j := range x {
		a, b := x[j], y[j]
		s := a + b
		na := s >> 1
		if s&1 != 0 {
			if toX {
				na++
			}
			toX = !toX
		}
		if na < a {
			su += a - na
		} else {
			sv += na - a
		}
		x[j], y[j] = na, s-na
	}
	e.totals[u], e.totals[v] = tu-su+sv, tv-sv+su
	return max(su, sv) + int64(w), su + sv
}

// balanceDim balances across dimension i: all p/2 pairs in parallel.
func (e *cubeEngine) balanceDim(i int) (t, moved int64) {
	e.dim = i
	return e.run(e.kAscend, e.p/2, cubeNodeChunk)
}

func (e *cubeEngine) ascendChunks(clo, chi int) {
	i := uint(e.dim)
	low := 1<<i - 1
	for ch := clo; ch < chi; ch++ {
		lo, hi := e.chunk(ch)
		var tmax, moved int64
		for k := lo; k < hi; k++ {
			u := (k>>i)<<(i+1) | k&low
			t, m := e.pair(u, u|1<<i)
			tmax = max(tmax, t)
			moved += m
		}
		e.chTime[ch], e.chMoved[ch] = tmax, moved
	}
}

// startSelect makes the whole cube the only subcube of level 0, in node order.
func (e *cubeEngine) startSelect() {
	if e.free == nil {
		return
	}
	e.free[0] = uint32(e.p - 1)
	e.cur, e.ids = nil, nil
}

// selectLevel chooses i* for every subcube of level k (dimension l = d − k ≥ 2) and
// returns the model time of the selection: an all-reduce of the w·l signed sums.
func (e *cubeEngine) selectLevel(k int) int64 {
	e.level = k
	l := e.d - k
	if k == 0 {
		e.cur = e.rows
	}
	// write the next level into whichever buffer cur is not
	e.nxt, e.nids = e.selA, e.idsA
	if k > 0 && &e.cur[0] == &e.selA[0] {
		e.nxt, e.nids = e.selB, e.idsB
	}
	size := max(1, cubeSelWork>>l)
	e.run(e.kSelect, 1<<k, size)
	e.cur, e.ids = e.nxt, e.nids
	e.free, e.nfree = e.nfree, e.free
	return allReduceTime(int64(e.w)*int64(l), l)
}

func (e *cubeEngine) selectChunks(clo, chi int) {
	for ch := clo; ch < chi; ch++ {
		lo, hi := e.chunk(ch)
		acc := e.scratch[ch*2*e.w : ch*2*e.w+e.w]
		for c := lo; c < hi; c++ {
			e.selectOne(c, acc)
		}
		e.chTime[ch], e.chMoved[ch] = 0, 0
	}
}

// selectOne folds subcube c's rows dimension by dimension, from the highest free one
// down (each fold gives that dimension's signed difference of half sums and halves the
// array), picks the dimension of least (multi-)discrepancy, the lowest one on ties, and
// splits the subcube's rows into its two children, low half first: a stable partition
// by one bit, that is a copy of alternate blocks.
func (e *cubeEngine) selectOne(c int, acc []int64) {
	free := e.free[c]
	l := bits.OnesCount32(free)
	w, size := e.w, 1<<l
	seg := e.cur[c*size*w : (c+1)*size*w]
	buf := e.fold[c*(size/2)*w : (c+1)*(size/2)*w]
	best, bestDim, bestT := int64(-1), 0, 0
	rest := free
	src := seg
	for t := l - 1; t >= 0; t-- {
		dim := bits.Len32(rest) - 1
		rest &^= 1 << dim
		half := (1 << t) * w
		delta := foldHalves(src[:half], src[half:2*half], buf[:half], acc)
		src = buf
		if best < 0 || delta <= best {
			best, bestDim, bestT = delta, dim, t
		}
	}
	e.dims[(1<<e.level)-1+c] = uint8(bestDim)
	e.nfree[2*c], e.nfree[2*c+1] = free&^(1<<bestDim), free&^(1<<bestDim)
	// children: positions with bit bestT clear, then set, each in their order.
	block := 1 << bestT
	low, high := c*size, c*size+size/2
	nxt, nids := e.nxt, e.nids
	if block == 1 && w == 1 { // the lowest free dimension: deal out alternate entries
		for b := 0; b < size; b += 2 {
			nxt[low], nxt[high] = seg[b], seg[b+1]
			if e.ids == nil {
				nids[low], nids[high] = int32(c*size+b), int32(c*size+b+1)
			} else {
				nids[low], nids[high] = e.ids[c*size+b], e.ids[c*size+b+1]
			}
			low, high = low+1, high+1
		}
		return
	}
	for b := 0; b < size; b += 2 * block {
		copy(nxt[low*w:(low+block)*w], seg[b*w:(b+block)*w])
		copy(nxt[high*w:(high+block)*w], seg[(b+block)*w:(b+2*block)*w])
		if e.ids == nil { // level 0: positions are node IDs
			for i := 0; i < block; i++ {
				nids[low+i], nids[high+i] = int32(c*size+b+i), int32(c*size+b+block+i)
			}
		} else {
			copy(nids[low:low+block], e.ids[c*size+b:c*size+b+block])
			copy(nids[high:high+block], e.ids[c*size+b+block:c*size+b+2*block])
		}
		low, high = low+block, high+block
	}
}

// foldHalves writes lo + hi into out (rows of w) and returns Σ_j |Σ (hi − lo)|: the
// (multi-)discrepancy across the dimension that separates the halves. out may be lo.
func foldHalves(lo, hi, out, acc []int64) int64 {
	w := len(acc)
	if w == 1 {
		var s int64
		for z, b := range hi {
			a := lo[z]
			s += b - a
			out[z] = a + b
		}
		return abs64(s)
	}
	clear(acc)
	for z := 0; z < len(hi); z += w {
		a, b, o := lo[z:z+w], hi[z:z+w], out[z:z+w]
		for j := range a {
			acc[j] += b[j] - a[j]
			o[j] = a[j] + b[j]
		}
	}
	var delta int64
	for _, s := range acc {
		delta += abs64(s)
	}
	return delta
}

// treeLevel balances every subcube of level k across its chosen dimension.
func (e *cubeEngine) treeLevel(k int) (t, moved int64) {
	e.level = k
	if k == e.d-1 {
		return e.run(e.kLeaf, e.p/2, cubeNodeChunk)
	}
	return e.run(e.kTree, e.p, cubeNodeChunk)
}

// leafChunks balances the subcubes of dimension 1 and records every node's subcube.
func (e *cubeEngine) leafChunks(clo, chi int) {
	for ch := clo; ch < chi; ch++ {
		lo, hi := e.chunk(ch)
		var tmax, moved int64
		for c := lo; c < hi; c++ {
			u, v := 2*c, 2*c+1
			if e.ids != nil {
				u, v = int(e.ids[u]), int(e.ids[v])
			}
			e.leaf[u], e.leaf[v] = uint32(c), uint32(c)
			t, m := e.pair(u, v)
			tmax = max(tmax, t)
			moved += m
		}
		e.chTime[ch], e.chMoved[ch] = tmax, moved
	}
}

func (e *cubeEngine) treeChunks(clo, chi int) {
	shift := uint(e.d - 1 - e.level)
	dims := e.dims[(1<<e.level)-1 : (2<<e.level)-1]
	for ch := clo; ch < chi; ch++ {
		lo, hi := e.chunk(ch)
		var tmax, moved int64
		for v := lo; v < hi; v++ {
			i := dims[e.leaf[v]>>shift]
			if v>>i&1 != 0 {
				continue
			}
			t, m := e.pair(v, v|1<<i)
			tmax = max(tmax, t)
			moved += m
		}
		e.chTime[ch], e.chMoved[ch] = tmax, moved
	}
}

// unshuffle moves every row to the processor's unshuffle neighbour (a cyclic right
// rotation of IDs), so that the next exchange step balances the next virtual dimension.
// Around each necklace the processors all-reduce the minimum of every group (L−1 steps
// of w words) and send only the surplus over it forward; the time is the largest
// surplus plus w·(d−1) for the longest necklace.
func (e *cubeEngine) unshuffle() (t, moved, msgs int64) {
	if e.d < 2 {
		return 0, 0, 0
	}
	t, moved = e.run(e.kUnshuffle, len(e.neckStart)-1, cubeNeckChunk)
	return t + int64(e.w)*int64(e.d-1), moved, e.neckMsgs
}

func (e *cubeEngine) unshuffleChunks(clo, chi int) {
	w := e.w
	for ch := clo; ch < chi; ch++ {
		lo, hi := e.chunk(ch)
		mins := e.scratch[ch*2*w : ch*2*w+w]
		tmp := e.scratch[ch*2*w+w : ch*2*w+2*w]
		var tmax, moved int64
		for q := lo; q < hi; q++ {
			nodes := e.neck[e.neckStart[q]:e.neckStart[q+1]]
			if len(nodes) == 1 {
				continue
			}
			copy(mins, e.rows[int(nodes[0])*w:int(nodes[0]+1)*w])
			for _, v := range nodes[1:] {
				for j, x := range e.rows[int(v)*w : int(v+1)*w] {
					mins[j] = min(mins[j], x)
				}
			}
			for _, v := range nodes {
				var f int64
				for j, x := range e.rows[int(v)*w : int(v+1)*w] {
					f += x - mins[j]
				}
				tmax = max(tmax, f)
				moved += f
			}
			e.rotate(nodes, tmp)
		}
		e.chTime[ch], e.chMoved[ch] = tmax, moved
	}
}

// rotate moves the row (and total) of nodes[i] to nodes[i+1], cyclically.
func (e *cubeEngine) rotate(nodes []int32, tmp []int64) {
	w, L := e.w, len(nodes)
	last := int(nodes[L-1])
	copy(tmp, e.rows[last*w:(last+1)*w])
	lastTotal := e.totals[last]
	for i := L - 1; i > 0; i-- {
		v, u := int(nodes[i]), int(nodes[i-1])
		copy(e.rows[v*w:(v+1)*w], e.rows[u*w:(u+1)*w])
		if e.split {
			e.totals[v] = e.totals[u]
		}
	}
	first := int(nodes[0])
	copy(e.rows[first*w:(first+1)*w], tmp)
	if e.split {
		e.totals[first] = lastTotal
	}
}

// setAside makes supply the tokens of column j above the column's minimum (Theorem 2.4).
func (e *cubeEngine) setAside(j int, supply []int64) {
	w := e.w
	mn := e.rows[j]
	for v := 1; v < e.p; v++ {
		mn = min(mn, e.rows[v*w+j])
	}
	for v := range supply {
		supply[v] = e.rows[v*w+j] - mn
	}
}

// copyColumn makes supply all tokens of column j (Leighton's algorithm on its own).
func (e *cubeEngine) copyColumn(j int, supply []int64) {
	for v := range supply {
		supply[v] = e.rows[v*e.w+j]
	}
}

// leightonPhase runs one phase of Leighton's algorithm on column j (section 2.1): every
// processor with supply left routes one token to the next processor of the cyclic block
// that starts at start, in ID order. It returns the start of the next block and leaves
// the hops travelled in e.moved.
func (e *cubeEngine) leightonPhase(j int, supply []int64, start int) int {
	w, mask := e.w, e.p-1
	k, moved := 0, int64(0)
	for v, s := range supply {
		if s == 0 {
			continue
		}
		dst := (start + k) & mask
		k++
		supply[v]--
		e.rows[v*w+j]--
		e.rows[dst*w+j]++
		if e.split {
			e.totals[v]--
			e.totals[dst]++
		}
		moved += routeHops(e.topo, e.d, v, dst)
	}
	e.moved = moved
	return (start + k) & mask
}

// routeHops returns the links a packet crosses on the bit-fixing route from src to dst:
// on the hypercube the Hamming distance; on the shuffle-exchange the exchanges (the
// differing bits) plus the unshuffle rounds in which the packet is not on a fixed point
// (0…0 or 1…1) of the rotation. After round t (bits 0..t−1 corrected) the packet's
// virtual address is dst's low t bits over src's high bits; it is 0…0 exactly when
// t ≤ trailing zeros of dst and t ≥ bit length of src, and 1…1 symmetrically.
func routeHops(topo cubeTopology, d, src, dst int) int64 {
	h := int64(bits.OnesCount(uint(src ^ dst)))
	if topo != topoShuffleExchange {
		return h
	}
	full := uint(1)<<d - 1
	tz := min(d, bits.TrailingZeros(uint(dst)))
	to := min(d, bits.TrailingZeros(^uint(dst)))
	fixed := max(0, tz-max(1, bits.Len(uint(src)))+1) + max(0, to-max(1, bits.Len(^uint(src)&full))+1)
	return h + int64(d-fixed)
}

// allReduceTime is the model time of an all-reduce of words values over a subcube of
// dimension dims by recursive halving and doubling: while more than one word is left
// and dimensions remain, exchange the half a processor does not keep (⌈L/2⌉ words);
// reduce what is left over the remaining dimensions whole; then gather back in the
// reverse order. For words = dims = l this is at most 4l (Plaxton's O(l), after Ho and
// Johnsson).
func allReduceTime(words int64, dims int) int64 {
	L, t, k := words, int64(0), 0
	for ; k < dims && L > 1; k++ {
		L = (L + 1) / 2
		t += L
	}
	return 2*t + int64(dims-k)*L
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
