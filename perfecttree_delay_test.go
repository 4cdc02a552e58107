package tokendist_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
)

func TestPerfectTreeDelayPolicies(t *testing.T) {
	g := ptMust(tokendist.RandomTree(60, 4))
	l := ptMust(tokendist.RandomRange(60, 0, 12, 4))
	for _, p := range ptPolicies() {
		rec := &ptRecorder{p: p}
		r := ptRun(t, g, l, &tokendist.PerfectTreeOptions{Delays: rec}, 3, fmt.Sprint(p))
		require.Equal(t, r.TotalMessages(), int64(len(rec.arrivals)))
		switch name := fmt.Sprint(p); name {
		case "unit":
			for _, ds := range rec.links {
				for _, d := range ds {
					require.Equal(t, int64(1), d)
				}
			}
		case "serial (most recent last)":
			// Every message arrives strictly after every message sent before it.
			for i := 1; i < len(rec.arrivals); i++ {
				require.Greater(t, rec.arrivals[i], rec.arrivals[i-1])
			}
		case "random(1..5)":
			seen := map[int64]bool{}
			for _, ds := range rec.links {
				for _, d := range ds {
					require.True(t, d >= 1 && d <= 5)
					seen[d] = true
				}
			}
			require.Len(t, seen, 5)
		case "reverse(window 7)":
			// Within a window of 7 messages, each takes one unit less than the last.
			for i, d := range rec.delays {
				require.Equal(t, int64(7-i%7), d)
			}
		case "slow links (6)":
			slow := 0
			for _, ds := range rec.links {
				for _, d := range ds[1:] {
					require.Equal(t, ds[0], d, "a link's delay is fixed")
				}
				if ds[0] == 6 {
					slow++
				}
			}
			require.Greater(t, slow, 0)
			require.Less(t, slow, len(rec.links))
		default:
			require.FailNow(t, fmt.Sprintf("untested policy %q", name))
		}
	}
	// Seeds matter for the random policies and port shuffling, and nothing else.
	a := ptRun(t, g, l, &tokendist.PerfectTreeOptions{Delays: ptMust(tokendist.NewRandomDelays(9))}, 1, "seed 1")
	b := ptRun(t, g, l, &tokendist.PerfectTreeOptions{Delays: ptMust(tokendist.NewRandomDelays(9))}, 2, "seed 2")
	require.NotEqual(t, a.Time, b.Time)
}
