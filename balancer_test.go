package tokendist_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/tokendisttest"
)

// pairAverage is a test-only balancer: at step t it visits the edges of one node
// t mod n and moves one token from the larger to the smaller end of each edge where
// the difference is at least 2. It keeps both invariants.
type pairAverage struct{ g *tokendist.Graph }

func (p *pairAverage) Init(s *tokendist.State) error {
	g, err := tokendist.AsGraph(s.Net)
	p.g = g
	return err
}

func (p *pairAverage) Step(s *tokendist.State) error {
	if p.g == nil || p.g.Order() != len(s.Loads) {
		return fmt.Errorf("tokendist: pairAverage: %w", tokendist.ErrNotInitialized)
	}
	if p.g.Order() == 0 {
		return nil
	}
	u := int(s.Steps % int64(p.g.Order()))
	for _, v := range p.g.Neighbors(u) {
		a, b := &s.Loads[u], &s.Loads[v]
		if *a-*b >= 2 {
			*a, *b = *a-1, *b+1
			s.Moved++
		} else if *b-*a >= 2 {
			*a, *b = *a+1, *b-1
			s.Moved++
		}
	}
	s.Time++
	return nil
}

func (p *pairAverage) Period(s *tokendist.State) int64 { return int64(s.Net.Order()) }

// leaky breaks conservation at step 5.
type leaky struct{}

func (leaky) Step(s *tokendist.State) error {
	if s.Steps == 5 {
		s.Loads[0]++
	}
	return nil
}

func TestContractPairAverage(t *testing.T) {
	tokendisttest.Check(t, tokendisttest.Case{
		Name: "pairAverage",
		New:  func(g *tokendist.Graph) (tokendist.Balancer, error) { return &pairAverage{}, nil },
	})
}

func TestRunDetectsBrokenConservation(t *testing.T) {
	g, _ := tokendist.Ring(5)
	loads := tokendist.Loads{1, 2, 3, 4, 5}
	r, err := tokendist.Run(context.Background(), g, loads, leaky{}, &tokendist.RunOptions{MaxSteps: 10, SampleEvery: 1})
	var ie *tokendist.InvariantError
	require.ErrorAs(t, err, &ie)
	require.Equal(t, int64(6), ie.Step)
	require.Equal(t, tokendist.Conserves, ie.Invariant)
	require.Equal(t, tokendist.StatusFailed, r.Status)
	require.Equal(t, tokendist.Loads{1, 2, 3, 4, 5}, loads, "caller's loads changed")
	require.NotEmpty(t, r.Trace)

	// Without per-step samples the violation is still caught at the end.
	_, err = tokendist.Run(context.Background(), g, loads, leaky{}, &tokendist.RunOptions{MaxSteps: 10})
	require.ErrorAs(t, err, &ie)
}

func TestRunStopRules(t *testing.T) {
	g, _ := tokendist.Path(6)
	loads := tokendist.Loads{30, 0, 0, 0, 0, 0}
	ctx := context.Background()

	r, err := tokendist.Run(ctx, g, loads, &pairAverage{}, nil)
	require.NoError(t, err)
	require.Equal(t, tokendist.StatusStable, r.Status)
	require.LessOrEqual(t, r.Discrepancy(), int64(5))

	r, err = tokendist.Run(ctx, g, loads, &pairAverage{}, &tokendist.RunOptions{UseTarget: true, TargetDiscrepancy: 10})
	require.NoError(t, err)
	require.Equal(t, tokendist.StatusTarget, r.Status)
	require.LessOrEqual(t, r.Discrepancy(), int64(10))

	r, err = tokendist.Run(ctx, g, loads, &pairAverage{}, &tokendist.RunOptions{MaxSteps: 7})
	require.NoError(t, err)
	require.Equal(t, tokendist.StatusMaxSteps, r.Status)
	require.Equal(t, int64(7), r.Steps)
	require.Equal(t, int64(7), r.Time)
	require.Len(t, r.Trace, 2)

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	r, err = tokendist.Run(cctx, g, loads, &pairAverage{}, nil)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, tokendist.StatusCanceled, r.Status)
}

func TestRunBadInput(t *testing.T) {
	g, _ := tokendist.Path(3)
	ctx := context.Background()
	cases := []struct {
		name  string
		net   tokendist.Network
		loads tokendist.Loads
		b     tokendist.Balancer
		opts  *tokendist.RunOptions
		is    error
	}{
		{"nil network", nil, tokendist.Loads{1}, &pairAverage{}, nil, tokendist.ErrNilNetwork},
		{"nil graph", (*tokendist.Graph)(nil), tokendist.Loads{1}, &pairAverage{}, nil, tokendist.ErrNilNetwork},
		{"nil balancer", g, tokendist.Loads{1, 2, 3}, nil, nil, tokendist.ErrNilBalancer},
		{"short loads", g, tokendist.Loads{1, 2}, &pairAverage{}, nil, tokendist.ErrBadLoads},
		{"negative load", g, tokendist.Loads{1, -2, 3}, &pairAverage{}, nil, tokendist.ErrBadLoads},
		{"overflow", g, tokendist.Loads{1 << 62, 1 << 62, 1 << 62}, &pairAverage{}, nil, tokendist.ErrBadLoads},
		{"MaxSteps < 0", g, tokendist.Loads{1, 2, 3}, &pairAverage{}, &tokendist.RunOptions{MaxSteps: -1}, tokendist.ErrBadParameter},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tokendist.Run(ctx, tc.net, tc.loads, tc.b, tc.opts)
			require.Error(t, err)
			require.True(t, errors.Is(err, tc.is), "error %v is not %v", err, tc.is)
			require.Regexp(t, "^tokendist: ", err.Error())
		})
	}
}

func TestRunNoAllocPerStep(t *testing.T) {
	g, _ := tokendist.KaryTree(tokendist.KaryShape{Height: 10, Arity: 2})
	loads, _ := tokendist.RandomRange(g.Order(), 0, 100, 1)
	run := func(steps int64) {
		_, err := tokendist.Run(context.Background(), g, loads, &pairAverage{}, &tokendist.RunOptions{MaxSteps: steps, NoStability: true})
		require.NoError(t, err)
	}
	few := testing.AllocsPerRun(5, func() { run(10) })
	many := testing.AllocsPerRun(5, func() { run(10000) })
	// A per-step allocation would add ≥ 9990; the race detector's runtime adds a little noise.
	require.Less(t, many-few, 3.0, "allocations grow with steps: %v for 10 steps, %v for 10000", few, many)
}

func TestFuncsAdapter(t *testing.T) {
	g, _ := tokendist.Path(6)
	pa := &pairAverage{}
	inits := 0
	f := &tokendist.Funcs{
		Name:       "pair-average (funcs)",
		InitFunc:   func(s *tokendist.State) error { inits++; return pa.Init(s) },
		StepFunc:   pa.Step,
		PeriodFunc: pa.Period,
	}
	r, err := tokendist.Run(context.Background(), g, tokendist.Loads{30, 0, 0, 0, 0, 0}, f, nil)
	require.NoError(t, err)
	require.Equal(t, tokendist.StatusStable, r.Status)
	require.Equal(t, "pair-average (funcs)", r.Balancer)
	require.Equal(t, 1, inits)

	f.DoneFunc = func(s *tokendist.State) bool { return s.Steps == 4 }
	r, err = tokendist.Run(context.Background(), g, tokendist.Loads{30, 0, 0, 0, 0, 0}, f, nil)
	require.NoError(t, err)
	require.Equal(t, tokendist.StatusDone, r.Status)
	require.Equal(t, int64(4), r.Steps)

	// A balancer that declares it may go negative is counted, not failed.
	neg := &tokendist.Funcs{MayGoNegative: true, StepFunc: func(s *tokendist.State) error {
		s.Loads[0]--
		s.Loads[1]++
		return nil
	}}
	r, err = tokendist.Run(context.Background(), g, tokendist.Loads{1, 0, 0, 0, 0, 0}, neg, &tokendist.RunOptions{MaxSteps: 3})
	require.NoError(t, err)
	require.Equal(t, int64(2), r.NegativeSteps)
	require.Equal(t, int64(-2), r.MostNegative)

	_, err = tokendist.Run(context.Background(), g, make(tokendist.Loads, 6), &tokendist.Funcs{}, nil)
	require.ErrorIs(t, err, tokendist.ErrBadParameter)
}
