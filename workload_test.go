package tokendist

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// idle is a balancer that moves nothing, so a run shows the workload alone.
func idle() Balancer {
	return &Funcs{Name: "idle", StepFunc: func(s *State) error { s.Time++; return nil }}
}

func runIdle(t *testing.T, n int, start Loads, w Workload, steps int64, seed uint64) Result {
	t.Helper()
	g, err := Path(n)
	require.NoError(t, err)
	if start == nil {
		start = make(Loads, n)
	}
	res, err := Run(context.Background(), g, start, idle(), &RunOptions{MaxSteps: steps, Seed: seed, Workload: w})
	require.NoError(t, err)
	return res
}

// TestPoissonArrivalsMean: the arrivals' mean and variance match Poisson(λ·n) within
// 5 standard errors, for small (inversion) and large (PTRS) means.
func TestPoissonArrivalsMean(t *testing.T) {
	for _, tc := range []struct {
		rate    float64
		perNode bool
		n       int
	}{{0.5, false, 4}, {3, false, 4}, {0.01, true, 2000}, {40, false, 3}, {1000, false, 2}} {
		a, err := NewPoissonArrivals(tc.rate, tc.perNode)
		require.NoError(t, err)
		const steps = 4000
		var sum, sq float64
		prev := int64(0)
		g, _ := Path(tc.n)
		_, err = Run(context.Background(), g, make(Loads, tc.n), idle(), &RunOptions{MaxSteps: steps, Seed: 11, Workload: a,
			SampleEvery: 1, Recorder: RecorderFunc(func(s *State, smp Sample) error {
				if smp.Step > 0 {
					k := float64(smp.Arrived - prev)
					sum, sq = sum+k, sq+k*k
				}
				prev = smp.Arrived
				return nil
			})})
		require.NoError(t, err)
		mu := a.Rate(tc.n)
		mean := sum / steps
		variance := sq/steps - mean*mean
		if se := math.Sqrt(mu / steps); math.Abs(mean-mu) > 5*se {
			t.Errorf("rate %v (n %d): mean %v, want %v ± %v", tc.rate, tc.n, mean, mu, 5*se)
		}
		if math.Abs(variance-mu) > 0.15*mu+0.05 {
			t.Errorf("rate %v: variance %v, want about %v", tc.rate, variance, mu)
		}
	}
}

// TestHotSpotAndAdversary: a hot spot adds only at its nodes; the adversary adds
// ⌊rate·T⌋ tokens in T steps, always at a heaviest node.
func TestHotSpotAndAdversary(t *testing.T) {
	h, err := NewHotSpotArrivals(2, 1, 3)
	require.NoError(t, err)
	res := runIdle(t, 5, nil, h, 500, 1)
	require.Equal(t, int64(0), res.Loads[0], "hot spot at 1, 3: loads %v", res.Loads)
	require.Equal(t, int64(0), res.Loads[2], "hot spot at 1, 3: loads %v", res.Loads)
	require.Equal(t, int64(0), res.Loads[4], "hot spot at 1, 3: loads %v", res.Loads)
	require.NotEqual(t, int64(0), res.Loads[1], "hot spot at 1, 3: loads %v", res.Loads)
	require.NotEqual(t, int64(0), res.Loads[3], "hot spot at 1, 3: loads %v", res.Loads)
	require.Equal(t, res.Loads.Total(), res.Arrived, "hot spot accounting")
	a, _ := NewAdversary(0.7)
	res = runIdle(t, 4, Loads{0, 3, 5, 5}, a, 100, 0)
	require.Equal(t, int64(70), res.Arrived, "adversary: arrived %d, loads %v", res.Arrived, res.Loads)
	require.Equal(t, int64(75), res.Loads[2], "adversary: arrived %d, loads %v", res.Arrived, res.Loads)
	require.Equal(t, int64(5), res.Loads[3], "adversary: arrived %d, loads %v", res.Arrived, res.Loads)
}

// TestServiceNeverExceedsLoad: service removes at most a node's load, about μ per busy
// node per step, and a node at 0 stays at 0.
func TestServiceNeverExceedsLoad(t *testing.T) {
	for _, mu := range []float64{0.3, 1, 2.5} {
		sv, _ := NewService(mu)
		res := runIdle(t, 6, Loads{0, 1, 2, 1000, 1000, 1000}, sv, 100, 3)
		require.Equal(t, int64(0), res.Loads[0], "μ %v: loads %v", mu, res.Loads)
		require.GreaterOrEqual(t, res.Loads[1], int64(0), "μ %v: loads %v", mu, res.Loads)
		require.GreaterOrEqual(t, res.Loads[2], int64(0), "μ %v: loads %v", mu, res.Loads)
		busy := float64(3000 - res.Loads[3] - res.Loads[4] - res.Loads[5])
		if want := 3 * 100 * mu; math.Abs(busy-want) > 5*math.Sqrt(want)+1 {
			t.Errorf("μ %v: busy nodes completed %v, want about %v", mu, busy, want)
		}
		require.Equal(t, 3003-res.Loads.Total(), res.Completed, "service accounting")
	}
}

// TestTraceArrivalsCSV replays a trace (with a header, unsorted rows) exactly, and
// rejects bad rows with a line number.
func TestTraceArrivalsCSV(t *testing.T) {
	tr, err := NewTraceArrivals(strings.NewReader("step,node,count\n3,1,4\n1,0,2\n3,1,1\n9,2,7\n"))
	require.NoError(t, err)
	res := runIdle(t, 3, nil, tr, 5, 0)
	require.Equal(t, int64(2), res.Loads[0], "trace after 5 steps: %v", res.Loads)
	require.Equal(t, int64(5), res.Loads[1], "trace after 5 steps: %v", res.Loads)
	require.Equal(t, int64(0), res.Loads[2], "trace after 5 steps: %v", res.Loads)
	require.Equal(t, int64(7), res.Arrived, "trace after 5 steps: %v", res.Loads)
	res = runIdle(t, 3, nil, tr, 20, 0) // reusable: Init rewinds
	require.Equal(t, int64(7), res.Loads[2], "trace after 20 steps: %v", res.Loads)
	require.Equal(t, int64(14), res.Arrived, "trace after 20 steps: %v", res.Loads)
	for _, bad := range []string{"1,0\n", "0,1,1\n", "1,-1,1\n", "1,x,1\n", "1,0,-3\n"} {
		if _, err := NewTraceArrivals(strings.NewReader(bad)); err == nil || !strings.HasPrefix(err.Error(), "tokendist: ") {
			t.Errorf("trace %q: err %v", bad, err)
		}
	}
	tr, _ = NewTraceArrivals(strings.NewReader("1,7,1\n"))
	g, _ := Path(3)
	_, err = Run(context.Background(), g, make(Loads, 3), idle(), &RunOptions{Workload: tr})
	require.Error(t, err, "trace with node 7 on 3 nodes")
	require.True(t, strings.Contains(err.Error(), "node 7"), "trace with node 7 on 3 nodes: %v", err)
}

// TestBurstsAndWindow: bursts apply only in on steps; a window only inside it.
func TestBurstsAndWindow(t *testing.T) {
	tr, _ := NewTraceArrivals(strings.NewReader("1,0,1\n2,0,1\n3,0,1\n4,0,1\n5,0,1\n6,0,1\n7,0,1\n"))
	b, err := NewBursts(tr, 2, 3) // on at 1, 2, 6, 7
	require.NoError(t, err)
	res := runIdle(t, 1, nil, b, 10, 0)
	require.Equal(t, int64(4), res.Arrived, "bursts: arrived %d, want 4", res.Arrived)
	w, _ := NewWindow(tr, 3, 5)
	res = runIdle(t, 1, nil, w, 10, 0)
	require.Equal(t, int64(3), res.Arrived, "window: arrived %d, want 3", res.Arrived)
}

// TestWorkloadErrors: bad parameters get "tokendist: " errors naming the value.
func TestWorkloadErrors(t *testing.T) {
	_, e1 := NewPoissonArrivals(-1, true)
	_, e2 := NewPoissonArrivals(math.NaN(), true)
	_, e3 := NewHotSpotArrivals(1)
	_, e4 := NewService(math.Inf(1))
	_, e5 := NewBursts(nil, 1, 1)
	a, _ := NewAdversary(1)
	_, e6 := NewBursts(a, 0, 1)
	_, e7 := NewWindow(a, 5, 2)
	_, e8 := NewCombinedWorkload()
	_, e9 := NewRandomLinkChurn(2, 0)
	_, e10 := NewScheduledLinkChurn([]LinkEvent{{Step: -1}})
	for i, err := range []error{e1, e2, e3, e4, e5, e6, e7, e8, e9, e10} {
		if err == nil || !strings.HasPrefix(err.Error(), "tokendist: ") || !errors.Is(err, ErrBadParameter) {
			t.Errorf("case %d: %v", i+1, err)
		}
	}
	h, _ := NewHotSpotArrivals(1, 9)
	g, _ := Path(3)
	_, err := Run(context.Background(), g, make(Loads, 3), idle(), &RunOptions{Workload: h})
	require.Error(t, err, "hot spot out of range")
	require.True(t, strings.Contains(err.Error(), "9"), "hot spot out of range: %v", err)
	c, _ := NewScheduledLinkChurn([]LinkEvent{{Step: 1, U: 0, V: 2}})
	_, err = Run(context.Background(), g, make(Loads, 3), idle(), &RunOptions{Churn: c})
	require.Error(t, err, "churn of a non-link")
	require.True(t, strings.Contains(err.Error(), "(0, 2)"), "churn of a non-link: %v", err)
	_, err = Run(context.Background(), g, make(Loads, 3), idle(), &RunOptions{Steady: &SteadyOptions{WarmUp: -1}})
	require.Error(t, err, "negative warm-up accepted")
}

// TestWorkloadAccountingCaught: a workload that misreports its counts is caught by the
// exact accounting check.
func TestWorkloadAccountingCaught(t *testing.T) {
	g, _ := Path(3)
	liar := liarWorkload{}
	_, err := Run(context.Background(), g, Loads{1, 1, 1}, idle(), &RunOptions{MaxSteps: 3, Workload: liar})
	var ie *InvariantError
	require.True(t, errors.As(err, &ie), "want a conservation error, got %v", err)
	require.Equal(t, Conserves, ie.Invariant, "want a conservation error, got %v", err)
}

type liarWorkload struct{}

func (liarWorkload) Init(*State) error { return nil }
func (liarWorkload) Apply(s *State) (int64, int64, error) {
	s.Loads[0] += 2
	return 1, 0, nil
}

// TestDynamicTraceCSV: a dynamic run's CSV trace has the arrived, completed and down
// columns, and their last row matches the Result.
func TestDynamicTraceCSV(t *testing.T) {
	g, _ := Ring(8)
	b, _ := NewThreshold2(g, nil)
	res, err := Run(context.Background(), g, make(Loads, 8), b, &RunOptions{MaxSteps: 50, SampleEvery: 10, Seed: 1, Workload: dynWorkload(t), Churn: dynChurn(t)})
	require.NoError(t, err)
	var sb strings.Builder
	require.NoError(t, res.Trace.WriteCSV(&sb))
	lines := strings.Split(strings.TrimSpace(sb.String()), "\n")
	require.True(t, strings.HasSuffix(lines[0], ",negative,arrived,completed,down,round"), "header %q", lines[0])
	last := strings.Split(lines[len(lines)-1], ",")
	require.Equal(t, fmt.Sprint(res.Arrived), last[9], "last row %v, result arrived %d completed %d", last, res.Arrived, res.Completed)
	require.Equal(t, fmt.Sprint(res.Completed), last[10], "last row %v, result arrived %d completed %d", last, res.Arrived, res.Completed)
}

// TestServiceNegativeLoads: service completes tokens only where there are some. A node
// with a negative load (a balancer that lets loads go negative) or an empty node
// completes nothing and keeps its load, whole and fractional rates alike; a node with
// fewer tokens than ⌊μ⌋ completes them all; and the completions reported are exactly the
// tokens that left.
func TestServiceNegativeLoads(t *testing.T) {
	g, _ := Path(7)
	for _, mu := range []float64{0.5, 1, 2, 2.5, 40} {
		sv, err := NewService(mu)
		require.NoError(t, err)
		start := Loads{-7, -1, 0, 1, 2, 3, 100}
		for step := int64(1); step <= 40; step++ {
			s := &State{Net: g, Loads: start.Clone(), Seed: 3, Steps: step}
			require.NoError(t, sv.Init(s))
			in, done, err := sv.Apply(s)
			require.NoError(t, err)
			require.Zero(t, in)
			require.Equal(t, start.Total()-s.Loads.Total(), done, "μ %v step %d: loads %v", mu, step, s.Loads)
			require.Equal(t, Loads{-7, -1, 0}, s.Loads[:3], "μ %v step %d: loads %v", mu, step, s.Loads)
			for v := 3; v < 7; v++ {
				c := start[v] - s.Loads[v]
				lo, hi := min(start[v], int64(math.Floor(mu))), min(start[v], int64(math.Ceil(mu)))
				require.True(t, c >= lo && c <= hi, "μ %v step %d: node %d completed %d of %d, want %d..%d", mu, step, v, c, start[v], lo, hi)
			}
		}
	}
}
