package tokendist

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// simulate runs b to completion and fails the test on error.
func simulate(t testing.TB, b *RingScheduler, seed uint64) Result {
	t.Helper()
	res, err := RunRing(context.Background(), b, &RunOptions{Seed: seed})
	require.NoError(t, err)
	require.Equal(t, StatusDone, res.Status)
	return res
}

func mustTree(t testing.TB, p int, dag TreeDag, err error, opts *RingOptions) *RingScheduler {
	t.Helper()
	require.NoError(t, err)
	b, err := NewRingTree(p, dag, opts)
	require.NoError(t, err)
	return b
}

func mustGrid(t testing.TB, p int, dag GridDag, err error, opts *RingOptions) *RingScheduler {
	t.Helper()
	require.NoError(t, err)
	b, err := NewRingGrid(p, dag, opts)
	require.NoError(t, err)
	return b
}

// checkBlocks verifies Theorem 2.2/3.2's assertions (a) and (b): PE i starts at step i and
// works in one uninterrupted block of W_i steps.
func checkBlocks(t *testing.T, st RingStats, what string) {
	t.Helper()
	for i := range st.Work {
		if st.Work[i] == 0 {
			require.Equal(t, int64(-1), st.Start[i], "%s: idle PE %d", what, i)
			continue
		}
		require.Equal(t, int64(i), st.Start[i], "%s: PE %d starts", what, i)
		require.Equal(t, st.Work[i], st.Finish[i]-st.Start[i], "%s: PE %d interrupted", what, i)
	}
}

// table1 is the paper's Table 1 as printed: PE → level → resident nodes (heap numbers).
var table1 = map[int]map[int][]uint64{
	0: {0: {1}, 1: {2}, 2: {4}, 3: {8}, 4: {16, 31}, 5: {32, 47, 55, 59, 61, 62}},
	1: {1: {3}, 2: {5, 6}, 3: {9, 10, 12}, 4: {17, 18, 20, 24}, 5: {33, 34, 36, 40, 48, 63}},
	2: {2: {7}, 3: {11, 13, 14}, 4: {19, 21, 22, 25, 26, 28}, 5: {35, 37, 39, 41, 42, 44, 49, 50, 52, 56}},
	3: {3: {15}, 4: {23, 27, 29, 30}, 5: {39, 43, 45, 46, 51, 53, 54, 57, 58, 60}},
}

// simulatedTable1 simulates the tree of Table 1 (levels 0..5, i.e. T_6) on R_4.
func simulatedTable1(t *testing.T) map[int]map[int][]uint64 {
	dag, err := CompleteTree(6)
	b := mustTree(t, 4, dag, err, nil)
	simulate(t, b, 1)
	got := map[int]map[int][]uint64{}
	for _, tk := range b.Schedule() {
		if got[tk.PE] == nil {
			got[tk.PE] = map[int][]uint64{}
		}
		l := TreeNode(tk.Node).Level()
		got[tk.PE][l] = append(got[tk.PE][l], tk.Node)
	}
	return got
}

// ringTreeDeviationBound is the corrected (2.2) per PE, from the exact DFT form:
// ((p-1)α^n + 1)/p for i < p-1 and ((p-1)/p)(α^n + 1) for i = p-1.
func ringTreeDeviationBound(n, p, i int) float64 {
	alpha, _ := RingAlpha(p)
	an := math.Pow(alpha, float64(n))
	if i == p-1 {
		return float64(p-1) / float64(p) * (an + 1)
	}
	return (float64(p-1)*an + 1) / float64(p)
}

// grid31Twice returns twice the value of (3.1), computed as printed (2W is an integer).
func grid31Twice(n, p, i int) int64 {
	q := int64(math.Floor(float64(n-i) / float64(p)))
	ni, pp := int64(n-i), int64(p)
	// 2W = 2(n-i) + (2(n-i) - p)q - p q²
	return 2*ni + (2*ni-pp)*q - pp*q*q
}

func bitsLog2(p int) int {
	l := 0
	for 1<<uint(l+1) <= p {
		l++
	}
	return l
}

// adversarialCount enumerates the AdversarialGrid closure by breadth-first search over
// the rule, independently of the simulator.
func adversarialCount(dag GridDag) map[GridNode]bool {
	nodes := map[GridNode]bool{{}: true}
	queue := []GridNode{{}}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		if !dag.Spawns(x) {
			continue
		}
		for _, c := range []GridNode{x.Left(), x.Right()} {
			if !nodes[c] {
				nodes[c] = true
				queue = append(queue, c)
			}
		}
	}
	return nodes
}

// TestRingAgainstReference compares RingScheduler with the straightforward reference simulator
// (refSimulate, below) for every policy on random trees and grids, complete dags and
// quadrature, p in 1..6 and 9: the same PE and step for every task.
func TestRingAgainstReference(t *testing.T) {
	type dagCase struct {
		name string
		tree func(seed uint64) (TreeDag, error)
		grid func(seed uint64) (GridDag, error)
	}
	cases := []dagCase{
		{name: "random tree 0.7", tree: func(s uint64) (TreeDag, error) { return RandomTreeDag(0.7, 14, s) }},
		{name: "random tree 0.9", tree: func(s uint64) (TreeDag, error) { return RandomTreeDag(0.9, 10, s) }},
		{name: "T_9", tree: func(uint64) (TreeDag, error) { return CompleteTree(9) }},
		{name: "w-complete", tree: func(uint64) (TreeDag, error) { return WCompleteTree(12, 2) }},
		{name: "random grid 0.8", grid: func(s uint64) (GridDag, error) { return RandomGridDag(0.8, 30, s) }},
		{name: "random grid 0.95", grid: func(s uint64) (GridDag, error) { return RandomGridDag(0.95, 25, s) }},
		{name: "G_20", grid: func(uint64) (GridDag, error) { return PyramidGrid(20) }},
		{name: "adversarial", grid: func(uint64) (GridDag, error) { return AdversarialGrid(0, 1, 25) }},
	}
	for _, c := range cases {
		for _, p := range []int{1, 2, 3, 4, 5, 6, 9} {
			for _, pol := range RingPolicies() {
				for seed := uint64(1); seed <= 3; seed++ {
					what := fmt.Sprintf("%s p %d %v seed %d", c.name, p, pol, seed)
					var b *RingScheduler
					var tree TreeDag
					var grid GridDag
					var err error
					if c.tree != nil {
						tree, err = c.tree(seed)
						b = mustTree(t, p, tree, err, &RingOptions{Policy: pol})
					} else {
						grid, err = c.grid(seed)
						b = mustGrid(t, p, grid, err, &RingOptions{Policy: pol})
					}
					res := simulate(t, b, seed)
					ref, refWork := refSimulate(p, tree, grid, pol, seed)
					require.Equal(t, sortedSchedule(ref), b.Schedule(), what)
					require.Equal(t, refWork, b.stats().Work, what)
					st := b.stats()
					require.Equal(t, res.Moved, st.Moved, what)
					require.Equal(t, res.Time, st.Time, what)
					require.Equal(t, int64(p)*st.Time-st.Tasks, st.Idle, what)
					if pol == RingPolicyKSBF {
						for _, tk := range b.Schedule() {
							pe := GridNodeOf(tk.Node).K % p
							if tree != nil {
								pe = TreeNode(tk.Node).Weight() % p
							}
							require.Equal(t, pe, tk.PE, "%s: Lemma 1.1", what)
						}
					}
					if pol == RingPolicyKeepAll {
						require.Equal(t, st.Tasks, st.Work[0], what)
					}
				}
			}
		}
	}
}

// TestRingBadInput covers every rejected input with its error and sentinel.
func TestRingBadInput(t *testing.T) {
	ctx := context.Background()
	always := TreeDagFunc(func(TreeNode) bool { return true })
	leftPath := TreeDagFunc(func(x TreeNode) bool { return x.Bits() == 0 })
	stuck := GridDagFunc(func(x GridNode) bool {
		return x == GridNode{0, 0} || x == GridNode{0, 1} || x == GridNode{1, 1} || x == GridNode{2, 0}
	})
	ring4, _ := Ring(4)
	path4, _ := Path(4)
	ring5, _ := Ring(5)
	star4, _ := Star(4)
	t4, _ := CompleteTree(4)
	runOn := func(net Network, loads Loads) error {
		b, err := NewRingTree(4, t4, nil)
		if err != nil {
			return err
		}
		_, err = Run(ctx, net, loads, b, nil)
		return err
	}
	simErr := func(b *RingScheduler, err error) error {
		if err != nil {
			return err
		}
		_, err = RunRing(ctx, b, nil)
		return err
	}
	cases := []struct {
		name    string
		err     func() error
		is      error
		mention string
	}{
		{"CompleteTree n=0", func() error { _, err := CompleteTree(0); return err }, ErrBadParameter, "n = 0"},
		{"CompleteTree n=64", func() error { _, err := CompleteTree(64); return err }, ErrBadParameter, "n = 64"},
		{"WCompleteTree w<0", func() error { _, err := WCompleteTree(5, -1); return err }, ErrBadParameter, "w = -1"},
		{"WCompleteTree h=0", func() error { _, err := WCompleteTree(0, 1); return err }, ErrBadParameter, "h = 0"},
		{"RandomTreeDag q>1", func() error { _, err := RandomTreeDag(1.5, 5, 1); return err }, ErrBadParameter, "q = 1.5"},
		{"RandomTreeDag q<0", func() error { _, err := RandomTreeDag(-0.1, 5, 1); return err }, ErrBadParameter, "q = -0.1"},
		{"RandomTreeDag q NaN", func() error { _, err := RandomTreeDag(math.NaN(), 5, 1); return err }, ErrBadParameter, "q = NaN"},
		{"RandomTreeDag depth 0", func() error { _, err := RandomTreeDag(0.5, 0, 1); return err }, ErrBadParameter, "depth = 0"},
		{"PyramidGrid n=0", func() error { _, err := PyramidGrid(0); return err }, ErrBadParameter, "n = 0"},
		{"RandomGridDag q>1", func() error { _, err := RandomGridDag(2, 5, 1); return err }, ErrBadParameter, "q = 2"},
		{"RandomGridDag depth", func() error { _, err := RandomGridDag(0.5, GridMaxRandomDepth+1, 1); return err }, ErrBadParameter, "depth"},
		{"AdversarialGrid i=j", func() error { _, err := AdversarialGrid(1, 1, 5); return err }, ErrBadParameter, "i = 1, j = 1"},
		{"AdversarialGrid m=0", func() error { _, err := AdversarialGrid(0, 1, 0); return err }, ErrBadParameter, "m = 0"},
		{"AdversarialGrid j≥m", func() error { _, err := AdversarialGrid(0, 5, 5); return err }, ErrBadParameter, "j = 5"},
		{"Quadrature nil f", func() error { _, err := NewQuadrature(nil, 0, 1, 0.1, 0); return err }, ErrBadParameter, "nil"},
		{"Quadrature a≥b", func() error { _, err := NewQuadrature(math.Sin, 1, 1, 0.1, 0); return err }, ErrBadParameter, "[1, 1]"},
		{"Quadrature no threshold", func() error { _, err := NewQuadrature(math.Sin, 0, 1, 0, 0); return err }, ErrBadParameter, "resolution > 0"},
		{"Quadrature negative", func() error { _, err := NewQuadrature(math.Sin, 0, 1, -1, 0); return err }, ErrBadParameter, "resolution = -1"},
		{"NewRingTree p=0", func() error { _, err := NewRingTree(0, t4, nil); return err }, ErrBadParameter, "p = 0"},
		{"NewRingGrid p<0", func() error { _, err := NewRingGrid(-3, GridDagFunc(nil), nil); return err }, ErrBadParameter, "p = -3"},
		{"NewRingTree nil dag", func() error { _, err := NewRingTree(3, nil, nil); return err }, ErrBadParameter, "nil"},
		{"NewRingGrid nil dag", func() error { _, err := NewRingGrid(3, nil, nil); return err }, ErrBadParameter, "nil"},
		{"policy", func() error { _, err := NewRingTree(3, t4, &RingOptions{Policy: 9}); return err }, ErrBadParameter, "policy 9"},
		{"MaxTasks<0", func() error { _, err := NewRingTree(3, t4, &RingOptions{MaxTasks: -1}); return err }, ErrBadParameter, "MaxTasks = -1"},
		{"RingWork n=0", func() error { _, err := RingWork(0, 3); return err }, ErrBadParameter, "n = 0"},
		{"RingWork p=0", func() error { _, err := RingWork(3, 0); return err }, ErrBadParameter, "p = 0"},
		{"RingWorkDFT n big", func() error { _, err := RingWorkDFT(2000, 3); return err }, ErrBadParameter, "n = 2000"},
		{"RingGridWork p<1", func() error { _, err := RingGridWork(3, -1); return err }, ErrBadParameter, "p = -1"},
		{"RingTreeBounds n<1", func() error { _, err := RingTreeBounds(-2, 3); return err }, ErrBadParameter, "n = -2"},
		{"RingGridBounds p<1", func() error { _, err := RingGridBounds(3, 0); return err }, ErrBadParameter, "p = 0"},
		{"RingAlpha p<1", func() error { _, err := RingAlpha(0); return err }, ErrBadParameter, "p = 0"},
		{"RingTreeTau node 0", func() error { _, err := RingTreeTau(0, 3); return err }, ErrBadParameter, "0"},
		{"RingTreeTau p 0", func() error { _, err := RingTreeTau(1, 0); return err }, ErrBadParameter, "p = 0"},
		{"RingGridTau k<0", func() error { _, err := RingGridTau(GridNode{-1, 0}, 3); return err }, ErrBadParameter, "⟨-1,0⟩"},
		{"ParseTreeNode", func() error { _, err := ParseTreeNode("012"); return err }, ErrBadParameter, "012"},
		{"network Path", func() error { return runOn(path4, Loads{1, 0, 0, 0}) }, ErrBadParameter, "node 0"},
		{"network Star", func() error { return runOn(star4, Loads{1, 0, 0, 0}) }, ErrBadParameter, "R_4"},
		{"network size", func() error { return runOn(ring5, Loads{1, 0, 0, 0, 0}) }, ErrBadParameter, "5 nodes"},
		{"loads root elsewhere", func() error { return runOn(ring4, Loads{0, 1, 0, 0}) }, ErrBadLoads, "PE 0"},
		{"loads two roots", func() error { return runOn(ring4, Loads{2, 0, 0, 0}) }, ErrBadLoads, "load 2"},
		{"never stops", func() error {
			return simErr(NewRingTree(3, always, &RingOptions{MaxTasks: 1000}))
		}, ErrTaskBudget, "MaxTasks = 1000"},
		{"never stops, one PE", func() error {
			return simErr(NewRingTree(1, always, &RingOptions{NoSchedule: true, MaxTasks: 1 << 16}))
		}, ErrTaskBudget, "MaxTasks = 65536"},
		{"never stops, deep first", func() error { return simErr(NewRingTree(64, always, nil)) }, ErrBadDag, "level 62"},
		{"too deep", func() error { return simErr(NewRingTree(3, leftPath, nil)) }, ErrBadDag, "level 62"},
		{"grid waits forever", func() error { return simErr(NewRingGrid(3, stuck, nil)) }, ErrBadDag, "⟨2,1⟩"},
		{"compare no family", func() error { _, err := RunRingComparison(ctx, RingExperiment{P: []int{2}}); return err }, ErrBadParameter, "exactly one"},
		{"compare no P", func() error {
			_, err := RunRingComparison(ctx, RingExperiment{Tree: func(uint64) (TreeDag, error) { return t4, nil }})
			return err
		}, ErrBadParameter, "P"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.err()
			require.Error(t, err)
			require.ErrorIs(t, err, c.is)
			require.True(t, strings.HasPrefix(err.Error(), "tokendist: "), err.Error())
			require.Contains(t, err.Error(), c.mention)
		})
	}
}

// TestRingStepNoAlloc checks that a warmed-up balancer's Init and Steps do not allocate.
func TestRingStepNoAlloc(t *testing.T) {
	ring, _ := Ring(8)
	tree, _ := CompleteTree(12)
	grid, _ := PyramidGrid(60)
	for _, mk := range []func() (*RingScheduler, error){
		func() (*RingScheduler, error) { return NewRingTree(8, tree, nil) },
		func() (*RingScheduler, error) { return NewRingGrid(8, grid, nil) },
		func() (*RingScheduler, error) { return NewRingTree(8, tree, &RingOptions{Policy: RingPolicyRandom}) },
		func() (*RingScheduler, error) {
			return NewRingGrid(8, grid, &RingOptions{Policy: RingPolicyLessLoaded})
		},
	} {
		b, err := mk()
		require.NoError(t, err)
		pcg := rand.NewPCG(1, 2)
		s := &State{Net: ring, Loads: make(Loads, 8), Rand: rand.New(pcg)}
		run := func() {
			pcg.Seed(1, 2) // the same random choices in every run, as Run would make
			clear(s.Loads)
			s.Loads[0], s.Steps = 1, 0
			require.NoError(t, b.Init(s))
			for !b.Done(s) {
				require.NoError(t, b.Step(s))
				s.Steps++
			}
		}
		run()
		require.Zero(t, testing.AllocsPerRun(3, run), b.String())
	}
}

// TestRingReuse checks that a balancer value gives the same results when run twice, and
// that Stats before any run is empty.
func TestRingReuse(t *testing.T) {
	dag, err := RandomTreeDag(0.8, 12, 5)
	b := mustTree(t, 5, dag, err, &RingOptions{Policy: RingPolicyRandom})
	require.Empty(t, b.Schedule())
	simulate(t, b, 9)
	s1, st1 := b.Schedule(), b.stats()
	simulate(t, b, 9)
	require.Equal(t, s1, b.Schedule())
	require.Equal(t, st1, b.stats())
	simulate(t, b, 10)
	require.NotEqual(t, s1, b.Schedule(), "another seed, other random choices")
}

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
