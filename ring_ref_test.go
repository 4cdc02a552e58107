package tokendist

import (
	"container/heap"
	"math/rand/v2"
	"sort"
)

// refTask is one task of the reference simulator, allocated on the heap.
type refTask struct {
	level, order int // breadth-first key: level, then left-to-right order
	tree         TreeNode
	grid         GridNode
}

// refQueue is a container/heap priority queue of tasks in breadth-first order.
type refQueue []*refTask

func (q refQueue) Len() int { return len(q) }
func (q refQueue) Less(i, j int) bool {
	if q[i].level != q[j].level {
		return q[i].level < q[j].level
	}
	return q[i].order < q[j].order
}
func (q refQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *refQueue) Push(x any)   { *q = append(*q, x.(*refTask)) }
func (q *refQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// refSchedule maps a node ID to its PE and step.
type refSchedule map[uint64]RingTask

// refSimulate is the straightforward reference for RingScheduler: one heap-allocated task
// per node, container/heap queues, a map for waiting grid nodes. It follows section
// 1.3 literally: in each step every PE with work executes its first task, then all
// children are delivered. The random policy draws from the same stream as Run.
func refSimulate(p int, tree TreeDag, grid GridDag, policy RingPolicy, seed uint64) (refSchedule, []int64) {
	queues := make([]refQueue, p)
	sched := refSchedule{}
	work := make([]int64, p)
	rng := rand.New(rand.NewPCG(seed, 0x746f6b656e64)) // Run's sequential stream
	waiting := map[GridNode]int{}
	treeTask := func(x TreeNode) *refTask {
		return &refTask{level: x.Level(), order: int(x.Bits()), tree: x}
	}
	gridTask := func(x GridNode) *refTask { return &refTask{level: x.Level(), order: x.K, grid: x} }
	if tree != nil {
		heap.Push(&queues[0], treeTask(TreeRoot))
	} else {
		heap.Push(&queues[0], gridTask(GridNode{}))
	}
	type exec struct {
		pe int
		t  *refTask
	}
	for step := int64(0); ; step++ {
		var run []exec
		for i := range queues {
			if queues[i].Len() > 0 {
				run = append(run, exec{i, heap.Pop(&queues[i]).(*refTask)})
			}
		}
		if len(run) == 0 {
			return sched, work
		}
		lens := make([]int, p)
		for i := range queues {
			lens[i] = queues[i].Len()
		}
		dest := func(i int) int {
			cw, ccw := (i+1)%p, (i+p-1)%p
			switch policy {
			case RingPolicyKeepAll:
				return i
			case RingPolicyLessLoaded:
				if lens[ccw] < lens[cw] {
					return ccw
				}
			case RingPolicyRandom:
				if rng.IntN(2) == 1 {
					return ccw
				}
			}
			return cw
		}
		for _, e := range run {
			work[e.pe]++
			if tree != nil {
				x := e.t.tree
				sched[uint64(x)] = RingTask{Node: uint64(x), PE: e.pe, Step: step}
				if tree.Spawns(x) {
					heap.Push(&queues[e.pe], treeTask(x.Left()))
					d := dest(e.pe)
					heap.Push(&queues[d], treeTask(x.Right()))
				}
				continue
			}
			x := e.t.grid
			sched[x.ID()] = RingTask{Node: x.ID(), PE: e.pe, Step: step}
			if !grid.Spawns(x) {
				continue
			}
			deliver := func(c, other GridNode, d int) {
				if other.K < 0 || other.L < 0 || !grid.Spawns(other) {
					heap.Push(&queues[d], gridTask(c))
					return
				}
				if at, ok := waiting[c]; ok {
					delete(waiting, c)
					heap.Push(&queues[at], gridTask(c))
					return
				}
				waiting[c] = d
			}
			deliver(x.Left(), GridNode{x.K - 1, x.L + 1}, e.pe)
			deliver(x.Right(), GridNode{x.K + 1, x.L - 1}, dest(e.pe))
		}
	}
}

// refTreeNu returns ν(x) by its definition for every node of T_n (index: heap number):
// the nodes on x's PE (weight ≡ Wgt(x) mod p) that precede x in breadth-first order.
func refTreeNu(n, p int) []int64 {
	nu := make([]int64, 1<<uint(n))
	count := make([]int64, p)
	for x := TreeNode(1); x < TreeNode(1)<<uint(n); x++ {
		r := x.Weight() % p
		nu[x] = count[r]
		count[r]++
	}
	return nu
}

// refGridNu returns ν(k, l) by its definition for every node of G_n (index: ID).
func refGridNu(n, p int) []int64 {
	nu := make([]int64, n*(n+1)/2)
	count := make([]int64, p)
	for id := range nu {
		x := GridNodeOf(uint64(id))
		nu[id] = count[x.K%p]
		count[x.K%p]++
	}
	return nu
}

// refTreeWork returns W_i(n) by summing the levels of Lemma 1.1(a) with a Pascal
// recurrence on the counts of strings per weight residue (int64: n ≤ 62).
func refTreeWork(n, p int) []int64 {
	level := make([]int64, p) // strings of the current length by weight mod p
	level[0] = 1
	w := make([]int64, p)
	for l := 0; l < n; l++ {
		for r := range w {
			w[r] += level[r]
		}
		next := make([]int64, p)
		for r := range level {
			next[r] += level[r]
			next[(r+1)%p] += level[r]
		}
		level = next
	}
	return w
}

// sortedSchedule returns the schedule entries ordered by (step, PE).
func sortedSchedule(s refSchedule) []RingTask {
	out := make([]RingTask, 0, len(s))
	for _, t := range s {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Step != out[j].Step {
			return out[i].Step < out[j].Step
		}
		return out[i].PE < out[j].PE
	})
	return out
}
