package async

// event is one scheduled event. Events are ordered by (t, key, seq): time first, then
// a key that puts, at one instant, the global events first and then each node's events
// in increasing node order (crash and restart, then arrivals by port, then the tick),
// then the order of scheduling. The order is total, so a run is deterministic.
type event struct {
	t   float64
	key uint64 // 0: global; else (node+1)<<34 | class<<32 | port
	seq uint64
	ref int64 // datagram slot, an ack's sequence number, node incarnation or crash index
}

// The classes of a node's events at one instant.
const (
	classCrash   = 0
	classArrival = 1
	classTick    = 2
)

func nodeKey(v int, class uint64, port int) uint64 {
	return uint64(v+1)<<34 | class<<32 | uint64(uint32(port))
}

// ackBit marks, in an arrival's key, an ack (its sequence number is the event's ref, so
// that acks take no datagram slot). An ack sorts after the data of the same port.
const ackBit = 1 << 31

func (e *event) node() int  { return int(e.key>>34) - 1 }
func (e *event) class() int { return int(e.key>>32) & 3 }
func (e *event) port() int  { return int(uint32(e.key) &^ ackBit) }
func (e *event) ack() bool  { return e.key&ackBit != 0 }

func (a *event) less(b *event) bool {
	if a.t != b.t {
		return a.t < b.t
	}
	if a.key != b.key {
		return a.key < b.key
	}
	return a.seq < b.seq
}

// eventHeap is a 4-ary min-heap of events (shallower than a binary heap, and a node's
// children share cache lines) with its own sequence counter. Push and Pop cost
// O(log size) and do not allocate once the slice has grown.
type eventHeap struct {
	h   []event
	seq uint64
}

func (q *eventHeap) len() int { return len(q.h) }

func (q *eventHeap) push(t float64, key uint64, ref int64) {
	q.seq++
	q.h = append(q.h, event{t: t, key: key, seq: q.seq, ref: ref})
	h := q.h
	i := len(h) - 1
	x := h[i]
	for i > 0 {
		p := (i - 1) / 4
		if !x.less(&h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = x
}

// peek returns the smallest event; the heap must not be empty.
func (q *eventHeap) peek() *event { return &q.h[0] }

func (q *eventHeap) pop() event {
	h := q.h
	top := h[0]
	last := len(h) - 1
	x := h[last]
	h = h[:last]
	q.h = h
	if last == 0 {
		return top
	}
	i := 0
	for {
		c := 4*i + 1
		if c >= last {
			break
		}
		m := c
		end := min(c+4, last)
		for j := c + 1; j < end; j++ {
			if h[j].less(&h[m]) {
				m = j
			}
		}
		if !h[m].less(&x) {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = x
	return top
}
