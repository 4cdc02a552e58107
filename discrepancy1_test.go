package tokendist_test

import (
	"context"
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
