package tokendist_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tokendist/tokendist"
)

// TestDiffusionDefaultBudget: with nil options, every diffusion scheme of Table 1 stops
// after τ(G, K) rounds (BalancingTime, from the closed-form λ_max of the hypercube) with
// StatusMaxSteps, and an explicit MaxSteps or UseTarget overrides the budget.
func TestDiffusionDefaultBudget(t *testing.T) {
	const dim = 6
	g, err := tokendist.Hypercube(dim)
	require.NoError(t, err)
	sp, err := tokendist.HypercubeSpectrum(dim)
	require.NoError(t, err)
	loads := make(tokendist.Loads, g.Order())
	loads[0] = 1000
	tau, err := tokendist.BalancingTime(sp.LambdaMax, g.Order(), 1000)
	require.NoError(t, err)
	type budgeter interface {
		tokendist.Balancer
		tokendist.StepBudgeter
	}
	ctors := map[string]func(tokendist.Network) (budgeter, error){
		"RandomizedDiffusion": func(n tokendist.Network) (budgeter, error) { return tokendist.NewRandomizedDiffusion(n) },
		"RSW":                 func(n tokendist.Network) (budgeter, error) { return tokendist.NewRSWDiffusion(n) },
		"FGSDeterministic":    func(n tokendist.Network) (budgeter, error) { return tokendist.NewFGSDeterministic(n) },
		"FGSRandomized":       func(n tokendist.Network) (budgeter, error) { return tokendist.NewFGSRandomized(n) },
		"RandomMatching":      func(n tokendist.Network) (budgeter, error) { return tokendist.NewRandomMatching(n) },
	}
	for name, ctor := range ctors {
		t.Run(name, func(t *testing.T) {
			b, err := ctor(g)
			require.NoError(t, err)
			r, err := tokendist.Run(context.Background(), g, loads, b, nil)
			require.NoError(t, err)
			require.Equal(t, tokendist.StatusMaxSteps, r.Status)
			// Lanczos's λ_max plus its error bound may round τ up by one, never down.
			require.GreaterOrEqual(t, r.Steps, tau)
			require.LessOrEqual(t, r.Steps, tau+1)
			require.Less(t, r.Steps, int64(tokendist.DefaultMaxSteps))

			// The budget is τ for the run's own K: a smaller K gives fewer rounds.
			small := make(tokendist.Loads, g.Order())
			small[0] = 10
			r2, err := tokendist.Run(context.Background(), g, small, b, &tokendist.RunOptions{})
			require.NoError(t, err)
			tau2, err := tokendist.BalancingTime(sp.LambdaMax, g.Order(), 10)
			require.NoError(t, err)
			require.GreaterOrEqual(t, r2.Steps, tau2)
			require.LessOrEqual(t, r2.Steps, tau2+1)
			require.Less(t, r2.Steps, r.Steps)

			// An explicit MaxSteps wins.
			r3, err := tokendist.Run(context.Background(), g, loads, b, &tokendist.RunOptions{MaxSteps: 7})
			require.NoError(t, err)
			require.Equal(t, tokendist.StatusMaxSteps, r3.Status)
			require.Equal(t, int64(7), r3.Steps)
		})
	}
	// UseTarget replaces the budget by DefaultMaxSteps: a reachable target stops the run.
	b, err := tokendist.NewRandomMatching(g)
	require.NoError(t, err)
	r, err := tokendist.Run(context.Background(), g, loads, b, &tokendist.RunOptions{UseTarget: true, TargetDiscrepancy: 40})
	require.NoError(t, err)
	require.Equal(t, tokendist.StatusTarget, r.Status)
	require.LessOrEqual(t, r.Discrepancy(), int64(40))
}

// TestDiffusionDefaultBudgetTooLong: on a long ring τ(G, K) is far beyond
// DefaultMaxSteps, and Run fails before the first step with an error naming τ instead of
// running silently for DefaultMaxSteps steps.
func TestDiffusionDefaultBudgetTooLong(t *testing.T) {
	g, err := tokendist.Ring(2000)
	require.NoError(t, err)
	loads := make(tokendist.Loads, g.Order())
	loads[0] = 5000
	b, err := tokendist.NewRandomizedDiffusion(g)
	require.NoError(t, err)
	r, err := tokendist.Run(context.Background(), g, loads, b, nil)
	require.Error(t, err)
	require.True(t, errors.Is(err, tokendist.ErrBadParameter), "%v", err)
	require.Contains(t, err.Error(), "tokendist: RandomizedDiffusion has no default step budget")
	require.Contains(t, err.Error(), "τ(G, K) = ")
	require.Contains(t, err.Error(), "MaxSteps")
	require.Equal(t, tokendist.StatusFailed, r.Status)
	require.Zero(t, r.Steps)
	// With an explicit budget it runs.
	r, err = tokendist.Run(context.Background(), g, loads, b, &tokendist.RunOptions{MaxSteps: 100})
	require.NoError(t, err)
	require.Equal(t, int64(100), r.Steps)
}

// TestTerminatorBeatsStability: DISCREPANCY-1 has its own termination rule, so by
// default it stops by that rule (StatusDone), although the loads are stable (equal one
// cycle apart) cycles earlier; StopWhenStable restores the earlier stability stop, and
// NoStability changes nothing for it.
func TestTerminatorBeatsStability(t *testing.T) {
	for _, n := range []int{3, 10, 200} {
		g, err := tokendist.Path(n)
		require.NoError(t, err)
		loads := make(tokendist.Loads, n)
		loads[0] = int64(5 * n)
		b, err := tokendist.NewDiscrepancy1(g, nil, nil)
		require.NoError(t, err)
		cycle := b.Period(nil)
		def, err := tokendist.Run(context.Background(), g, loads, b, nil)
		require.NoError(t, err)
		require.Equal(t, tokendist.StatusDone, def.Status, "n=%d", n)
		require.True(t, b.Done(nil))
		require.Zero(t, def.Steps%cycle, "Done fires at the end of a cycle")
		require.Equal(t, def.Steps/cycle, b.Cycles())
		require.LessOrEqual(t, def.Discrepancy(), int64(1))

		noStab, err := tokendist.Run(context.Background(), g, loads, b, &tokendist.RunOptions{NoStability: true})
		require.NoError(t, err)
		require.Equal(t, def.Status, noStab.Status)
		require.Equal(t, def.Steps, noStab.Steps)

		stable, err := tokendist.Run(context.Background(), g, loads, b, &tokendist.RunOptions{StopWhenStable: true})
		require.NoError(t, err)
		require.Equal(t, tokendist.StatusStable, stable.Status, "n=%d", n)
		require.Less(t, stable.Steps, def.Steps, "n=%d: the stability check would pre-empt Done", n)

		both, err := tokendist.Run(context.Background(), g, loads, b, &tokendist.RunOptions{StopWhenStable: true, NoStability: true})
		require.NoError(t, err)
		require.Equal(t, def.Steps, both.Steps, "NoStability takes precedence")

		// The same through NewSpanningTree (the wrapper forwards the rule).
		st, err := tokendist.NewSpanningTree(g, 0, func(tree *tokendist.Graph) (tokendist.Balancer, error) {
			return tokendist.NewDiscrepancy1(tree, nil, nil)
		})
		require.NoError(t, err)
		viaTree, err := tokendist.Run(context.Background(), g, loads, st, nil)
		require.NoError(t, err)
		require.Equal(t, tokendist.StatusDone, viaTree.Status)
		require.Equal(t, def.Steps, viaTree.Steps)
	}
}

// TestOptionalTerminator: a balancer without a termination rule (THRESHOLD-1, which is
// no Terminator; Funcs without DoneFunc) keeps the stability stop by default.
func TestOptionalTerminator(t *testing.T) {
	g, err := tokendist.Path(6)
	require.NoError(t, err)
	loads := tokendist.Loads{30, 0, 0, 0, 0, 1}
	th, err := tokendist.NewThreshold1(g, nil)
	require.NoError(t, err)
	_, isTerminator := tokendist.Balancer(th).(tokendist.Terminator)
	require.False(t, isTerminator, "THRESHOLD-1 has no termination rule")
	r, err := tokendist.Run(context.Background(), g, loads, th, nil)
	require.NoError(t, err)
	require.Equal(t, tokendist.StatusStable, r.Status)

	step := func(s *tokendist.State) error { // average the pair (t mod (n−1), +1)
		v := int(s.Steps % int64(len(s.Loads)-1))
		a, b := s.Loads[v], s.Loads[v+1]
		s.Loads[v], s.Loads[v+1] = (a+b)/2, a+b-(a+b)/2
		s.Time++
		return nil
	}
	period := func(s *tokendist.State) int64 { return int64(len(s.Loads) - 1) }
	f := &tokendist.Funcs{StepFunc: step, PeriodFunc: period}
	r, err = tokendist.Run(context.Background(), g, loads, f, nil)
	require.NoError(t, err)
	require.Equal(t, tokendist.StatusStable, r.Status)
	stableAt := r.Steps

	doneAt := stableAt + 3*int64(len(loads)-1)
	f.DoneFunc = func(s *tokendist.State) bool { return s.Steps >= doneAt }
	r, err = tokendist.Run(context.Background(), g, loads, f, nil)
	require.NoError(t, err)
	require.Equal(t, tokendist.StatusDone, r.Status)
	require.Equal(t, doneAt, r.Steps)
	r, err = tokendist.Run(context.Background(), g, loads, f, &tokendist.RunOptions{StopWhenStable: true})
	require.NoError(t, err)
	require.Equal(t, tokendist.StatusStable, r.Status)
	require.Equal(t, stableAt, r.Steps)
}
