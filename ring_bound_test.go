package tokendist

import (
	"container/heap"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRingScheduleLowerBoundTable(t *testing.T) {
	cases := []struct {
		name   string
		p      int
		levels []int64
		want   int64
	}{
		{"no tasks", 4, nil, 0},
		{"zeros", 4, []int64{0, 0}, 0},
		{"root only", 8, []int64{1}, 1},
		{"one PE: N", 1, []int64{1, 2, 4}, 7},
		// T_3 on R_2: 7 tasks; PE 1 starts at step 1: 4 + 3 = 7 ≥ 7 at T = 4 = ⌈7/2⌉.
		{"T_3 on R_2", 2, []int64{1, 2, 4}, 4},
		// T_3 on R_8: depth 3 dominates (capacity 1 + 2·2 + 2·1 + ... at T = 3 is 9 ≥ 7).
		{"T_3 on R_8", 8, []int64{1, 2, 4}, 3},
		// A star-like profile: 1 root and 60 leaves at level 1 on R_64. max(⌈61/64⌉, 2) = 2,
		// but at T the capacity is Σ_k c_k (T − max(1,k))⁺ for the 60 leaves:
		// T = 6: 5 + 2·(5+4+3+2+1) = 35 < 60; T = 7: 6 + 2·(6+5+4+3+2+1) = 48; T = 8:
		// 7 + 2·28 = 63 ≥ 60 → 8.
		{"star on R_64", 64, []int64{1, 60}, 8},
		// Same on R_2: PE 0 from step 1, PE 1 from step 1: 2(T−1) ≥ 60 → T = 31.
		{"star on R_2", 2, []int64{1, 60}, 31},
		// R_3: PEs 1 and 2 are both at distance 1.
		{"R_3", 3, []int64{1, 2, 2, 2}, 4},
	}
	for _, c := range cases {
		got, err := RingScheduleLowerBound(c.p, c.levels)
		require.NoError(t, err, c.name)
		require.Equal(t, c.want, got, c.name)
	}
	for _, c := range []struct {
		p      int
		levels []int64
		msg    string
	}{
		{0, []int64{1}, "p = 0"},
		{-3, []int64{1}, "p = -3"},
		{4, []int64{1, -2}, "levels[1] = -2"},
		{4, []int64{1 << 52, 1 << 52, 1}, "2^53"},
	} {
		_, err := RingScheduleLowerBound(c.p, c.levels)
		require.ErrorIs(t, err, ErrBadParameter)
		require.ErrorContains(t, err, c.msg)
		require.True(t, strings.HasPrefix(err.Error(), "tokendist: "), err.Error())
	}
}

// bruteRingBound is RingScheduleLowerBound by its definition, scanning T upward.
func bruteRingBound(p int, levels []int64) int64 {
	var n int64
	for _, x := range levels {
		n += x
	}
	if n == 0 {
		return 0
	}
	for T := int64(1); ; T++ {
		ok := true
		for L := range levels {
			var need, capacity int64
			for _, x := range levels[L:] {
				need += x
			}
			for q := 0; q < p; q++ {
				k := int64(min(q, p-q))
				capacity += max(0, T-max(int64(L), k))
			}
			if capacity < need {
				ok = false
				break
			}
		}
		if ok {
			return T
		}
	}
}

// TestRingScheduleLowerBoundSweep checks RingScheduleLowerBound against its definition and,
// for every policy on complete, w-complete, random and adversarial trees and grids and
// p in 1..12, 16, 32 and 64, that it lies between max(⌈N/p⌉, depth) and the simulated time.
func TestRingScheduleLowerBoundSweep(t *testing.T) {
	type dagCase struct {
		name string
		tree func(seed uint64) (TreeDag, error)
		grid func(seed uint64) (GridDag, error)
	}
	cases := []dagCase{
		{name: "random tree 0.6", tree: func(s uint64) (TreeDag, error) { return RandomTreeDag(0.6, 16, s) }},
		{name: "random tree 0.75", tree: func(s uint64) (TreeDag, error) { return RandomTreeDag(0.75, 12, s) }},
		{name: "random tree 0.9", tree: func(s uint64) (TreeDag, error) { return RandomTreeDag(0.9, 9, s) }},
		{name: "T_8", tree: func(uint64) (TreeDag, error) { return CompleteTree(8) }},
		{name: "w-complete", tree: func(uint64) (TreeDag, error) { return WCompleteTree(10, 2) }},
		{name: "random grid 0.8", grid: func(s uint64) (GridDag, error) { return RandomGridDag(0.8, 25, s) }},
		{name: "G_16", grid: func(uint64) (GridDag, error) { return PyramidGrid(16) }},
		{name: "adversarial", grid: func(uint64) (GridDag, error) { return AdversarialGrid(0, 1, 20) }},
	}
	ps := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 16, 32, 64}
	seeds := uint64(4)
	if testing.Short() {
		ps, seeds = []int{1, 2, 3, 5, 8, 64}, 2
	}
	checked, strict := 0, 0
	for _, c := range cases {
		for seed := uint64(1); seed <= seeds; seed++ {
			for _, p := range ps {
				for _, pol := range RingPolicies() {
					what := fmt.Sprintf("%s seed %d p %d %v", c.name, seed, p, pol)
					var b *RingScheduler
					if c.tree != nil {
						tree, err := c.tree(seed)
						b = mustTree(t, p, tree, err, &RingOptions{Policy: pol, NoSchedule: true})
					} else {
						grid, err := c.grid(seed)
						b = mustGrid(t, p, grid, err, &RingOptions{Policy: pol, NoSchedule: true})
					}
					simulate(t, b, seed)
					st := b.stats()
					var n int64
					for _, x := range st.Levels {
						n += x
					}
					require.Equal(t, st.Tasks, n, what)
					require.Equal(t, st.Depth, int64(len(st.Levels)), what)
					lb, err := RingScheduleLowerBound(p, st.Levels)
					require.NoError(t, err, what)
					require.Equal(t, lb, st.RingLowerBound, what)
					require.Equal(t, bruteRingBound(p, st.Levels), lb, what)
					require.GreaterOrEqual(t, lb, st.LowerBound, what)
					require.LessOrEqual(t, lb, st.Time, what)
					checked++
					if lb > st.LowerBound {
						strict++
					}
				}
			}
		}
	}
	t.Logf("%d runs: ring bound ≤ time on all; strictly above max(⌈N/p⌉, depth) on %d", checked, strict)
	require.Positive(t, strict)
}

// ---- Exact optimum on small trees (branch and bound) --------------------------------

// optTree is a small tree-dag in breadth-first order: parent[i] < i, parent[0] = -1.
type optTree struct {
	parent, level, height []int
	canon                 []string // unordered-isomorphism class of the subtree of i
}

// optTreeOf enumerates the tree a TreeDag grows (at most maxN nodes; ok false if larger).
// The isomorphism classes (canon) are computed for trees of at most 64 nodes only.
func optTreeOf(dag TreeDag, maxN int) (optTree, bool) {
	var tr optTree
	nodes := []TreeNode{TreeRoot}
	tr.parent = []int{-1}
	for i := 0; i < len(nodes); i++ {
		if !dag.Spawns(nodes[i]) {
			continue
		}
		if len(nodes)+2 > maxN {
			return optTree{}, false
		}
		nodes = append(nodes, nodes[i].Left(), nodes[i].Right())
		tr.parent = append(tr.parent, i, i)
	}
	n := len(nodes)
	tr.level, tr.height, tr.canon = make([]int, n), make([]int, n), make([]string, n)
	children := make([][]string, n)
	for i := 1; i < n; i++ {
		tr.level[i] = tr.level[tr.parent[i]] + 1
	}
	canon := n <= 64 // only the branch and bound needs the classes
	for i := n - 1; i >= 0; i-- {
		if canon {
			sort.Strings(children[i])
			tr.canon[i] = "(" + strings.Join(children[i], "") + ")"
		}
		if i > 0 {
			par := tr.parent[i]
			tr.height[par] = max(tr.height[par], tr.height[i]+1)
			if canon {
				children[par] = append(children[par], tr.canon[i])
			}
		}
	}
	return tr, true
}

// ringOpt searches the schedules of tr on R_p in the model of RingScheduleLowerBound with
// unlimited link capacity: the root on PE 0 at step 0; task i on PE q at step t needs
// t ≥ t_parent + max(1, dist(q_parent, q)); one task per PE per step. Every policy of the
// library produces such a schedule (a task moves at most one hop, when it is spawned), so
// the optimum found is at most every simulated time.
type ringOpt struct {
	tr      optTree
	p, T    int
	pe, at  []int
	used    []bool  // used[t*p+q]
	free    []int   // free[t]: free slots at step t on PEs at distance ≤ t
	need    [][]int // need[i][L*(H+1)+H]: tasks j ≥ i with level ≥ L and height ≥ H
	D       int     // number of levels
	nodes   int64
	limit   int64
	aborted bool
	prune   bool // use the counting and symmetry pruning (false: plain enumeration)
}

func ringDist(p, a, b int) int {
	x := (a - b + p) % p
	return min(x, p-x)
}

// solve returns the least completion time of tr on R_p, searching T from lo to hi−1 (hi
// is a known feasible time); ok is false if the node limit was hit.
func (o *ringOpt) solve(lo, hi int) (int, bool) {
	n := len(o.tr.parent)
	o.D = 0
	for _, l := range o.tr.level {
		o.D = max(o.D, l+1)
	}
	if o.prune {
		o.need = make([][]int, n+1)
		for i := n; i >= 0; i-- {
			o.need[i] = make([]int, o.D*o.D)
			if i < n {
				copy(o.need[i], o.need[i+1])
				for L := 0; L <= o.tr.level[i]; L++ {
					for H := 0; H <= o.tr.height[i]; H++ {
						o.need[i][L*o.D+H]++
					}
				}
			}
		}
	}
	for T := lo; T < hi; T++ {
		o.T = T
		o.pe, o.at = make([]int, n), make([]int, n)
		o.used = make([]bool, T*o.p)
		o.free = make([]int, T)
		for t := 0; t < T; t++ {
			for q := 0; q < o.p; q++ {
				if ringDist(o.p, 0, q) <= t {
					o.free[t]++
				}
			}
		}
		if o.tr.height[0] > T-1 {
			continue
		}
		o.place(0, 0, 0)
		if o.dfs(1) {
			return T, true
		}
		if o.aborted {
			return 0, false
		}
	}
	return hi, true
}

func (o *ringOpt) place(i, q, t int) {
	o.pe[i], o.at[i] = q, t
	o.used[t*o.p+q] = true
	o.free[t]--
}

func (o *ringOpt) unplace(i int) {
	q, t := o.pe[i], o.at[i]
	o.used[t*o.p+q] = false
	o.free[t]++
}

// fits checks that the tasks i.. can still fit: for every L and H, those of level ≥ L
// and height ≥ H need free slots at steps L..T−1−H.
func (o *ringOpt) fits(i int) bool {
	need := o.need[i]
	for L := 0; L < o.D; L++ {
		var slots int
		for H := o.D - 1; H >= 0; H-- {
			// slots at steps L..T−1−H, grown as H falls.
			if H == o.D-1 {
				for t := L; t <= o.T-1-H; t++ {
					slots += o.free[t]
				}
			} else if t := o.T - 1 - H; t >= L {
				slots += o.free[t]
			}
			if need[L*o.D+H] > slots {
				return false
			}
		}
	}
	return true
}

func (o *ringOpt) dfs(i int) bool {
	n := len(o.tr.parent)
	if i == n {
		return true
	}
	o.nodes++
	if o.nodes > o.limit {
		o.aborted = true
		return false
	}
	if o.prune && !o.fits(i) {
		return false
	}
	par := o.tr.parent[i]
	qp, tp := o.pe[par], o.at[par]
	deadline := o.T - 1 - o.tr.height[i]
	// Symmetry: isomorphic sibling subtrees are interchangeable; order their roots' slots.
	minSlot := -1
	if o.prune && i > 0 && o.tr.parent[i-1] == par && o.tr.canon[i] != "" && o.tr.canon[i-1] == o.tr.canon[i] {
		minSlot = o.at[i-1]*o.p + o.pe[i-1]
	}
	for t := tp + 1; t <= deadline; t++ {
		for q := 0; q < o.p; q++ {
			if tp+max(1, ringDist(o.p, qp, q)) > t || o.used[t*o.p+q] || t*o.p+q <= minSlot {
				continue
			}
			o.place(i, q, t)
			ok := o.dfs(i + 1)
			o.unplace(i)
			if ok {
				return true
			}
			if o.aborted {
				return false
			}
		}
	}
	return false
}

// ringOptimum returns the optimum of tr on R_p given an upper bound hi (a policy's time).
func ringOptimum(tr optTree, p int, lo, hi int, limit int64, prune bool) (int, bool) {
	o := &ringOpt{tr: tr, p: p, limit: limit, prune: prune}
	return o.solve(lo, hi)
}

// policyTimes simulates every policy; it returns the times in RingPolicies() order.
func policyTimes(t testing.TB, p int, dag TreeDag, seed uint64) ([]int64, RingStats) {
	var times []int64
	var st RingStats
	for _, pol := range RingPolicies() {
		b, err := NewRingTree(p, dag, &RingOptions{Policy: pol, NoSchedule: true})
		require.NoError(t, err)
		_, err = RunRing(context.Background(), b, &RunOptions{Seed: seed})
		require.NoError(t, err)
		st = b.stats()
		times = append(times, st.Time)
	}
	return times, st
}

// TestRingOptimumSmall solves small random trees exactly and checks
// RingScheduleLowerBound ≤ optimum ≤ every policy's time; on the smallest ones the
// branch and bound agrees with plain enumeration of all schedules.
func TestRingOptimumSmall(t *testing.T) {
	solved, brute := 0, 0
	for _, p := range []int{2, 3, 4, 5} {
		for seed := uint64(1); seed <= 40; seed++ {
			dag, err := RandomTreeDag(0.7, 6, seed)
			require.NoError(t, err)
			tr, ok := optTreeOf(dag, 11)
			if !ok {
				continue
			}
			times, st := policyTimes(t, p, dag, seed)
			best := slices.Min(times)
			lb := int(st.RingLowerBound)
			o := &ringOpt{tr: tr, p: p, limit: 1e6, prune: true}
			opt, ok := o.solve(lb, int(best))
			require.True(t, ok, "p %d seed %d: node limit", p, seed)
			what := fmt.Sprintf("p %d seed %d N %d", p, seed, len(tr.parent))
			if int64(opt) < best {
				got, err := checkRingSchedule(tr, p, o.pe, o.at)
				require.NoError(t, err, what)
				require.Equal(t, opt, got, what)
			}
			require.LessOrEqual(t, lb, opt, what)
			require.LessOrEqual(t, int64(opt), best, what)
			solved++
			if len(tr.parent) <= 7 && p <= 3 {
				plain, ok := ringOptimum(tr, p, 1, int(best), 1e8, false)
				require.True(t, ok)
				require.Equal(t, plain, opt, what)
				brute++
			}
		}
	}
	t.Logf("%d instances solved exactly, %d of them also by plain enumeration", solved, brute)
	require.Greater(t, solved, 50)
	require.Greater(t, brute, 10)
}

// ---- An offline list schedule (an upper bound on the optimum for larger trees) ----------

// greedyRing schedules tr on R_p in the model of ringOpt, knowing the whole tree: at every
// step the ready tasks are taken highest subtree first (ties: lower level, then index);
// each goes to a free PE it can reach by then, the one farthest from its parent's PE if
// far is true and the nearest otherwise. It returns the completion time and the schedule.
func greedyRing(tr optTree, p int, far bool) (int, []int, []int) {
	n := len(tr.parent)
	children := make([][]int, n)
	for i := 1; i < n; i++ {
		children[tr.parent[i]] = append(children[tr.parent[i]], i)
	}
	pe, at := make([]int, n), make([]int, n)
	h := &taskHeap{tr: tr}
	for _, c := range children[0] {
		heap.Push(h, c)
	}
	done, T := 1, 1
	busy := make([]bool, p)
	var rest, next []int
	for t := 1; done < n; t++ {
		clear(busy)
		free := p
		rest, next = rest[:0], next[:0]
		for free > 0 && h.Len() > 0 {
			x := heap.Pop(h).(int)
			par := tr.parent[x]
			reach := t - at[par]
			best, bestD := -1, -1
			for q := 0; q < p; q++ {
				dd := ringDist(p, pe[par], q)
				if busy[q] || max(1, dd) > reach {
					continue
				}
				if best < 0 || (far && dd > bestD) || (!far && dd < bestD) {
					best, bestD = q, dd
				}
			}
			if best < 0 {
				rest = append(rest, x)
				continue
			}
			busy[best] = true
			free--
			pe[x], at[x] = best, t
			done++
			T = t + 1
			next = append(next, children[x]...)
		}
		for _, x := range rest {
			heap.Push(h, x)
		}
		for _, x := range next {
			heap.Push(h, x)
		}
	}
	return T, pe, at
}

// taskHeap orders ready tasks: highest subtree first, then lower level, then index.
type taskHeap struct {
	tr optTree
	x  []int
}

func (h *taskHeap) Len() int { return len(h.x) }
func (h *taskHeap) Less(i, j int) bool {
	a, b := h.x[i], h.x[j]
	if h.tr.height[a] != h.tr.height[b] {
		return h.tr.height[a] > h.tr.height[b]
	}
	if h.tr.level[a] != h.tr.level[b] {
		return h.tr.level[a] < h.tr.level[b]
	}
	return a < b
}
func (h *taskHeap) Swap(i, j int) { h.x[i], h.x[j] = h.x[j], h.x[i] }
func (h *taskHeap) Push(v any)    { h.x = append(h.x, v.(int)) }
func (h *taskHeap) Pop() any {
	v := h.x[len(h.x)-1]
	h.x = h.x[:len(h.x)-1]
	return v
}

// checkRingSchedule reports whether (pe, at) is a valid schedule of tr on R_p in the model
// and returns its completion time.
func checkRingSchedule(tr optTree, p int, pe, at []int) (int, error) {
	used := map[[2]int]bool{}
	T := 0
	for i := range tr.parent {
		if i == 0 {
			if pe[0] != 0 || at[0] != 0 {
				return 0, fmt.Errorf("root at PE %d step %d", pe[0], at[0])
			}
		} else {
			par := tr.parent[i]
			if at[i] < at[par]+max(1, ringDist(p, pe[par], pe[i])) {
				return 0, fmt.Errorf("task %d at (%d,%d) too early for its parent at (%d,%d)", i, pe[i], at[i], pe[par], at[par])
			}
		}
		k := [2]int{pe[i], at[i]}
		if used[k] {
			return 0, fmt.Errorf("two tasks on PE %d at step %d", pe[i], at[i])
		}
		used[k] = true
		T = max(T, at[i]+1)
	}
	return T, nil
}

// TestRingGreedySchedule checks that the offline list schedule is a valid schedule, never
// faster than the optimum (small trees) or the ring lower bound (larger ones).
func TestRingGreedySchedule(t *testing.T) {
	for _, p := range []int{1, 2, 3, 4, 8, 16, 64} {
		for seed := uint64(1); seed <= 12; seed++ {
			for _, c := range []struct {
				q     float64
				depth int
			}{{0.7, 6}, {0.6, 16}, {0.75, 12}} {
				dag, err := RandomTreeDag(c.q, c.depth, seed)
				require.NoError(t, err)
				tr, ok := optTreeOf(dag, 1<<14)
				require.True(t, ok)
				_, st := policyTimes(t, p, dag, seed)
				for _, far := range []bool{false, true} {
					T, pe, at := greedyRing(tr, p, far)
					got, err := checkRingSchedule(tr, p, pe, at)
					require.NoError(t, err)
					require.Equal(t, got, T)
					require.GreaterOrEqual(t, int64(T), st.RingLowerBound)
					if len(tr.parent) <= 11 && p <= 5 {
						opt, ok := ringOptimum(tr, p, int(st.RingLowerBound), T, 1e6, true)
						require.True(t, ok)
						require.LessOrEqual(t, opt, T)
					}
				}
			}
		}
	}
}
