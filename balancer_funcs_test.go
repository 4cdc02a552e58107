package tokendist_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
)

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
