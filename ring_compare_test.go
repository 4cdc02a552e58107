package tokendist

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRingCompare checks RunRingComparison's rows against direct runs.
func TestRingCompare(t *testing.T) {
	e := RingExperiment{
		Name: "random trees", P: []int{2, 6},
		Tree:  func(s uint64) (TreeDag, error) { return RandomTreeDag(0.8, 12, s) },
		Seeds: []uint64{1, 2, 3}, MinTasks: 50,
	}
	rows, err := RunRingComparison(context.Background(), e)
	require.NoError(t, err)
	require.Len(t, rows, 8)
	for _, row := range rows {
		var sumT, sumN float64
		runs := 0
		for _, seed := range e.Seeds {
			dag, _ := e.Tree(seed)
			b := mustTree(t, row.P, dag, nil, &RingOptions{Policy: row.Policy})
			simulate(t, b, seed)
			st := b.stats()
			if st.Tasks < e.MinTasks {
				continue
			}
			runs++
			sumT += float64(st.Time)
			sumN += float64(st.Tasks)
			require.GreaterOrEqual(t, st.Time, st.LowerBound)
		}
		require.Equal(t, runs, row.Runs)
		require.InDelta(t, sumT/float64(runs), row.Time, 1e-9)
		require.InDelta(t, sumN/float64(runs), row.Tasks, 1e-9)
		require.GreaterOrEqual(t, row.OverLowerBound, 1.0)
		require.GreaterOrEqual(t, row.WorstOverLowerBound, row.OverLowerBound)
	}
	e.Workers = 1
	sequential, err := RunRingComparison(context.Background(), e)
	require.NoError(t, err)
	require.Equal(t, sequential, rows, "results must not depend on Workers")
	// Keep-all on p PEs is p times slower than ideal.
	require.Equal(t, RingPolicyKeepAll, rows[1].Policy)
	require.InDelta(t, 1, rows[1].Speedup, 1e-12)
}
