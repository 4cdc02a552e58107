package tokendist_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tokendist/tokendist"
)

// failWriter fails every write with errFail.
type failWriter struct{}

var errFail = errors.New("disk on fire")

func (failWriter) Write([]byte) (int, error) { return 0, errFail }

// TestErrorsPrefixed walks error paths of the runners, user callbacks, contexts and
// I/O: every error starts with "tokendist: " exactly once, and errors.Is sees the cause.
func TestErrorsPrefixed(t *testing.T) {
	ctx := context.Background()
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	expired, cancel2 := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancel2()
	ring, err := tokendist.Ring(6)
	require.NoError(t, err)
	tree, err := tokendist.RandomTree(40, 3)
	require.NoError(t, err)
	flat := make(tokendist.Loads, 6)
	treeLoads := make(tokendist.Loads, 40)
	treeLoads[0] = 400
	userErr := errors.New("user says no")
	stepper := func(s *tokendist.State) error { s.Time++; return nil }
	hc, err := tokendist.Hypercube(4)
	require.NoError(t, err)
	hcLoads := make(tokendist.Loads, 16)
	hcLoads[0] = 100

	cases := []struct {
		name string
		call func() error
		is   error
	}{
		{"Run nil balancer", func() error { _, err := tokendist.Run(ctx, ring, flat, nil, nil); return err }, tokendist.ErrNilBalancer},
		{"Run nil network", func() error {
			_, err := tokendist.Run(ctx, nil, flat, &tokendist.Funcs{StepFunc: stepper}, nil)
			return err
		}, tokendist.ErrNilNetwork},
		{"Run bad loads", func() error {
			_, err := tokendist.Run(ctx, ring, tokendist.Loads{1}, &tokendist.Funcs{StepFunc: stepper}, nil)
			return err
		}, tokendist.ErrBadLoads},
		{"Run negative MaxSteps", func() error {
			_, err := tokendist.Run(ctx, ring, flat, &tokendist.Funcs{StepFunc: stepper}, &tokendist.RunOptions{MaxSteps: -1})
			return err
		}, tokendist.ErrBadParameter},
		{"Init error", func() error {
			_, err := tokendist.Run(ctx, ring, flat, &tokendist.Funcs{StepFunc: stepper, InitFunc: func(*tokendist.State) error { return userErr }}, nil)
			return err
		}, userErr},
		{"Step error", func() error {
			_, err := tokendist.Run(ctx, ring, flat, &tokendist.Funcs{StepFunc: func(*tokendist.State) error { return userErr }}, nil)
			return err
		}, userErr},
		{"Recorder error", func() error {
			rec := tokendist.RecorderFunc(func(*tokendist.State, tokendist.Sample) error { return userErr })
			_, err := tokendist.Run(ctx, ring, flat, &tokendist.Funcs{StepFunc: stepper}, &tokendist.RunOptions{Recorder: rec})
			return err
		}, userErr},
		{"Run canceled", func() error {
			_, err := tokendist.Run(canceled, ring, flat, &tokendist.Funcs{StepFunc: stepper}, nil)
			return err
		}, context.Canceled},
		{"Run deadline", func() error {
			_, err := tokendist.Run(expired, ring, flat, &tokendist.Funcs{StepFunc: stepper}, nil)
			return err
		}, context.DeadlineExceeded},
		{"Run with a Deviation recorder, canceled", func() error {
			b, err := tokendist.NewRandomizedDiffusion(hc)
			require.NoError(t, err)
			_, _, err = runDeviation(canceled, hc, hcLoads, b, nil)
			return err
		}, context.Canceled},
		{"PerfectTree canceled", func() error {
			_, err := runPT(canceled, tree, treeLoads, nil, 0)
			return err
		}, context.Canceled},
		{"PerfectTree goroutines canceled", func() error {
			_, err := runPTGoroutines(canceled, tree, treeLoads, nil, 0)
			return err
		}, context.Canceled},
		{"PerfectTree goroutines deadline", func() error {
			_, err := runPTGoroutines(expired, tree, treeLoads, nil, 0)
			return err
		}, context.DeadlineExceeded},
		{"RunRing canceled", func() error {
			dag, err := tokendist.CompleteTree(6)
			require.NoError(t, err)
			b, err := tokendist.NewRingTree(4, dag, nil)
			require.NoError(t, err)
			_, err = tokendist.RunRing(canceled, b, nil)
			return err
		}, context.Canceled},
		{"RunRingComparison canceled", func() error {
			_, err := tokendist.RunRingComparison(canceled, tokendist.RingExperiment{
				Name: "complete", P: []int{4},
				Tree: func(uint64) (tokendist.TreeDag, error) { return tokendist.CompleteTree(6) },
			})
			return err
		}, context.Canceled},
		{"RunRingComparison user error", func() error {
			_, err := tokendist.RunRingComparison(ctx, tokendist.RingExperiment{
				Name: "user", P: []int{4},
				Tree: func(uint64) (tokendist.TreeDag, error) { return nil, userErr },
			})
			return err
		}, userErr},
		{"NewSpanningTree user error", func() error {
			_, err := tokendist.NewSpanningTree(ring, 0, func(*tokendist.Graph) (tokendist.Balancer, error) { return nil, userErr })
			return err
		}, userErr},
		{"diffusion budget", func() error {
			big, err := tokendist.Ring(2000)
			require.NoError(t, err)
			b, err := tokendist.NewRSWDiffusion(big)
			require.NoError(t, err)
			l := make(tokendist.Loads, 2000)
			l[0] = 1 << 20
			_, err = tokendist.Run(ctx, big, l, b, nil)
			return err
		}, tokendist.ErrBadParameter},
		{"WriteCSV", func() error {
			return tokendist.Trace{{Step: 1}}.WriteCSV(failWriter{})
		}, errFail},
		{"WriteJSON", func() error {
			return tokendist.Trace{{Step: 1}}.WriteJSON(failWriter{})
		}, errFail},
		{"generator", func() error { _, err := tokendist.Ring(-3); return err }, tokendist.ErrBadParameter},
		{"LambdaMax", func() error {
			_, err := tokendist.LambdaMax(ring, &tokendist.SpectralOptions{Tol: -1})
			return err
		}, tokendist.ErrBadParameter},
		{"BalancingTime", func() error { _, err := tokendist.BalancingTime(1, 4, 4); return err }, tokendist.ErrBadParameter},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			require.Error(t, err)
			msg := err.Error()
			require.True(t, strings.HasPrefix(msg, "tokendist: "), "%q", msg)
			require.Equal(t, 1, strings.Count(msg, "tokendist: "), "prefix repeated: %q", msg)
			require.ErrorIs(t, err, tc.is)
		})
	}
}

// TestRunCancelMessages: a cancellation reads "tokendist: <what> stopped at <where>:
// <ctx's error>", before the first step for both perfect-tree runtimes, and inside the
// goroutine runtime's one step, where it names the logical time.
func TestRunCancelMessages(t *testing.T) {
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	tree, err := tokendist.RandomTree(20, 1)
	require.NoError(t, err)
	loads := make(tokendist.Loads, 20)
	loads[3] = 77
	r, err := runPTGoroutines(expired, tree, loads, nil, 0)
	require.Equal(t, tokendist.StatusCanceled, r.Status)
	require.Regexp(t, `^tokendist: PerfectTree\S* stopped at step 0: context deadline exceeded$`, err.Error())
	r, err = runPT(expired, tree, loads, nil, 0)
	require.Equal(t, tokendist.StatusCanceled, r.Status)
	require.Regexp(t, `^tokendist: PerfectTree\S* stopped at step 0: context deadline exceeded$`, err.Error())

	// Cancelled while the goroutines run (a deadline that expires during the one step
	// on a large tree): the in-step wording names the logical time. On a machine fast
	// enough to finish first, or slow enough to expire before the step, the other two
	// outcomes are checked instead.
	big, err := tokendist.RandomTree(3000, 2)
	require.NoError(t, err)
	bigLoads, err := tokendist.RandomRange(3000, 0, 1000, 2)
	require.NoError(t, err)
	ctx, cancel2 := context.WithTimeout(context.Background(), 2*time.Millisecond)
	defer cancel2()
	r, err = runPTGoroutines(ctx, big, bigLoads, nil, 0)
	switch {
	case err == nil:
		require.Equal(t, tokendist.StatusDone, r.Status) // the machine was fast enough
	case r.N == 0:
		require.Regexp(t, `^tokendist: PerfectTree\S* stopped at step 0: context deadline exceeded$`, err.Error())
	default:
		require.Equal(t, tokendist.StatusCanceled, r.Status)
		require.Regexp(t, `^tokendist: PerfectTree\S* stopped at step 0: goroutine perfect-tree run stopped at logical time \d+ with \d+ of 3000 nodes finished: context deadline exceeded$`, err.Error())
	}
}

// TestInvariantErrorInterval: an InvariantError names the steps in which the break
// happened, from the last successful check (every SampleEvery steps, or only at the end).
func TestInvariantErrorInterval(t *testing.T) {
	g, err := tokendist.Path(4)
	require.NoError(t, err)
	leakAt := int64(7) // the 7th step loses a token
	leaky := &tokendist.Funcs{Name: "leaky", StepFunc: func(s *tokendist.State) error {
		if s.Steps == leakAt-1 {
			s.Loads[0]--
		}
		return nil
	}}
	loads := tokendist.Loads{5, 5, 5, 5}
	cases := []struct {
		every, max, step, last int64
		msg                    string
	}{
		{3, 20, 9, 6, "in one of steps 7..9, detected after step 9 (invariants checked every 3 steps)"},
		{1, 20, 7, 6, "in step 7, detected after step 7 (invariants checked after every step)"},
		{0, 10, 10, 0, "in one of steps 1..10, detected after step 10 (invariants checked only at the end of the run"},
		{4, 10, 10, 8, "in one of steps 9..10, detected after step 10 (invariants checked every 4 steps)"},
	}
	for _, tc := range cases {
		leakAt = tc.last + 1 // the first step after the last good check
		_, err := tokendist.Run(context.Background(), g, loads, leaky, &tokendist.RunOptions{SampleEvery: tc.every, MaxSteps: tc.max})
		var ie *tokendist.InvariantError
		require.ErrorAs(t, err, &ie)
		require.Equal(t, tc.step, ie.Step)
		require.Equal(t, tc.last, ie.LastChecked)
		require.Equal(t, tc.every, ie.CheckEvery)
		require.Equal(t, tokendist.Conserves, ie.Invariant)
		require.Contains(t, err.Error(), "tokendist: balancer leaky broke conservation "+tc.msg)
		require.Contains(t, err.Error(), "total 19, want 20")
	}
}
