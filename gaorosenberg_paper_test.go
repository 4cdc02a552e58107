// Gao and Rosenberg, "On balancing computational load on rings of processors"
// (the project's shared/papers/ring-ks-bf.txt): the tests that check a theorem, fact, bound or
// table of the paper against the simulation, in the style of etcd-io/raft's
// raft_paper_test.go. Each test quotes the statement it checks; tests named Erratum pin a
// statement the simulation refutes.

package tokendist

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGaoRosenbergTable1 reproduces every printed number of Table 1 from the simulation, except
// the one misprint pinned by TestGaoRosenbergErratumTable1.
//
// Gao and Rosenberg, section 1.3 (Our Load-Balancing Problem): "In order to lend some
// intuition for the KS regimen, we illustrate in Table 1 how the regimen distributes the
// nodes of T_5 in R_4." Table 1: "The node-assignments when R_4 executes T_5 under the KS
// regimen."
func TestGaoRosenbergTable1(t *testing.T) {
	got := simulatedTable1(t)
	want := map[int]map[int][]uint64{}
	for pe, levels := range table1 {
		want[pe] = map[int][]uint64{}
		for l, xs := range levels {
			want[pe][l] = slices.Clone(xs)
		}
	}
	want[2][5][2] = 38 // the misprint: see TestGaoRosenbergErratumTable1
	require.Equal(t, want, got)
}

// TestGaoRosenbergErratumTable1 pins the misprint of Table 1: node 39 (string 00111, weight 3) is
// listed on both P_2 and P_3; the P_2 entry should be 38 (00110, weight 2), which the
// table omits. The caption says T_5, but the rows show levels 0..5, which is T_6 (63
// nodes) by the paper's own definition of T_n.
//
// Gao and Rosenberg, section 1.3 (Our Load-Balancing Problem): "In order to lend some
// intuition for the KS regimen, we illustrate in Table 1 how the regimen distributes the
// nodes of T_5 in R_4." Table 1: "The node-assignments when R_4 executes T_5 under the KS
// regimen."
func TestGaoRosenbergErratumTable1(t *testing.T) {
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

// TestGaoRosenbergTheorems11a21And22TreeSweep simulates T_n on R_p for every n ≤ 16 (≤ 20 with TOKENDIST_LONG=1)
// and p ≤ 12 and checks, for every PE and every node: the work against RingWork
// (Theorem 2.1, corrected) and RingWorkDFT, Lemma 1.1(a), the schedule τ(x) = ν(x) + π(x)
// of Theorem 2.2 (ν by its definition), assertions (a) and (b) of its proof, the exact
// completion time, the bounds of Theorems 1.1(a) and 2.2, and the corrected bound (2.2).
//
// Gao and Rosenberg, section 1.2, Theorem 1.1: "When the ring R_p uses the KS-BF
// balancing-plus-scheduling policy: (a) It executes each input tree that grows into the
// height-n complete binary tree T_n in time T_tree(n; p) ≤ (1/p)(2^n − 1) + α_p^n + p,
// where α_p < 2 is a constant that depends only on p."
//
// Section 2.1 (Work Distribution under the KS Regimen), Theorem 2.1: "The exact value of
// W_i(n) is given by: W_i(n) = Σ_{k ≡ i+1 (mod p)} C(n, k). (2.1) This yields the implicit
// bound, |W_i(n) − (2^n − 1)/p| ≤ α_p^n, (2.2) where α_p < 2 is a constant depending only
// on p."
//
// Section 2.2 (Running Time under the KS-BF Policy), Theorem 2.2: "Node x of T_n is
// executed by PE P_π(x) of R_p at step τ(x) = ν(x) + π(x). Hence, R_p executes an input
// tree that grows into T_n in time T_tree(n; p) ≤ p + max_{0≤i≤p−1} W_i(n)."
func TestGaoRosenbergTheorems11a21And22TreeSweep(t *testing.T) {
	t.Parallel()
	maxN := 16
	if longTests() {
		maxN = 20
	}
	for p := 1; p <= 12; p++ {
		for n := 1; n <= maxN; n++ {
			what := fmt.Sprintf("T_%d on R_%d", n, p)
			dag, err := CompleteTree(n)
			b := mustTree(t, p, dag, err, nil)
			res := simulate(t, b, 1)
			st := b.stats()
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

// TestGaoRosenbergTheorem22TauClosedForm checks RingTreeTau's closed form against the definition of ν
// for every node of T_14 and every p ≤ 12, and on deep nodes against RingWork.
//
// Gao and Rosenberg, section 2.2 (Running Time under the KS-BF Policy), Theorem 2.2: "Node
// x of T_n is executed by PE P_π(x) of R_p at step τ(x) = ν(x) + π(x). Hence, R_p executes
// an input tree that grows into T_n in time T_tree(n; p) ≤ p + max_{0≤i≤p−1} W_i(n)."
func TestGaoRosenbergTheorem22TauClosedForm(t *testing.T) {
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

// TestGaoRosenbergErratumEquation21 pins the error in equation (2.1): summing C(n, k) over all
// k ≡ i+1 (mod p) includes k = 0 for i = p-1, so W_{p-1}(n) comes out one too large and
// the total is 2^n, contradicting Fact 2.1. The correct sum runs over k ≥ 1.
//
// Gao and Rosenberg, section 2.1 (Work Distribution under the KS Regimen), Theorem 2.1:
// "The exact value of W_i(n) is given by: W_i(n) = Σ_{k ≡ i+1 (mod p)} C(n, k). (2.1) This
// yields the implicit bound, |W_i(n) − (2^n − 1)/p| ≤ α_p^n, (2.2) where α_p < 2 is a
// constant depending only on p."
//
// Fact 2.1: "The cumulative amount of work performed by all PEs of R_p when executing T_n
// is Σ_{i=0}^{p−1} W_i(n) = 2^n − 1."
func TestGaoRosenbergErratumEquation21(t *testing.T) {
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

// TestGaoRosenbergErratumEquation26 pins the error in equation (2.6): the printed form
// (1/p)[2^n + Σ_j ω^{-j(i+1)}(1+ω^j)^n] exceeds W_{p-1}(n) by exactly 1, because
// "Σ_j γ^j = 0" fails for γ = ω^{-(i+1)} = 1; it is right for i < p-1.
//
// Gao and Rosenberg, section 2.1 (Work Distribution under the KS Regimen), equation (2.6):
// "W_i(n) = (1/p)[2^n + Σ_{j=1}^{p−1} ω^{−j(i+1)} (1 + ω^j)^n]."
func TestGaoRosenbergErratumEquation26(t *testing.T) {
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

// TestGaoRosenbergErratumBound22 pins the failures of the bound (2.2)/(2.10),
// |W_i(n) - (2^n-1)/p| ≤ α_p^n, over n ≤ 20, p ≤ 12, every PE: it fails exactly for
// p = 2 (α_2 = |1 + ω| = 0, while W_0 - W_1 = 1) and for p = 3, i = 2, n ≡ 3 (mod 6)
// (deviation 4/3 > α_3^n = 1). The last step of (2.10) needs α_p^n ≥ 1 and the i = p-1
// case misses the -p·[i = p-1] term of the DFT form; RingTreeBounds.Deviation is the
// corrected bound (1 - 1/p)(α_p^n + 1).
//
// Gao and Rosenberg, section 2.1 (Work Distribution under the KS Regimen), Theorem 2.1:
// "The exact value of W_i(n) is given by: W_i(n) = Σ_{k ≡ i+1 (mod p)} C(n, k). (2.1) This
// yields the implicit bound, |W_i(n) − (2^n − 1)/p| ≤ α_p^n, (2.2) where α_p < 2 is a
// constant depending only on p."
//
// And (2.10): "|W_i(n) − (2^n − 1)/p| ≤ ((p−1)/p)·α_p^n + 1/p ≤ α_p^n."
func TestGaoRosenbergErratumBound22(t *testing.T) {
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

// TestGaoRosenbergTheorems11bAnd32GridSweep simulates G_n on R_p for every n ≤ 20 and p ≤ 12 and checks, for
// every PE and node: (3.3) = (3.1) = the simulated work, Fact 3.1, Lemma 1.1(b), the
// schedule of Theorem 3.2 (against RingGridTau and ν by its definition), that every
// working PE starts at step i and never idles, the exact time, T ≤ W_0(n), the bounds
// (3.2), (3.4), (3.5) and Theorem 1.1(b).
//
// Gao and Rosenberg, section 1.2, Theorem 1.1: "When the ring R_p uses the KS-BF
// balancing-plus-scheduling policy: [...] (b) It executes each input grid that grows into
// the side-n pyramidal grid G_n in time T_grid(n; p) ≤ (1/p)·C(n+1, 2) + (3/2)n + 2."
//
// Section 3.2 (Running Time under the KS-BF Policy), Theorem 3.2: "Node ⟨k, ℓ⟩ of G_n is
// executed by PE P_π(k,ℓ) of R_p at step τ(k, ℓ) = ν(k, ℓ) + π(k, ℓ). It follows that R_p
// executes an input grid that grows into G_n in time T_grid(n; p) ≤ max_{0≤i≤p−1} (W_i(n)
// + i) ≤ W_0(n)."
func TestGaoRosenbergTheorems11bAnd32GridSweep(t *testing.T) {
	maxN := 20
	if longTests() {
		maxN = 40
	}
	for p := 1; p <= 12; p++ {
		for n := 1; n <= maxN; n++ {
			what := fmt.Sprintf("G_%d on R_%d", n, p)
			dag, err := PyramidGrid(n)
			b := mustGrid(t, p, dag, err, nil)
			simulate(t, b, 1)
			st := b.stats()
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

// TestGaoRosenbergErratumFact32 pins the failure of Fact 3.2, W_{i-1}(n) + i - 1 ≥ W_i(n) + i for
// all i in 1..p-1, and of its consequence W_0(n) > ... > W_{p-1}(n) "for all n": both fail
// when some PEs get no row (n < p), e.g. n = 1, p = 3: W = (1, 0, 0). The correct
// statement: the inequality holds for i ≤ n, i.e. while PE i-1 has work; it was checked
// for all n ≤ 30, p ≤ 12.
//
// Gao and Rosenberg, section 3.1 (Work Distribution under the KS Regimen), Fact 3.2: "For
// all i ∈ {1, 2, ..., p−1}, W_{i−1}(n) + i − 1 ≥ W_i(n) + i. In particular, for all n,
// W_0(n) > W_1(n) > ... > W_{p−1}(n)."
func TestGaoRosenbergErratumFact32(t *testing.T) {
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

// TestGaoRosenbergErratumTheorem32 pins the middle step of Theorem 3.2's bound,
// T_grid ≤ max_{0≤i<p}(W_i(n) + i) ≤ W_0(n): the maximum over all PEs exceeds W_0(n) when
// the last PEs get no row (n = 1, p = 3: max is 2, W_0 = 1). The conclusion T ≤ W_0(n)
// holds (checked by TestGaoRosenbergTheorems11bAnd32GridSweep) with the maximum over the PEs that have work.
//
// Gao and Rosenberg, section 3.2 (Running Time under the KS-BF Policy), Theorem 3.2: "Node
// ⟨k, ℓ⟩ of G_n is executed by PE P_π(k,ℓ) of R_p at step τ(k, ℓ) = ν(k, ℓ) + π(k, ℓ). It
// follows that R_p executes an input grid that grows into G_n in time T_grid(n; p) ≤
// max_{0≤i≤p−1} (W_i(n) + i) ≤ W_0(n)."
func TestGaoRosenbergErratumTheorem32(t *testing.T) {
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
	require.Equal(t, int64(1), b.stats().Time)
}

// TestGaoRosenbergSection13WCompleteTree checks the bad tree family of section 1.3 for every h ≤ 14,
// w ≤ 5, p ≤ 12: the node count (Σ_{k<w} strings of weight k plus the weight-w strings
// ending in their w-th 1), work exactly on PEs (0..w) mod p, and, with w = ⌊log2 p⌋, a
// speedup of at most w+1 = log p + 1 for every h.
//
// Gao and Rosenberg, section 1.3 (Our Load-Balancing Problem): "Trees. The h-level
// w-complete binary tree is the binary tree whose node-set comprises all binary strings of
// length < h that have weight ≤ w. Consider the family of (ℓ_p = log p)-complete binary
// trees. [...] Note next that no policy that employs the KS balancing regimen can achieve
// even close to (asymptotic) optimal parallel speedup (i.e., speedup proportional to p),
// since the regimen assigns work to only log p PEs."
func TestGaoRosenbergSection13WCompleteTree(t *testing.T) {
	for p := 1; p <= 12; p++ {
		for h := 1; h <= 14; h++ {
			for w := 0; w <= 5; w++ {
				dag, err := WCompleteTree(h, w)
				b := mustTree(t, p, dag, err, &RingOptions{NoSchedule: true})
				simulate(t, b, 1)
				st := b.stats()
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

// TestGaoRosenbergErratumSection13WComplete pins two slips of section 1.3's bad tree family: the node set
// "all strings of length < h with weight ≤ w" is not full (x of weight w has x0 but not
// x1), so it is not a tree-dag; the full family (WCompleteTree) has Θ(h^w) nodes as the
// paper says, and KS puts its work on w+1 = log p + 1 PEs, not log p.
//
// Gao and Rosenberg, section 1.3 (Our Load-Balancing Problem): "Trees. The h-level
// w-complete binary tree is the binary tree whose node-set comprises all binary strings of
// length < h that have weight ≤ w. Consider the family of (ℓ_p = log p)-complete binary
// trees. [...] Note next that no policy that employs the KS balancing regimen can achieve
// even close to (asymptotic) optimal parallel speedup (i.e., speedup proportional to p),
// since the regimen assigns work to only log p PEs."
func TestGaoRosenbergErratumSection13WComplete(t *testing.T) {
	const h, w, p = 10, 3, 8 // w = log p
	x, _ := ParseTreeNode("111")
	require.Equal(t, w, x.Weight())
	require.Equal(t, w, x.Left().Weight())    // in the paper's set
	require.Equal(t, w+1, x.Right().Weight()) // not in it: the set is not full
	dag, err := WCompleteTree(h, w)
	b := mustTree(t, p, dag, err, nil)
	simulate(t, b, 1)
	busy := 0
	for _, wi := range b.stats().Work {
		if wi > 0 {
			busy++
		}
	}
	require.Equal(t, w+1, busy)
}

// TestGaoRosenbergSection13AdversarialGrid checks the bad grid family for every m ≤ 60 and p ≤ 12 with
// i = 0, j = 1 and, for p ≥ 2, i = p, j = p+1 (i ≡ 0, j ≡ 1 mod p): the simulation executes
// exactly the closure's nodes; with j = i+1 rows i, j, j+1 (PEs 0, 1, 2) do 3m - O(1) of the
// 5m - O(1) tasks; and for p ≥ 3 KS-BF finishes within 2⌈m/p⌉ steps of the critical
// path, so the bad balance costs little time here (see TestGaoRosenbergErratumSection13AdversarialGrid).
//
// Gao and Rosenberg, section 1.3 (Our Load-Balancing Problem): "Grids. Let us focus on the
// family of grids whose node-sets have the form {i, j} × {0, 1, ..., m−1} ∪ {0, 1, ...,
// m−1} × {0}, where i ≡ 0 (mod p), and j ≡ 1 (mod p). Note that, for sufficiently large m,
// the KS balancing regimen assigns almost all the work to PEs P_0 and P_1."
func TestGaoRosenbergSection13AdversarialGrid(t *testing.T) {
	t.Parallel()
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
				st := b.stats()
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

// TestGaoRosenbergErratumSection13AdversarialGrid pins the remark on the bad grid family: the paper's set
// {i, j} × {0..m-1} ∪ {0..m-1} × {0} is not full (⟨k, 0⟩ has its right child ⟨k+1, 0⟩ but
// not its left child ⟨k, 1⟩), and in its closure KS does not put "almost all the work"
// on P_0 and P_1: for i = 0, j = 1 they get 2m+1 of the 5m - 7 tasks (share → 2/5 as m
// and p grow) and P_2 gets another m - 1 (row 2 is forced). The speedup stays below 5 for
// every p, but so does any policy's: the depth is m + 1, about N/5, and KS-BF finishes
// within a factor 1 + 2/p of it.
//
// Gao and Rosenberg, section 1.3 (Our Load-Balancing Problem): "Grids. Let us focus on the
// family of grids whose node-sets have the form {i, j} × {0, 1, ..., m−1} ∪ {0, 1, ...,
// m−1} × {0}, where i ≡ 0 (mod p), and j ≡ 1 (mod p). Note that, for sufficiently large m,
// the KS balancing regimen assigns almost all the work to PEs P_0 and P_1."
func TestGaoRosenbergErratumSection13AdversarialGrid(t *testing.T) {
	const m, p = 400, 12
	dag, err := AdversarialGrid(0, 1, m)
	b := mustGrid(t, p, dag, err, &RingOptions{NoSchedule: true})
	simulate(t, b, 1)
	st := b.stats()
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
