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
func dxD1Run(t *testing.T, g *tokendist.Graph, ec *tokendist.EdgeColoring, n int, loads tokendist.Loads, maxCycles int64) (tokendist.Result, *tokendist.DimensionExchange, []int64) {
	t.Helper()
	b, err := tokendist.NewDiscrepancy1(g, ec, n)
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
	b, err := tokendist.NewDiscrepancy1(g, nil, 0)
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
				b, err := tokendist.NewDiscrepancy1(g, ec, 0)
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
					b, err := tokendist.NewDiscrepancy1(g, ec, 0)
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

// dxCCCompare runs DISCREPANCY-1 from loads with the global check and with the
// convergecast termination, and checks the exact overhead of the latter: it stops on the
// same cycle, 2⌈D/2⌉ steps (and model-time units) later, with discrepancy ≤ 1, after
// (n − 1) control messages per convergecast (cycles 2..k) and n − 1 for the broadcast on
// top of the load messages of the extra steps. It returns the overhead in steps.
func dxCCCompare(t *testing.T, g *tokendist.Graph, ec *tokendist.EdgeColoring, nodes int, loads tokendist.Loads) int64 {
	t.Helper()
	opts := &tokendist.RunOptions{NoStability: true, MaxSteps: 1 << 22}
	glob, err := tokendist.NewDiscrepancy1With(g, ec, &tokendist.Discrepancy1Options{Nodes: nodes})
	require.NoError(t, err)
	rg, err := tokendist.Run(context.Background(), g, loads.Clone(), glob, opts)
	require.NoError(t, err)
	require.Equal(t, tokendist.StatusDone, rg.Status)
	cc, err := tokendist.NewDiscrepancy1With(g, ec, &tokendist.Discrepancy1Options{Nodes: nodes, Convergecast: true})
	require.NoError(t, err)
	rc, err := tokendist.Run(context.Background(), g, loads.Clone(), cc, opts)
	require.NoError(t, err)
	require.Equal(t, tokendist.StatusDone, rc.Status)

	n := int64(g.Order())
	require.LessOrEqual(t, rc.Discrepancy(), int64(1), "%v from %v", g.EdgeList(), loads)
	require.LessOrEqual(t, rc.Discrepancy(), rg.Discrepancy())
	require.Equal(t, loads.Total(), rc.Loads.Total())
	if n == 1 {
		require.Equal(t, rg.Steps, rc.Steps)
		return 0
	}
	require.Equal(t, glob.Cycles(), cc.Cycles(), "same deciding cycle")
	diam, err := g.Diameter()
	require.NoError(t, err)
	delay := int64(2 * ((diam + 1) / 2))
	require.Equal(t, rg.Steps+delay, rc.Steps, "overhead 2⌈D/2⌉ steps, D = %d", diam)
	require.Equal(t, rg.Time+delay, rc.Time)
	chi := int64(ec.Colors())
	var loadMsgs int64
	for s := rg.Steps; s < rc.Steps; s++ {
		loadMsgs += int64(len(ec.Matching(int(s % chi))))
	}
	k := glob.Cycles()
	require.Equal(t, rg.Messages+loadMsgs+(n-1)*(k-1)+(n-1), rc.Messages, "control messages")
	return delay
}

// TestDiscrepancy1ConvergecastTable checks the convergecast termination on named trees.
func TestDiscrepancy1ConvergecastTable(t *testing.T) {
	kary := func(h, k int) *tokendist.Graph {
		return dxMustGraph(tokendist.KaryTree(tokendist.KaryShape{Height: h, Arity: k}))
	}
	for _, tc := range []struct {
		name  string
		g     *tokendist.Graph
		nodes int
		loads tokendist.Loads
		delay int64
	}{
		{"single node", dxMustGraph(tokendist.Path(1)), 0, tokendist.Loads{7}, 0},
		{"edge", dxMustGraph(tokendist.Path(2)), 0, tokendist.Loads{0, 9}, 2},
		{"erratum path", dxMustGraph(tokendist.Path(3)), 0, tokendist.Loads{0, 17, 22}, 2},
		{"path 8, D = 7", dxMustGraph(tokendist.Path(8)), 0, tokendist.Loads{0, 0, 0, 0, 0, 0, 0, 50}, 8},
		{"path 9, D = 8", dxMustGraph(tokendist.Path(9)), 0, tokendist.Loads{30, 0, 0, 0, 0, 0, 0, 0, 3}, 8},
		{"star 9", dxMustGraph(tokendist.Star(9)), 0, tokendist.Loads{5, 6, 7, 8, 9, 9, 8, 7, 6}, 2},
		{"T_{3,2}, n known 20", kary(3, 2), 20, tokendist.Loads{40, 0, 3, 0, 0, 0, 0, 0, 9, 0, 0, 0, 1, 0, 2}, 6},
		{"T_{2,3}", kary(2, 3), 0, tokendist.Loads{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ec, err := tokendist.BipartiteColoring(tc.g)
			require.NoError(t, err)
			require.Equal(t, tc.delay, dxCCCompare(t, tc.g, ec, tc.nodes, tc.loads))
		})
	}
}

// TestDiscrepancy1ConvergecastProperty runs both terminations over many seeds: random
// trees, stars and paths with permuted colourings, random, point-mass and
// THRESHOLD-1-stable loads, sometimes a larger known n.
func TestDiscrepancy1ConvergecastProperty(t *testing.T) {
	seeds := uint64(300)
	if testing.Short() {
		seeds = 60
	}
	for seed := uint64(0); seed < seeds; seed++ {
		n := 1 + int(seed%25)
		g, err := tokendist.RandomTree(n, seed)
		require.NoError(t, err)
		switch seed % 7 {
		case 0:
			g, err = tokendist.Star(n)
		case 1:
			g, err = tokendist.Path(n)
		}
		require.NoError(t, err)
		ec := dxPermutedColoring(t, g, seed)
		var loads tokendist.Loads
		if seed%3 == 0 {
			loads, err = tokendist.PointMass(n, int64(5*n+int(seed%11)), int(seed)%n)
		} else {
			loads, err = tokendist.RandomRange(n, 0, 4*int64(n), seed)
		}
		require.NoError(t, err)
		if seed%5 == 4 {
			t1, err := tokendist.NewThreshold1(g, ec)
			require.NoError(t, err)
			r, err := tokendist.Run(context.Background(), g, loads, t1, nil)
			require.NoError(t, err)
			loads = r.Loads
		}
		nodes := n + int(seed%4/3)*2
		dxCCCompare(t, g, ec, nodes, loads)
	}
}

// TestDiscrepancy1ConvergecastSpanningTree runs the convergecast termination on a BFS
// tree of a torus through NewSpanningTree.
func TestDiscrepancy1ConvergecastSpanningTree(t *testing.T) {
	torus := dxMustGraph(tokendist.Torus(6, 5))
	b, err := tokendist.NewSpanningTree(torus, tokendist.AutoRoot, func(tree *tokendist.Graph) (tokendist.Balancer, error) {
		return tokendist.NewDiscrepancy1With(tree, nil, &tokendist.Discrepancy1Options{Convergecast: true})
	})
	require.NoError(t, err)
	loads, err := tokendist.RandomRange(30, 0, 100, 3)
	require.NoError(t, err)
	r, err := tokendist.Run(context.Background(), torus, loads, b, &tokendist.RunOptions{NoStability: true})
	require.NoError(t, err)
	require.Equal(t, tokendist.StatusDone, r.Status)
	require.LessOrEqual(t, r.Discrepancy(), int64(1))
}

// TestDiscrepancy1WithBadInput: the options constructor validates like NewDiscrepancy1.
func TestDiscrepancy1WithBadInput(t *testing.T) {
	ring := dxMustGraph(tokendist.Ring(6))
	_, err := tokendist.NewDiscrepancy1With(ring, nil, &tokendist.Discrepancy1Options{Convergecast: true})
	require.ErrorIs(t, err, tokendist.ErrNotTree)
	path := dxMustGraph(tokendist.Path(4))
	_, err = tokendist.NewDiscrepancy1With(path, nil, &tokendist.Discrepancy1Options{Nodes: 3, Convergecast: true})
	require.ErrorIs(t, err, tokendist.ErrBadParameter)
	require.ErrorContains(t, err, "n = 3")
	_, err = tokendist.NewDiscrepancy1With(nil, nil, nil)
	require.ErrorIs(t, err, tokendist.ErrNilNetwork)
	b, err := tokendist.NewDiscrepancy1With(path, nil, nil)
	require.NoError(t, err)
	require.Equal(t, "DISCREPANCY-1", b.String())
}

// TestDiscrepancy1ConvergecastNoAlloc: a step with the convergecast allocates nothing.
func TestDiscrepancy1ConvergecastNoAlloc(t *testing.T) {
	g := dxMustGraph(tokendist.RandomTree(200, 1))
	b, err := tokendist.NewDiscrepancy1With(g, nil, &tokendist.Discrepancy1Options{Convergecast: true})
	require.NoError(t, err)
	loads, err := tokendist.RandomRange(200, 0, 1000, 1)
	require.NoError(t, err)
	s := &tokendist.State{Net: g, Loads: loads, Workers: 1}
	require.NoError(t, b.Init(s))
	allocs := testing.AllocsPerRun(2000, func() {
		require.NoError(t, b.Step(s))
		s.Steps++
	})
	require.Zero(t, allocs)
}
