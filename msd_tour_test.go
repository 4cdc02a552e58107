package tokendist_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
)

// WorstStableLoads on random trees up to 2000 nodes, with the library's colourings, is
// stable under one phase of THRESHOLD-1 and has discrepancy MSD; on perturbed and random
// loads the stepper agrees with Lemma 10 (Gaps.Stable).
func TestWorstStableLoadsRandomTrees(t *testing.T) {
	t.Parallel()
	for i, n := range []int{2, 3, 10, 57, 200, 500, 1000, 2000} {
		g := msdMust(tokendist.RandomTree(n, uint64(i)))
		msd, err := tokendist.MSD(g)
		require.NoError(t, err)
		sg1, err := tokendist.StableGaps(g)
		require.NoError(t, err)
		for _, ec := range msdAlgorithmColorings(t, g) {
			ok, err := msdRandomLoadsAgree(t, ec, sg1, uint64(n))
			require.NoError(t, err)
			require.True(t, ok)
			tour, err := tokendist.NewObserverTour(ec)
			require.NoError(t, err)
			for c := 0; c < tour.Colors(); c++ {
				s := (c * 7919) % n
				l, err := tokendist.WorstStableLoads(ec, c, s)
				require.NoError(t, err)
				require.Equal(t, int64(msd), l.Discrepancy(), "n=%d c=%d", n, c)
				require.True(t, msdPhaseStable(t, ec, c, l), "n=%d c=%d s=%d", n, c, s)
				gp, err := tour.Gaps(c)
				require.NoError(t, err)
				ok, err := gp.Stable(l)
				require.NoError(t, err)
				require.True(t, ok)
			}
		}
	}
}
