package tokendist_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/plot"
	"go.uber.org/goleak"
)

// Table tests for the classes of issue 14; the adversarial suite (adversarial_test.go)
// covers the same ground across the whole API in child processes.

func TestHardeningHangs(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, id := range []uint64{1 << 63, math.MaxUint64, math.MaxUint64 - 1} {
		x := tokendist.GridNodeOf(id)
		if x.K < 0 || x.L < 0 {
			t.Errorf("GridNodeOf(%d) = %v", id, x)
		}
	}
	for id := uint64(0); id < 2000; id++ {
		got := tokendist.GridNodeOf(id).ID()
		require.Equal(t, id, got, "GridNodeOf(%d).ID() = %d", id, got)
	}
	_, err := plot.Lines([]plot.Line{{Name: "x", X: []float64{-1.7e308, 1.7e308}, Y: []float64{0, 1}}}, nil)
	require.True(t, errors.Is(err, tokendist.ErrBadParameter), "PlotLines(±1.7e308): %v, want ErrBadParameter", err)
	g, _ := tokendist.Path(10)
	_, err = tokendist.LocalDivergence(g, 5e-324, nil)
	require.Error(t, err, "LocalDivergence(tol 5e-324) returned no error")
	_, err = tokendist.UniformRandom(3, math.MaxInt64, 1)
	require.True(t, errors.Is(err, tokendist.ErrBadParameter), "UniformRandom(MaxInt64 tokens): %v", err)
}

func TestHardeningOverflow(t *testing.T) {
	cube, _ := tokendist.Hypercube(4)
	cases := []struct {
		name string
		call func() (int64, error)
	}{
		{"KaryTreeBound(MaxInt, MaxInt)", func() (int64, error) {
			v, err := tokendist.KaryTreeBound(tokendist.KaryShape{Height: math.MaxInt, Arity: math.MaxInt})
			return int64(v), err
		}},
		{"LeightonTime(MaxInt64)", func() (int64, error) { return tokendist.LeightonTime(cube, math.MaxInt64) }},
		{"DimensionOrderTimeBound(2^62)", func() (int64, error) { return tokendist.DimensionOrderTimeBound(cube, 1<<62) }},
		{"HypercubeBalanceTimeBound(62, MaxInt64)", func() (int64, error) { return tokendist.HypercubeBalanceTimeBound(62, math.MaxInt64) }},
		{"MaxTotalDiscrepancy(10, MaxInt64)", func() (int64, error) {
			return tokendist.MaxTotalDiscrepancy(10, math.MaxInt64, math.MaxInt64)
		}},
	}
	for _, c := range cases {
		v, err := c.call()
		if !errors.Is(err, tokendist.ErrOverflow) {
			t.Errorf("%s = %d, %v: want ErrOverflow", c.name, v, err)
		}
	}
	// Exact where the value fits.
	kv, err := tokendist.KaryTreeBound(tokendist.KaryShape{Height: math.MaxInt / 4, Arity: 1})
	require.NoError(t, err, "KaryTreeBound(h huge, k 1) = %d, %v; want 1", kv, err)
	require.Equal(t, 1, kv, "KaryTreeBound(h huge, k 1) = %d, %v; want 1", kv, err)
	pt, err := tokendist.PairTime(math.MaxInt64, 0)
	require.NoError(t, err, "PairTime(MaxInt64, 0) = %d, %v", pt, err)
	require.Equal(t, int64(1<<62+1), pt, "PairTime(MaxInt64, 0) = %d, %v", pt, err)
	// Worst-case loads whose total would overflow are refused.
	_, err = tokendist.DimensionOrderWorstLoads(10, math.MaxInt64)
	require.True(t, errors.Is(err, tokendist.ErrOverflow), "DimensionOrderWorstLoads(10, MaxInt64): %v", err)
	l, err := tokendist.HammingBallLoads(4, math.MaxInt64, math.MaxInt64, 0)
	require.NoError(t, err, "HammingBallLoads(4, MaxInt64, MaxInt64): total %d, %v", l.Total(), err)
	require.Equal(t, int64(math.MaxInt64), l.Total(), "HammingBallLoads(4, MaxInt64, MaxInt64): total %d, %v", l.Total(), err)
	// Run's counters: a step that wraps Moved fails with ErrOverflow, counters intact.
	g, _ := tokendist.Path(2)
	b := &tokendist.Funcs{StepFunc: func(s *tokendist.State) error { s.Moved += math.MaxInt64 / 2; s.Time++; return nil }}
	res, err := tokendist.Run(context.Background(), g, tokendist.Loads{1, 0}, b, &tokendist.RunOptions{MaxSteps: 10})
	require.True(t, errors.Is(err, tokendist.ErrOverflow), "wrapping Moved: %v, %v", res, err)
	require.GreaterOrEqual(t, res.Moved, int64(0), "wrapping Moved: %v, %v", res, err)
	require.Equal(t, tokendist.StatusFailed, res.Status, "wrapping Moved: %v, %v", res, err)
	require.Equal(t, int64(2), res.Steps, "wrapping Moved: %v, %v", res, err)
}

func TestHardeningResize(t *testing.T) {
	g, _ := tokendist.Path(4)
	for _, periodic := range []bool{false, true} {
		for name, step := range map[string]func(s *tokendist.State) error{
			"grow":   func(s *tokendist.State) error { s.Loads = append(s.Loads, 0); return nil },
			"shrink": func(s *tokendist.State) error { s.Loads = s.Loads[:1]; return nil },
			"nil":    func(s *tokendist.State) error { s.Loads = nil; return nil },
		} {
			b := &tokendist.Funcs{StepFunc: step}
			if periodic {
				b.PeriodFunc = func(*tokendist.State) int64 { return 1 }
			}
			_, err := tokendist.Run(context.Background(), g, tokendist.Loads{1, 2, 3, 4}, b, nil)
			var ie *tokendist.InvariantError
			if !errors.As(err, &ie) {
				t.Errorf("%s (periodic %v): %v, want *InvariantError", name, periodic, err)
			}
		}
	}
}

func TestHardeningNilInputs(t *testing.T) {
	defer goleak.VerifyNone(t)
	g, _ := tokendist.Path(4)
	l := tokendist.Loads{4, 0, 0, 0}
	var nilFuncs *tokendist.Funcs
	var nilDE *tokendist.DimensionExchange
	for _, b := range []tokendist.Balancer{nilFuncs, nilDE} {
		if _, err := tokendist.Run(context.Background(), g, l, b, nil); !errors.Is(err, tokendist.ErrNilBalancer) {
			t.Errorf("Run(typed nil %T): %v", b, err)
		}
	}
	var nilCtx context.Context
	ok := &tokendist.Funcs{StepFunc: func(*tokendist.State) error { return nil }}
	_, err := tokendist.Run(nilCtx, g, l, ok, nil)
	require.True(t, errors.Is(err, tokendist.ErrBadParameter), "Run(nil ctx): %v", err)
	_, err = runPTGoroutines(nilCtx, g, l, nil, 0)
	require.True(t, errors.Is(err, tokendist.ErrBadParameter), "PerfectTree goroutines (nil ctx): %v", err)
	_, err = runPT(nilCtx, g, l, nil, 0)
	require.True(t, errors.Is(err, tokendist.ErrBadParameter), "PerfectTree (nil ctx): %v", err)
	_, err = tokendist.NewEdgeColoring(g, nil)
	require.True(t, errors.Is(err, tokendist.ErrBadParameter), "NewEdgeColoring(g, nil): %v", err)
	got, err := tokendist.Shuffle(3, 0)
	require.True(t, errors.Is(err, tokendist.ErrBadParameter), "Shuffle(3, 0) = %d, %v; want ErrBadParameter", got, err)
}

// TestHardeningWorkerPanics: a panic in user code on a worker goroutine reaches the
// caller, the balancer is correct when reused, and no goroutine is left behind.
func TestHardeningWorkerPanics(t *testing.T) {
	defer goleak.VerifyNone(t)
	g, _ := tokendist.Path(1<<17 + 1) // matchings of 2^16 edges: the parallel path
	ec, _ := tokendist.BipartiteColoring(g)
	boom := true
	p := tokendist.ProtocolFunc(func(_ int64, u, _ int, lu, lv int64) int64 {
		if boom && u == 3<<14 {
			panic("protocol panic")
		}
		return (lu - lv) / 2
	})
	d, err := tokendist.NewDimensionExchange(g, ec, p)
	require.NoError(t, err)
	loads, _ := tokendist.RandomRange(g.Order(), 0, 100, 3)
	opts := &tokendist.RunOptions{MaxSteps: 6, Workers: 4}
	func() {
		defer func() {
			r := recover()
			require.Equal(t, "protocol panic", r, "recovered %v, want the protocol's panic", r)
		}()
		_, _ = tokendist.Run(context.Background(), g, loads, d, opts)
		require.FailNow(t, "Run returned instead of panicking")
	}()
	boom = false
	got, err := tokendist.Run(context.Background(), g, loads, d, opts)
	require.NoError(t, err)
	fresh, _ := tokendist.NewDimensionExchange(g, ec, p)
	want, err := tokendist.Run(context.Background(), g, loads, fresh, opts)
	require.NoError(t, err)
	for v := range want.Loads {
		if got.Loads[v] != want.Loads[v] {
			t.Fatalf("reused balancer after a panic: node %d has %d, fresh %d", v, got.Loads[v], want.Loads[v])
		}
	}
	func() {
		defer func() {
			r := recover()
			require.Equal(t, "rule panic", r, "RunRingComparison: recovered %v", r)
		}()
		_, _ = tokendist.RunRingComparison(context.Background(), tokendist.RingExperiment{
			Name: "p", P: []int{3}, Seeds: []uint64{1, 2, 3, 4}, Workers: 4,
			Tree: func(uint64) (tokendist.TreeDag, error) {
				return tokendist.TreeDagFunc(func(x tokendist.TreeNode) bool {
					if x.Level() > 2 {
						panic("rule panic")
					}
					return true
				}), nil
			},
		})
	}()
}

// TestHardeningNoLeaks calls the parallel entry points and checks, with no ignore
// options, that every goroutine they started has exited.
func TestHardeningNoLeaks(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	g, _ := tokendist.Torus(128, 128)
	loads, _ := tokendist.PointMass(g.Order(), 1<<20, 0)
	for _, mk := range []func() (tokendist.Balancer, error){
		func() (tokendist.Balancer, error) { return tokendist.NewRandomizedDiffusion(g) },
		func() (tokendist.Balancer, error) { return tokendist.NewRSWDiffusion(g) },
		func() (tokendist.Balancer, error) { return tokendist.NewRandomMatching(g) },
	} {
		b, err := mk()
		require.NoError(t, err)
		_, err = tokendist.Run(ctx, g, loads, b, &tokendist.RunOptions{MaxSteps: 3})
		require.NoError(t, err)
	}
	_, err := tokendist.LambdaMax(g, &tokendist.SpectralOptions{Method: tokendist.SpectralLanczos, MaxIter: 20})
	require.True(t, err == nil || errors.Is(err, tokendist.ErrNotConverged), "%v", err)
	small, _ := tokendist.Torus(24, 24)
	_, err = small.Eccentricities()
	require.NoError(t, err)
	tree, _ := tokendist.Path(16)
	_, err = runPTGoroutines(ctx, tree, make(tokendist.Loads, 16), nil, 0)
	require.NoError(t, err)
}

func TestHardeningErrorText(t *testing.T) {
	var u tokendist.Uint128
	err := u.UnmarshalText([]byte(strings.Repeat("9", 100<<10)))
	require.Error(t, err, "Uint128.UnmarshalText(100 KB): no error")
	require.LessOrEqual(t, len(err.Error()), 200, "Uint128.UnmarshalText(100 KB): %d bytes of error", len(err.Error()))
	require.True(t, strings.HasPrefix(err.Error(), "tokendist: "), "Uint128.UnmarshalText(100 KB): %.200q", err.Error())
	var st tokendist.Status
	err = st.UnmarshalText(bytes.Repeat([]byte("x"), 100<<10))
	require.Error(t, err, "Status.UnmarshalText(100 KB): no error")
	require.LessOrEqual(t, len(err.Error()), 200, "Status.UnmarshalText(100 KB): %d bytes of error", len(err.Error()))
	userErr := errors.New("user build failed")
	g, _ := tokendist.Path(5)
	_, err = tokendist.NewSpanningTree(g, 0, func(*tokendist.Graph) (tokendist.Balancer, error) { return nil, userErr })
	require.True(t, errors.Is(err, userErr), "NewSpanningTree build error: %v", err)
	require.True(t, strings.HasPrefix(err.Error(), "tokendist: "), "NewSpanningTree build error: %v", err)
	tr := tokendist.Trace{{Step: 1}}
	err = tr.WriteCSV(advFailWriter{})
	require.Error(t, err, "WriteCSV to a failing writer")
	require.True(t, strings.HasPrefix(err.Error(), "tokendist: "), "WriteCSV to a failing writer: %v", err)
	err = tr.WriteJSON(advFailWriter{})
	require.Error(t, err, "WriteJSON to a failing writer")
	require.True(t, strings.HasPrefix(err.Error(), "tokendist: "), "WriteJSON to a failing writer: %v", err)
}

// The guards of issue 27: fast paths, churn and workload checks, the memory budget of
// readers and constructors, the CSV record limit.
// TestPoissonHighRateFast: Poisson arrivals at 10^10 per step cost O(targets) per step,
// not one operation per token, and keep their distribution: the mean arrivals per step
// is λ within six standard errors, and every target gets its share.
func TestPoissonHighRateFast(t *testing.T) {
	ring, err := tokendist.Ring(64)
	require.NoError(t, err)
	for _, perNode := range []bool{false, true} {
		rate, lambda := 1e10, 1e10
		if perNode {
			rate = 1e10 / 64 // the same Λ spread over the 64 nodes
		}
		w, err := tokendist.NewPoissonArrivals(rate, perNode)
		require.NoError(t, err)
		b, err := tokendist.NewRSWDiffusion(ring)
		require.NoError(t, err)
		const steps = 400
		start := time.Now()
		res, err := tokendist.Run(context.Background(), ring, make(tokendist.Loads, 64), b, &tokendist.RunOptions{MaxSteps: steps, Workload: w, NoStability: true, Seed: 9})
		require.NoError(t, err)
		require.Less(t, time.Since(start), 5*time.Second, "400 steps at 1e10 arrivals per step")
		mean := float64(res.Arrived) / steps
		se := math.Sqrt(lambda / steps)
		require.InDelta(t, lambda, mean, 6*se, "per node %v: mean arrivals per step", perNode)
		require.Equal(t, res.Arrived, res.Loads.Total())
	}
	_, err = tokendist.Run(context.Background(), ring, make(tokendist.Loads, 64), mustRSW(t, ring), &tokendist.RunOptions{MaxSteps: 2, Workload: mustPoisson(t, 1e10, true), NoStability: true})
	require.ErrorIs(t, err, tokendist.ErrBadParameter, "6.4e11 per step is over the cap")
	require.Equal(t, 1, strings.Count(err.Error(), "tokendist: "), err.Error())
	// Hot spot: two of the four targets are node 5, so it gets half the arrivals.
	w, err := tokendist.NewHotSpotArrivals(1e9, 0, 5, 5, 9)
	require.NoError(t, err)
	s := &tokendist.State{Net: ring, Loads: make(tokendist.Loads, 64), Seed: 1}
	require.NoError(t, w.Init(s))
	var total int64
	for step := int64(1); step <= 100; step++ {
		s.Steps = step
		k, _, err := w.Apply(s)
		require.NoError(t, err)
		total += k
	}
	require.Equal(t, total, s.Loads.Total())
	require.InDelta(t, 0.5, float64(s.Loads[5])/float64(total), 1e-3)
	require.InDelta(t, 0.25, float64(s.Loads[0])/float64(total), 1e-3)
}

// TestWorkloadOverflowLeavesNoWrappedLoad: arrivals that overflow a load near MaxInt64
// fail with the overflow error and the partial result holds the loads before them.
func TestWorkloadOverflowLeavesNoWrappedLoad(t *testing.T) {
	ring, err := tokendist.Ring(8)
	require.NoError(t, err)
	w, err := tokendist.NewTraceArrivals(strings.NewReader("1,0,1099511627776\n"))
	require.NoError(t, err)
	b, err := tokendist.NewRSWDiffusion(ring)
	require.NoError(t, err)
	l := make(tokendist.Loads, 8)
	l[0] = math.MaxInt64 - 5
	res, err := tokendist.Run(context.Background(), ring, l, b, &tokendist.RunOptions{MaxSteps: 3, Workload: w, NoStability: true})
	require.ErrorIs(t, err, tokendist.ErrBadLoads)
	for v, x := range res.Loads {
		require.GreaterOrEqual(t, x, int64(0), "node %d holds a wrapped load", v)
	}
	require.Equal(t, int64(math.MaxInt64-5), res.Loads.Total())
}

// badChurn breaks the Churn rules in one way.
type badChurn struct{ mode string }

func (c badChurn) Init(*tokendist.State) error { return nil }
func (c badChurn) Apply(s *tokendist.State) (int, error) {
	switch c.mode {
	case "shrink":
		s.Live = s.Live[:1]
	case "replace":
		s.Live = make([]bool, len(s.Live))
	case "negative":
		return -1, nil
	case "too many":
		return len(s.Live), nil
	}
	return 0, nil
}

// TestChurnChecked: a user Churn that replaces or resizes State.Live, or reports an
// impossible number of links down, fails the run with ErrBadParameter.
func TestChurnChecked(t *testing.T) {
	ring, err := tokendist.Ring(8)
	require.NoError(t, err)
	for _, mode := range []string{"shrink", "replace", "negative", "too many"} {
		b, err := tokendist.NewThreshold2(ring, nil)
		require.NoError(t, err)
		l := make(tokendist.Loads, 8)
		l[0] = 100
		_, err = tokendist.Run(context.Background(), ring, l, b, &tokendist.RunOptions{MaxSteps: 5, Churn: badChurn{mode}})
		require.ErrorIs(t, err, tokendist.ErrBadParameter, mode)
	}
}

// TestFastPathGuards: the exported fast paths refuse what used to panic.
func TestFastPathGuards(t *testing.T) {
	ring, err := tokendist.Ring(8)
	require.NoError(t, err)
	d, err := tokendist.NewThreshold2(ring, nil)
	require.NoError(t, err)
	s := &tokendist.State{Net: ring, Loads: make(tokendist.Loads, 8)}
	require.NoError(t, d.Init(s))
	s.Live = make([]bool, 3)
	require.ErrorIs(t, d.Step(s), tokendist.ErrBadParameter)
	var nilDX *tokendist.DimensionExchange
	require.ErrorIs(t, nilDX.Step(s), tokendist.ErrNilBalancer)
	require.ErrorIs(t, nilDX.Init(s), tokendist.ErrNilBalancer)
	var pf tokendist.ProtocolFunc
	_, err = tokendist.NewDimensionExchange(ring, nil, pf)
	require.ErrorIs(t, err, tokendist.ErrBadParameter)
	var tf tokendist.TreeDagFunc
	_, err = tokendist.NewRingTree(4, tf, nil)
	require.ErrorIs(t, err, tokendist.ErrBadParameter)
	for _, uv := range [][2]int{{-1, 0}, {0, -1}, {8, 0}, {0, 8}, {math.MaxInt, 1}} {
		require.Equal(t, -1, ring.EdgeIndex(uv[0], uv[1]), "%v", uv)
	}
	require.GreaterOrEqual(t, ring.EdgeIndex(0, 1), 0)
	ec, err := tokendist.DefaultColoring(ring)
	require.NoError(t, err)
	require.Nil(t, ec.Matching(-1))
	require.Nil(t, ec.Matching(ec.Colors()))
	require.NotEmpty(t, ec.Matching(0))
	require.Equal(t, -1, ec.EndColor(-1))
	require.Equal(t, -1, ec.EndColor(1<<20))
	_, err = tokendist.RingGridTau(tokendist.GridNode{K: math.MaxInt, L: math.MaxInt}, 3)
	require.ErrorIs(t, err, tokendist.ErrBadParameter)
	path, err := tokendist.Path(8)
	require.NoError(t, err)
	l := make(tokendist.Loads, 8)
	l[0] = math.MaxInt64
	_, err = tokendist.OptimalPerfectMoves(path, l)
	require.ErrorIs(t, err, tokendist.ErrOverflow)
	// T = 2^58 tokens on one end of P_8: edge i carries T(7−i)/8, so 3.5·T moves (fits).
	l[0] = 1 << 58
	v, err := tokendist.OptimalPerfectMoves(path, l)
	require.NoError(t, err)
	require.Equal(t, int64(7)<<57, v)
}

// TestMemoryBudgetEverywhere: under a 64 MiB budget the constructors and readers that
// allocate in proportion to their input refuse instead of allocating.
func TestMemoryBudgetEverywhere(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(64 << 20))
	_, err := tokendist.Hypercube(24)
	require.ErrorIs(t, err, tokendist.ErrTooLarge)
	_, err = tokendist.ShuffleExchange(25)
	require.ErrorIs(t, err, tokendist.ErrTooLarge)
	_, err = tokendist.RandomRegular(1<<22, 8, 1)
	require.ErrorIs(t, err, tokendist.ErrTooLarge)
	g, err := tokendist.RandomRegular(4000, 3, 1)
	require.NoError(t, err)
	_, err = tokendist.LambdaMax(g, &tokendist.SpectralOptions{Method: tokendist.SpectralDense})
	require.ErrorIs(t, err, tokendist.ErrTooLarge)
	_, err = tokendist.NewScheduledLinkChurn(make([]tokendist.LinkEvent, 4<<20))
	require.ErrorIs(t, err, tokendist.ErrTooLarge)
	star, err := tokendist.Star(100000)
	require.NoError(t, err)
	// Its round records took 1 + ⌈(Δ+1)/64⌉ words per node (1.25 GB) before issue 37;
	// they are O(n + m) now (20 bytes per link end, 8 per node: under 5 MB).
	_, err = tokendist.NewRandomizedDiffusion(star)
	require.NoError(t, err)
	_, err = tokendist.NewTraceArrivals(&repeat{line: "1,0,1\n"})
	require.ErrorIs(t, err, tokendist.ErrTooLarge)
	_, err = tokendist.ReadTraceCSV(&repeat{head: "step,time,discrepancy,max,min,potential,moved,messages,negative\n", line: "1,1,1,1,1,1,1,1,1\n"})
	require.ErrorIs(t, err, tokendist.ErrTooLarge)
	// Steady-state measurements of 2^22 steps: 96 MiB, refused before the run (they
	// were allocated under the 64 MiB budget before issue 36).
	ring, err := tokendist.Ring(16)
	require.NoError(t, err)
	rd, err := tokendist.NewRandomizedDiffusion(ring)
	require.NoError(t, err)
	_, err = tokendist.Run(context.Background(), ring, make(tokendist.Loads, 16), rd,
		&tokendist.RunOptions{MaxSteps: tokendist.MaxSteadySamples, Steady: &tokendist.SteadyOptions{}})
	require.ErrorIs(t, err, tokendist.ErrTooLarge)
	// The goroutine perfect tree reserves 6 KiB a node: under 64 MiB, 10,922 nodes.
	for _, c := range []struct {
		n    int
		fits bool
	}{{10900, true}, {11000, false}} {
		tree, err := tokendist.RandomTree(c.n, 3)
		require.NoError(t, err)
		pt, err := tokendist.NewPerfectTree(tree, &tokendist.PerfectTreeOptions{Goroutines: true})
		require.NoError(t, err)
		err = pt.Init(&tokendist.State{Net: tree, Loads: make(tokendist.Loads, c.n)})
		if c.fits {
			require.NoError(t, err, "%d nodes", c.n)
		} else {
			require.ErrorIs(t, err, tokendist.ErrTooLarge, "%d nodes", c.n)
		}
	}
	// Lanczos reserves 24 bytes a node: Torus(500, 500) needs 6 MB.
	torus, err := tokendist.Torus(500, 500)
	require.NoError(t, err)
	debug.SetMemoryLimit(1 << 20)
	_, err = tokendist.LambdaMax(torus, &tokendist.SpectralOptions{Method: tokendist.SpectralLanczos})
	debug.SetMemoryLimit(64 << 20)
	require.ErrorIs(t, err, tokendist.ErrTooLarge)
}

// TestCSVRecordLimit: a reader that never ends a record fails at 1 MiB.
func TestCSVRecordLimit(t *testing.T) {
	for _, r := range []*repeat{{line: "x"}, {head: "\"", line: "x\n"}} {
		_, err := tokendist.NewTraceArrivals(r)
		require.ErrorIs(t, err, tokendist.ErrBadParameter)
		require.Less(t, r.n, 4<<20, "read %d bytes", r.n)
		require.False(t, errors.Is(err, tokendist.ErrTooLarge))
	}
}

// repeat is an endless reader: head once, then line forever.
type repeat struct {
	head, line string
	off, n     int
}

func (r *repeat) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if r.head != "" {
			c := copy(p[n:], r.head)
			r.head = r.head[c:]
			n += c
			continue
		}
		c := copy(p[n:], r.line[r.off:])
		n += c
		r.off = (r.off + c) % len(r.line)
	}
	r.n += n
	return n, nil
}

// TestPerfectTreeCancelPrompt: cancelling a goroutine perfect-tree run of 10^5 nodes
// returns within a second (the optimum, O(N·min(N, T mod N)), is not computed then).
func TestPerfectTreeCancelPrompt(t *testing.T) {
	if testing.Short() {
		t.Skip("10^5 goroutines")
	}
	star, err := tokendist.Path(100000)
	require.NoError(t, err)
	l, err := tokendist.RandomRange(100000, 0, 1<<40, 3)
	require.NoError(t, err)
	b, err := tokendist.NewPerfectTree(star, &tokendist.PerfectTreeOptions{Goroutines: true})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = tokendist.Run(ctx, star, l, b, nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(start), 3*time.Second)
}

func mustRSW(t *testing.T, g *tokendist.Graph) tokendist.Balancer {
	b, err := tokendist.NewRSWDiffusion(g)
	require.NoError(t, err)
	return b
}

func mustPoisson(t *testing.T, rate float64, perNode bool) tokendist.Workload {
	w, err := tokendist.NewPoissonArrivals(rate, perNode)
	require.NoError(t, err)
	return w
}

// TestJSONDecodeErrorsPrefixed: decoding a Trace or a Result with a value of the wrong
// type fails with a prefixed error that names the field; valid JSON round-trips.
func TestJSONDecodeErrorsPrefixed(t *testing.T) {
	var tr tokendist.Trace
	err := json.Unmarshal([]byte(`[{"step": "x"}]`), &tr)
	require.ErrorIs(t, err, tokendist.ErrBadParameter)
	require.True(t, strings.HasPrefix(err.Error(), "tokendist: "), err.Error())
	require.Contains(t, err.Error(), "step")
	var res tokendist.Result
	err = json.Unmarshal([]byte(`{"steps": [1, 2]}`), &res)
	require.ErrorIs(t, err, tokendist.ErrBadParameter)
	require.Contains(t, err.Error(), "steps")
	err = json.Unmarshal([]byte(`{"status": "`+strings.Repeat("z", 1<<20)+`"}`), &res)
	require.True(t, strings.HasPrefix(err.Error(), "tokendist: "), err.Error())
	require.Equal(t, 1, strings.Count(err.Error(), "tokendist: "), err.Error())
	require.Less(t, len(err.Error()), 300)
	ring, err := tokendist.Ring(8)
	require.NoError(t, err)
	l := make(tokendist.Loads, 8)
	l[0] = 50
	want, err := tokendist.Run(context.Background(), ring, l, mustRSW(t, ring), &tokendist.RunOptions{MaxSteps: 20, SampleEvery: 5})
	require.NoError(t, err)
	js, err := json.Marshal(want)
	require.NoError(t, err)
	var got tokendist.Result
	require.NoError(t, json.Unmarshal(js, &got))
	require.Equal(t, want.Trace, got.Trace)
	require.Equal(t, want.Loads, got.Loads)
	require.Equal(t, want.Steps, got.Steps)
}

// TestTypedNilBalancers: Init and Step of a nil pointer of every exported balancer type
// return ErrNilBalancer instead of panicking.
func TestTypedNilBalancers(t *testing.T) {
	ring, err := tokendist.Ring(8)
	require.NoError(t, err)
	s := &tokendist.State{Net: ring, Loads: make(tokendist.Loads, 8)}
	type ib interface {
		tokendist.Balancer
		Init(*tokendist.State) error
	}
	for name, b := range map[string]ib{
		"DimensionExchange":   (*tokendist.DimensionExchange)(nil),
		"RandomMatching":      (*tokendist.RandomMatching)(nil),
		"RandomizedDiffusion": (*tokendist.RandomizedDiffusion)(nil),
		"SpanningTree":        (*tokendist.SpanningTree)(nil),
		"Discrepancy1":        (*tokendist.Discrepancy1)(nil),
		"Funcs":               (*tokendist.Funcs)(nil),
		"CubeBalancer":        (*tokendist.CubeBalancer)(nil),
		"MultiBalancer":       (*tokendist.MultiBalancer)(nil),
		"PerfectTree":         (*tokendist.PerfectTree)(nil),
		"RingScheduler":       (*tokendist.RingScheduler)(nil),
	} {
		require.ErrorIs(t, b.Init(s), tokendist.ErrNilBalancer, name)
		require.ErrorIs(t, b.Step(s), tokendist.ErrNilBalancer, name)
		require.Contains(t, b.Step(s).Error(), name)
	}
}
