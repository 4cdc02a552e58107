package tokendist

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tokendist/tokendist/internal/par"
	"gonum.org/v1/gonum/mat"
)

// Benchmark inputs are built once, lazily, so that go test without -bench skips them.

// benchRR is RandomRegular(10^6, 4) with loads uniform in 0..1000.
var benchRR = sync.OnceValues(func() (*Graph, Loads) {
	g, err := RandomRegular(1_000_000, 4, 1)
	if err != nil {
		panic(err)
	}
	l, err := RandomRange(g.Order(), 0, 1000, 2)
	if err != nil {
		panic(err)
	}
	return g, l
})

// benchTorus is the 1000×1000 torus.
var benchTorus = sync.OnceValue(func() *Graph {
	g, err := Torus(1000, 1000)
	if err != nil {
		panic(err)
	}
	return g
})

// naiveRandomizedRound is the straightforward baseline: one sequential pass that
// scatters into a second buffer, drawing each excess destination with Rand.IntN from a
// partial Fisher–Yates shuffle of the slots.
func naiveRandomizedRound(g *Graph, loads, next Loads, r *rand.Rand, slots []int) {
	d := g.MaxDegree()
	D := int64(d + 1)
	clear(next)
	for i := range loads {
		q, rem := loads[i]/D, loads[i]%D
		nb := g.Neighbors(i)
		next[i] += loads[i] - int64(len(nb))*q - rem
		for _, j := range nb {
			next[j] += q
		}
		for s := range slots {
			slots[s] = s
		}
		for k := 0; k < int(rem); k++ {
			t := k + r.IntN(d+1-k)
			slots[k], slots[t] = slots[t], slots[k]
			if slots[k] < len(nb) {
				next[nb[slots[k]]]++
			} else {
				next[i]++
			}
		}
	}
}

// threadCPU returns the CPU time the calling OS thread has used. On this shared
// machine wall-clock figures swing with the other processes; the single-worker
// benchmarks lock their goroutine to its thread and also report this, which does not
// count time the thread spent descheduled.
func threadCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// timed runs f b.N times and, if single is set, reports the thread's CPU time per op.
// It first warms up for a second: on this machine the kernel promotes hot memory to
// huge pages within seconds of first use, and random gathers over megabytes of data
// run up to twice as fast afterwards, so timings without a warm-up depend on the order
// in which benchmarks run.
func timed(b *testing.B, single bool, f func()) {
	if single {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	for start := time.Now(); time.Since(start) < time.Second; {
		f()
	}
	b.ReportAllocs()
	b.ResetTimer()
	c0 := threadCPU()
	for i := 0; i < b.N; i++ {
		f()
	}
	if single {
		b.ReportMetric(float64(threadCPU()-c0)/float64(b.N), "cpu-ns/op")
	}
}

// benchBalancer times one round of b on RandomRegular(10^6, 4) with 1 and 2 workers.
func benchBalancer(b *testing.B, bal Balancer) {
	par.Acquire() // hold the worker pool as Run does: Step outside a holder is sequential
	defer par.Release()
	g, l0 := benchRR()
	for _, w := range []int{1, 2} {
		b.Run("workers="+strconv.Itoa(w), func(b *testing.B) {
			s := &State{Net: g, Loads: l0.Clone(), Workers: w, Seed: 1}
			if err := bal.(Initializer).Init(s); err != nil {
				b.Fatal(err)
			}
			timed(b, w == 1, func() {
				if err := bal.Step(s); err != nil {
					b.Fatal(err)
				}
				s.Steps++
			})
		})
	}
}

func BenchmarkRandomizedDiffusionRound(b *testing.B) {
	g, l0 := benchRR()
	rd, err := NewRandomizedDiffusion(g)
	if err != nil {
		b.Fatal(err)
	}
	benchBalancer(b, rd)
	b.Run("baseline", func(b *testing.B) {
		loads, next := l0.Clone(), make(Loads, len(l0))
		r := rand.New(rand.NewPCG(1, 2))
		slots := make([]int, g.MaxDegree()+1)
		timed(b, true, func() {
			naiveRandomizedRound(g, loads, next, r, slots)
			loads, next = next, loads
		})
	})
}

// naiveEdgeRound is the straightforward RSW round: per edge, from a copy of the loads.
func naiveEdgeRound(g *Graph, loads, old Loads) {
	copy(old, loads)
	D := int64(g.MaxDegree() + 1)
	for u := range old {
		for _, v := range g.Neighbors(u) {
			if int(v) > u {
				f := (old[u] - old[v]) / D
				loads[u] -= f
				loads[v] += f
			}
		}
	}
}

func BenchmarkEdgeDiffusionRound(b *testing.B) {
	g, l0 := benchRR()
	for _, mk := range []func(Network) (Balancer, error){
		func(n Network) (Balancer, error) { return NewRSWDiffusion(n) },
		func(n Network) (Balancer, error) { return NewFGSDeterministic(n) },
		func(n Network) (Balancer, error) { return NewFGSRandomized(n) },
		func(n Network) (Balancer, error) { return NewRandomMatching(n) },
	} {
		bal, err := mk(g)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(BalancerName(bal), func(b *testing.B) { benchBalancer(b, bal) })
	}
	b.Run("RSW baseline", func(b *testing.B) {
		loads, old := l0.Clone(), make(Loads, len(l0))
		timed(b, true, func() { naiveEdgeRound(g, loads, old) })
	})
}

func BenchmarkContinuousStep(b *testing.B) {
	par.Acquire()
	defer par.Release()
	g, l0 := benchRR()
	x := make([]float64, len(l0))
	for i, v := range l0 {
		x[i] = float64(v)
	}
	c, err := NewContinuousDiffusion(g, x)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("parallel", func(b *testing.B) { timed(b, false, c.Step) })
	b.Run("baseline", func(b *testing.B) {
		y, z := append([]float64(nil), x...), make([]float64, len(x))
		D := float64(g.MaxDegree() + 1)
		timed(b, true, func() {
			for v := range y {
				s := y[v]
				for _, j := range g.Neighbors(v) {
					s += (y[j] - y[v]) / D
				}
				z[v] = s
			}
			y, z = z, y
		})
	})
}

// powerIteration is the straightforward baseline for λ_2: the power method on
// (P + I)/2 (whose top eigenvalue on 1^⊥ is (1 + λ_2)/2) restricted to 1^⊥, run for
// iters matrix-vector products; it returns the Rayleigh-quotient estimate of λ_2.
func powerIteration(g *Graph, iters int) float64 {
	n, d := g.Order(), g.MaxDegree()
	D := float64(d + 1)
	x, y := make([]float64, n), make([]float64, n)
	r := rand.New(rand.NewPCG(1, 1))
	for i := range x {
		x[i] = r.Float64() - 0.5
	}
	est := 0.0
	for it := 0; it < iters; it++ {
		mean, norm := 0.0, 0.0
		for _, v := range x {
			mean += v
		}
		mean /= float64(n)
		for i := range x {
			x[i] -= mean
			norm += x[i] * x[i]
		}
		norm = math.Sqrt(norm)
		dot := 0.0
		for i := range x {
			x[i] /= norm
			s := float64(d+1-g.Degree(i)) * x[i]
			for _, j := range g.Neighbors(i) {
				s += x[j]
			}
			y[i] = s / D
		}
		for i := range x {
			dot += x[i] * y[i]
			y[i] = (y[i] + x[i]) / 2
		}
		est = dot
		x, y = y, x
	}
	return est
}

// BenchmarkLambdaMaxTorus1000 times Lanczos on the 1000×1000 torus (targets ≤ 10 s, and
// ≤ 1 s with 1 − λ_max to 1e-6 relative: the GapTol run) and,
// as the baseline, the power method given the same number of matrix-vector products;
// both report log10 of their error against the closed form.
func BenchmarkLambdaMaxTorus1000(b *testing.B) {
	g := benchTorus()
	cf, err := TorusSpectrum(1000, 1000)
	if err != nil {
		b.Fatal(err)
	}
	iters := 0
	b.Run("lanczos", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			sp, err := LambdaMax(g, nil)
			if err != nil {
				b.Fatal(err)
			}
			iters = sp.Iterations
			b.ReportMetric(math.Log10(math.Abs(sp.Lambda2-cf.Lambda2)), "log10-abs-error")
			b.ReportMetric(float64(sp.Iterations), "iterations")
		}
	})
	// GapTol = 1e-6: 1 − λ_max to 1e-6 relative, certified by the reported bound.
	b.Run("lanczos-gaptol1e-6", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			sp, err := LambdaMax(g, &SpectralOptions{GapTol: 1e-6})
			if err != nil {
				b.Fatal(err)
			}
			if rel := math.Abs(sp.Gap()-cf.Gap()) / cf.Gap(); rel > 1e-6 || math.Abs(sp.Lambda2-cf.Lambda2) > sp.Bound2 {
				b.Fatalf("1 − λ_max = %v, closed form %v (relative error %.2g), bound %.2g", sp.Gap(), cf.Gap(), rel, sp.Bound2)
			}
			b.ReportMetric(math.Abs(sp.Gap()-cf.Gap())/cf.Gap(), "gap-rel-error")
			b.ReportMetric(sp.Bound2/cf.Gap(), "gap-rel-bound")
			b.ReportMetric(float64(sp.Iterations), "iterations")
		}
	})
	b.Run("power-baseline-same-matvecs", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			est := powerIteration(g, iters)
			b.ReportMetric(math.Log10(math.Abs(est-cf.Lambda2)), "log10-abs-error")
		}
	})
}

// BenchmarkLambdaMaxDenseVsLanczos compares the two methods where both run.
func BenchmarkLambdaMaxDenseVsLanczos(b *testing.B) {
	g, err := Torus(32, 32)
	if err != nil {
		b.Fatal(err)
	}
	for _, m := range []SpectralMethod{SpectralLanczos, SpectralDense} {
		b.Run(m.String(), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := LambdaMax(g, &SpectralOptions{Method: m}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLocalDivergence times Ψ_1, Ψ_2, Υ_2 of Hypercube(8) over all nodes against
// the brute-force evaluation with dense matrix powers for the same number of rounds.
func BenchmarkLocalDivergence(b *testing.B) {
	g, err := Hypercube(8)
	if err != nil {
		b.Fatal(err)
	}
	rounds := 0
	b.Run("LocalDivergence", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			dv, err := LocalDivergence(g, 1e-9, nil)
			if err != nil {
				b.Fatal(err)
			}
			rounds = dv.Rounds
		}
	})
	b.Run("dense-baseline", func(b *testing.B) {
		p, err := TransitionMatrix(g)
		if err != nil {
			b.Fatal(err)
		}
		n := g.Order()
		for i := 0; i < b.N; i++ {
			pt := mat.NewDense(n, n, nil)
			for k := 0; k < n; k++ {
				pt.Set(k, k, 1)
			}
			sum := 0.0
			for t := 0; t < rounds; t++ {
				for k := 0; k < n; k++ {
					for u := 0; u < n; u++ {
						for _, v := range g.Neighbors(u) {
							sum += math.Abs(pt.At(u, k) - pt.At(int(v), k))
						}
					}
				}
				pt.Mul(pt, p)
			}
			_ = sum
		}
	})
}

// BenchmarkLanczosIterations times 200 Lanczos iterations (MaxIter = 200, so LambdaMax
// stops with ErrNotConverged) on the 1000×1000 torus and on RandomRegular(10^6, 4),
// reporting the process CPU time per iteration (cpu-ns/iter; with -cpu 1 this is the
// single-core cost of one iteration).
func BenchmarkLanczosIterations(b *testing.B) {
	const iters = 200
	for _, tc := range []struct {
		name string
		g    func() *Graph
	}{{"torus1000", benchTorus}, {"rr1e6", func() *Graph { g, _ := benchRR(); return g }}} {
		b.Run(tc.name, func(b *testing.B) {
			g := tc.g()
			b.ResetTimer()
			c0 := processCPU()
			for i := 0; i < b.N; i++ {
				sp, err := LambdaMax(g, &SpectralOptions{Method: SpectralLanczos, MaxIter: iters})
				if err != nil && sp.Iterations != iters {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(processCPU()-c0)/float64(b.N*iters), "cpu-ns/iter")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*iters), "ns/iter")
		})
	}
}

// BenchmarkLanczosFloor is the memory floor of one Lanczos iteration on 2^20 nodes: two
// passes that each read two 8 MB vectors and write one of them back (48 B per node, as
// an iteration on the torus moves), with four independent sums, on 1 and 2 goroutines.
func BenchmarkLanczosFloor(b *testing.B) {
	const n = 1 << 20
	x, y := make([]float64, n), make([]float64, n)
	for i := range y {
		y[i] = float64(i%7) - 3
	}
	pass := func(lo, hi int) float64 {
		var s0, s1, s2, s3 float64
		for i := lo; i+3 < hi; i += 4 {
			x0, x1, x2, x3 := x[i]-0.5*y[i], x[i+1]-0.5*y[i+1], x[i+2]-0.5*y[i+2], x[i+3]-0.5*y[i+3]
			x[i], x[i+1], x[i+2], x[i+3] = x0, x1, x2, x3
			s0, s1, s2, s3 = s0+x0*x0, s1+x1*x1, s2+x2*x2, s3+x3*x3
		}
		return s0 + s1 + s2 + s3
	}
	for _, w := range []int{1, 2} {
		b.Run("goroutines="+strconv.Itoa(w), func(b *testing.B) {
			var wg sync.WaitGroup
			for i := 0; i < b.N; i++ {
				for p := 0; p < 2; p++ {
					for k := 0; k < w; k++ {
						wg.Add(1)
						go func(k int) { defer wg.Done(); pass(k*n/w, (k+1)*n/w) }(k)
					}
					wg.Wait()
				}
			}
		})
	}
}

// BenchmarkLanczosBinned times Lanczos iterations (pass A, pass B and the sums) on
// RandomRegular(n, 4) with the gather kernel and with the propagation-blocked pass A
// (binnedMatVec), with all workers: n = 10^6 (benchRR), and 10^7 when TOKENDIST_SCALE ≥
// 1e7. It reports ns per iteration; the two lines of one n come from one process.
func BenchmarkLanczosBinned(b *testing.B) {
	sizes := []int{1_000_000}
	if scaleTop() >= 1e7 {
		sizes = append(sizes, 10_000_000)
	}
	for _, n := range sizes {
		var g *Graph
		if n == 1_000_000 {
			g, _ = benchRR()
		} else {
			var err error
			if g, err = RandomRegular(n, 4, 1); err != nil {
				b.Fatal(err)
			}
		}
		ln, err := newLazyNet(g)
		if err != nil {
			b.Fatal(err)
		}
		for _, mode := range []string{"gather", "binned"} {
			b.Run(fmt.Sprintf("n=%d/%s", n, mode), func(b *testing.B) {
				par.Acquire()
				defer par.Release()
				l := newLanczos(ln, 1)
				l.bin = nil
				if mode == "binned" {
					l.bin = newBinned(ln, binShiftFor(ln.g.Order()), l.workers)
				}
				for k := 0; k < 5; k++ { // warm-up: page faults, huge pages
					l.step()
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					l.step()
				}
			})
		}
	}
}

// benchRR5 is RandomRegular(10^5, 4), built once.
var benchRR5 = sync.OnceValue(func() *Graph {
	g, err := RandomRegular(100_000, 4, 1)
	if err != nil {
		panic(err)
	}
	return g
})

// BenchmarkLambdaMaxCertified compares, in one process, LambdaMax's default run (Tol
// 1e-10, no certified stop) with the certified interval at 1 % of the gap (IntervalTol
// 0.01, Delta 1e-6, the step budget's setting) on Torus(1000, 1000) and on
// RandomRegular(n, 4) for n = 10^5 and 10^6 (10^7 is TestLambdaMaxRandomRegularScale).
// It reports the iterations and the certified width (Upper − Lower)/(1 − Upper).
func BenchmarkLambdaMaxCertified(b *testing.B) {
	nets := []struct {
		name string
		g    func() *Graph
	}{
		{"torus1000", benchTorus},
		{"rr1e5", benchRR5},
		{"rr1e6", func() *Graph { g, _ := benchRR(); return g }},
	}
	for _, nt := range nets {
		for _, mode := range []struct {
			name string
			o    SpectralOptions
		}{{"default", SpectralOptions{Method: SpectralLanczos}}, {"interval1e-2", SpectralOptions{Method: SpectralLanczos, IntervalTol: 0.01}}} {
			b.Run(nt.name+"/"+mode.name, func(b *testing.B) {
				g := nt.g()
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					sp, err := LambdaMax(g, &mode.o)
					if err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(float64(sp.Iterations), "iterations")
					b.ReportMetric((sp.Upper-sp.Lower)/(1-sp.Upper), "width/gap")
				}
			})
		}
	}
}
