package tokendist_test

import (
	"context"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
)

func TestPerfectTreeSimulatedCancel(t *testing.T) {
	g := ptMust(tokendist.RandomTree(500, 5))
	l := ptMust(tokendist.PointMass(500, 100_000, 3))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	r, err := runPT(ctx, g, l, nil, 0)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, tokendist.StatusCanceled, r.Status)
	require.Equal(t, l.Total(), r.Loads.Total())
}

// TestPerfectTreeDeterministic: the simulated runtime gives identical results for a
// seed at GOMAXPROCS 1 and 2 and for a reused balancer, under every policy.
func TestPerfectTreeDeterministic(t *testing.T) {
	g := ptMust(tokendist.RandomTree(150, 9))
	l := ptMust(tokendist.RandomRange(150, 0, 25, 9))
	for _, p := range ptPolicies() {
		o := &tokendist.PerfectTreeOptions{Delays: p, ShufflePorts: true}
		var results []ptResult
		for _, procs := range []int{1, 2, 1} {
			old := runtime.GOMAXPROCS(procs)
			r, err := runPT(context.Background(), g, l, o, 42)
			runtime.GOMAXPROCS(old)
			require.NoError(t, err)
			results = append(results, r)
		}
		require.Equal(t, results[0], results[1], "policy %v", p)
		require.Equal(t, results[0], results[2], "policy %v", p)

		// One balancer value, run twice through Run.
		b := ptMust(tokendist.NewPerfectTree(g, o))
		var r1, r2 ptResult
		for i, dst := range []*ptResult{&r1, &r2} {
			res, err := tokendist.Run(context.Background(), g, l, b, &tokendist.RunOptions{MaxSteps: math.MaxInt64, Seed: 42})
			require.NoError(t, err, "run %d", i)
			require.Equal(t, tokendist.StatusDone, res.Status)
			*dst = ptResult{PerfectTreeReport: res.Report.(tokendist.PerfectTreeReport), Status: res.Status, Loads: res.Loads}
		}
		require.Equal(t, r1, r2)
		require.Equal(t, results[0].Loads, r1.Loads)
	}
}

func TestPerfectTreeStepNoAlloc(t *testing.T) {
	g := ptMust(tokendist.RandomTree(300, 2))
	l := ptMust(tokendist.PointMass(300, 50_000, 7))
	for _, p := range ptPolicies() {
		b := ptMust(tokendist.NewPerfectTree(g, &tokendist.PerfectTreeOptions{Delays: p}))
		s := &tokendist.State{Net: g, Loads: l.Clone(), Seed: 1}
		require.NoError(t, b.Init(s))
		allocs := testing.AllocsPerRun(2000, func() {
			require.NoError(t, b.Step(s))
		})
		require.Zero(t, allocs, "policy %v", p)
		require.False(t, b.Done(s), "the run must still be going for the measurement to mean something")
	}
}
