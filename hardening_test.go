package tokendist_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/plot"
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
