package tokendist_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
	"go.uber.org/goleak"
)

func TestPerfectTreeConcurrentSweep(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	count := 6
	if ptLong {
		count = 40
	}
	runs := 0
	for _, tr := range ptFamilies(count) {
		g := tr.g
		for name, l := range ptLoadSets(g.Order(), 3) {
			if name == "T=2N+1@0" || name == "zero" {
				continue
			}
			for _, jitter := range []bool{false, true} {
				o := &tokendist.PerfectTreeOptions{Jitter: jitter, ShufflePorts: jitter}
				r, err := runPTGoroutines(context.Background(), g, l, o, uint64(runs))
				if err == nil {
					err = ptVerify(g, l, r)
				}
				require.NoErrorf(t, err, "%s/%s jitter %v: %v", tr.name, name, jitter, r)
				require.Equal(t, tokendist.StatusDone, r.Status)
				runs++
			}
		}
	}
	t.Logf("%d concurrent runs, all perfect", runs)
}

// TestPerfectTreeConcurrentManySchedules repeats one small instance where the phases of
// different nodes overlap (the erratum's) under many real schedules.
func TestPerfectTreeConcurrentManySchedules(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	g := ptMust(tokendist.Path(4))
	l := tokendist.Loads{2, 0, 3, 1}
	roots := map[int]int{}
	for i := 0; i < 200; i++ {
		r, err := runPTGoroutines(context.Background(), g, l, &tokendist.PerfectTreeOptions{Jitter: true}, uint64(i))
		require.NoError(t, err)
		require.NoError(t, ptVerify(g, l, r))
		roots[r.Root]++
	}
	t.Logf("elected roots over 200 schedules: %v", roots)
}

func TestPerfectTreeConcurrentCancel(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	g := ptMust(tokendist.RandomTree(2000, 5))
	l := ptMust(tokendist.RandomRange(2000, 0, 1000, 3))
	// Cancel at different moments, phase 1 included.
	for _, after := range []time.Duration{0, time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond} {
		ctx, cancel := context.WithTimeout(context.Background(), after)
		r, err := runPTGoroutines(ctx, g, l, nil, 0)
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Equal(t, tokendist.StatusCanceled, r.Status)
		require.Equal(t, l.Total(), r.Loads.Total(), "tokens are conserved even when cancelled after %v", after)
		// N is 0 when Run saw the deadline before the protocol's one Step started.
		require.True(t, r.N == 0 || r.Finished < r.N, "cancelled after %v: %d of %d finished", after, r.Finished, r.N)
	}

	// An already cancelled context.
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	r, err := runPTGoroutines(ctx2, g, l, nil, 0)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, tokendist.StatusCanceled, r.Status)
	require.Equal(t, l.Total(), r.Loads.Total())
}
