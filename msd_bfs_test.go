package tokendist_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
)

// The bitset search agrees with the paper's set building on every small tree, random
// trees, and random symmetric gap sets whose n straddles the 64-bit word boundaries.
func TestStabilitiesMatchPaperSetBuilding(t *testing.T) {
	check := func(name string, n int, sg1 []int) {
		t.Helper()
		wantMSD, wantStab := msdPaper(n, sg1)
		stab, err := tokendist.GapStabilities(n, sg1, nil)
		require.NoError(t, err, name)
		require.Equal(t, wantStab, stab, name)
		m, err := tokendist.GapMSD(n, sg1, nil)
		require.NoError(t, err, name)
		require.Equal(t, wantMSD, m, name)
	}
	for _, g := range msdAllTrees(t, 9) {
		sg1, err := tokendist.StableGaps(g)
		require.NoError(t, err)
		check(msdTreeName(g), g.Order(), sg1)
		stab, err := tokendist.Stabilities(g)
		require.NoError(t, err)
		_, want := msdPaper(g.Order(), sg1)
		require.Equal(t, want, stab)
	}
	for seed := uint64(0); seed < 30; seed++ {
		g, err := tokendist.RandomTree(int(20+seed*5), seed)
		require.NoError(t, err)
		sg1, err := tokendist.StableGaps(g)
		require.NoError(t, err)
		check(g.String(), g.Order(), sg1)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{2, 3, 63, 64, 65, 127, 128, 129, 191, 192, 193, 255, 256, 257} {
		for rep := 0; rep < 3; rep++ {
			sg1 := []int{1, n - 1}
			for k := r.IntN(6); k > 0; k-- {
				p := 1 + r.IntN(n-1)
				sg1 = append(sg1, p, n-p)
			}
			check("random gaps", n, sg1)
		}
	}
}

// Large searches take both the sparse and the dense, multi-block, multi-worker paths;
// they agree with a plain queue BFS for any worker count, and report progress.
func TestGapStabilitiesLarge(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{33_001, 40_000} {
		sg1 := []int{1, n - 1}
		for k := 3; k > 0; k-- {
			p := 1 + r.IntN(n-1)
			sg1 = append(sg1, p, n-p)
		}
		want := msdQueueBFS(n, sg1)
		for _, w := range []int{1, 2} {
			levels, last := 0, 0
			opts := &tokendist.MSDOptions{Workers: w, Progress: func(level, reached int) {
				require.Equal(t, levels+1, level)
				require.Greater(t, reached, last)
				levels, last = level, reached
			}}
			got, err := tokendist.GapStabilities(n, sg1, opts)
			require.NoError(t, err)
			require.Equal(t, want, got, "n=%d workers=%d", n, w)
			require.Equal(t, msdMaxOf(want), levels)
			require.Equal(t, n, last)
			m, err := tokendist.GapMSD(n, sg1, &tokendist.MSDOptions{Workers: w})
			require.NoError(t, err)
			require.Equal(t, msdMaxOf(want), m)
		}
	}
	g, err := tokendist.RandomTree(40_000, 9)
	require.NoError(t, err)
	sg1, err := tokendist.StableGaps(g)
	require.NoError(t, err)
	stab, err := tokendist.Stabilities(g)
	require.NoError(t, err)
	require.Equal(t, msdQueueBFS(g.Order(), sg1), stab)
}
