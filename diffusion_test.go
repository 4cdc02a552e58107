package tokendist_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/tokendisttest"
)

// schemes lists the discrete schemes of Table 1 with their constructors.
var schemes = []struct {
	name     string
	new      func(tokendist.Network) (tokendist.Balancer, error)
	negative bool // may make loads negative (the FGS schemes)
}{
	{"RandomizedDiffusion", func(n tokendist.Network) (tokendist.Balancer, error) { return tokendist.NewRandomizedDiffusion(n) }, false},
	{"RSW", func(n tokendist.Network) (tokendist.Balancer, error) { return tokendist.NewRSWDiffusion(n) }, false},
	{"FGSDeterministic", func(n tokendist.Network) (tokendist.Balancer, error) { return tokendist.NewFGSDeterministic(n) }, true},
	{"FGSRandomized", func(n tokendist.Network) (tokendist.Balancer, error) { return tokendist.NewFGSRandomized(n) }, true},
	{"RandomMatching", func(n tokendist.Network) (tokendist.Balancer, error) { return tokendist.NewRandomMatching(n) }, false},
}

func TestContractDiffusionSchemes(t *testing.T) {
	for _, sc := range schemes {
		tokendisttest.Check(t, tokendisttest.Case{
			Name: sc.name,
			New:  func(g *tokendist.Graph) (tokendist.Balancer, error) { return sc.new(g) },
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// diffusionNets is a sweep of small networks of every family, regular or not.
func diffusionNets() map[string]*tokendist.Graph {
	return map[string]*tokendist.Graph{
		"Path(7)":     must(tokendist.Path(7)),
		"Ring(9)":     must(tokendist.Ring(9)),
		"Star(9)":     must(tokendist.Star(9)),
		"Star(80)":    must(tokendist.Star(80)), // d+1 > 64: multi-word masks
		"Complete(7)": must(tokendist.Complete(7)),
		"KaryTree(KaryShape{Height: 3, Arity: 3})": must(tokendist.KaryTree(tokendist.KaryShape{Height: 3, Arity: 3})),
		"Hypercube(5)":        must(tokendist.Hypercube(5)),
		"Torus(5,6)":          must(tokendist.Torus(5, 6)),
		"Mesh(4,5)":           must(tokendist.Mesh(4, 5)),
		"RandomRegular(40,3)": must(tokendist.RandomRegular(40, 3, 2)),
		"ShuffleExchange(5)":  must(tokendist.ShuffleExchange(5)),
		"Path(1)":             must(tokendist.Path(1)),
	}
}

// TestDiffusionInvariantsEveryStep checks token conservation for every scheme and
// non-negativity for the three non-FGS schemes after every step, over many seeds and
// starts (sparse, spiky and random loads).
func TestDiffusionInvariantsEveryStep(t *testing.T) {
	for name, g := range diffusionNets() {
		n := g.Order()
		starts := map[string]tokendist.Loads{
			"random": must(tokendist.RandomRange(n, 0, 30, 4)),
			"sparse": must(tokendist.RandomRange(n, 0, 1, 5)),
			"point":  must(tokendist.PointMass(n, int64(7*n+3), n-1)),
		}
		for _, sc := range schemes {
			for sname, start := range starts {
				for seed := uint64(0); seed < 6; seed++ {
					b := must(sc.new(g))
					total := start.Total()
					rec := tokendist.RecorderFunc(func(s *tokendist.State, smp tokendist.Sample) error {
						if got := s.Loads.Total(); got != total {
							return fmt.Errorf("total %d, want %d", got, total)
						}
						if !sc.negative && smp.Min < 0 {
							return fmt.Errorf("negative load %d", smp.Min)
						}
						return nil
					})
					r, err := tokendist.Run(context.Background(), g, start, b, &tokendist.RunOptions{MaxSteps: 60, SampleEvery: 1, Seed: seed, Recorder: rec})
					require.NoError(t, err, "%s %s %s seed %d", name, sc.name, sname, seed)
					if !sc.negative {
						require.Zero(t, r.NegativeSteps)
					}
				}
			}
		}
	}
}

// TestFGSNegativeLoadsCounted pins that both FGS schemes do make loads negative from a
// sparse start (Table 1's "no neg. load" row), and that Run counts it consistently.
func TestFGSNegativeLoadsCounted(t *testing.T) {
	for _, sc := range schemes[2:4] {
		found := false
		for name, g := range diffusionNets() {
			for seed := uint64(0); seed < 20 && !found; seed++ {
				start := must(tokendist.RandomRange(g.Order(), 0, 1, seed))
				r, err := tokendist.Run(context.Background(), g, start, must(sc.new(g)), &tokendist.RunOptions{MaxSteps: 30, SampleEvery: 1, Seed: seed})
				require.NoError(t, err)
				sawNeg, lowest := int64(0), int64(0)
				for _, smp := range r.Trace {
					if smp.Negative > 0 {
						require.Less(t, smp.Min, int64(0))
						sawNeg++
						lowest = min(lowest, smp.Min)
					}
				}
				// Every step is sampled, so the trace and the counters agree (the first
				// sample is the start).
				require.Equal(t, r.NegativeSteps, sawNeg, name)
				require.Equal(t, r.MostNegative, lowest, name)
				found = r.NegativeSteps > 0
			}
		}
		require.True(t, found, "%s never went negative", sc.name)
	}
}

// bigNet has several 4096-node chunks, to exercise the parallel passes.
var bigNet = sync.OnceValue(func() *tokendist.Graph { return must(tokendist.RandomRegular(3*4096+18, 4, 11)) })

// TestDiffusionWorkersDeterminism checks that results are identical for 1, 2 and 3
// workers and for GOMAXPROCS 1 and 2, on a network of several chunks.
func TestDiffusionWorkersDeterminism(t *testing.T) {
	start := must(tokendist.RandomRange(bigNet().Order(), 0, 50, 3))
	for _, sc := range schemes {
		var ref tokendist.Result
		for i, cfg := range []struct{ procs, workers int }{{1, 0}, {2, 0}, {2, 3}} {
			old := runtime.GOMAXPROCS(cfg.procs)
			r, err := tokendist.Run(context.Background(), bigNet(), start, must(sc.new(bigNet())), &tokendist.RunOptions{MaxSteps: 12, Seed: 5, Workers: cfg.workers, SampleEvery: 4})
			runtime.GOMAXPROCS(old)
			require.NoError(t, err)
			if i == 0 {
				ref = r
				continue
			}
			require.Equal(t, ref, r, "%s with %+v", sc.name, cfg)
		}
	}
	// The continuous process and Lanczos too.
	f := make([]float64, bigNet().Order())
	for i := range f {
		f[i] = float64(start[i])
	}
	var refC []float64
	var refS tokendist.Spectrum
	for _, procs := range []int{1, 2} {
		old := runtime.GOMAXPROCS(procs)
		c := must(tokendist.NewContinuousDiffusion(bigNet(), f))
		for i := 0; i < 10; i++ {
			c.Step()
		}
		sp, err := tokendist.LambdaMax(bigNet(), &tokendist.SpectralOptions{Method: tokendist.SpectralLanczos, Tol: 1e-6})
		runtime.GOMAXPROCS(old)
		require.NoError(t, err)
		if refC == nil {
			refC, refS = append([]float64(nil), c.Loads()...), sp
			continue
		}
		require.Equal(t, refC, c.Loads())
		require.Equal(t, refS, sp)
	}
}

// TestDiffusionStepDoesNotAllocate checks Step on a multi-chunk network.
func TestDiffusionStepDoesNotAllocate(t *testing.T) {
	start := must(tokendist.RandomRange(bigNet().Order(), 0, 50, 3))
	for _, sc := range schemes {
		b := must(sc.new(bigNet()))
		s := &tokendist.State{Net: bigNet(), Loads: start.Clone(), Workers: 2, Seed: 1}
		require.NoError(t, b.(tokendist.Initializer).Init(s))
		require.NoError(t, b.Step(s)) // warm up the worker pool
		allocs := testing.AllocsPerRun(20, func() {
			require.NoError(t, b.Step(s))
			s.Steps++
		})
		require.Zero(t, allocs, sc.name)
	}
	c := must(tokendist.NewContinuousDiffusion(bigNet(), make([]float64, bigNet().Order())))
	c.Step()
	require.Zero(t, testing.AllocsPerRun(20, c.Step))
}

// TestDiffusionBadInput covers the constructors' and tools' rejections.
func TestDiffusionBadInput(t *testing.T) {
	isolated := must(tokendist.NewGraph(4, [][2]int{{0, 1}, {1, 2}}))
	split := must(tokendist.NewGraph(4, [][2]int{{0, 1}, {2, 3}}))
	empty := must(tokendist.NewGraph(0, nil))
	var nilGraph *tokendist.Graph
	hc := must(tokendist.Hypercube(3))
	type ctor func(tokendist.Network) error
	ctors := map[string]ctor{}
	for _, sc := range schemes {
		ctors[sc.name] = func(n tokendist.Network) error { _, err := sc.new(n); return err }
	}
	ctors["ContinuousDiffusion"] = func(n tokendist.Network) error {
		_, err := tokendist.NewContinuousDiffusion(n, make([]float64, 4))
		return err
	}
	ctors["TransitionMatrix"] = func(n tokendist.Network) error { _, err := tokendist.TransitionMatrix(n); return err }
	ctors["LambdaMax"] = func(n tokendist.Network) error { _, err := tokendist.LambdaMax(n, nil); return err }
	ctors["LocalDivergence"] = func(n tokendist.Network) error { _, err := tokendist.LocalDivergence(n, 1e-6, nil); return err }
	ctors["NewDeviation"] = func(n tokendist.Network) error {
		_, err := tokendist.NewDeviation(n, make(tokendist.Loads, 4))
		return err
	}
	for name, c := range ctors {
		for _, tc := range []struct {
			what string
			net  tokendist.Network
			want error
		}{
			{"isolated node", isolated, tokendist.ErrNotConnected},
			{"disconnected", split, tokendist.ErrNotConnected},
			{"empty", empty, tokendist.ErrBadParameter},
			{"nil", nil, tokendist.ErrNilNetwork},
			{"nil *Graph", nilGraph, tokendist.ErrNilNetwork},
		} {
			err := c(tc.net)
			require.ErrorIs(t, err, tc.want, "%s on %s", name, tc.what)
			require.Regexp(t, "^tokendist: ", err.Error())
		}
	}
	require.ErrorContains(t, ctors["LambdaMax"](isolated), "node 3")
	bad := []struct {
		what string
		err  error
		want error
	}{
		{"tol 0", second(tokendist.LocalDivergence(hc, 0, nil)), tokendist.ErrBadParameter},
		{"tol < 0", second(tokendist.LocalDivergence(hc, -1, nil)), tokendist.ErrBadParameter},
		{"tol NaN", second(tokendist.LocalDivergence(hc, math.NaN(), nil)), tokendist.ErrBadParameter},
		{"node out of range", second(tokendist.LocalDivergence(hc, 1e-6, &tokendist.DivergenceOptions{Nodes: []int{8}})), tokendist.ErrBadParameter},
		{"no nodes", second(tokendist.LocalDivergence(hc, 1e-6, &tokendist.DivergenceOptions{Nodes: []int{}})), tokendist.ErrBadParameter},
		{"λ_max = 1", second(tokendist.LocalDivergence(hc, 1e-6, &tokendist.DivergenceOptions{LambdaMax: 1})), tokendist.ErrBadParameter},
		{"K = 0", second(tokendist.BalancingTime(0.5, 10, 0)), tokendist.ErrBadParameter},
		{"K < 0", second(tokendist.BalancingTime(0.5, 10, -3)), tokendist.ErrBadParameter},
		{"n = 0", second(tokendist.BalancingTime(0.5, 0, 3)), tokendist.ErrBadParameter},
		{"λ = 1", second(tokendist.BalancingTime(1, 10, 3)), tokendist.ErrBadParameter},
		{"λ < 0", second(tokendist.BalancingTime(-0.1, 10, 3)), tokendist.ErrBadParameter},
		{"λ NaN", second(tokendist.BalancingTime(math.NaN(), 10, 3)), tokendist.ErrBadParameter},
		{"spectral tol < 0", second(tokendist.LambdaMax(hc, &tokendist.SpectralOptions{Tol: -1})), tokendist.ErrBadParameter},
		{"spectral MaxIter < 0", second(tokendist.LambdaMax(hc, &tokendist.SpectralOptions{MaxIter: -1})), tokendist.ErrBadParameter},
		{"spectral method", second(tokendist.LambdaMax(hc, &tokendist.SpectralOptions{Method: tokendist.SpectralClosedForm})), tokendist.ErrBadParameter},
		{"Lanczos budget", second(tokendist.LambdaMax(must(tokendist.Ring(200)), &tokendist.SpectralOptions{Method: tokendist.SpectralLanczos, MaxIter: 3})), tokendist.ErrNotConverged},
		{"hypercube d", second(tokendist.HypercubeSpectrum(31)), tokendist.ErrBadParameter},
		{"torus side", second(tokendist.TorusSpectrum(3, 0)), tokendist.ErrBadParameter},
		{"torus no side", second(tokendist.TorusSpectrum()), tokendist.ErrBadParameter},
		{"HypercubePsi1 d", second(tokendist.HypercubePsi1(-1)), tokendist.ErrBadParameter},
		{"continuous length", second(tokendist.NewContinuousDiffusion(hc, make([]float64, 3))), tokendist.ErrBadLoads},
		{"continuous NaN", second(tokendist.NewContinuousDiffusion(hc, []float64{0, 0, 0, math.NaN(), 0, 0, 0, 0})), tokendist.ErrBadLoads},
		{"deviation negative", second(tokendist.NewDeviation(hc, tokendist.Loads{0, 0, -1, 0, 0, 0, 0, 0})), tokendist.ErrBadLoads},
	}
	for _, tc := range bad {
		require.ErrorIs(t, tc.err, tc.want, tc.what)
		require.Regexp(t, "^tokendist: ", tc.err.Error(), tc.what)
	}
	// A balancer built for one network refuses to run on another.
	b := must(tokendist.NewRandomizedDiffusion(hc))
	_, err := tokendist.Run(context.Background(), must(tokendist.Ring(8)), make(tokendist.Loads, 8), b, nil)
	require.ErrorIs(t, err, tokendist.ErrBadParameter)
	// Compare passes bad loads to Run's checks.
	_, _, err = runDeviation(context.Background(), hc, make(tokendist.Loads, 3), b, nil)
	require.ErrorIs(t, err, tokendist.ErrBadLoads)
	// A deviation recorder refuses a run from other loads.
	dev := must(tokendist.NewDeviation(hc, make(tokendist.Loads, 8)))
	_, err = tokendist.Run(context.Background(), hc, tokendist.Loads{1, 0, 0, 0, 0, 0, 0, 0}, b, &tokendist.RunOptions{Recorder: dev, MaxSteps: 2})
	require.True(t, errors.Is(err, tokendist.ErrBadLoads), "%v", err)
}

func second[T any](_ T, err error) error { return err }

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
			// The certified upper bound on λ_max (within 1 % of the gap) may round τ up
			// by one, never down.
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
