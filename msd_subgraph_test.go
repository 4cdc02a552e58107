package tokendist_test

import (
	"math/bits"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
)

// ConstructSubgraph returns a connected subtree of exactly p nodes within ⌈log2 n⌉
// iterations, for every p on every tree of the sweep; on T_{h,k} within h+1 iterations
// (proof of Lemma 17).
func TestConstructSubgraph(t *testing.T) {
	check := func(g *tokendist.Graph, iterBound int) {
		t.Helper()
		n := g.Order()
		for p := 1; p <= n; p++ {
			st, err := tokendist.ConstructSubgraph(g, p)
			require.NoError(t, err)
			require.Len(t, st.Nodes, p, "%s p=%d", g, p)
			require.True(t, slices.IsSorted(st.Nodes))
			require.Contains(t, st.Nodes, st.Leaf)
			require.LessOrEqual(t, g.Degree(st.Leaf), 1)
			require.True(t, msdConnected(g, st.Nodes), "%s p=%d not connected", g, p)
			require.LessOrEqual(t, st.Iterations, iterBound, "%s p=%d", g, p)
		}
	}
	lg := func(n int) int { return bits.Len(uint(n - 1)) }
	for _, g := range msdAllTrees(t, 10) {
		check(g, lg(g.Order()))
	}
	for seed := uint64(0); seed < 25; seed++ {
		g := msdMust(tokendist.RandomTree(int(11+seed*9), seed))
		check(g, lg(g.Order()))
	}
	for _, n := range []int{2, 17, 64, 300} {
		check(msdMust(tokendist.Star(n)), lg(n))
		check(msdMust(tokendist.Path(n)), lg(n))
	}
	for k := 1; k <= 5; k++ {
		for h := 0; h <= 5; h++ {
			g := msdMust(tokendist.KaryTree(tokendist.KaryShape{Height: h, Arity: k}))
			if g.Order() <= 1000 {
				check(g, min(lg(g.Order()), h+1))
			}
		}
	}
}
