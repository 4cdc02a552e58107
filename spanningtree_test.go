package tokendist_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/tokendisttest"
)

func TestContractSpanningTree(t *testing.T) {
	tokendisttest.Check(t, tokendisttest.Case{Name: "spanningtree", New: func(g *tokendist.Graph) (tokendist.Balancer, error) {
		return tokendist.NewSpanningTree(g, tokendist.AutoRoot, func(tree *tokendist.Graph) (tokendist.Balancer, error) {
			return tokendist.NewDiscrepancy1(tree, nil, nil)
		})
	}})
}

func TestSpanningTree(t *testing.T) {
	torus, err := tokendist.Torus(6, 7)
	require.NoError(t, err)
	for _, root := range []int{tokendist.AutoRoot, 0, 17} {
		st, err := tokendist.NewSpanningTree(torus, root, func(tree *tokendist.Graph) (tokendist.Balancer, error) {
			return tokendist.NewThreshold1(tree, nil)
		})
		require.NoError(t, err)
		require.True(t, st.Tree().IsTree())
		for _, e := range st.Tree().EdgeList() {
			require.True(t, torus.HasEdge(e[0], e[1]))
		}
		if root == tokendist.AutoRoot {
			c, err := torus.Center()
			require.NoError(t, err)
			require.Equal(t, c, st.Root())
		} else {
			require.Equal(t, root, st.Root())
		}
		require.Contains(t, st.String(), "THRESHOLD-1 on a BFS tree")
		loads, err := tokendist.RandomRange(torus.Order(), 0, 30, uint64(root+2))
		require.NoError(t, err)
		r, err := tokendist.Run(context.Background(), torus, loads, st, nil)
		require.NoError(t, err)
		require.Equal(t, tokendist.StatusStable, r.Status)
		require.LessOrEqual(t, r.Discrepancy(), int64(torus.Order()/2)) // Lemma 13 on the tree
	}
	// DISCREPANCY-1 through the wrapper: Done is forwarded.
	g, err := tokendist.RandomRegular(30, 3, 4)
	require.NoError(t, err)
	st, err := tokendist.NewSpanningTree(g, tokendist.AutoRoot, func(tree *tokendist.Graph) (tokendist.Balancer, error) {
		return tokendist.NewDiscrepancy1(tree, nil, nil)
	})
	require.NoError(t, err)
	loads, err := tokendist.RandomRange(g.Order(), 0, 100, 5)
	require.NoError(t, err)
	r, err := tokendist.Run(context.Background(), g, loads, st, &tokendist.RunOptions{NoStability: true})
	require.NoError(t, err)
	require.Equal(t, tokendist.StatusDone, r.Status)
	require.LessOrEqual(t, r.Discrepancy(), int64(1))
	require.Positive(t, r.Report.(tokendist.Discrepancy1Report).Cycles, "the wrapper forwards the tree algorithm's report")
}
