package tokendist

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// dynCase is one balancer of the library with what it does under a workload and churn.
type dynCase struct {
	name     string
	net      func() *Graph
	loads    func(n int) Loads
	build    func(g *Graph) (Balancer, error)
	workload bool // accepts a workload
	churn    bool // accepts churn
}

func dynTree() *Graph { g, _ := KaryTree(KaryShape{Height: 3, Arity: 2}); return g }
func dynCube() *Graph { g, _ := Hypercube(4); return g }
func dynRing() *Graph { g, _ := Ring(8); return g }
func dynRR() *Graph   { g, _ := RandomRegular(64, 4, 3); return g }
func dynLoads(n int) Loads {
	l, _ := UniformRandom(n, int64(20*n), 9)
	return l
}

func dynCases() []dynCase {
	return []dynCase{
		{name: "THRESHOLD-1", net: dynTree, loads: dynLoads, workload: true, churn: true,
			build: func(g *Graph) (Balancer, error) { return NewThreshold1(g, nil) }},
		{name: "THRESHOLD-2", net: dynTree, loads: dynLoads, workload: true, churn: true,
			build: func(g *Graph) (Balancer, error) { return NewThreshold2(g, nil) }},
		{name: "DISCREPANCY-1", net: dynTree, loads: dynLoads,
			build: func(g *Graph) (Balancer, error) {
				return NewDiscrepancy1(g, nil, &Discrepancy1Options{Nodes: g.Order()})
			}},
		{name: "user protocol", net: dynTree, loads: dynLoads, workload: true, churn: true,
			build: func(g *Graph) (Balancer, error) {
				return NewDimensionExchange(g, nil, ProtocolFunc(func(_ int64, _, _ int, a, b int64) int64 { return (a - b) / 2 }))
			}},
		{name: "spanning tree", net: dynRR, loads: dynLoads, workload: true,
			build: func(g *Graph) (Balancer, error) {
				return NewSpanningTree(g, AutoRoot, func(t *Graph) (Balancer, error) { return NewThreshold1(t, nil) })
			}},
		{name: "RSW", net: dynRR, loads: dynLoads, workload: true, churn: true,
			build: func(g *Graph) (Balancer, error) { return NewRSWDiffusion(g) }},
		{name: "FGSDeterministic", net: dynRR, loads: dynLoads, workload: true, churn: true,
			build: func(g *Graph) (Balancer, error) { return NewFGSDeterministic(g) }},
		{name: "FGSRandomized", net: dynRR, loads: dynLoads, workload: true, churn: true,
			build: func(g *Graph) (Balancer, error) { return NewFGSRandomized(g) }},
		{name: "RandomMatching", net: dynRR, loads: dynLoads, workload: true, churn: true,
			build: func(g *Graph) (Balancer, error) { return NewRandomMatching(g) }},
		{name: "RandomizedDiffusion", net: dynRR, loads: dynLoads, workload: true, churn: true,
			build: func(g *Graph) (Balancer, error) { return NewRandomizedDiffusion(g) }},
		{name: "DimensionOrderBalance", net: dynCube, loads: dynLoads,
			build: func(g *Graph) (Balancer, error) { return NewDimensionOrderBalance(g, nil) }},
		{name: "HypercubeBalance", net: dynCube, loads: dynLoads,
			build: func(g *Graph) (Balancer, error) { return NewHypercubeBalance(g, nil) }},
		{name: "LeightonBalance", net: dynCube, loads: dynLoads,
			build: func(g *Graph) (Balancer, error) { return NewLeightonBalance(g) }},
		{name: "MultiBalance", net: dynCube,
			loads: func(n int) Loads {
				l := make(Loads, n)
				for v := range l {
					l[v] = int64(v % 5)
				}
				return l
			},
			build: func(g *Graph) (Balancer, error) {
				grp := make(Loads, g.Order())
				for v := range grp {
					grp[v] = int64(v % 5)
				}
				return NewMultiBalance(g, []Loads{grp}, nil)
			}},
		{name: "PerfectTree", net: dynTree, loads: dynLoads,
			build: func(g *Graph) (Balancer, error) { return NewPerfectTree(g, nil) }},
		{name: "RingScheduler", net: dynRing,
			loads: func(n int) Loads { l, _ := PointMass(n, 1, 0); return l },
			build: func(g *Graph) (Balancer, error) {
				dag, _ := CompleteTree(6)
				return NewRingTree(g.Order(), dag, nil)
			}},
		{name: "Funcs", net: dynTree, loads: dynLoads, workload: true, churn: true,
			build: func(g *Graph) (Balancer, error) {
				return &Funcs{Name: "idle", StepFunc: func(s *State) error { s.Time++; return nil }}, nil
			}},
	}
}

// dynWorkload is arrivals at 0.3 per node plus service at 0.4 per node.
func dynWorkload(t testing.TB) Workload {
	a, err := NewPoissonArrivals(0.3, true)
	require.NoError(t, err)
	sv, err := NewService(0.4)
	require.NoError(t, err)
	w, err := NewCombinedWorkload(a, sv)
	require.NoError(t, err)
	return w
}

func dynChurn(t testing.TB) Churn {
	c, err := NewRandomLinkChurn(0.1, 0.3)
	require.NoError(t, err)
	return c
}

// TestDynamicEveryBalancer: every balancer either runs under a workload (and churn)
// with exact accounting, or refuses it in Init with a "tokendist: " error naming it.
func TestDynamicEveryBalancer(t *testing.T) {
	for _, tc := range dynCases() {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.net()
			for _, mode := range []string{"workload", "churn"} {
				b, err := tc.build(g)
				require.NoError(t, err)
				opts := &RunOptions{MaxSteps: 200, Seed: 5, SampleEvery: 7}
				want := tc.workload
				if mode == "workload" {
					opts.Workload = dynWorkload(t)
				} else {
					opts.Churn = dynChurn(t)
					want = tc.churn
				}
				res, err := Run(context.Background(), g, tc.loads(g.Order()), b, opts)
				if !want {
					require.Error(t, err, "%s: want a refusal, got %v", mode, err)
					require.True(t, strings.HasPrefix(err.Error(), "tokendist: "), "%s: want a refusal, got %v", mode, err)
					require.True(t, strings.Contains(err.Error(), "does not accept"), "%s: want a refusal, got %v", mode, err)
					if !errors.Is(err, ErrBadParameter) {
						t.Errorf("%s: refusal %v does not wrap ErrBadParameter", mode, err)
					}
					continue
				}
				require.NoError(t, err, "%s", mode)
				got, w := res.Loads.Total(), res.Initial+res.Arrived-res.Completed
				require.Equal(t, w, got, "%s: total %d, want %d", mode, got, w)
				if mode == "workload" {
					require.NotZero(t, res.Arrived, "workload: arrived %d, completed %d", res.Arrived, res.Completed)
					require.NotZero(t, res.Completed, "workload: arrived %d, completed %d", res.Arrived, res.Completed)
				}
				require.True(t, res.Status == StatusMaxSteps || res.Status == StatusDone, "%s: status %v", mode, res.Status)
			}
		})
	}
}

// TestDynamicAccountingProperty: over many seeds, for every balancer that accepts
// workloads and churn together, the final total is initial + arrivals − completions,
// every sample's total is too, and the result does not depend on the worker count.
func TestDynamicAccountingProperty(t *testing.T) {
	seeds := 20
	if testing.Short() {
		seeds = 5
	}
	for _, tc := range dynCases() {
		if !tc.workload {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			g := tc.net()
			for seed := uint64(0); seed < uint64(seeds); seed++ {
				var first Result
				for i, workers := range []int{1, 2, runtime.GOMAXPROCS(0)} {
					b, err := tc.build(g)
					require.NoError(t, err)
					opts := &RunOptions{MaxSteps: 150, Seed: seed, Workers: workers, SampleEvery: 10, Workload: dynWorkload(t)}
					if tc.churn {
						opts.Churn = dynChurn(t)
					}
					var bad error
					initial := tc.loads(g.Order()).Total()
					opts.Recorder = RecorderFunc(func(s *State, smp Sample) error {
						if tot := s.Loads.Total(); bad == nil && tot != initial+smp.Arrived-smp.Completed {
							bad = errors.New("sample total mismatch")
						}
						return nil
					})
					res, err := Run(context.Background(), g, tc.loads(g.Order()), b, opts)
					require.NoError(t, err, "seed %d workers %d: %v %v", seed, workers, err, bad)
					require.NoError(t, bad, "seed %d workers %d: %v %v", seed, workers, err, bad)
					require.Equal(t, res.Initial+res.Arrived-res.Completed, res.Loads.Total(), "seed %d: accounting broken", seed)
					if i == 0 {
						first = res
						continue
					}
					require.True(t, sameResult(first, res), "seed %d: workers %d differs from workers 1", seed, workers)
				}
			}
		})
	}
}

func sameResult(a, b Result) bool {
	if a.Steps != b.Steps || a.Moved != b.Moved || a.Arrived != b.Arrived || a.Completed != b.Completed || len(a.Trace) != len(b.Trace) {
		return false
	}
	for v := range a.Loads {
		if a.Loads[v] != b.Loads[v] {
			return false
		}
	}
	for i := range a.Trace {
		if a.Trace[i] != b.Trace[i] {
			return false
		}
	}
	return true
}

// TestDynamicDeterminismLarge: on RandomRegular(9000, 4) (three 4096-node chunks, so
// the diffusion and matching schemes really split work across workers), runs with a
// workload and churn are identical for workers 1, 2 and GOMAXPROCS.
func TestDynamicDeterminismLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("large network")
	}
	g, _ := RandomRegular(9000, 4, 5)
	start, _ := UniformRandom(g.Order(), 90000, 5)
	builds := []func() (Balancer, error){
		func() (Balancer, error) { return NewRSWDiffusion(g) },
		func() (Balancer, error) { return NewFGSDeterministic(g) },
		func() (Balancer, error) { return NewFGSRandomized(g) },
		func() (Balancer, error) { return NewRandomMatching(g) },
		func() (Balancer, error) { return NewRandomizedDiffusion(g) },
	}
	for _, build := range builds {
		for seed := uint64(0); seed < 2; seed++ {
			var first Result
			for i, workers := range []int{1, 2, runtime.GOMAXPROCS(0)} {
				b, _ := build()
				res, err := Run(context.Background(), g, start, b, &RunOptions{MaxSteps: 20, Seed: seed, Workers: workers, SampleEvery: 5,
					Workload: dynWorkload(t), Churn: dynChurn(t)})
				require.NoError(t, err)
				if i == 0 {
					first = res
				} else {
					require.True(t, sameResult(first, res), "%s seed %d: workers %d differs", BalancerName(b), seed, workers)
				}
			}
		}
	}
}

// TestCutConditionHotSpot tests the dimension-exchange analogue of Muthukrishnan and
// Rajaraman's cut condition (SPAA 1998, as summarised by Anshelevich, Kempe and
// Kleinberg, SIAM J. Comput. 2008): a local algorithm that moves one token per link per
// step is stable against injections whose rate into any node set S is at most (1 − ε)
// times what can leave S. For THRESHOLD-2 on a ring with a hot spot at node 0 the
// tightest set is {0}: its 2 links, each active once per χ = 2 steps, carry at most 1
// token per step, and the node serves μ = 0.5, so the capacity is 1.5. At 0.8·1.5 the
// run is stable; at 1.2·1.5 the load grows without bound (SteadyStats's test).
func TestCutConditionHotSpot(t *testing.T) {
	g, _ := Ring(16)
	for _, tc := range []struct {
		rate     float64
		unstable bool
	}{{1.2, false}, {1.8, true}} {
		b, _ := NewThreshold2(g, nil)
		h, _ := NewHotSpotArrivals(tc.rate, 0)
		sv, _ := NewService(0.5)
		w, _ := NewCombinedWorkload(h, sv)
		res, err := Run(context.Background(), g, make(Loads, 16), b, &RunOptions{MaxSteps: 12000, Seed: 2, Workload: w, Steady: &SteadyOptions{WarmUp: 4000}})
		require.NoError(t, err)
		if res.Steady.Unstable != tc.unstable {
			t.Errorf("rate %v: %v", tc.rate, res.Steady)
		}
	}
}

// TestSteadyStats: measurements start after the warm-up; an arrivals-only run is
// unstable, a closed run and an arrivals-plus-faster-service run are not.
func TestSteadyStats(t *testing.T) {
	g, _ := Ring(16)
	b, _ := NewThreshold2(g, nil)
	a, _ := NewPoissonArrivals(0.1, true)
	res, err := Run(context.Background(), g, make(Loads, 16), b, &RunOptions{MaxSteps: 2000, Seed: 1, Workload: a, Steady: &SteadyOptions{WarmUp: 1000, Every: 2}})
	require.NoError(t, err)
	st := res.Steady
	require.NotNil(t, st, "arrivals only: %+v", st)
	require.Equal(t, int64(1002), st.From, "arrivals only: %+v", st)
	require.Equal(t, int64(500), st.Samples, "arrivals only: %+v", st)
	require.True(t, st.Unstable, "arrivals only: %+v", st)
	require.LessOrEqual(t, math.Abs(st.Growth-1.6), 0.3, "arrivals only: %+v", st)
	sv, _ := NewService(0.2)
	w, _ := NewCombinedWorkload(a, sv)
	res, err = Run(context.Background(), g, make(Loads, 16), b, &RunOptions{MaxSteps: 4000, Seed: 1, Workload: w, Steady: &SteadyOptions{WarmUp: 1000}})
	require.NoError(t, err)
	st = res.Steady
	require.False(t, st.Unstable, "ρ = 0.5: %+v", st)
	require.Greater(t, st.MeanDiscrepancy, 0.0, "ρ = 0.5: %+v", st)
	require.GreaterOrEqual(t, float64(st.P95Discrepancy), st.MeanDiscrepancy-1, "ρ = 0.5: %+v", st)
	require.Greater(t, st.MovedPerArrival, 0.0, "ρ = 0.5: %+v", st)
	start, _ := UniformRandom(16, 500, 2)
	res, err = Run(context.Background(), g, start, b, &RunOptions{MaxSteps: 500, NoStability: true, Steady: &SteadyOptions{}})
	require.NoError(t, err)
	st = res.Steady
	require.False(t, st.Unstable, "closed: %+v", st)
	require.Equal(t, 0.0, st.ArrivalRate, "closed: %+v", st)
	require.Equal(t, int64(500), st.Samples, "closed: %+v", st)
}

// TestDynamicDefaultBudget: a dynamic run with MaxSteps 0 runs DefaultMaxSteps steps,
// not a diffusion scheme's static budget τ(G, K) (which is for a fixed total).
func TestDynamicDefaultBudget(t *testing.T) {
	g, _ := Ring(4)
	b, _ := NewRSWDiffusion(g)
	tr, _ := NewTraceArrivals(strings.NewReader("1,0,8\n"))
	res, err := Run(context.Background(), g, make(Loads, 4), b, &RunOptions{Workload: tr})
	require.NoError(t, err)
	require.Equal(t, int64(DefaultMaxSteps), res.Steps, "%v", res)
	require.Equal(t, StatusMaxSteps, res.Status, "%v", res)
}

// scriptWorkload is a workload for the exact tests below: after step t it adds in(t)
// tokens to node 0 and completes out(t) tokens there, reporting exactly those counts.
type scriptWorkload struct{ in, out func(t int64) int64 }

func (w scriptWorkload) Init(*State) error { return nil }

func (w scriptWorkload) Apply(s *State) (int64, int64, error) {
	a, d := w.in(s.Steps), w.out(s.Steps)
	s.Loads[0] += a - d
	return a, d, nil
}

// steadyScripted runs two nodes from loads {10, 0}: every step moves one token from node
// 0 to node 1, then t tokens arrive at node 0 after step t (and out(t) complete there).
// After step t node 1 holds t and node 0 holds 10 − t + T(t) − O(t), with T(t) = t(t+1)/2
// and O the completions so far: every number of the steady-state metrics follows by hand.
func steadyScripted(t *testing.T, maxSteps int64, o SteadyOptions, out func(int64) int64) *SteadyStats {
	t.Helper()
	b := &Funcs{Name: "one token right", StepFunc: func(s *State) error {
		s.Loads[0]--
		s.Loads[1]++
		s.Moved++
		s.Time++
		return nil
	}}
	if out == nil {
		out = func(int64) int64 { return 0 }
	}
	g, err := Path(2)
	require.NoError(t, err)
	res, err := Run(context.Background(), g, Loads{10, 0}, b, &RunOptions{MaxSteps: maxSteps, NoStability: true,
		Workload: scriptWorkload{in: func(t int64) int64 { return t }, out: out}, Steady: &o})
	require.NoError(t, err)
	require.Equal(t, maxSteps, res.Steps)
	require.NotNil(t, res.Steady)
	return res.Steady
}

// TestSteadyStatsExact checks every field of SteadyStats against values computed by hand
// (steadyScripted's closed form). Warm-up 3, every 2, 13 steps: the measurements are after
// steps 5, 7, 9, 11 and 13 (not 3: the warm-up's last step is not measured), with
// discrepancies 15, 24, 37, 54, 75, maxima 20, 31, 46, 65, 88 and totals 25, 38, 55, 76,
// 101. The base is step 3 (6 arrived, 3 moved), so 85 tokens arrive in the 10 steps to
// step 13 (rate 8.5) and 10 move (10/85 per arrival). The instability test's halves are
// {25, 38} and {76, 101} (the middle measurement is in neither), whose mean steps 6 and
// 12 are 6 steps apart: growth (88.5 − 31.5)/6 = 9.5 > 0.05 · 8.5. With five
// measurements the nearest-rank 95th percentile is the 5th (⌈4.75⌉), the largest.
func TestSteadyStatsExact(t *testing.T) {
	st := steadyScripted(t, 13, SteadyOptions{WarmUp: 3, Every: 2}, nil)
	want := SteadyStats{From: 5, Samples: 5, MeanDiscrepancy: 41, P95Discrepancy: 75, MeanMax: 50, P95Max: 88, MeanTotal: 59,
		ArrivalRate: 8.5, MovedPerArrival: 10.0 / 85, Growth: 9.5, Unstable: true}
	require.Equal(t, want, *st)
	// Warm-up 3, every 4, 15 steps: measured after steps 7, 11 and 15 (3 + 4k, not the
	// multiples of 4), with totals 38, 76 and 130 and discrepancies 24, 54 and 100.
	st = steadyScripted(t, 15, SteadyOptions{WarmUp: 3, Every: 4}, nil)
	require.Equal(t, int64(7), st.From)
	require.Equal(t, int64(3), st.Samples)
	require.Equal(t, (38+76+130)/3.0, st.MeanTotal)
	require.Equal(t, (24+54+100)/3.0, st.MeanDiscrepancy)
}

// TestSteadyPercentileRank checks the nearest-rank 95th percentile where it is not the
// largest value: with 20 increasing measurements (warm-up 0, every step, 20 steps) it is
// the 19th, ⌈0.95·20⌉; with 21 it is the 20th, ⌈19.95⌉. The discrepancy after step t is
// 10 − 2t + T(t) and the maximum 10 − t + T(t) (steadyScripted). Warm-up 0 also puts the
// base before the first step: 210 tokens in 20 steps, rate 10.5; the halves' mean totals
// are 10 + 22 and 10 + 132, ten steps apart, growth 11.
func TestSteadyPercentileRank(t *testing.T) {
	disc := func(t int64) int64 { return 10 - 2*t + t*(t+1)/2 }
	mx := func(t int64) int64 { return 10 - t + t*(t+1)/2 }
	st := steadyScripted(t, 20, SteadyOptions{}, nil)
	require.Equal(t, int64(1), st.From)
	require.Equal(t, int64(20), st.Samples)
	require.Equal(t, disc(19), st.P95Discrepancy)
	require.Equal(t, mx(19), st.P95Max)
	require.Equal(t, 10.5, st.ArrivalRate)
	require.Equal(t, 11.0, st.Growth)
	st = steadyScripted(t, 21, SteadyOptions{}, nil)
	require.Equal(t, disc(20), st.P95Discrepancy)
	require.Equal(t, mx(20), st.P95Max)
}

// TestSteadyInstabilityThreshold checks the instability test's strict threshold: on an
// idle balancer, 20 tokens arrive after every step and 20 − g complete, so the total grows
// by exactly g per step. Eight measurements give halves of four whose mean steps are 4
// apart, so the growth is exactly g, against a threshold of 0.05 · 20 = 1: g = 1 sits on
// the threshold and is stable (Growth must exceed it), g = 2 is unstable.
func TestSteadyInstabilityThreshold(t *testing.T) {
	require.Equal(t, 1.0, InstabilityFraction*20)
	for _, tc := range []struct {
		g        int64
		unstable bool
	}{{0, false}, {1, false}, {2, true}} {
		b := &Funcs{Name: "idle", StepFunc: func(s *State) error { s.Time++; return nil }}
		g, _ := Path(2)
		w := scriptWorkload{in: func(int64) int64 { return 20 }, out: func(int64) int64 { return 20 - tc.g }}
		res, err := Run(context.Background(), g, Loads{100, 0}, b, &RunOptions{MaxSteps: 8, NoStability: true, Workload: w, Steady: &SteadyOptions{}})
		require.NoError(t, err)
		st := res.Steady
		require.Equal(t, int64(8), st.Samples)
		require.Equal(t, 20.0, st.ArrivalRate)
		require.Equal(t, float64(tc.g), st.Growth, "g %d", tc.g)
		require.Equal(t, tc.unstable, st.Unstable, "g %d: growth %v, threshold %v", tc.g, st.Growth, InstabilityFraction*st.ArrivalRate)
	}
}

// TestSteadyFewSamples: with fewer than four measurements there is no instability test
// (growth 0, stable however fast the load grows), a run shorter than its warm-up has no
// measurement at all, and a run without arrivals has arrival rate and moved per arrival
// 0 however many tokens move, and is stable even if its total grows.
func TestSteadyFewSamples(t *testing.T) {
	st := steadyScripted(t, 6, SteadyOptions{WarmUp: 3}, nil) // steps 4, 5, 6
	require.Equal(t, int64(3), st.Samples)
	require.Equal(t, 0.0, st.Growth)
	require.False(t, st.Unstable)
	require.Equal(t, (10-8+10.0+10-10+15+10-12+21)/3, st.MeanDiscrepancy)
	st = steadyScripted(t, 3, SteadyOptions{WarmUp: 3}, nil)
	require.Equal(t, SteadyStats{}, *st)
	// Without a workload nothing arrives: rate 0, and moved per arrival 0 (not ∞ or NaN)
	// although tokens move.
	b := &Funcs{StepFunc: func(s *State) error { s.Loads[0]--; s.Loads[1]++; s.Moved++; s.Time++; return nil }}
	g, _ := Path(2)
	res, err := Run(context.Background(), g, Loads{10, 0}, b, &RunOptions{MaxSteps: 8, NoStability: true, Steady: &SteadyOptions{WarmUp: 2}})
	require.NoError(t, err)
	require.Equal(t, int64(6), res.Steady.Samples)
	require.Equal(t, 0.0, res.Steady.ArrivalRate)
	require.Equal(t, 0.0, res.Steady.MovedPerArrival)
	require.Equal(t, 0.0, res.Steady.Growth) // the total is constant
	require.False(t, res.Steady.Unstable)
	// A balancer whose total grows by design (ExpectedTotalFunc) grows without arrivals:
	// growth 1 per step, but the instability test needs arrivals.
	b = &Funcs{StepFunc: func(s *State) error { s.Loads[0]++; s.Time++; return nil },
		ExpectedTotalFunc: func(s *State) int64 { return 10 + s.Steps }}
	res, err = Run(context.Background(), g, Loads{10, 0}, b, &RunOptions{MaxSteps: 8, NoStability: true, Steady: &SteadyOptions{}})
	require.NoError(t, err)
	require.Equal(t, 1.0, res.Steady.Growth)
	require.Equal(t, 0.0, res.Steady.ArrivalRate)
	require.False(t, res.Steady.Unstable)
}

// TestWorkloadNegativeCounts: a workload that reports negative arrivals or completions
// breaks the accounting and fails the run with an error naming both counts and the step.
func TestWorkloadNegativeCounts(t *testing.T) {
	g, _ := Path(2)
	for _, tc := range []struct {
		in, out int64
		want    string
	}{{-1, 0, "reported -1 arrivals and 0 completions after step 2"}, {0, -1, "reported 0 arrivals and -1 completions after step 2"}} {
		w := scriptWorkload{in: func(t int64) int64 { return map[bool]int64{true: tc.in}[t == 2] },
			out: func(t int64) int64 { return map[bool]int64{true: tc.out}[t == 2] }}
		b := &Funcs{StepFunc: func(s *State) error { s.Time++; return nil }}
		res, err := Run(context.Background(), g, Loads{5, 5}, b, &RunOptions{MaxSteps: 10, NoStability: true, Workload: w})
		require.Error(t, err)
		require.True(t, strings.HasPrefix(err.Error(), "tokendist: "), "%v", err)
		require.ErrorContains(t, err, tc.want)
		require.Equal(t, StatusFailed, res.Status)
		require.Equal(t, int64(2), res.Steps)
	}
}

// TestSteadySampleLimit: the measurements a run keeps are (MaxSteps − WarmUp)/Every, at
// most MaxSteadySamples: exactly that many are accepted (the buffers are allocated but
// never touched, so this costs address space only) and one more is an error naming the
// count; a long run measured rarely (2^22 steps every 2^11 steps: 2^11 measurements) is
// within the limit.
func TestSteadySampleLimit(t *testing.T) {
	m, err := newSteadyMeter(SteadyOptions{WarmUp: 5, Every: 3}, 5+3*MaxSteadySamples+2)
	require.NoError(t, err)
	require.Equal(t, MaxSteadySamples, cap(m.total))
	_, err = newSteadyMeter(SteadyOptions{WarmUp: 5, Every: 3}, 5+3*(MaxSteadySamples+1))
	require.ErrorIs(t, err, ErrBadParameter)
	g, _ := Path(2)
	run := func(maxSteps int64, o SteadyOptions) error {
		b := &Funcs{StepFunc: func(s *State) error { s.Time++; return nil }}
		_, err := Run(context.Background(), g, Loads{1, 1}, b, &RunOptions{MaxSteps: maxSteps, UseTarget: true, TargetDiscrepancy: 5, Steady: &o})
		return err
	}
	require.NoError(t, run(7+1<<22, SteadyOptions{WarmUp: 7, Every: 1 << 11}))
	err = run(1<<22+8, SteadyOptions{WarmUp: 7})
	require.ErrorIs(t, err, ErrBadParameter)
	require.ErrorContains(t, err, "4194305 measurements")
}

// TestWorkloadOverflow: the total may reach math.MaxInt64 and the arrivals counter too
// (also when completions, counted apart, are as large); a workload that would push
// either beyond fails the run with ErrBadLoads after that step.
func TestWorkloadOverflow(t *testing.T) {
	g, _ := Path(2)
	for _, tc := range []struct {
		name    string
		in, out func(t int64) int64
		failAt  int64 // 0: the run succeeds
	}{
		{"total reaches MaxInt64", func(t int64) int64 { return map[int64]int64{1: math.MaxInt64 - 10}[t] }, func(int64) int64 { return 0 }, 0},
		{"total beyond", func(t int64) int64 { return map[int64]int64{1: math.MaxInt64 - 10, 2: 1}[t] }, func(int64) int64 { return 0 }, 2},
		{"arrivals reach MaxInt64", func(t int64) int64 { return map[int64]int64{1: math.MaxInt64 - 10, 2: 10}[t] },
			func(t int64) int64 { return map[int64]int64{1: math.MaxInt64 - 10, 2: 10}[t] }, 0},
		{"large arrivals and completions", func(t int64) int64 { return map[int64]int64{1: 1 << 61, 2: 1 << 62}[t] },
			func(t int64) int64 { return map[int64]int64{1: 1 << 61, 2: 1 << 62}[t] }, 0}, // the total stays 10
		{"arrivals beyond", func(t int64) int64 { return map[int64]int64{1: math.MaxInt64 - 10, 2: 10, 3: 1}[t] },
			func(t int64) int64 { return map[int64]int64{1: math.MaxInt64 - 10, 2: 10, 3: 1}[t] }, 3},
	} {
		b := &Funcs{StepFunc: func(s *State) error { s.Time++; return nil }}
		res, err := Run(context.Background(), g, Loads{5, 5}, b, &RunOptions{MaxSteps: 4, NoStability: true, Workload: scriptWorkload{in: tc.in, out: tc.out}})
		if tc.failAt == 0 {
			require.NoError(t, err, tc.name)
			continue
		}
		require.ErrorIs(t, err, ErrBadLoads, tc.name)
		require.ErrorContains(t, err, fmt.Sprintf("overflows the total after step %d", tc.failAt), tc.name)
		require.Equal(t, tc.failAt, res.Steps, tc.name)
	}
}
