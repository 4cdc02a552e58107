package tokendist

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// ringLong reports whether the long sweeps are enabled (TOKENDIST_LONG=1).
func ringLong() bool { return os.Getenv("TOKENDIST_LONG") == "1" }

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

// TestRingTable1 reproduces every printed number of Table 1 from the simulation, except
// the one misprint pinned by TestErratumRingTable1.
func TestRingTable1(t *testing.T) {
	got := simulatedTable1(t)
	want := map[int]map[int][]uint64{}
	for pe, levels := range table1 {
		want[pe] = map[int][]uint64{}
		for l, xs := range levels {
			want[pe][l] = slices.Clone(xs)
		}
	}
	want[2][5][2] = 38 // the misprint: see TestErratumRingTable1
	require.Equal(t, want, got)
}

// TestErratumRingTable1 pins the misprint of Table 1: node 39 (string 00111, weight 3) is
// listed on both P_2 and P_3; the P_2 entry should be 38 (00110, weight 2), which the
// table omits. The caption says T_5, but the rows show levels 0..5, which is T_6 (63
// nodes) by the paper's own definition of T_n.
func TestErratumRingTable1(t *testing.T) {
	got := simulatedTable1(t)
	require.Equal(t, uint64(39), table1[2][5][2])
	require.NotContains(t, got[2][5], uint64(39))
	require.Contains(t, got[3][5], uint64(39))
	require.Contains(t, got[2][5], uint64(38))
	require.Equal(t, 3, TreeNode(39).Weight())
	require.Equal(t, 2, TreeNode(38).Weight())
	total := 0
	for _, levels := range table1 {
		for _, xs := range levels {
			total += len(xs)
		}
	}
	require.Equal(t, 63, total) // 2^6 - 1: the table shows T_6
}

// TestRingTreeSweep simulates T_n on R_p for every n ≤ 16 (≤ 20 with TOKENDIST_LONG=1)
// and p ≤ 12 and checks, for every PE and every node: the work against RingWork
// (Theorem 2.1, corrected) and RingWorkDFT, Lemma 1.1(a), the schedule τ(x) = ν(x) + π(x)
// of Theorem 2.2 (ν by its definition), assertions (a) and (b) of its proof, the exact
// completion time, the bounds of Theorems 1.1(a) and 2.2, and the corrected bound (2.2).
func TestRingTreeSweep(t *testing.T) {
	maxN := 16
	if ringLong() {
		maxN = 20
	}
	for p := 1; p <= 12; p++ {
		for n := 1; n <= maxN; n++ {
			what := fmt.Sprintf("T_%d on R_%d", n, p)
			dag, err := CompleteTree(n)
			b := mustTree(t, p, dag, err, nil)
			res := simulate(t, b, 1)
			st := b.Stats()
			work, err := RingWork(n, p)
			require.NoError(t, err)
			dft, err := RingWorkDFT(n, p)
			require.NoError(t, err)
			bounds, err := RingTreeBounds(n, p)
			require.NoError(t, err)
			maxW := int64(0)
			for i := 0; i < p; i++ {
				require.Equal(t, work[i].Int64(), st.Work[i], "%s: W_%d", what, i)
				require.InDelta(t, float64(st.Work[i]), dft[i], 1e-6, "%s: DFT W_%d", what, i)
				dev := math.Abs(float64(st.Work[i]) - bounds.Ideal)
				require.LessOrEqual(t, dev, ringTreeDeviationBound(n, p, i)+1e-9, "%s: corrected (2.2) at PE %d", what, i)
				require.LessOrEqual(t, dev, bounds.Deviation+1e-9, what)
				maxW = max(maxW, st.Work[i])
			}
			checkBlocks(t, st, what)
			require.Equal(t, int64(1)<<uint(n)-1, st.Tasks, what)
			require.Equal(t, res.Steps, st.Time, what)
			require.Equal(t, bounds.Time, float64(st.Time), "%s: exact time", what)
			require.LessOrEqual(t, float64(st.Time), bounds.TimeBound, "%s: Theorem 1.1(a)", what)
			require.LessOrEqual(t, st.Time, int64(p)+maxW, "%s: Theorem 2.2", what)
			require.Zero(t, st.Spills, "%s: arrivals out of breadth-first order", what)
			nu := refTreeNu(n, p)
			sched := b.Schedule()
			require.Len(t, sched, int(st.Tasks))
			for _, tk := range sched {
				x := TreeNode(tk.Node)
				pi := x.Weight() % p
				if tk.PE != pi || tk.Step != nu[x]+int64(pi) {
					t.Fatalf("%s: node %v ran on PE %d at step %d; Lemma 1.1(a) and Theorem 2.2 say PE %d, step %d",
						what, x, tk.PE, tk.Step, pi, nu[x]+int64(pi))
				}
			}
		}
	}
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

// TestRingTreeTauClosedForm checks RingTreeTau's closed form against the definition of ν
// for every node of T_14 and every p ≤ 12, and on deep nodes against RingWork.
func TestRingTreeTauClosedForm(t *testing.T) {
	const n = 14
	for p := 1; p <= 12; p++ {
		nu := refTreeNu(n, p)
		for x := TreeNode(1); x < 1<<n; x++ {
			tau, err := RingTreeTau(x, p)
			if want := nu[x] + int64(x.Weight()%p); err != nil || tau != want {
				t.Fatalf("p %d node %v: τ = %d (%v), want %d", p, x, tau, err, want)
			}
		}
	}
	// The first node of level l on PE π is preceded by exactly W_π(l) nodes: the whole
	// of T_l on that PE. Check it at depth 62 for the leftmost node (weight 0).
	for _, p := range []int{1, 2, 3, 7, 64} {
		w, err := RingWork(TreeMaxLevel, p)
		require.NoError(t, err)
		tau, err := RingTreeTau(TreeNode(1)<<TreeMaxLevel, p)
		require.NoError(t, err)
		require.Equal(t, w[0].Int64(), tau, "p %d", p)
	}
}

// TestErratumRingWork21 pins the error in equation (2.1): summing C(n, k) over all
// k ≡ i+1 (mod p) includes k = 0 for i = p-1, so W_{p-1}(n) comes out one too large and
// the total is 2^n, contradicting Fact 2.1. The correct sum runs over k ≥ 1.
func TestErratumRingWork21(t *testing.T) {
	for p := 1; p <= 12; p++ {
		for n := 1; n <= 20; n++ {
			printed := make([]int64, p)
			for i := range printed {
				for k := 0; k <= n; k++ {
					if (k-(i+1))%p == 0 {
						printed[i] += binom62[n][k]
					}
				}
			}
			ref := refTreeWork(n, p)
			for i := range printed {
				want := ref[i]
				if i == p-1 {
					want++ // the spurious C(n, 0)
				}
				require.Equal(t, want, printed[i], "n %d p %d i %d", n, p, i)
			}
		}
	}
	// The smallest counterexample: T_1 (the root alone) on R_1: (2.1) says W_0 = 2.
	w, _ := RingWork(1, 1)
	require.Equal(t, int64(1), w[0].Int64())
}

// TestErratumRingWorkDFT26 pins the error in equation (2.6): the printed form
// (1/p)[2^n + Σ_j ω^{-j(i+1)}(1+ω^j)^n] exceeds W_{p-1}(n) by exactly 1, because
// "Σ_j γ^j = 0" fails for γ = ω^{-(i+1)} = 1; it is right for i < p-1.
func TestErratumRingWorkDFT26(t *testing.T) {
	for p := 2; p <= 12; p++ {
		for n := 1; n <= 30; n++ {
			dft, _ := RingWorkDFT(n, p)
			ref := refTreeWork(n, p)
			for i := range dft {
				printed := dft[i]
				if i == p-1 {
					printed += 1 // RingWorkDFT subtracts p/p = 1 here; the paper does not
				}
				diff := printed - float64(ref[i])
				if i == p-1 {
					require.InDelta(t, 1, diff, 1e-6, "n %d p %d", n, p)
				} else {
					require.InDelta(t, 0, diff, 1e-6, "n %d p %d i %d", n, p, i)
				}
			}
		}
	}
}

// TestErratumRingDeviation22 pins the failures of the bound (2.2)/(2.10),
// |W_i(n) - (2^n-1)/p| ≤ α_p^n, over n ≤ 20, p ≤ 12, every PE: it fails exactly for
// p = 2 (α_2 = |1 + ω| = 0, while W_0 - W_1 = 1) and for p = 3, i = 2, n ≡ 3 (mod 6)
// (deviation 4/3 > α_3^n = 1). The last step of (2.10) needs α_p^n ≥ 1 and the i = p-1
// case misses the -p·[i = p-1] term of the DFT form; RingTreeBounds.Deviation is the
// corrected bound (1 - 1/p)(α_p^n + 1).
func TestErratumRingDeviation22(t *testing.T) {
	type fail struct{ n, p, i int }
	var got, want []fail
	for p := 1; p <= 12; p++ {
		for n := 1; n <= 20; n++ {
			b, _ := RingTreeBounds(n, p)
			ref := refTreeWork(n, p)
			for i := range ref {
				if math.Abs(float64(ref[i])-b.Ideal) > b.PaperDeviation+1e-12 {
					got = append(got, fail{n, p, i})
				}
				if p == 2 || (p == 3 && i == 2 && n%6 == 3) {
					want = append(want, fail{n, p, i})
				}
			}
		}
	}
	require.Equal(t, want, got)
	// The smallest counterexample with p ≥ 3: T_3 on R_3, PE 2 does 1 task, ideal 7/3.
	w, _ := RingWork(3, 3)
	require.Equal(t, int64(1), w[2].Int64())
	alpha, _ := RingAlpha(3)
	require.InDelta(t, 1, alpha, 1e-15)
	require.Greater(t, math.Abs(1-7.0/3), math.Pow(alpha, 3))
}

// TestRingGridSweep simulates G_n on R_p for every n ≤ 20 and p ≤ 12 and checks, for
// every PE and node: (3.3) = (3.1) = the simulated work, Fact 3.1, Lemma 1.1(b), the
// schedule of Theorem 3.2 (against RingGridTau and ν by its definition), that every
// working PE starts at step i and never idles, the exact time, T ≤ W_0(n), the bounds
// (3.2), (3.4), (3.5) and Theorem 1.1(b).
func TestRingGridSweep(t *testing.T) {
	maxN := 20
	if ringLong() {
		maxN = 40
	}
	for p := 1; p <= 12; p++ {
		for n := 1; n <= maxN; n++ {
			what := fmt.Sprintf("G_%d on R_%d", n, p)
			dag, err := PyramidGrid(n)
			b := mustGrid(t, p, dag, err, nil)
			simulate(t, b, 1)
			st := b.Stats()
			work, err := RingGridWork(n, p)
			require.NoError(t, err)
			bounds, err := RingGridBounds(n, p)
			require.NoError(t, err)
			var total int64
			for i := 0; i < p; i++ {
				require.Equal(t, work[i], st.Work[i], "%s: W_%d (3.3)", what, i)
				require.Equal(t, 2*work[i], grid31Twice(n, p, i), "%s: (3.1) at PE %d", what, i)
				total += st.Work[i]
				dev := math.Abs(float64(st.Work[i]) - bounds.Ideal)
				require.LessOrEqual(t, dev, bounds.PaperDeviation+1e-9, "%s: (3.2) at PE %d", what, i)
				require.LessOrEqual(t, dev, bounds.Deviation+1e-9, "%s: (3.4)/(3.5) at PE %d", what, i)
			}
			require.Equal(t, int64(n*(n+1)/2), total, "%s: Fact 3.1", what)
			require.LessOrEqual(t, float64(work[0])-bounds.Ideal, (1.5-1/(2*float64(p)))*float64(n)+1e-9, "%s: (3.4)", what)
			wLast := bounds.Ideal - float64(work[p-1])
			require.LessOrEqual(t, wLast, (1.5-1/float64(p))*float64(n)+0.5+1.5/float64(p)+1e-9, "%s: (3.5)", what)
			checkBlocks(t, st, what)
			require.Equal(t, bounds.Time, float64(st.Time), "%s: exact time", what)
			require.LessOrEqual(t, st.Time, work[0], "%s: Theorem 3.2, T ≤ W_0(n)", what)
			require.LessOrEqual(t, float64(st.Time), bounds.TimeBound, "%s: Theorem 1.1(b)", what)
			require.Zero(t, st.Spills, what)
			nu := refGridNu(n, p)
			for _, tk := range b.Schedule() {
				x := GridNodeOf(tk.Node)
				require.Equal(t, x.K%p, tk.PE, "%s: Lemma 1.1(b) at %v", what, x)
				tau, err := RingGridTau(x, p)
				require.NoError(t, err)
				require.Equal(t, nu[tk.Node]+int64(x.K%p), tau, "%s: closed form ν%v", what, x)
				require.Equal(t, tau, tk.Step, "%s: τ%v", what, x)
			}
		}
	}
}

// grid31Twice returns twice the value of (3.1), computed as printed (2W is an integer).
func grid31Twice(n, p, i int) int64 {
	q := int64(math.Floor(float64(n-i) / float64(p)))
	ni, pp := int64(n-i), int64(p)
	// 2W = 2(n-i) + (2(n-i) - p)q - p q²
	return 2*ni + (2*ni-pp)*q - pp*q*q
}

// TestErratumRingFact32 pins the failure of Fact 3.2, W_{i-1}(n) + i - 1 ≥ W_i(n) + i for
// all i in 1..p-1, and of its consequence W_0(n) > ... > W_{p-1}(n) "for all n": both fail
// when some PEs get no row (n < p), e.g. n = 1, p = 3: W = (1, 0, 0). The correct
// statement: the inequality holds for i ≤ n, i.e. while PE i-1 has work; it was checked
// for all n ≤ 30, p ≤ 12.
func TestErratumRingFact32(t *testing.T) {
	for p := 1; p <= 12; p++ {
		for n := 1; n <= 30; n++ {
			w, _ := RingGridWork(n, p)
			for i := 1; i < p; i++ {
				holds := w[i-1]+int64(i-1) >= w[i]+int64(i)
				require.Equal(t, i <= n, holds, "n %d p %d i %d", n, p, i)
			}
		}
	}
	w, _ := RingGridWork(1, 3)
	require.Equal(t, []int64{1, 0, 0}, w)
}

// TestErratumRingTheorem32 pins the middle step of Theorem 3.2's bound,
// T_grid ≤ max_{0≤i<p}(W_i(n) + i) ≤ W_0(n): the maximum over all PEs exceeds W_0(n) when
// the last PEs get no row (n = 1, p = 3: max is 2, W_0 = 1). The conclusion T ≤ W_0(n)
// holds (checked by TestRingGridSweep) with the maximum over the PEs that have work.
func TestErratumRingTheorem32(t *testing.T) {
	w, _ := RingGridWork(1, 3)
	allPEs := int64(0)
	for i, wi := range w {
		allPEs = max(allPEs, wi+int64(i))
	}
	require.Equal(t, int64(2), allPEs)
	require.Equal(t, int64(1), w[0])
	dag, err := PyramidGrid(1)
	b := mustGrid(t, 3, dag, err, nil)
	simulate(t, b, 1)
	require.Equal(t, int64(1), b.Stats().Time)
}

// TestRingWCompleteTree checks the bad tree family of section 1.3 for every h ≤ 14,
// w ≤ 5, p ≤ 12: the node count (Σ_{k<w} strings of weight k plus the weight-w strings
// ending in their w-th 1), work exactly on PEs (0..w) mod p, and, with w = ⌊log2 p⌋, a
// speedup of at most w+1 = log p + 1 for every h.
func TestRingWCompleteTree(t *testing.T) {
	for p := 1; p <= 12; p++ {
		for h := 1; h <= 14; h++ {
			for w := 0; w <= 5; w++ {
				dag, err := WCompleteTree(h, w)
				b := mustTree(t, p, dag, err, &RingOptions{NoSchedule: true})
				simulate(t, b, 1)
				st := b.Stats()
				var want int64 = 1
				if w > 0 {
					want = 0
					for l := 0; l < h; l++ {
						for k := 0; k < w && k <= l; k++ {
							want += binom62[l][k]
						}
						if l >= 1 && w-1 <= l-1 {
							want += binom62[l-1][w-1]
						}
					}
				}
				require.Equal(t, want, st.Tasks, "h %d w %d", h, w)
				for i, wi := range st.Work {
					// PE i works iff some weight k ≤ min(w, h-1) has k ≡ i (mod p).
					works := false
					for k := i; k <= min(w, h-1); k += p {
						works = true
					}
					require.Equal(t, works, wi > 0, "h %d w %d p %d PE %d", h, w, p, i)
				}
				if lg := bitsLog2(p); w == lg {
					require.LessOrEqual(t, st.Speedup, float64(lg+1)+1e-12, "h %d p %d", h, p)
				}
			}
		}
	}
}

func bitsLog2(p int) int {
	l := 0
	for 1<<uint(l+1) <= p {
		l++
	}
	return l
}

// TestErratumRingWComplete pins two slips of section 1.3's bad tree family: the node set
// "all strings of length < h with weight ≤ w" is not full (x of weight w has x0 but not
// x1), so it is not a tree-dag; the full family (WCompleteTree) has Θ(h^w) nodes as the
// paper says, and KS puts its work on w+1 = log p + 1 PEs, not log p.
func TestErratumRingWComplete(t *testing.T) {
	const h, w, p = 10, 3, 8 // w = log p
	x, _ := ParseTreeNode("111")
	require.Equal(t, w, x.Weight())
	require.Equal(t, w, x.Left().Weight())    // in the paper's set
	require.Equal(t, w+1, x.Right().Weight()) // not in it: the set is not full
	dag, err := WCompleteTree(h, w)
	b := mustTree(t, p, dag, err, nil)
	simulate(t, b, 1)
	busy := 0
	for _, wi := range b.Stats().Work {
		if wi > 0 {
			busy++
		}
	}
	require.Equal(t, w+1, busy)
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

// TestRingAdversarialGrid checks the bad grid family for every m ≤ 60 and p ≤ 12 with
// i = 0, j = 1 and, for p ≥ 2, i = p, j = p+1 (i ≡ 0, j ≡ 1 mod p): the simulation executes
// exactly the closure's nodes; with j = i+1 rows i, j, j+1 (PEs 0, 1, 2) do 3m - O(1) of the
// 5m - O(1) tasks; and for p ≥ 3 KS-BF finishes within 2⌈m/p⌉ steps of the critical
// path, so the bad balance costs little time here (see TestErratumRingAdversarialGrid).
func TestRingAdversarialGrid(t *testing.T) {
	for p := 1; p <= 12; p++ {
		for m := 3; m <= 60; m++ {
			for _, ij := range [][2]int{{0, 1}, {p, p + 1}} {
				i, j := ij[0], ij[1]
				if j >= m {
					continue
				}
				dag, err := AdversarialGrid(i, j, m)
				b := mustGrid(t, p, dag, err, nil)
				simulate(t, b, 1)
				st := b.Stats()
				nodes := adversarialCount(dag)
				require.Equal(t, int64(len(nodes)), st.Tasks, "m %d i %d p %d", m, i, p)
				seen := map[uint64]bool{}
				for _, tk := range b.Schedule() {
					x := GridNodeOf(tk.Node)
					require.True(t, nodes[x], "%v not in the closure", x)
					require.False(t, seen[tk.Node], "%v executed twice", x)
					seen[tk.Node] = true
					require.Equal(t, x.K%p, tk.PE, "Lemma 1.1(b)")
				}
				rows := 0
				for x := range nodes {
					if x.K >= i && x.K <= j+1 {
						rows++
					}
				}
				require.GreaterOrEqual(t, rows, 3*m-4, "m %d i %d", m, i)
				require.GreaterOrEqual(t, st.Time, st.LowerBound)
				if p >= 3 {
					// PE 0 runs row i along the critical path plus its share of the
					// column and its siblings, at most 2⌈m/p⌉ tasks.
					require.LessOrEqual(t, st.Time, st.Depth+2*int64((m+p-1)/p), "m %d i %d p %d", m, i, p)
				}
			}
		}
	}
}

// TestErratumRingAdversarialGrid pins the remark on the bad grid family: the paper's set
// {i, j} × {0..m-1} ∪ {0..m-1} × {0} is not full (⟨k, 0⟩ has its right child ⟨k+1, 0⟩ but
// not its left child ⟨k, 1⟩), and in its closure KS does not put "almost all the work"
// on P_0 and P_1: for i = 0, j = 1 they get 2m+1 of the 5m - 7 tasks (share → 2/5 as m
// and p grow) and P_2 gets another m - 1 (row 2 is forced). The speedup stays below 5 for
// every p, but so does any policy's: the depth is m + 1, about N/5, and KS-BF finishes
// within a factor 1 + 2/p of it.
func TestErratumRingAdversarialGrid(t *testing.T) {
	const m, p = 400, 12
	dag, err := AdversarialGrid(0, 1, m)
	b := mustGrid(t, p, dag, err, &RingOptions{NoSchedule: true})
	simulate(t, b, 1)
	st := b.Stats()
	require.Equal(t, int64(5*m-7), st.Tasks)
	share01 := float64(st.Work[0]+st.Work[1]) / float64(st.Tasks)
	share012 := float64(st.Work[0]+st.Work[1]+st.Work[2]) / float64(st.Tasks)
	require.InDelta(t, 2.0/5+4.0/(5*p), share01, 0.01) // rows 0, 1 + 2/p of the rest
	require.InDelta(t, 3.0/5+6.0/(5*p), share012, 0.01)
	require.Less(t, share01, 0.5)
	require.Less(t, st.Speedup, 5.0)
	require.Equal(t, int64(m+1), st.Depth)
	// KS-BF's time is PE 0's work, the m+1 nodes of row 0 plus 2m/p: within a factor
	// 1 + 2/p of the critical path, which bounds every policy.
	require.InDelta(t, 1+2.0/p, float64(st.Time)/float64(st.LowerBound), 0.01)
}

// TestRingAgainstReference compares RingScheduler with the straightforward reference simulator
// (ring_ref_test.go) for every policy on random trees and grids, complete dags and
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
					require.Equal(t, refWork, b.Work(), what)
					st := b.Stats()
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
			if err := b.Init(s); err != nil {
				t.Fatal(err)
			}
			for !b.Done(s) {
				if err := b.Step(s); err != nil {
					t.Fatal(err)
				}
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
	s1, st1 := b.Schedule(), b.Stats()
	simulate(t, b, 9)
	require.Equal(t, s1, b.Schedule())
	require.Equal(t, st1, b.Stats())
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
