package tokendist

// bfQueue is one PE's task queue, a priority queue in breadth-first order (section 1.3:
// "the tasks are kept in the queue in order of their levels and, within a level, ... in
// left-to-right order"). Keys order tasks: a tree node's heap number, a grid node's
// level<<32 | k.
//
// Tasks arrive in a few streams (the PE's own left children, tasks from each neighbour)
// that are almost always already sorted, because the PE that produces a stream executes
// in breadth-first order. Each stream is a FIFO that accepts a key no smaller than its
// last one; any other key goes to a binary heap. Pop takes the smallest head, so a queue
// operation is O(1) while arrivals are sorted (always, for KS-BF on T_n and G_n: Theorems
// 2.2 and 3.2) and O(log n) otherwise, and the order is exact in every case. Buffers grow
// by doubling and are kept across runs, so a warmed-up queue does not allocate.
type bfQueue struct {
	fifo [3]keyFIFO
	heap []uint64
	n    int
	// spills counts keys that went to the heap (arrivals out of order).
	spills int64
}

// keyFIFO is a sorted FIFO of keys: buf[head:] are the queued keys.
type keyFIFO struct {
	buf  []uint64
	head int
}

func (q *bfQueue) len() int { return q.n }

func (q *bfQueue) reset() {
	for i := range q.fifo {
		q.fifo[i].buf = q.fifo[i].buf[:0]
		q.fifo[i].head = 0
	}
	q.heap = q.heap[:0]
	q.n = 0
	q.spills = 0
}

// push adds key to stream s.
func (q *bfQueue) push(s int, key uint64) {
	q.n++
	f := &q.fifo[s]
	if len(f.buf) > f.head && key < f.buf[len(f.buf)-1] {
		q.spills++
		q.heapPush(key)
		return
	}
	if len(f.buf) == cap(f.buf) && f.head >= len(f.buf)/2 && f.head > 0 {
		// Compact instead of growing when at least half the buffer is consumed.
		m := copy(f.buf, f.buf[f.head:])
		f.buf = f.buf[:m]
		f.head = 0
	}
	f.buf = append(f.buf, key)
}

// pop removes and returns the smallest key; the queue must not be empty.
func (q *bfQueue) pop() uint64 {
	best, from := ^uint64(0), -1
	for i := range q.fifo {
		f := &q.fifo[i]
		if f.head < len(f.buf) && f.buf[f.head] <= best {
			best, from = f.buf[f.head], i
		}
	}
	if len(q.heap) > 0 && (from < 0 || q.heap[0] < best) {
		from = len(q.fifo)
		best = q.heap[0]
	}
	q.n--
	if from == len(q.fifo) {
		q.heapPop()
		return best
	}
	f := &q.fifo[from]
	f.head++
	if f.head == len(f.buf) {
		f.buf, f.head = f.buf[:0], 0
	}
	return best
}

func (q *bfQueue) heapPush(key uint64) {
	h := append(q.heap, key)
	i := len(h) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if h[parent] <= key {
			break
		}
		h[i] = h[parent]
		i = parent
	}
	h[i] = key
	q.heap = h
}

func (q *bfQueue) heapPop() {
	h := q.heap
	last := h[len(h)-1]
	h = h[:len(h)-1]
	i, n := 0, len(h)
	for n > 0 {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && h[c+1] < h[c] {
			c++
		}
		if last <= h[c] {
			break
		}
		h[i] = h[c]
		i = c
	}
	if n > 0 {
		h[i] = last
	}
	q.heap = h
}
