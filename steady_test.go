package tokendist

import (
	"context"
	"errors"
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
