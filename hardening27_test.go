package tokendist_test

import (
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
)

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
	_, err = tokendist.NewRandomizedDiffusion(star)
	require.ErrorIs(t, err, tokendist.ErrTooLarge)
	_, err = tokendist.NewTraceArrivals(&repeat{line: "1,0,1\n"})
	require.ErrorIs(t, err, tokendist.ErrTooLarge)
	_, err = tokendist.ReadTraceCSV(&repeat{head: "step,time,discrepancy,max,min,potential,moved,messages,negative\n", line: "1,1,1,1,1,1,1,1,1\n"})
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
