package tokendist_test

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
)

// The batched simulated runtime (PerfectTreeOptions.Batch) against the per-token one.

// ptBatchFamilies returns the batch sweep's trees: the sweep's families plus two larger
// random trees.
func ptBatchFamilies() []ptTree {
	out := ptFamilies(24)
	for _, n := range []int{700, 2000} {
		out = append(out, ptTree{fmt.Sprintf("RandomTree(%d,%d)", n, n), ptMust(tokendist.RandomTree(n, uint64(n)))})
	}
	return out
}

// ptSameOutcome requires that two runs moved the same tokens over the same links: the
// same root, tree, phase-2 loads, final loads, status and counts of moves and messages
// per phase.
func ptSameOutcome(t *testing.T, want, got ptResult, what string) {
	t.Helper()
	require.Equal(t, want.Status, got.Status, what)
	require.Equal(t, want.Loads, got.Loads, what)
	require.Equal(t, want.Root, got.Root, what)
	require.Equal(t, want.Roots, got.Roots, what)
	require.Equal(t, want.Parent, got.Parent, what)
	require.Equal(t, want.GlobalKnown, got.GlobalKnown, what)
	require.Equal(t, want.Phase2Tokens, got.Phase2Tokens, what)
	require.Equal(t, want.Perfect, got.Perfect, what)
	require.Equal(t, want.Finished, got.Finished, what)
	require.Equal(t, want.Moves, got.Moves, what)
	require.Equal(t, want.Messages, got.Messages, what)
	require.Equal(t, want.OptimalMoves, got.OptimalMoves, what)
	require.Equal(t, want.ExcessMoves, got.ExcessMoves, what)
}

// TestPerfectTreeBatchSameOutcome: under unit delays and slow links (each link's delay
// fixed, so phase 1 runs as in the per-token runtime), the batched runtime elects the
// same root and makes the same moves, messages and final loads as the per-token one,
// and the same phase-1 end time; only Time, PhaseTime[1:], LastMove and Steps differ.
// Every batched run satisfies the paper's theorems and the exact move counts (ptVerify).
func TestPerfectTreeBatchSameOutcome(t *testing.T) {
	t.Parallel()
	policies := func() []tokendist.Delays {
		return []tokendist.Delays{ptMust(tokendist.NewUnitDelays()), ptMust(tokendist.NewSlowLinkDelays(6)), ptMust(tokendist.NewSlowLinkDelays(70))}
	}
	runs, longer := 0, 0
	for i, tr := range ptBatchFamilies() {
		for name, l := range ptLoadSets(tr.g.Order(), uint64(i+1)) {
			for k := range policies() {
				for _, shuffle := range []bool{false, true} {
					if !tokendist.SweepTakes(i, k, 3) {
						continue
					}
					seed := uint64(31*i + k)
					what := fmt.Sprintf("%s %s policy %d shuffle %v", tr.name, name, k, shuffle)
					want := ptRun(t, tr.g, l, &tokendist.PerfectTreeOptions{Delays: policies()[k], ShufflePorts: shuffle}, seed, what)
					got := ptRun(t, tr.g, l, &tokendist.PerfectTreeOptions{Delays: policies()[k], ShufflePorts: shuffle, Batch: true}, seed, what+" batched")
					ptSameOutcome(t, want, got, what)
					require.Equal(t, want.PhaseTime[0], got.PhaseTime[0], what)
					if got.Time > want.Time {
						longer++
					}
					runs++
				}
			}
		}
	}
	t.Logf("%d runs, %d with a longer Time batched", runs, longer)
	require.Positive(t, longer)
}

// TestPerfectTreeBatchOtherPolicies: under the policies whose draws depend on the order
// of all messages, the batched runs draw other delays for the messages that follow the
// first token, but the root is elected before any token moves, and given the root the
// corrected program's moves and final loads do not depend on timing: the outcome is the
// per-token runtime's (and every run satisfies ptVerify).
func TestPerfectTreeBatchOtherPolicies(t *testing.T) {
	t.Parallel()
	policies := func() []tokendist.Delays {
		return []tokendist.Delays{
			ptMust(tokendist.NewRandomDelays(5)), ptMust(tokendist.NewRandomDelays(100)), ptMust(tokendist.NewSerialDelays()),
			ptMust(tokendist.NewReverseDelays(7)), ptMust(tokendist.NewReverseDelays(200)),
		}
	}
	for i, tr := range ptBatchFamilies() {
		for name, l := range ptLoadSets(tr.g.Order(), uint64(i+5)) {
			for k := range policies() {
				if !tokendist.SweepTakes(i, k, 3) {
					continue
				}
				seed := uint64(17*i + k)
				shuffle := (i+k)%2 == 0
				what := fmt.Sprintf("%s %s policy %v shuffle %v", tr.name, name, policies()[k], shuffle)
				want := ptRun(t, tr.g, l, &tokendist.PerfectTreeOptions{Delays: policies()[k], ShufflePorts: shuffle}, seed, what)
				got := ptRun(t, tr.g, l, &tokendist.PerfectTreeOptions{Delays: policies()[k], ShufflePorts: shuffle, Batch: true}, seed, what+" batched")
				ptSameOutcome(t, want, got, what)
			}
		}
	}
}

// TestPerfectTreeBatchLiteral: the literal program batched conserves the tokens and
// stops (Done, or ErrProtocol as the literal program may).
func TestPerfectTreeBatchLiteral(t *testing.T) {
	for i, tr := range ptBatchFamilies()[:30] {
		for name, l := range ptLoadSets(tr.g.Order(), uint64(i+9)) {
			for _, p := range ptPolicies() {
				o := &tokendist.PerfectTreeOptions{Delays: p, Literal: true, Batch: true}
				r, err := runPT(context.Background(), tr.g, l, o, uint64(i))
				what := fmt.Sprintf("%s %s %v", tr.name, name, p)
				if err != nil {
					require.ErrorIs(t, err, tokendist.ErrProtocol, what)
					continue
				}
				require.Equal(t, tokendist.StatusDone, r.Status, what)
				require.Equal(t, l.Total(), r.Loads.Total(), what)
			}
		}
	}
}

// TestPerfectTreeBatchDeterministic: batched runs are identical for a seed at
// GOMAXPROCS 1 and 2 and for a reused balancer.
func TestPerfectTreeBatchDeterministic(t *testing.T) {
	g := ptMust(tokendist.RandomTree(150, 9))
	l := ptMust(tokendist.RandomRange(150, 0, 25, 9))
	for _, p := range ptPolicies() {
		o := &tokendist.PerfectTreeOptions{Delays: p, ShufflePorts: true, Batch: true}
		var results []ptResult
		for _, procs := range []int{1, 2} {
			old := runtime.GOMAXPROCS(procs)
			r, err := runPT(context.Background(), g, l, o, 42)
			runtime.GOMAXPROCS(old)
			require.NoError(t, err)
			results = append(results, r)
		}
		require.Equal(t, results[0], results[1], "policy %v", p)
		b := ptMust(tokendist.NewPerfectTree(g, o))
		for i := 0; i < 2; i++ {
			res, err := tokendist.Run(context.Background(), g, l, b, &tokendist.RunOptions{MaxSteps: math.MaxInt64, Seed: 42})
			require.NoError(t, err)
			require.Equal(t, results[0].PerfectTreeReport, res.Report.(tokendist.PerfectTreeReport), "policy %v run %d", p, i)
			require.Equal(t, results[0].Loads, res.Loads)
		}
	}
}

func TestPerfectTreeBatchStepNoAlloc(t *testing.T) {
	g := ptMust(tokendist.RandomTree(300, 2))
	l := ptMust(tokendist.PointMass(300, 50_000, 7))
	for _, p := range ptPolicies() {
		b := ptMust(tokendist.NewPerfectTree(g, &tokendist.PerfectTreeOptions{Delays: p, Batch: true}))
		s := &tokendist.State{Net: g, Loads: l.Clone(), Seed: 1}
		require.NoError(t, b.Init(s))
		allocs := testing.AllocsPerRun(200, func() {
			require.NoError(t, b.Step(s))
		})
		require.Zero(t, allocs, "policy %v", p)
		require.False(t, b.Done(s), "the run must still be going for the measurement to mean something")
	}
}
