//go:build report

package tokendist_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
)

// d1sFailure is a counterexample to a local rule: on the coloured tree, from loads x,
// node v's rule fires at the end of cycle j+1 while the discrepancy is ≥ 2.
type d1sFailure struct {
	tree  d1sTree
	x     []int64
	v, j  int
	disc  int64
	found bool
}

// String prints the failure as a row of TestDiscrepancy1LocalRuleCounterexamples.
func (f d1sFailure) String() string {
	return fmt.Sprintf("{n: %d, edges: %#v, colors: %#v, loads: %#v, node: %d, cycle: %d, disc: %d}",
		f.tree.n, f.tree.edges, f.tree.colors, f.x, f.v, f.j+1, f.disc)
}

// d1sSearchRules runs every rule over every coloured tree with n ≤ maxN nodes (χ = Δ)
// and every load vector of the box lim[n], simulating cycles cycles from each; it
// returns each rule's first counterexample (smallest n first) and the number of windows
// checked.
func d1sSearchRules(rules []d1sRule, lim map[int]int64, maxN, cycles int) ([]d1sFailure, int) {
	fails := make([]d1sFailure, len(rules))
	windows := 0
	for n := 2; n <= maxN; n++ {
		K, ok := lim[n]
		if !ok {
			continue
		}
		for _, tr := range d1sTrees(n, 0) {
			sim := newD1sSim(tr, n, cycles)
			d1sBox(n, K, func(x []int64) {
				sim.run(x)
				windows++
				for r, rule := range rules {
					if fails[r].found {
						continue
					}
					for j := rule.w - 1; j < cycles && !fails[r].found; j++ {
						if sim.cycles[j].disc <= 1 {
							break
						}
						for v := 0; v < n; v++ {
							if rule.fire(sim.cycles, j, v) {
								fails[r] = d1sFailure{tree: tr, x: slices.Clone(x), v: v, j: j, disc: sim.cycles[j].disc, found: true}
								break
							}
						}
					}
				}
			})
		}
	}
	return fails, windows
}

// TestDiscrepancy1LocalRuleSearch reports, for every candidate local rule, its first
// counterexample or the range over which it never failed (TOKENDIST_LONG=1 or
// TOKENDIST_D1K widens it). A report, not a check: it builds only with -tags report
// (go test -tags report -run TestDiscrepancy1LocalRuleSearch -v .);
// TestDiscrepancy1LocalRuleCounterexamples pins its results.
func TestDiscrepancy1LocalRuleSearch(t *testing.T) {
	lim := d1sLimits(map[int]int64{2: 10, 3: 8, 4: 5, 5: 3}, map[int]int64{2: 30, 3: 20, 4: 10, 5: 6, 6: 4, 7: 3})
	rules := d1sRules()
	fails, windows := d1sSearchRules(rules, lim, 7, 5)
	for r, f := range fails {
		if f.found {
			t.Logf("%-50s FAILS: %s", rules[r].name, f)
		} else {
			t.Logf("%-50s never failed", rules[r].name)
		}
	}
	t.Logf("%d load vectors × 5 cycles, boxes %v", windows, lim)
}

// d1sRandomRules runs the rules on random coloured trees and loads (seeds 0..seeds-1),
// each until discrepancy ≤ 1, and returns each rule's first counterexample.
func d1sRandomRules(t *testing.T, rules []d1sRule, seeds uint64, maxN int, maxLoad int64) ([]d1sFailure, int) {
	fails := make([]d1sFailure, len(rules))
	runs := 0
	for seed := uint64(0); seed < seeds; seed++ {
		n := 3 + int(seed%uint64(maxN-2))
		g, err := tokendist.RandomTree(n, seed)
		require.NoError(t, err)
		if seed%5 == 0 {
			g, err = tokendist.Path(n)
			require.NoError(t, err)
		}
		tr := d1sFromGraph(g, dxPermutedColoring(t, g, seed))
		x, err := tokendist.RandomRange(n, 0, maxLoad, seed)
		require.NoError(t, err)
		if seed%3 == 0 {
			x, err = tokendist.PointMass(n, maxLoad+int64(seed%17), int(seed/3)%n)
			require.NoError(t, err)
		}
		sim := newD1sSim(tr, n, 2*int(maxLoad)+4)
		sim.run(x)
		runs++
		for r, rule := range rules {
			if fails[r].found {
				continue
			}
			for j := rule.w - 1; j < len(sim.cycles) && sim.cycles[j].disc > 1 && !fails[r].found; j++ {
				for v := 0; v < n; v++ {
					if rule.fire(sim.cycles, j, v) {
						fails[r] = d1sFailure{tree: tr, x: slices.Clone(x), v: v, j: j, disc: sim.cycles[j].disc, found: true}
						break
					}
				}
			}
		}
	}
	return fails, runs
}

// TestDiscrepancy1LocalRuleRandom is the random counterpart of
// TestDiscrepancy1LocalRuleSearch: trees up to 14 nodes (a fifth of them paths), loads
// up to 80, every cycle until discrepancy ≤ 1. A report, not a check: it builds only with
// -tags report (go test -tags report -run TestDiscrepancy1LocalRuleRandom -v .);
// TestDiscrepancy1LocalRuleCounterexamples pins its results.
func TestDiscrepancy1LocalRuleRandom(t *testing.T) {
	seeds := uint64(20000)
	rules := d1sRules()
	fails, runs := d1sRandomRules(t, rules, seeds, 14, 80)
	for r, f := range fails {
		if f.found {
			t.Logf("%-50s FAILS: %s", rules[r].name, f)
		} else {
			t.Logf("%-50s never failed", rules[r].name)
		}
	}
	t.Logf("%d random runs", runs)
}
