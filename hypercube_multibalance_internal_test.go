package tokendist

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// multiInputs returns group loads for the NewMultiBalance sweep: random groups, groups whose
// totals are balanced (Plaxton's assumption in section 3: n tokens evenly distributed),
// and Theorem 3.2's condensed-ID input.
func multiInputs(t testing.TB, d int, seed uint64) map[string][]Loads {
	p := 1 << d
	in := map[string][]Loads{}
	g := 1 + int(seed%5)
	random := make([]Loads, g)
	for j := range random {
		l, err := RandomRange(p, 0, int64(3+j*j), seed*17+uint64(j))
		require.NoError(t, err)
		random[j] = l
	}
	in[fmt.Sprintf("random/g=%d", g)] = random
	// evenly distributed totals: every processor holds perNode tokens of random types.
	perNode := 2 + int(seed%4)
	even := make([]Loads, g)
	for j := range even {
		even[j] = make(Loads, p)
	}
	types, err := RandomRange(p*perNode, 0, int64(g-1), seed)
	require.NoError(t, err)
	for i, ty := range types {
		even[ty][i/perNode]++
	}
	in[fmt.Sprintf("even/g=%d", g)] = even
	if d >= 1 {
		r := 1 + int(seed)%min(d, 3)
		cid, err := CondensedIDGroups(d, r, int64(d)+int64(seed%3))
		require.NoError(t, err)
		in[fmt.Sprintf("condensed/r=%d", r)] = cid
	}
	return in
}

func groupTotals(groups []Loads) Loads {
	total := make(Loads, len(groups[0]))
	for _, grp := range groups {
		for v, x := range grp {
			total[v] += x
		}
	}
	return total
}

// TestMultiBalanceSweep runs every NewMultiBalance variant (recursion, ascending,
// shuffle-exchange, each with and without MinError) for every d ≤ 10 over seeds and the
// three inputs, checking on every step Lemma 2.3 per group, every group's conservation,
// the totals, and the recursion's step bound per group; at the end every group's error
// (≤ log p, or minimal), totals that stay within one of each other when they started so
// (and always after MinError), Group/Groups, and section 3.2's lower bound.
func TestMultiBalanceSweep(t *testing.T) {
	for d := 0; d <= 10; d++ {
		hc := mustCube(t, d, false)
		var se *Graph
		if d >= 2 {
			se = mustCube(t, d, true)
		}
		for seed := uint64(1); seed <= uint64(max(2, cubeSeeds(d)/2)); seed++ {
			for name, groups := range multiInputs(t, d, seed) {
				t.Run(fmt.Sprintf("d=%d/seed=%d/%s", d, seed, name), func(t *testing.T) {
					multiSweepOne(t, d, hc, se, groups)
				})
			}
		}
	}
}

func multiSweepOne(t *testing.T, d int, hc, se *Graph, groups []Loads) {
	p := 1 << d
	total := groupTotals(groups)
	evenStart := total.Discrepancy() <= 1
	type variant struct {
		net  *Graph
		opts MultiOptions
	}
	vs := []variant{{hc, MultiOptions{}}, {hc, MultiOptions{Ascending: true}}, {hc, MultiOptions{MinError: true}}}
	if se != nil {
		vs = append(vs, variant{se, MultiOptions{}}, variant{se, MultiOptions{MinError: true}})
	}
	for _, v := range vs {
		b, err := NewMultiBalance(v.net, groups, &v.opts)
		require.NoError(t, err)
		r := drive(t, v.net, total, b)
		final := b.Report(nil).(MultiBalanceReport).Groups
		require.Len(t, final, len(groups))
		var worst int64
		for j, grp := range final {
			require.Equal(t, groups[j].Total(), grp.Total(), "%v group %d", b, j)
			xi := grp.Discrepancy()
			worst = max(worst, xi)
			if v.opts.MinError {
				require.Equal(t, mustMinimumError(t, grp.Total(), p), xi, "%v group %d", b, j)
			} else {
				require.LessOrEqual(t, xi, int64(d), "%v group %d", b, j)
			}
		}
		require.Equal(t, groupTotals(final), r.s.Loads)
		// every final δ^j_i ≤ p/2, which makes section 3.2's bound apply (see
		// MultiBalanceLowerBound).
		for j, grp := range final {
			delta, err := DimensionDiscrepancies(grp)
			require.NoError(t, err)
			for i, x := range delta {
				require.LessOrEqual(t, x, int64(p/2), "%v group %d: final δ_%d", b, j, i)
			}
		}
		if evenStart || v.opts.MinError {
			require.LessOrEqual(t, r.s.Loads.Discrepancy(), int64(1), "%v: totals drifted apart", b)
		}
		if v.net == hc && d > 0 {
			lb, err := MultiBalanceLowerBound(groups, int64(p/2))
			require.NoError(t, err)
			require.GreaterOrEqual(t, r.s.Time, lb, "%v: faster than section 3.2 allows", b)
			lbXi, err := MultiBalanceLowerBound(groups, int64(p/2)*max(worst, 1))
			require.NoError(t, err)
			require.LessOrEqual(t, lbXi, lb)
		}
	}
}

// TestMultiBalanceMatchesSingle checks that NewMultiBalance with one group is Balance: same
// loads, time and moves, for the recursion and dimension order, on both networks.
func TestMultiBalanceMatchesSingle(t *testing.T) {
	for d := 1; d <= 9; d++ {
		for _, se := range []bool{false, true} {
			if se && d < 2 {
				continue
			}
			g := mustCube(t, d, se)
			for seed := uint64(1); seed <= 3; seed++ {
				loads, err := RandomRange(1<<d, 0, 50, seed)
				require.NoError(t, err)
				for _, minErr := range []bool{false, true} {
					single, err := NewDimensionOrderBalance(g, &CubeOptions{MinError: minErr})
					asc := true
					if !se {
						single, err = NewHypercubeBalance(g, &CubeOptions{MinError: minErr})
						asc = false
					}
					require.NoError(t, err)
					multi, err := NewMultiBalance(g, []Loads{loads}, &MultiOptions{Ascending: asc, MinError: minErr})
					require.NoError(t, err)
					r1, err := Run(context.Background(), g, loads, single, nil)
					require.NoError(t, err)
					r2, err := Run(context.Background(), g, loads, multi, nil)
					require.NoError(t, err)
					require.Equal(t, r1.Loads, r2.Loads)
					require.Equal(t, r1.Time, r2.Time)
					require.Equal(t, r1.Moved, r2.Moved)
					require.Equal(t, r1.Steps, r2.Steps)
					require.Equal(t, single.core.times, multi.core.times)
				}
			}
		}
	}
}

// TestMultiBalanceReuse runs one MultiBalancer twice: both runs start from the groups
// given to NewMultiBalance and give the same result.
func TestMultiBalanceReuse(t *testing.T) {
	g := mustCube(t, 6, false)
	groups, err := CondensedIDGroups(6, 2, 7)
	require.NoError(t, err)
	b, err := NewMultiBalance(g, groups, &MultiOptions{MinError: true})
	require.NoError(t, err)
	require.Equal(t, groups, b.Report(nil).(MultiBalanceReport).Groups, "before a run Groups are the initial loads")
	r1, err := Run(context.Background(), g, groupTotals(groups), b, nil)
	require.NoError(t, err)
	g1 := b.Report(nil).(MultiBalanceReport).Groups
	r2, err := Run(context.Background(), g, groupTotals(groups), b, nil)
	require.NoError(t, err)
	require.Equal(t, r1, r2)
	require.Equal(t, g1, b.Report(nil).(MultiBalanceReport).Groups)
	require.Nil(t, b.group(-1))
	require.Nil(t, b.group(4))
	require.Equal(t, 4, b.NumGroups())
}

func bitsOnes(v int) int {
	c := 0
	for ; v != 0; v &= v - 1 {
		c++
	}
	return c
}
