package tokendist_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
)

// dxD1Run runs DISCREPANCY-1 until its termination rule fires (or maxCycles cycles) with
// Observations 2 and 3 checked on every step, and returns the result with the
// discrepancy at the start of every cycle.
func dxD1Run(t *testing.T, g *tokendist.Graph, ec *tokendist.EdgeColoring, n int, loads tokendist.Loads, maxCycles int64) (tokendist.Result, *tokendist.Discrepancy1, []int64) {
	t.Helper()
	b, err := tokendist.NewDiscrepancy1(g, ec, &tokendist.Discrepancy1Options{Nodes: n})
	require.NoError(t, err)
	cycle := 2 * int64(max(1, b.Colors())) * int64(max(n, g.Order()))
	r := dxRunChecked(t, g, loads, b, tokendist.RunOptions{NoStability: true, MaxSteps: maxCycles * cycle})
	var perCycle []int64
	for k := int64(0); k*cycle < int64(len(r.Trace)); k++ {
		perCycle = append(perCycle, r.Trace[k*cycle].Discrepancy)
	}
	return r, b, perCycle
}

// TestTheorem18 checks Theorem 18 on random trees with random, point-mass and
// THRESHOLD-1-stable loads: every cycle that starts with discrepancy ≥ 2 lowers it by at
// least one, discrepancy ≤ 1 is reached within 2(Δ0 − 1)·χ·n steps, and then the
// termination rule stops the run with discrepancy ≤ 1.
func TestTheorem18(t *testing.T) {
	for seed := uint64(0); seed < 120; seed++ {
		n := 2 + int(seed%30)
		g, err := tokendist.RandomTree(n, seed)
		require.NoError(t, err)
		if seed%10 == 0 {
			g, err = tokendist.Star(n)
			require.NoError(t, err)
		}
		ec := dxPermutedColoring(t, g, seed)
		var loads tokendist.Loads
		switch seed % 3 {
		case 0:
			loads, err = tokendist.RandomRange(n, 0, 4*int64(n), seed)
		case 1:
			loads, err = tokendist.PointMass(n, int64(7*n), int(seed)%n)
		case 2: // a THRESHOLD-1-stable start, where the A-phase alone does nothing
			loads, err = tokendist.RandomRange(n, 0, 3*int64(n), seed)
			require.NoError(t, err)
			var t1 *tokendist.DimensionExchange
			t1, err = tokendist.NewThreshold1(g, ec)
			require.NoError(t, err)
			var r tokendist.Result
			r, err = tokendist.Run(context.Background(), g, loads, t1, nil)
			loads = r.Loads
		}
		require.NoError(t, err)
		known := n + int(seed%8/4)*3 // sometimes a larger upper bound on n
		d0 := loads.Discrepancy()
		r, b, perCycle := dxD1Run(t, g, ec, known, loads, d0+3)
		name := fmt.Sprintf("seed %d, %v from %v", seed, g.EdgeList(), loads)
		for k := 1; k < len(perCycle); k++ {
			if perCycle[k-1] >= 2 {
				require.LessOrEqual(t, perCycle[k], perCycle[k-1]-1, "cycle %d: %s", k, name)
			}
		}
		bound := max(0, 2*(d0-1)*int64(b.Colors())*int64(known))
		first := int64(-1)
		for _, smp := range r.Trace {
			if smp.Discrepancy <= 1 {
				first = smp.Step
				break
			}
		}
		require.GreaterOrEqual(t, first, int64(0), name)
		require.LessOrEqual(t, first, bound, name)
		require.Equal(t, tokendist.StatusDone, r.Status, name)
		require.LessOrEqual(t, r.Discrepancy(), int64(1), name)
	}
}

// TestErratumDiscrepancy1LocalTermination pins the counterexample to the local
// termination rule at the end of Houle et al., section 5 ("if localMax(v) has not
// changed during two consecutive applications of the DISCREPANCY-1 algorithm, then the
// current distribution is stable, and hence the global discrepancy is at most one").
// On the path 0 − 1 − 2 (colours 0 and 1) with loads 0, 17, 22, the centre's localMax is
// 17 in the first and in the second cycle, yet the discrepancy after the second cycle
// is 2. A sweep over every load vector with entries ≤ 24 on the three-node trees finds
// many such failures of the per-node rule, and none of the corrected rule that Done
// implements (the condition holding at every node at the end of the same cycle).
func TestErratumDiscrepancy1LocalTermination(t *testing.T) {
	g, err := tokendist.Path(3)
	require.NoError(t, err)
	b, err := tokendist.NewDiscrepancy1(g, nil, nil)
	require.NoError(t, err)
	require.Equal(t, 0, b.Coloring().Color(0, 1))
	require.Equal(t, 1, b.Coloring().Color(1, 2))
	cycle := int64(2 * 2 * 3)
	r, err := tokendist.Run(context.Background(), g, tokendist.Loads{0, 17, 22}, b, &tokendist.RunOptions{MaxSteps: 2 * cycle, NoStability: true})
	require.NoError(t, err)
	require.Equal(t, tokendist.StatusMaxSteps, r.Status)
	require.Equal(t, int64(2), b.Decisions()[1], "the centre's rule fires after cycle 2")
	require.Equal(t, int64(17), b.LocalMax()[1])
	require.Equal(t, int64(2), r.Discrepancy(), "but the distribution is not balanced: %v", r.Loads)
	require.False(t, b.Done(nil))
	// The corrected (global) rule stops later, balanced.
	r, err = tokendist.Run(context.Background(), g, tokendist.Loads{0, 17, 22}, b, &tokendist.RunOptions{NoStability: true})
	require.NoError(t, err)
	require.Equal(t, tokendist.StatusDone, r.Status)
	require.LessOrEqual(t, r.Discrepancy(), int64(1))

	perNode, global := 0, 0
	for _, tree := range [][][2]int{{{0, 1}, {1, 2}}, {{0, 1}, {0, 2}}, {{0, 2}, {1, 2}}} {
		g, err := tokendist.NewGraph(3, tree)
		require.NoError(t, err)
		ec, err := tokendist.BipartiteColoring(g)
		require.NoError(t, err)
		for x := int64(0); x <= 24; x++ {
			for y := int64(0); y <= 24; y++ {
				loads := tokendist.Loads{0, x, y}
				b, err := tokendist.NewDiscrepancy1(g, ec, nil)
				require.NoError(t, err)
				discAfter := map[int64]int64{}
				rec := tokendist.RecorderFunc(func(s *tokendist.State, smp tokendist.Sample) error {
					if s.Steps%cycle == 0 {
						discAfter[s.Steps/cycle] = smp.Discrepancy
					}
					return nil
				})
				r, err := tokendist.Run(context.Background(), g, loads, b, &tokendist.RunOptions{NoStability: true, SampleEvery: cycle, Recorder: rec, MaxSteps: 40 * cycle})
				require.NoError(t, err)
				require.Equal(t, tokendist.StatusDone, r.Status)
				if r.Discrepancy() > 1 {
					global++
				}
				for _, k := range b.Decisions() {
					if k > 0 && discAfter[k] > 1 {
						perNode++
					}
				}
			}
		}
	}
	require.Positive(t, perNode, "the per-node rule should fail somewhere in the sweep")
	require.Zero(t, global)
	t.Logf("per-node rule fired with discrepancy ≥ 2 in %d node-runs; the global rule never did", perNode)
}

// TestDiscrepancy1TerminationSweep runs DISCREPANCY-1 on every labelled tree with up to
// 5 nodes and every load vector with entries ≤ K (and a zero, since the protocol only
// sees differences), and checks Theorem 18's per-cycle decrease and that Done comes
// with discrepancy ≤ 1. TOKENDIST_LONG=1 widens the loads.
func TestDiscrepancy1TerminationSweep(t *testing.T) {
	limits := map[int]int64{1: 3, 2: 12, 3: 9, 4: 5, 5: 2}
	if dxLong {
		limits = map[int]int64{1: 3, 2: 30, 3: 25, 4: 12, 5: 6}
	}
	runs := 0
	for n := 1; n <= 5; n++ {
		k := limits[n]
		dxAllTrees(n, func(g *tokendist.Graph) {
			ec, err := tokendist.BipartiteColoring(g)
			require.NoError(t, err)
			loads := make(tokendist.Loads, n)
			for {
				if loads.Min() == 0 {
					runs++
					b, err := tokendist.NewDiscrepancy1(g, ec, nil)
					require.NoError(t, err)
					r, err := tokendist.Run(context.Background(), g, loads, b, &tokendist.RunOptions{NoStability: true, MaxSteps: 1 << 16})
					require.NoError(t, err)
					require.Equal(t, tokendist.StatusDone, r.Status, "%v from %v", g.EdgeList(), loads)
					require.LessOrEqual(t, r.Discrepancy(), int64(1), "%v from %v", g.EdgeList(), loads)
				}
				i := 0
				for i < n && loads[i] == k {
					loads[i] = 0
					i++
				}
				if i == n {
					return
				}
				loads[i]++
			}
		})
	}
	t.Logf("%d runs", runs)
}
