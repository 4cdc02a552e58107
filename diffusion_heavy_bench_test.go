package tokendist

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/tokendist/tokendist/internal/par"
)

// Heavy-tailed networks (issue 37): one round of every diffusion balancer on
// Barabási–Albert, G(n, p) and random regular networks with the same number of links,
// reported per link end (ns/end), one worker. BA(n, 2) and RandomRegular(n, 4) have 2n
// links (G(n, 4/n) is not connected, so it has no column there); BA(n, 8),
// gen.ErdosRenyi(n, 16/(n−1)) and RandomRegular(n, 16) have about 8n. n = 2^15, and 2^20
// when TOKENDIST_SCALE ≥ 1e6 and not under -short. Inputs are built once, lazily.

// heavyNet is one network of the heavy-tailed benchmarks with its loads.
type heavyNet struct {
	name  string
	g     *Graph
	loads Loads
}

var heavyNets sync.Map // "family/n" → func() (heavyNet, error), memoised

// heavyNetwork returns the network family (BA2, RR4, BA8, ER16, RR16) on n nodes, with
// loads uniform in 0..1000, built once.
func heavyNetwork(family string, n int) (heavyNet, error) {
	f, _ := heavyNets.LoadOrStore(fmt.Sprintf("%s/%d", family, n), sync.OnceValues(func() (heavyNet, error) {
		var g *Graph
		var err error
		switch family {
		case "BA2":
			g, err = barabasiAlbert(n, 2, 1)
		case "RR4":
			g, err = RandomRegular(n, 4, 1)
		case "BA8":
			g, err = barabasiAlbert(n, 8, 1)
		case "ER16":
			g, err = erdosRenyi(n, 16/float64(n-1), 1)
		case "RR16":
			g, err = RandomRegular(n, 16, 1)
		default:
			err = fmt.Errorf("unknown family %q", family)
		}
		if err != nil {
			return heavyNet{}, err
		}
		l, err := RandomRange(g.Order(), 0, 1000, 2)
		return heavyNet{name: family, g: g, loads: l}, err
	}))
	return f.(func() (heavyNet, error))()
}

// heavyBalancers makes the five diffusion balancers.
var heavyBalancers = []struct {
	name string
	mk   func(Network) (Balancer, error)
}{
	{"RandomizedDiffusion", func(n Network) (Balancer, error) { return NewRandomizedDiffusion(n) }},
	{"RSW", func(n Network) (Balancer, error) { return NewRSWDiffusion(n) }},
	{"FGSDeterministic", func(n Network) (Balancer, error) { return NewFGSDeterministic(n) }},
	{"FGSRandomized", func(n Network) (Balancer, error) { return NewFGSRandomized(n) }},
	{"RandomMatching", func(n Network) (Balancer, error) { return NewRandomMatching(n) }},
}

func BenchmarkHeavyTailedRound(b *testing.B) {
	sizes := []int{1 << 15}
	if !testing.Short() && scaleTop() >= 1e6 {
		sizes = append(sizes, 1<<20)
	}
	for _, n := range sizes {
		for _, fam := range []string{"BA2", "RR4", "BA8", "ER16", "RR16"} {
			for _, bc := range heavyBalancers {
				b.Run(fmt.Sprintf("n=%d/%s/%s", n, fam, bc.name), func(b *testing.B) {
					net, err := heavyNetwork(fam, n)
					if err != nil {
						b.Fatal(err)
					}
					bal, err := bc.mk(net.g)
					if err != nil {
						b.Fatal(err)
					}
					benchHeavy(b, bal, net)
				})
			}
		}
	}
}

// benchHeavy times rounds of bal on net with one worker, after a short warm-up, and
// reports ns per link end, wall clock and the thread's CPU time (threadCPU).
func benchHeavy(b *testing.B, bal Balancer, net heavyNet) {
	par.Acquire()
	defer par.Release()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	s := &State{Net: net.g, Loads: net.loads.Clone(), Workers: 1, Seed: 1}
	if err := bal.(Initializer).Init(s); err != nil {
		b.Fatal(err)
	}
	step := func() {
		if err := bal.Step(s); err != nil {
			b.Fatal(err)
		}
		s.Steps++
	}
	for start := time.Now(); time.Since(start) < 200*time.Millisecond; {
		step()
	}
	b.ReportAllocs()
	b.ResetTimer()
	c0 := threadCPU()
	for i := 0; i < b.N; i++ {
		step()
	}
	c1 := threadCPU()
	b.StopTimer()
	ends := float64(2 * net.g.Size())
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/ends, "ns/end")
	b.ReportMetric(float64(c1-c0)/float64(b.N)/ends, "cpu-ns/end")
}

// BenchmarkHeavyTailedBudget times Run's default step budget of a diffusion balancer on
// the heavy-tailed networks against random regular ones with the same number of links:
// the certified λ_max (Lanczos, IntervalTol 0.01, as StepBudget computes it) and τ(G, K)
// from it, from a fresh lazyNet each iteration. It reports ns per link end (wall clock:
// Lanczos may use several workers), the certified upper bound on λ_max and τ.
func BenchmarkHeavyTailedBudget(b *testing.B) {
	sizes := []int{1 << 15}
	if !testing.Short() && scaleTop() >= 1e6 {
		sizes = append(sizes, 1<<20)
	}
	for _, n := range sizes {
		for _, fam := range []string{"BA2", "RR4", "BA8", "RR16"} {
			b.Run(fmt.Sprintf("n=%d/%s", n, fam), func(b *testing.B) {
				net, err := heavyNetwork(fam, n)
				if err != nil {
					b.Fatal(err)
				}
				s := &State{Net: net.g, Loads: net.loads}
				var tau int64
				var lambda float64
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					ln, err := newLazyNet(net.g)
					if err != nil {
						b.Fatal(err)
					}
					if tau, err = ln.stepBudget(s); err != nil {
						b.Fatal(err)
					}
					lambda = ln.budgetLambda
				}
				b.StopTimer()
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(2*net.g.Size()), "ns/end")
				b.ReportMetric(lambda, "λmax")
				b.ReportMetric(float64(tau), "τ")
			})
		}
	}
}
