package tokendist

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRingQuadrature checks the adaptive trapezoid rule: the integral of √x on [0, 1]
// within the accuracy, the same bits for every policy and ring size, and the
// resolution-only case growing exactly T_n with the schedule of Theorem 2.2.
func TestRingQuadrature(t *testing.T) {
	q, err := NewQuadrature(math.Sqrt, 0, 1, 1e-9, 1e-7)
	require.NoError(t, err)
	var first float64
	for _, p := range []int{1, 2, 5, 8} {
		for _, pol := range RingPolicies() {
			b := mustTree(t, p, q, nil, &RingOptions{Policy: pol})
			simulate(t, b, 3)
			got, err := q.Integral()
			require.NoError(t, err)
			require.InDelta(t, 2.0/3, got, 1e-4)
			if first == 0 {
				first = got
			}
			require.Equal(t, first, got, "p %d %v", p, pol)
			require.Equal(t, int(b.stats().Tasks+1)/2, q.Leaves())
		}
	}
	// Resolution only (accuracy 0): an interval of width 2^-l halts when 2^-l/2 < 2^-k,
	// that is at level k, so the dag is T_{k+1}.
	const k = 8
	sq, err := NewQuadrature(func(x float64) float64 { return x * x }, 0, 1, math.Ldexp(1, -k), 0)
	require.NoError(t, err)
	b := mustTree(t, 4, sq, nil, nil)
	simulate(t, b, 1)
	require.Equal(t, int64(1)<<(k+1)-1, b.stats().Tasks)
	for _, tk := range b.Schedule() {
		tau, _ := RingTreeTau(TreeNode(tk.Node), 4)
		require.Equal(t, tau, tk.Step)
	}
	got, err := sq.Integral()
	require.NoError(t, err)
	h := math.Ldexp(1, -k)
	require.InDelta(t, 1.0/3+h*h/6, got, 1e-12) // the trapezoid rule's exact error for x²
	c, d := sq.Interval(TreeNode(0b101))
	require.Equal(t, [2]float64{0.25, 0.5}, [2]float64{c, d})
}

// TestRingNodes checks the node helpers.
func TestRingNodes(t *testing.T) {
	for _, s := range []string{"λ", "0", "1", "0110", "111111"} {
		x, err := ParseTreeNode(s)
		require.NoError(t, err)
		require.Equal(t, s, x.String())
		if x != TreeRoot {
			require.Equal(t, x, x.Parent().Left()+TreeNode(x&1))
		}
	}
	x, _ := ParseTreeNode("0110")
	require.Equal(t, TreeNode(22), x)
	require.Equal(t, 4, x.Level())
	require.Equal(t, 2, x.Weight())
	for id := uint64(0); id < 5000; id++ {
		g := GridNodeOf(id)
		require.Equal(t, id, g.ID())
		require.True(t, g.K >= 0 && g.L >= 0)
	}
	big := GridNode{K: 1 << 30, L: 1<<30 + 5}
	require.Equal(t, big, GridNodeOf(big.ID()))
	require.Equal(t, "⟨1,2⟩", GridNode{1, 2}.String())
	require.Equal(t, "KS-BF", RingPolicyKSBF.String())
	require.Equal(t, "RingPolicy(7)", RingPolicy(7).String())
	require.True(t, errors.Is(fmt.Errorf("x: %w", ErrBadDag), ErrBadDag))
}
