package tokendist_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tokendist/tokendist"
)

// TestResultString: every built-in balancer's Result.String prints the figures
// meaningful for it (ResultDescriber), computed from the run, and nothing else.
func TestResultString(t *testing.T) {
	ctx := context.Background()
	must := func(g *tokendist.Graph, err error) *tokendist.Graph {
		t.Helper()
		require.NoError(t, err)
		return g
	}
	cube := must(tokendist.Hypercube(4))
	cubeLoads := make(tokendist.Loads, 16)
	cubeLoads[5] = 301
	path := must(tokendist.Path(7))
	pathLoads := tokendist.Loads{40, 0, 3, 0, 0, 9, 1}
	tree := must(tokendist.RandomTree(30, 2))
	treeLoads := make(tokendist.Loads, 30)
	treeLoads[4] = 95

	multiTotals := make(tokendist.Loads, 16)
	multiTotals[3], multiTotals[9] = 50, 77
	type check func(t *testing.T, r tokendist.Result, b tokendist.Balancer)
	balance := func(t *testing.T, r tokendist.Result, _ tokendist.Balancer) {
		require.Equal(t, fmt.Sprintf("discrepancy %d, moved %d, messages %d", r.Discrepancy(), r.Moved, r.Messages), r.Summary)
		require.NotContains(t, r.String(), "time", "a step is a unit of time")
	}
	timed := func(t *testing.T, r tokendist.Result, _ tokendist.Balancer) {
		require.Equal(t, fmt.Sprintf("time %d, discrepancy %d, moved %d, messages %d", r.Time, r.Discrepancy(), r.Moved, r.Messages), r.Summary)
	}
	cases := []struct {
		name  string
		net   tokendist.Network
		loads tokendist.Loads
		build func() (tokendist.Balancer, error)
		run   func(b tokendist.Balancer) (tokendist.Result, error)
		check check
	}{
		{"RandomizedDiffusion", cube, cubeLoads, func() (tokendist.Balancer, error) { return tokendist.NewRandomizedDiffusion(cube) }, nil, balance},
		{"RSW", cube, cubeLoads, func() (tokendist.Balancer, error) { return tokendist.NewRSWDiffusion(cube) }, nil, balance},
		{"FGSRandomized", cube, cubeLoads, func() (tokendist.Balancer, error) { return tokendist.NewFGSRandomized(cube) }, nil, balance},
		{"RandomMatching", cube, cubeLoads, func() (tokendist.Balancer, error) { return tokendist.NewRandomMatching(cube) }, nil, balance},
		{"THRESHOLD-2", path, pathLoads, func() (tokendist.Balancer, error) { return tokendist.NewThreshold2(path, nil) }, nil, balance},
		{"DISCREPANCY-1", path, pathLoads, func() (tokendist.Balancer, error) { return tokendist.NewDiscrepancy1(path, nil, nil) }, nil,
			func(t *testing.T, r tokendist.Result, b tokendist.Balancer) {
				cycles := b.(*tokendist.Discrepancy1).Cycles()
				require.Positive(t, cycles)
				require.Equal(t, fmt.Sprintf("discrepancy %d, moved %d, messages %d, cycles %d", r.Discrepancy(), r.Moved, r.Messages, cycles), r.Summary)
			}},
		{"HypercubeBalance", cube, cubeLoads, func() (tokendist.Balancer, error) { return tokendist.NewHypercubeBalance(cube, nil) }, nil, timed},
		{"DimensionOrderBalance", cube, cubeLoads, func() (tokendist.Balancer, error) { return tokendist.NewDimensionOrderBalance(cube, nil) }, nil, timed},
		{"MultiBalance", cube, multiTotals, func() (tokendist.Balancer, error) {
			g0, g1 := make(tokendist.Loads, 16), make(tokendist.Loads, 16)
			g0[3], g1[9] = 50, 77
			return tokendist.NewMultiBalance(cube, []tokendist.Loads{g0, g1}, nil)
		}, nil, func(t *testing.T, r tokendist.Result, b tokendist.Balancer) {
			worst := int64(0)
			for _, g := range b.(*tokendist.MultiBalancer).Groups() {
				worst = max(worst, g.Discrepancy())
			}
			require.Equal(t, fmt.Sprintf("time %d, discrepancy %d (largest group discrepancy %d), moved %d, messages %d",
				r.Time, r.Discrepancy(), worst, r.Moved, r.Messages), r.Summary)
		}},
		{"PerfectTree", tree, treeLoads, func() (tokendist.Balancer, error) { return tokendist.NewPerfectTree(tree, nil) }, nil,
			func(t *testing.T, r tokendist.Result, _ tokendist.Balancer) {
				require.Equal(t, tokendist.StatusDone, r.Status)
				require.Equal(t, fmt.Sprintf("finished 30 of 30 nodes, perfect true, time %d, moved %d, messages %d", r.Time, r.Moved, r.Messages), r.Summary)
			}},
		{"Ring", nil, nil, func() (tokendist.Balancer, error) {
			dag, err := tokendist.CompleteTree(7)
			if err != nil {
				return nil, err
			}
			return tokendist.NewRingTree(4, dag, nil)
		}, func(b tokendist.Balancer) (tokendist.Result, error) {
			return tokendist.RunRing(ctx, b.(*tokendist.RingScheduler), nil)
		}, func(t *testing.T, r tokendist.Result, b tokendist.Balancer) {
			st := b.(*tokendist.RingScheduler).Stats()
			require.Equal(t, int64(127), st.Tasks)
			require.Equal(t, fmt.Sprintf("executed 127 tasks in time %d, 0 queued, speedup %.2f, efficiency %.2f, moved %d",
				st.Time, st.Speedup, st.Efficiency, st.Moved), r.Summary)
			require.NotContains(t, r.String(), "discrepancy")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tc.build()
			require.NoError(t, err)
			var r tokendist.Result
			if tc.run != nil {
				r, err = tc.run(b)
			} else {
				r, err = tokendist.Run(ctx, tc.net, tc.loads, b, &tokendist.RunOptions{MaxSteps: 500})
			}
			require.NoError(t, err)
			require.NotEmpty(t, r.Summary)
			tc.check(t, r, b)
			require.Equal(t, fmt.Sprintf("%s: %s after %d steps, %s", r.Balancer, r.Status, r.Steps, r.Summary), r.String())
			require.NotContains(t, r.String(), "(time", "the default figures are not printed")
		})
	}
}
