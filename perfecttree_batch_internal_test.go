package tokendist

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPTBatchSingleTokensUnchanged: where every batch carries one token (the batched
// and per-token semantics coincide), the batched runtime gives exactly the per-token
// results, Time, PhaseTime and LastMove included, under every delay policy (a Step may
// skip idle time units, so only Result.Steps may differ). Nearly balanced loads on many random
// trees give such runs (and longer ones, which are skipped).
func TestPTBatchSingleTokensUnchanged(t *testing.T) {
	policies := func() []Delays {
		return []Delays{ptUnitDelays{}, &ptRandomDelays{max: 5}, &ptRandomDelays{max: 60}, &ptSerialDelays{},
			ptReverseDelays{w: 7}, &ptSlowLinkDelays{slow: 9}}
	}
	single, multi := 0, 0
	for s := uint64(0); s < 120; s++ {
		n := 2 + int(s*29%150)
		g, err := RandomTree(n, s)
		require.NoError(t, err)
		// Nearly balanced loads: 3 tokens per node, a few nodes with one more or one
		// less, so that most subtrees differ from the average by at most one token.
		loads := make(Loads, n)
		for v := range loads {
			loads[v] = 3
		}
		for j := uint64(0); j < 1+s%3; j++ {
			loads[ptMix(s<<8|j)%uint64(n)]++
			loads[ptMix(s<<8|j|128)%uint64(n)]--
		}
		loads[ptMix(s)%uint64(n)] += int64(s % 2)
		for k := range policies() {
			var res [2]Result
			var pts [2]*PerfectTree
			for b, batch := range []bool{false, true} {
				pt, err := NewPerfectTree(g, &PerfectTreeOptions{Delays: policies()[k], ShufflePorts: s%2 == 0, Batch: batch})
				require.NoError(t, err)
				res[b], err = Run(context.Background(), g, loads, pt, &RunOptions{MaxSteps: math.MaxInt64, NoStability: true, Seed: s})
				require.NoError(t, err)
				pts[b] = pt
			}
			what := fmt.Sprintf("seed %d policy %v", s, policies()[k])
			require.Zero(t, pts[0].sim.multi, what)
			if pts[1].sim.multi > 0 {
				multi++
				continue
			}
			single++
			require.Equal(t, res[0].Report, res[1].Report, what)
			require.Equal(t, res[0].Loads, res[1].Loads, what)
			require.Equal(t, [3]int64{res[0].Time, res[0].Moved, res[0].Messages}, [3]int64{res[1].Time, res[1].Moved, res[1].Messages}, what)
			if k == 0 {
				require.Equal(t, res[0].Steps, res[1].Steps, what)
			}
		}
	}
	t.Logf("%d runs with single-token batches only, %d with longer ones", single, multi)
	require.Greater(t, single, 100)
}
