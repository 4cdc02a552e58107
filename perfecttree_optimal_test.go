package tokendist_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
)

func TestOptimalPerfectMovesBruteForce(t *testing.T) {
	checked := 0
	for n := 1; n <= 9; n++ {
		for s := uint64(0); s < 6; s++ {
			g := ptMust(tokendist.RandomTree(n, s))
			for _, T := range []int64{0, 1, int64(n) - 1, int64(n), int64(2*n) + 3, int64(5 * n / 2)} {
				for ls := uint64(0); ls < 3; ls++ {
					l := ptMust(tokendist.UniformRandom(n, T, ls))
					got := ptMust(tokendist.OptimalPerfectMoves(g, l))
					require.Equal(t, ptBruteOptimum(g, l), got, "n=%d seed %d loads %v", n, s, l)
					checked++
				}
			}
		}
	}
	// Every labelled tree on 5 nodes from one skewed load vector per total.
	for _, g := range ptLabelledTrees(5) {
		for T := int64(0); T <= 12; T++ {
			l := tokendist.Loads{T / 2, 0, T - T/2, 0, 0}
			require.Equal(t, ptBruteOptimum(g, l), ptMust(tokendist.OptimalPerfectMoves(g, l)))
			checked++
		}
	}
	t.Logf("%d optima checked by brute force", checked)
}
