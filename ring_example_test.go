package tokendist_test

import (
	"context"
	"fmt"
	"math"

	"github.com/tokendist/tokendist"
)

// KS-BF executes the complete tree of the paper's Table 1 (levels 0..5) on R_4: every
// node x runs on PE Wgt(x) mod 4 (Lemma 1.1) at step τ(x) (Theorem 2.2).
func ExampleNewRingTree() {
	dag, _ := tokendist.CompleteTree(6)
	b, _ := tokendist.NewRingTree(4, dag, nil)
	res, err := tokendist.RunRing(context.Background(), b, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Status, "after", res.Steps, "steps")
	var level5 [4][]uint64
	for _, task := range b.Schedule() {
		if tokendist.TreeNode(task.Node).Level() == 5 {
			level5[task.PE] = append(level5[task.PE], task.Node)
		}
	}
	for pe, nodes := range level5 {
		fmt.Printf("P%d level 5: %v\n", pe, nodes)
	}
	st := res.Report.(tokendist.RingStats)
	fmt.Printf("work %v, speedup %.2f, efficiency %.2f\n", st.Work, st.Speedup, st.Efficiency)
	// Output:
	// Done after 22 steps
	// P0 level 5: [32 47 55 59 61 62]
	// P1 level 5: [33 34 36 40 48 63]
	// P2 level 5: [35 37 38 41 42 44 49 50 52 56]
	// P3 level 5: [39 43 45 46 51 53 54 57 58 60]
	// work [12 16 20 15], speedup 2.86, efficiency 0.72
}

// The exact workloads of Theorem 2.1 (corrected: the sum runs over k ≥ 1) and the DFT
// route of section 2.1 agree.
func ExampleRingWork() {
	w, _ := tokendist.RingWork(10, 4)
	dft, _ := tokendist.RingWorkDFT(10, 4)
	for i := range w {
		fmt.Printf("W_%d(10) = %v (DFT %.6f)\n", i, w[i], dft[i])
	}
	big, _ := tokendist.RingWork(10000, 1000)
	fmt.Println("W_0(10000) on R_1000 has", len(big[0].String()), "digits")
	// Output:
	// W_0(10) = 272 (DFT 272.000000)
	// W_1(10) = 256 (DFT 256.000000)
	// W_2(10) = 240 (DFT 240.000000)
	// W_3(10) = 255 (DFT 255.000000)
	// W_0(10000) on R_1000 has 3009 digits
}

// The bounds of Theorem 1.1(a) next to the exact completion time; the paper's deviation
// bound α_p^n fails for p = 2 (α_2 = 0), the corrected one holds.
func ExampleRingTreeBounds() {
	for _, p := range []int{2, 3, 8} {
		b, _ := tokendist.RingTreeBounds(12, p)
		fmt.Printf("p=%d: α=%.3f time %v ≤ %.1f, deviation bound %.3f (paper %.3f)\n",
			p, b.Alpha, b.Time, b.TimeBound, b.Deviation, b.PaperDeviation)
	}
	// Output:
	// p=2: α=0.000 time 2048 ≤ 2049.5, deviation bound 0.500 (paper 0.000)
	// p=3: α=1.000 time 1367 ≤ 1369.0, deviation bound 1.333 (paper 1.000)
	// p=8: α=1.848 time 929 ≤ 2103.8, deviation bound 1386.840 (paper 1583.960)
}

// KS-BF on the pyramidal grid G_12: PE k mod p executes row k (Lemma 1.1(b)) and the
// work matches the closed form (3.3).
func ExampleNewRingGrid() {
	dag, _ := tokendist.PyramidGrid(12)
	b, _ := tokendist.NewRingGrid(4, dag, nil)
	res, err := tokendist.RunRing(context.Background(), b, nil)
	if err != nil {
		panic(err)
	}
	w, _ := tokendist.RingGridWork(12, 4)
	bounds, _ := tokendist.RingGridBounds(12, 4)
	st := res.Report.(tokendist.RingStats)
	fmt.Println("simulated work", st.Work, "closed form", w)
	fmt.Printf("time %d = W_0(n); Theorem 1.1(b) bound %.1f\n", st.Time, bounds.TimeBound)
	// Output:
	// simulated work [24 21 18 15] closed form [24 21 18 15]
	// time 24 = W_0(n); Theorem 1.1(b) bound 39.5
}

// The adaptive trapezoid rule of section 1.3 as a growing tree on R_8: the integral
// does not depend on the policy, the time does.
func ExampleNewQuadrature() {
	q, _ := tokendist.NewQuadrature(math.Sqrt, 0, 1, 1e-9, 1e-6)
	for _, policy := range tokendist.RingPolicies() {
		b, _ := tokendist.NewRingTree(8, q, &tokendist.RingOptions{Policy: policy})
		res, err := tokendist.RunRing(context.Background(), b, &tokendist.RunOptions{Seed: 1})
		if err != nil {
			panic(err)
		}
		integral, _ := q.Integral()
		st := res.Report.(tokendist.RingStats)
		fmt.Printf("%-16v ∫√x = %.6f  tasks %d  time %d  speedup %.2f\n", policy, integral, st.Tasks, st.Time, st.Speedup)
	}
	// Output:
	// KS-BF            ∫√x = 0.666630  tasks 143  time 48  speedup 2.98
	// keep-all         ∫√x = 0.666630  tasks 143  time 143  speedup 1.00
	// less-loaded      ∫√x = 0.666630  tasks 143  time 26  speedup 5.50
	// random-neighbour ∫√x = 0.666630  tasks 143  time 41  speedup 3.49
}

// One call answers "does KS-BF balance randomly growing grids?" for a family: here
// 5 random grids on rings of 4 and 16 PEs. An optimal schedule is at least the ring lower
// bound (RingScheduleLowerBound) and at most the best policy's time, so each policy's
// mean time/optimum lies in [OverBestPolicy, OverRingLowerBound].
func ExampleRunRingComparison() {
	rows, err := tokendist.RunRingComparison(context.Background(), tokendist.RingExperiment{
		Name:  "random grid",
		Grid:  func(seed uint64) (tokendist.GridDag, error) { return tokendist.RandomGridDag(0.9, 60, seed) },
		P:     []int{4, 16},
		Seeds: []uint64{1, 2, 3, 4, 5},
	})
	if err != nil {
		panic(err)
	}
	for _, r := range rows {
		fmt.Printf("p=%-2d %-16v speedup %5.2f  time/optimum in [%.2f, %.2f]\n", r.P, r.Policy, r.Speedup, r.OverBestPolicy, r.OverRingLowerBound)
	}
	// Output:
	// p=4  KS-BF            speedup  3.31  time/optimum in [1.01, 1.02]
	// p=4  keep-all         speedup  1.00  time/optimum in [3.34, 3.38]
	// p=4  less-loaded      speedup  3.33  time/optimum in [1.00, 1.01]
	// p=4  random-neighbour speedup  3.24  time/optimum in [1.03, 1.04]
	// p=16 KS-BF            speedup 10.40  time/optimum in [1.01, 1.11]
	// p=16 keep-all         speedup  1.00  time/optimum in [10.56, 11.77]
	// p=16 less-loaded      speedup 10.44  time/optimum in [1.01, 1.10]
	// p=16 random-neighbour speedup  7.51  time/optimum in [1.33, 1.47]
}

// The ring lower bound charges the start-up: a star-like dag (a root and 60 children)
// needs 8 steps on R_64, although max(⌈N/p⌉, depth) is only 2.
func ExampleRingScheduleLowerBound() {
	for _, p := range []int{2, 8, 64} {
		lb, err := tokendist.RingScheduleLowerBound(p, []int64{1, 60})
		if err != nil {
			panic(err)
		}
		fmt.Printf("p=%-2d lower bound %d\n", p, lb)
	}
	// Output:
	// p=2  lower bound 31
	// p=8  lower bound 10
	// p=64 lower bound 8
}

// The predicted schedule τ(x) = ν(x) + π(x) of Theorem 2.2 for a few nodes on R_4.
func ExampleRingTreeTau() {
	for _, s := range []string{"λ", "1", "11", "111", "0110"} {
		x, _ := tokendist.ParseTreeNode(s)
		tau, _ := tokendist.RingTreeTau(x, 4)
		fmt.Printf("node %-4v (heap %2d) on PE %d at step %d\n", x, uint64(x), x.Weight()%4, tau)
	}
	// Output:
	// node λ    (heap  1) on PE 0 at step 0
	// node 1    (heap  3) on PE 1 at step 1
	// node 11   (heap  7) on PE 2 at step 2
	// node 111  (heap 15) on PE 3 at step 3
	// node 0110 (heap 22) on PE 2 at step 8
}
