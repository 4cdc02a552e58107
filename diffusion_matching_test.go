package tokendist

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRandomMatchingUnderLinkFailures tests Ghosh and Muthukrishnan's claim (JCSS 1996,
// abstract) that balancing over random matchings "works on networks of arbitrary
// topology under possible failure of links": with random churn keeping about half the
// links of RandomRegular(64, 4) down at any time, RandomMatching still balances a point
// mass to discrepancy at most 3 (the run without churn reaches the same), only more
// slowly.
func TestRandomMatchingUnderLinkFailures(t *testing.T) {
	g, _ := RandomRegular(64, 4, 7)
	start, _ := PointMass(64, 64*100, 0)
	steps := map[bool]int64{}
	for _, churn := range []bool{false, true} {
		for seed := uint64(0); seed < 5; seed++ {
			b, _ := NewRandomMatching(g)
			o := &RunOptions{MaxSteps: 20000, Seed: seed, UseTarget: true, TargetDiscrepancy: 3}
			if churn {
				o.Churn, _ = NewRandomLinkChurn(0.3, 0.3)
			}
			res, err := Run(context.Background(), g, start, b, o)
			require.NoError(t, err)
			require.Equal(t, StatusTarget, res.Status, "churn %v seed %d: %v", churn, seed, res)
			steps[churn] += res.Steps
		}
	}
	require.Greater(t, steps[true], steps[false], "churn did not slow balancing: %v", steps)
}
