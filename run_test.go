package tokendist_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
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
		require.Equal(t, def.Steps/cycle, def.Report.(tokendist.Discrepancy1Report).Cycles)
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

// TestNoTerminationRule: a balancer without a termination rule (THRESHOLD-1, which is
// no Terminator; Funcs without DoneFunc) keeps the stability stop by default.
func TestNoTerminationRule(t *testing.T) {
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

// TestResultReport: every built-in balancer's Result.Report is the typed report its doc
// comment names (or nil), computed from the run, and Result.String prints the generic
// figures followed by the report.
func TestResultReport(t *testing.T) {
	ctx := context.Background()
	must := func(g *tokendist.Graph, err error) *tokendist.Graph {
		t.Helper()
		require.NoError(t, err)
		return g
	}
	cube := must(tokendist.Hypercube(4))
	cubeLoads := make(tokendist.Loads, 16)
	cubeLoads[5] = 301
	path := must(tokendist.Path(7))
	pathLoads := tokendist.Loads{40, 0, 3, 0, 0, 9, 1}
	tree := must(tokendist.RandomTree(30, 2))
	treeLoads := make(tokendist.Loads, 30)
	treeLoads[4] = 95

	multiTotals := make(tokendist.Loads, 16)
	multiTotals[3], multiTotals[9] = 50, 77
	type check func(t *testing.T, r tokendist.Result)
	none := func(t *testing.T, r tokendist.Result) { require.Nil(t, r.Report) }
	timed := func(t *testing.T, r tokendist.Result) {
		times, ok := r.Report.(tokendist.CubeTimes)
		require.True(t, ok, "%T", r.Report)
		require.Equal(t, r.Time, times.Total(), "the activities add up to the model time")
		require.Positive(t, times.Balance)
	}
	cases := []struct {
		name  string
		net   tokendist.Network
		loads tokendist.Loads
		build func() (tokendist.Balancer, error)
		run   func(b tokendist.Balancer) (tokendist.Result, error)
		check check
	}{
		{"RandomizedDiffusion", cube, cubeLoads, func() (tokendist.Balancer, error) { return tokendist.NewRandomizedDiffusion(cube) }, nil, none},
		{"RSW", cube, cubeLoads, func() (tokendist.Balancer, error) { return tokendist.NewRSWDiffusion(cube) }, nil, none},
		{"FGSRandomized", cube, cubeLoads, func() (tokendist.Balancer, error) { return tokendist.NewFGSRandomized(cube) }, nil, none},
		{"RandomMatching", cube, cubeLoads, func() (tokendist.Balancer, error) { return tokendist.NewRandomMatching(cube) }, nil, none},
		{"THRESHOLD-2", path, pathLoads, func() (tokendist.Balancer, error) { return tokendist.NewThreshold2(path, nil) }, nil, none},
		{"DISCREPANCY-1", path, pathLoads, func() (tokendist.Balancer, error) { return tokendist.NewDiscrepancy1(path, nil, nil) }, nil,
			func(t *testing.T, r tokendist.Result) {
				rep, ok := r.Report.(tokendist.Discrepancy1Report)
				require.True(t, ok, "%T", r.Report)
				require.Equal(t, tokendist.StatusDone, r.Status)
				d1, err := tokendist.NewDiscrepancy1(path, nil, nil)
				require.NoError(t, err)
				require.Positive(t, rep.Cycles)
				require.Equal(t, r.Steps/d1.Period(nil), rep.Cycles, "Done fires at the end of a cycle (Period steps)")
				require.Len(t, rep.Decisions, 7)
				require.Len(t, rep.LocalMax, 7)
				require.Contains(t, r.String(), fmt.Sprintf("cycles %d", rep.Cycles))
			}},
		{"HypercubeBalance", cube, cubeLoads, func() (tokendist.Balancer, error) { return tokendist.NewHypercubeBalance(cube, nil) }, nil, timed},
		{"DimensionOrderBalance", cube, cubeLoads, func() (tokendist.Balancer, error) { return tokendist.NewDimensionOrderBalance(cube, nil) }, nil, timed},
		{"MultiBalance", cube, multiTotals, func() (tokendist.Balancer, error) {
			g0, g1 := make(tokendist.Loads, 16), make(tokendist.Loads, 16)
			g0[3], g1[9] = 50, 77
			return tokendist.NewMultiBalance(cube, []tokendist.Loads{g0, g1}, nil)
		}, nil, func(t *testing.T, r tokendist.Result) {
			rep, ok := r.Report.(tokendist.MultiBalanceReport)
			require.True(t, ok, "%T", r.Report)
			require.Len(t, rep.Groups, 2)
			require.Equal(t, int64(50), rep.Groups[0].Total())
			require.Equal(t, int64(77), rep.Groups[1].Total())
			worst := max(rep.Groups[0].Discrepancy(), rep.Groups[1].Discrepancy())
			require.Equal(t, worst, rep.MaxGroupDiscrepancy)
			sum := make(tokendist.Loads, 16)
			for _, g := range rep.Groups {
				for v, x := range g {
					sum[v] += x
				}
			}
			require.Equal(t, r.Loads, sum, "the groups add up to the loads")
			require.Equal(t, r.Time, rep.Times.Total())
			require.Contains(t, r.String(), fmt.Sprintf("largest group discrepancy %d", worst))
		}},
		{"PerfectTree", tree, treeLoads, func() (tokendist.Balancer, error) { return tokendist.NewPerfectTree(tree, nil) }, nil,
			func(t *testing.T, r tokendist.Result) {
				require.Equal(t, tokendist.StatusDone, r.Status)
				rep, ok := r.Report.(tokendist.PerfectTreeReport)
				require.True(t, ok, "%T", r.Report)
				require.Equal(t, 30, rep.Finished)
				require.True(t, rep.Perfect)
				require.Equal(t, r.Time, rep.Time)
				require.Equal(t, r.Moved, rep.TotalMoves())
				require.Equal(t, r.Messages, rep.TotalMessages())
				require.NoError(t, rep.CheckTheorems(tree))
			}},
		{"Ring", nil, nil, func() (tokendist.Balancer, error) {
			dag, err := tokendist.CompleteTree(7)
			if err != nil {
				return nil, err
			}
			return tokendist.NewRingTree(4, dag, nil)
		}, func(b tokendist.Balancer) (tokendist.Result, error) {
			return tokendist.RunRing(ctx, b.(*tokendist.RingScheduler), nil)
		}, func(t *testing.T, r tokendist.Result) {
			st, ok := r.Report.(tokendist.RingStats)
			require.True(t, ok, "%T", r.Report)
			require.Equal(t, int64(127), st.Tasks)
			require.Equal(t, r.Steps, st.Time)
			require.Equal(t, r.Moved, st.Moved)
			var work int64
			for _, w := range st.Work {
				work += w
			}
			require.Equal(t, st.Tasks, work)
			require.Contains(t, r.String(), fmt.Sprintf("executed 127 tasks in time %d", st.Time))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tc.build()
			require.NoError(t, err)
			var r tokendist.Result
			if tc.run != nil {
				r, err = tc.run(b)
			} else {
				r, err = tokendist.Run(ctx, tc.net, tc.loads, b, &tokendist.RunOptions{MaxSteps: 500})
			}
			require.NoError(t, err)
			tc.check(t, r)
			want := fmt.Sprintf("%s: %s after %d steps (time %d), discrepancy %d, moved %d, messages %d",
				r.Balancer, r.Status, r.Steps, r.Time, r.Discrepancy(), r.Moved, r.Messages)
			if rep, ok := r.Report.(fmt.Stringer); ok {
				want += "; " + rep.String()
			}
			require.Equal(t, want, r.String())
		})
	}
}

// fndEdgeAverage balances every edge in EdgeList order, one edge per step: the larger
// end sends ⌊diff/2⌋ tokens to the smaller. It keeps both invariants and is Periodic.
type fndEdgeAverage struct{ edges [][2]int }

func (b *fndEdgeAverage) Init(s *tokendist.State) error {
	g, err := tokendist.AsGraph(s.Net)
	if err != nil {
		return err
	}
	b.edges = g.EdgeList()
	return nil
}

func (b *fndEdgeAverage) Step(s *tokendist.State) error {
	s.Time++
	if len(b.edges) == 0 {
		return nil
	}
	e := b.edges[s.Steps%int64(len(b.edges))]
	u, v := e[0], e[1]
	if s.Loads[u] < s.Loads[v] {
		u, v = v, u
	}
	x := (s.Loads[u] - s.Loads[v]) / 2
	s.Loads[u] -= x
	s.Loads[v] += x
	s.Moved += x
	s.Messages++
	return nil
}

func (b *fndEdgeAverage) Period(s *tokendist.State) int64 { return int64(max(1, len(b.edges))) }

// FuzzRun runs balancers on random small graphs with random loads and options. Bad
// loads must be rejected with ErrBadLoads, a counter that would wrap with ErrOverflow
// (only possible for huge totals); otherwise the run must succeed, conserve
// tokens, keep loads non-negative, respect the step budget and target, produce a
// consistent trace, leave the caller's loads alone, and be deterministic.
func FuzzRun(f *testing.F) {
	f.Add([]byte{5, 0, 1, 1, 2, 2, 3, 3, 4}, []byte{10, 0, 0, 0, 7}, int64(0), uint16(50), uint8(1), int64(-1), uint64(1), uint8(0))
	f.Add([]byte{11, 0, 5, 5, 9, 1, 2}, []byte{255, 255, 3}, int64(1<<40), uint16(500), uint8(0), int64(3), uint64(2), uint8(1))
	f.Add([]byte{0}, []byte{9}, int64(0), uint16(3), uint8(2), int64(0), uint64(3), uint8(0))
	f.Add([]byte{3, 0, 1, 1, 2}, []byte{1, 2, 3}, int64(math.MaxInt64), uint16(10), uint8(1), int64(-1), uint64(4), uint8(1))
	f.Add([]byte{3, 0, 1, 1, 2}, []byte{1, 2, 3}, int64(-5), uint16(10), uint8(1), int64(-1), uint64(4), uint8(0))
	f.Fuzz(func(t *testing.T, graph, loadBytes []byte, extra int64, maxSteps uint16, every uint8, target int64, seed uint64, which uint8) {
		g := fndFuzzGraph(graph)
		loads := make(tokendist.Loads, g.Order())
		for i := range loads {
			if i < len(loadBytes) {
				loads[i] = int64(loadBytes[i])
			}
		}
		loads[0] += extra / 2
		loads[len(loads)-1] += extra - extra/2
		orig := loads.Clone()
		total, verr := loads.Validate()
		// A non-Periodic balancer for odd which, so the stability rule is also off.
		var mk func() tokendist.Balancer
		if which%2 == 0 {
			mk = func() tokendist.Balancer { return &fndEdgeAverage{} }
		} else {
			mk = func() tokendist.Balancer { return &fndRandomWalker{} }
		}
		opts := &tokendist.RunOptions{MaxSteps: 1 + int64(maxSteps%2000), SampleEvery: int64(every), Seed: seed,
			UseTarget: target >= 0, TargetDiscrepancy: target}
		r, err := tokendist.Run(context.Background(), g, loads, mk(), opts)
		require.True(t, slices.Equal(orig, loads), "Run changed the caller's loads")
		if verr != nil {
			require.True(t, errors.Is(err, tokendist.ErrBadLoads), "bad loads %v: err %v, status %v", loads, err, r.Status)
			require.Equal(t, tokendist.StatusFailed, r.Status, "bad loads %v: err %v, status %v", loads, err, r.Status)
			return
		}
		budget := opts.MaxSteps
		if errors.Is(err, tokendist.ErrOverflow) {
			// Run refuses a step that would wrap a counter. Moved grows by at most the
			// total per step, so only a huge total may overflow within the budget.
			require.Greater(t, total, math.MaxInt64/budget, "overflow with total %d in at most %d steps (moved %d, time %d): %v", total, budget, r.Moved, r.Time, err)
			require.GreaterOrEqual(t, r.Moved, int64(0), "overflow with total %d in at most %d steps (moved %d, time %d): %v", total, budget, r.Moved, r.Time, err)
			require.GreaterOrEqual(t, r.Time, int64(0), "overflow with total %d in at most %d steps (moved %d, time %d): %v", total, budget, r.Moved, r.Time, err)
			require.GreaterOrEqual(t, r.Messages, int64(0), "overflow with total %d in at most %d steps (moved %d, time %d): %v", total, budget, r.Moved, r.Time, err)
			return
		}
		require.NoError(t, err, "Run")
		switch {
		case r.Steps > budget:
			t.Fatalf("%d steps, budget %d", r.Steps, budget)
		case r.Status == tokendist.StatusMaxSteps && r.Steps != budget:
			t.Fatalf("MaxSteps after %d steps, budget %d", r.Steps, budget)
		case r.Status == tokendist.StatusTarget && r.Discrepancy() > target:
			t.Fatalf("Target with discrepancy %d > %d", r.Discrepancy(), target)
		case r.Status != tokendist.StatusTarget && r.Status != tokendist.StatusStable && opts.UseTarget && r.Discrepancy() <= target:
			t.Fatalf("status %v though the target %d is met (%d)", r.Status, target, r.Discrepancy())
		case r.Status == tokendist.StatusFailed || r.Status == tokendist.StatusNotStarted || r.Status == tokendist.StatusCanceled:
			t.Fatalf("status %v", r.Status)
		}
		got, err := r.Loads.Validate()
		if err != nil || got != total {
			t.Fatalf("final loads %v: total %d (want %d), %v", r.Loads, got, total, err)
		}
		require.NotEqual(t, 0, len(r.Trace), "trace steps %v, %d steps", fndSteps(r.Trace), r.Steps)
		require.Equal(t, int64(0), r.Trace[0].Step, "trace steps %v, %d steps", fndSteps(r.Trace), r.Steps)
		require.Equal(t, r.Steps, r.Trace[len(r.Trace)-1].Step, "trace steps %v, %d steps", fndSteps(r.Trace), r.Steps)
		for k, smp := range r.Trace {
			if k > 0 && k < len(r.Trace)-1 && (every == 0 || smp.Step != int64(k)*int64(every)) {
				t.Fatalf("sample %d at step %d, SampleEvery %d", k, smp.Step, every)
			}
			if smp.Discrepancy != smp.Max-smp.Min || smp.Min < 0 || smp.Negative != 0 {
				t.Fatalf("bad sample %+v", smp)
			}
		}
		last := r.Trace[len(r.Trace)-1]
		if last.Potential != r.Loads.Potential() || last.Max != r.Loads.Max() || last.Moved != r.Moved || last.Time != r.Time {
			t.Fatalf("last sample %+v does not match the result %v", last, r)
		}
		again, err := tokendist.Run(context.Background(), g, loads, mk(), opts)
		if err != nil || !reflect.DeepEqual(r, again) {
			t.Fatalf("not deterministic: %v / %v (%v)", r, again, err)
		}
	})
}

// FuzzRunMisbehaving runs a balancer whose every step is chosen by the fuzzer from
// hostile actions (resize the loads, steal or forge tokens, wrap the counters, panic,
// return an unprefixed error). Run must return a prefixed error or a valid result, and
// a panic must reach the caller with the balancer's own value.
func FuzzRunMisbehaving(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8}, uint8(4), true)
	f.Add([]byte{7, 7, 7}, uint8(1), false)
	f.Add([]byte{0, 0, 0, 9}, uint8(9), true)
	f.Fuzz(func(t *testing.T, script []byte, n uint8, periodic bool) {
		order := 1 + int(n%12)
		g, _ := tokendist.Path(order)
		loads := make(tokendist.Loads, order)
		loads[0] = math.MaxInt64 / 2
		step := 0
		b := &tokendist.Funcs{StepFunc: func(s *tokendist.State) error {
			if step >= len(script) {
				return nil
			}
			op := script[step]
			step++
			switch op % 10 {
			case 0:
				s.Loads = append(s.Loads, 1)
			case 1:
				s.Loads = s.Loads[:len(s.Loads)-1]
			case 2:
				s.Loads[0]--
			case 3:
				s.Moved += math.MaxInt64 / 3
			case 4:
				s.Time += math.MaxInt64 / 3
			case 5:
				panic("fuzz panic")
			case 6:
				return errors.New("user error")
			case 7:
				if len(s.Loads) > 1 { // a legal move
					s.Loads[0], s.Loads[len(s.Loads)-1] = s.Loads[len(s.Loads)-1], s.Loads[0]
					s.Moved++
				}
			case 8:
				s.Loads[len(s.Loads)-1] = -1
			case 9:
				s.Messages = -1
			}
			return nil
		}}
		if periodic {
			b.PeriodFunc = func(*tokendist.State) int64 { return 1 }
		}
		var res tokendist.Result
		var err error
		panicked := func() (p any) {
			defer func() { p = recover() }()
			res, err = tokendist.Run(context.Background(), g, loads, b, &tokendist.RunOptions{MaxSteps: int64(len(script)) + 1, SampleEvery: 1})
			return nil
		}()
		if panicked != nil {
			if panicked != "fuzz panic" {
				t.Fatalf("panic %v", panicked)
			}
			return
		}
		fuzzPrefixed(t, err)
		if err == nil {
			require.Equal(t, order, len(res.Loads), "invalid result without error: %v", res)
			require.Equal(t, loads.Total(), res.Loads.Total(), "invalid result without error: %v", res)
			require.GreaterOrEqual(t, res.Moved, int64(0), "invalid result without error: %v", res)
			require.GreaterOrEqual(t, res.Time, int64(0), "invalid result without error: %v", res)
			require.GreaterOrEqual(t, res.Messages, int64(0), "invalid result without error: %v", res)
		} else if res.Status != tokendist.StatusFailed {
			t.Fatalf("error %v with status %v", err, res.Status)
		}
	})
}
