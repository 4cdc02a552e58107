//go:build report

package tokendist

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRingGapReport prints, per (family, p), the number of instances and the distance of
// KS-BF and of the best policy from the optimum: exactly on trees small enough for the
// branch and bound, as the interval [T/best policy, T/ring lower bound] on larger ones.
// It is a report, not a check, and builds only with -tags report: go test -tags report
// -run TestRingGapReport . prints everything (minutes; the depth-63 rows take the
// longest), and TOKENDIST_RINGGAP=63 (a comma-separated list of depths) prints only those
// rows of the second table.
func TestRingGapReport(t *testing.T) {
	which := os.Getenv("TOKENDIST_RINGGAP")
	if which == "" {
		which = "1"
	}
	// TOKENDIST_RINGGAP=1 prints everything; a comma-separated list of tree depths (for
	// example 63) prints only those rows of the second table.
	depths := []int{16, 32, 63}
	if which != "1" {
		depths = nil
		for _, f := range strings.Split(which, ",") {
			d, err := strconv.Atoi(strings.TrimSpace(f))
			require.NoError(t, err, "TOKENDIST_RINGGAP=%q", which)
			depths = append(depths, d)
		}
	}
	const instances, instances63 = 100, 30
	exactPs := []int{2, 4, 8}
	if which != "1" {
		exactPs = nil
	}
	fmt.Println("Exact optimum (branch and bound) on small random trees, q = 0.7, depth ≤ 7, N ≤ 21:")
	fmt.Println("| p | instances solved | not solved (node limit) | mean N | KS-BF/opt mean | KS-BF/opt worst | best policy/opt mean | best policy/opt worst | ring bound = opt | max(⌈N/p⌉,depth) = opt |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	for _, p := range exactPs {
		var solved, unsolved, eqRing, eqOld int
		var sumN, ksMean, ksWorst, bestMean, bestWorst float64
		for seed := uint64(1); solved+unsolved < instances; seed++ {
			dag, err := RandomTreeDag(0.7, 7, seed)
			require.NoError(t, err)
			tr, ok := optTreeOf(dag, 21)
			if !ok || len(tr.parent) < 7 {
				continue
			}
			times, st := policyTimes(t, p, dag, seed)
			best := slices.Min(times)
			opt, ok := ringOptimum(tr, p, int(st.RingLowerBound), int(best), 2e6, true)
			if !ok {
				unsolved++
				continue
			}
			solved++
			sumN += float64(len(tr.parent))
			ks := float64(times[0]) / float64(opt)
			bp := float64(best) / float64(opt)
			ksMean += ks
			bestMean += bp
			ksWorst = max(ksWorst, ks)
			bestWorst = max(bestWorst, bp)
			if int(st.RingLowerBound) == opt {
				eqRing++
			}
			if int(st.LowerBound) == opt {
				eqOld++
			}
		}
		k := float64(solved)
		fmt.Printf("| %d | %d | %d | %.1f | %.3f | %.3f | %.3f | %.3f | %d | %d |\n", p, solved, unsolved, sumN/k,
			ksMean/k, ksWorst, bestMean/k, bestWorst, eqRing, eqOld)
	}
	fmt.Println()
	fmt.Printf("Larger random trees (q = 0.6, instances with ≥ 64 tasks, %d per cell, %d for depth 63). UB = the better of the best policy and an offline list schedule; T/optimum lies in [T/UB, T/ring lower bound]; means over the instances, worst in brackets.\n", instances, instances63)
	fmt.Println("| family | p | instances | mean N | KS-BF T/max(⌈N/p⌉,depth) | KS-BF T/opt | less-loaded T/opt | UB/ring bound (uncertainty) | list schedule better than every policy |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	ps := []int{4, 16, 64}
	for _, depth := range depths {
		type cell struct {
			runs, greedyWins                                             int
			sumN, ksOld, ksLo, ksHi, llLo, llHi, unc, ksLoW, ksHiW, uncW float64
		}
		cells := make([]cell, len(ps))
		n := instances
		if depth == 63 {
			n = instances63
		}
		for seed, runs := uint64(1), 0; runs < n; seed++ {
			dag, err := RandomTreeDag(0.6, depth, seed)
			require.NoError(t, err)
			tr, ok := optTreeOf(dag, 1<<24)
			require.True(t, ok)
			if len(tr.parent) < 64 {
				continue
			}
			runs++
			for k, p := range ps {
				c := &cells[k]
				c.runs++
				times, st := policyTimes(t, p, dag, seed)
				best := slices.Min(times)
				ub := best
				for _, far := range []bool{false, true} {
					T, _, _ := greedyRing(tr, p, far)
					if int64(T) < ub {
						ub = int64(T)
					}
				}
				if ub < best {
					c.greedyWins++
				}
				rlb := float64(st.RingLowerBound)
				ks, ll := float64(times[0]), float64(times[2])
				require.Equal(t, RingPolicyLessLoaded, RingPolicies()[2])
				c.sumN += float64(st.Tasks)
				c.ksOld += ks / float64(st.LowerBound)
				c.ksLo += ks / float64(ub)
				c.ksHi += ks / rlb
				c.ksLoW, c.ksHiW = max(c.ksLoW, ks/float64(ub)), max(c.ksHiW, ks/rlb)
				c.llLo += ll / float64(ub)
				c.llHi += ll / rlb
				c.unc += float64(ub) / rlb
				c.uncW = max(c.uncW, float64(ub)/rlb)
			}
		}
		for k, p := range ps {
			c := cells[k]
			r := float64(c.runs)
			fmt.Printf("| tree q=0.6 depth %d | %d | %d | %.0f | %.2f | [%.2f, %.2f] ([%.2f, %.2f]) | [%.2f, %.2f] | %.2f (%.2f) | %d |\n", depth, p, c.runs, c.sumN/r,
				c.ksOld/r, c.ksLo/r, c.ksHi/r, c.ksLoW, c.ksHiW, c.llLo/r, c.llHi/r, c.unc/r, c.uncW, c.greedyWins)
		}
	}
}
