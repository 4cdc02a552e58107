package tokendist

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDynamicNoAllocPerStep: with a workload and churn attached, a run of 1000 steps
// allocates at most one object more than a run of 20 (an allocation per step would
// show as 980 more), and the built-in workloads' and churn's Apply allocate nothing.
func TestDynamicNoAllocPerStep(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's runtime allocates; counted without -race")
	}
	g, _ := RandomRegular(1000, 4, 1)
	start, _ := UniformRandom(g.Order(), 10000, 1)
	mk := func() *RunOptions {
		a, _ := NewPoissonArrivals(0.05, true)
		h, _ := NewHotSpotArrivals(3, 1, 2)
		adv, _ := NewAdversary(0.5)
		tr, _ := NewTraceArrivals(strings.NewReader("5,1,3\n500,2,3\n"))
		bu, _ := NewBursts(h, 3, 4)
		sv, _ := NewService(0.3)
		w, _ := NewCombinedWorkload(a, bu, adv, tr, sv)
		c, _ := NewRandomLinkChurn(0.01, 0.1)
		return &RunOptions{Workload: w, Churn: c, Seed: 3, Workers: 1}
	}
	for _, build := range []func() (Balancer, error){
		func() (Balancer, error) { return NewRSWDiffusion(g) },
		func() (Balancer, error) { return NewRandomMatching(g) },
		func() (Balancer, error) {
			return NewSpanningTree(g, 0, func(t *Graph) (Balancer, error) { return NewThreshold1(t, nil) })
		},
	} {
		b, _ := build()
		run := func(steps int64) {
			o := mk()
			if _, ok := b.(*SpanningTree); ok {
				o.Churn = nil
			}
			o.MaxSteps = steps
			_, err := Run(context.Background(), g, start, b, o)
			require.NoError(t, err)
		}
		few := testing.AllocsPerRun(3, func() { run(20) })
		many := testing.AllocsPerRun(3, func() { run(1000) })
		if many > few+1 {
			t.Errorf("%s: %v allocations for 1000 steps, %v for 20", BalancerName(b), many, few)
		}
	}
	// Apply directly.
	s := &State{Net: g, Loads: start.Clone(), Seed: 1}
	o := mk()
	s.Live = make([]bool, 2*g.Size())
	require.NoError(t, o.Workload.Init(s))
	require.NoError(t, o.Churn.Init(s))
	n := testing.AllocsPerRun(100, func() {
		s.Steps++
		_, _, err := o.Workload.Apply(s)
		require.NoError(t, err)
		_, err = o.Churn.Apply(s)
		require.NoError(t, err)
	})
	require.Zero(t, n, "Apply allocates %v times", n)
}

// BenchmarkWorkloadOverhead measures what a workload adds to a round of randomized
// diffusion on RandomRegular(10^6, 4): Poisson arrivals at λ = 0.01 per node, and the
// same plus service at μ = 0.0125 per node (ρ = 0.8). The plain round and the round
// followed by the workload's Apply alternate, one trial of each at a time, each timed in
// the thread's CPU time, and the reported ratio is of the medians over trials (other
// processes share the cores).
func BenchmarkWorkloadOverhead(b *testing.B) {
	g, l0 := benchRR()
	for _, tc := range []struct {
		name    string
		service bool
	}{{"arrivals", false}, {"arrivals+service", true}} {
		b.Run(tc.name, func(b *testing.B) {
			rd, err := NewRandomizedDiffusion(g)
			if err != nil {
				b.Fatal(err)
			}
			a, _ := NewPoissonArrivals(0.01, true)
			var w Workload = a
			if tc.service {
				sv, _ := NewService(0.0125)
				w, _ = NewCombinedWorkload(a, sv)
			}
			s := &State{Net: g, Loads: l0.Clone(), Workers: 1, Seed: 1, Workload: w}
			if err := rd.Init(s); err != nil {
				b.Fatal(err)
			}
			if err := w.Init(s); err != nil {
				b.Fatal(err)
			}
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			// Thread CPU time, not wall clock: descheduled time does not count.
			round := func(apply bool) int64 {
				t0 := threadCPU()
				if err := rd.Step(s); err != nil {
					b.Fatal(err)
				}
				s.Steps++
				if apply {
					if _, _, err := w.Apply(s); err != nil {
						b.Fatal(err)
					}
				}
				return threadCPU() - t0
			}
			for t0 := time.Now(); time.Since(t0) < time.Second; {
				round(true)
			}
			b.ReportAllocs()
			b.ResetTimer()
			var plain, with []float64
			for i := 0; i < b.N; i++ {
				plain = append(plain, float64(round(false)))
				with = append(with, float64(round(true)))
			}
			b.StopTimer()
			slices.Sort(plain)
			slices.Sort(with)
			mp, mw := plain[len(plain)/2], with[len(with)/2]
			b.ReportMetric(mw/mp, "ratio")
			b.ReportMetric(mp, "plain-ns")
			b.ReportMetric(mw, "with-ns")
		})
	}
}

// BenchmarkWorkloadApply times Apply alone on RandomRegular(10^6, 4)'s loads: Poisson
// arrivals at λ = 0.01 per node (about 10^4 tokens per step) and service at μ = 0.0125.
func BenchmarkWorkloadApply(b *testing.B) {
	g, l0 := benchRR()
	a, _ := NewPoissonArrivals(0.01, true)
	sv, _ := NewService(0.0125)
	for _, w := range []Workload{a, sv} {
		b.Run(workloadName(w), func(b *testing.B) {
			s := &State{Net: g, Loads: l0.Clone(), Seed: 1}
			if err := w.Init(s); err != nil {
				b.Fatal(err)
			}
			timed(b, true, func() {
				s.Steps++
				if _, _, err := w.Apply(s); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}
