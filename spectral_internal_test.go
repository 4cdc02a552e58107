package tokendist

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tokendist/tokendist/internal/par"
)

// TestLanczosKernelsAgree runs 40 Lanczos steps on 4-regular networks with each pass-A
// kernel (stencil runs, 4-regular adjacency, general adjacency) and with 1 and 2
// workers, and requires every α, β and both vectors to agree bit for bit.
func TestLanczosKernelsAgree(t *testing.T) {
	t.Parallel()
	par.Acquire()
	defer par.Release()
	for _, sides := range [][]int{{120, 120}, {333, 77}, {1001, 13}, {4099, 5}, {3000, 3}} {
		g, err := Torus(sides...)
		require.NoError(t, err)
		ln, err := newLazyNet(g)
		require.NoError(t, err)
		type variant struct {
			name    string
			set     func(l *lanczos)
			workers int
		}
		vs := []variant{
			{"runs", func(l *lanczos) {}, 1},
			{"runs/2 workers", func(l *lanczos) {}, 2},
			{"adjacency4", func(l *lanczos) { l.runs = nil }, 2},
			{"general", func(l *lanczos) { l.runs, l.regular = nil, false }, 1},
		}
		var ref *lanczos
		var refAB []float64
		for _, v := range vs {
			l := newLanczos(ln, 7)
			if v.name == "runs" {
				require.NotNil(t, l.runs, "%v: no stencil runs", sides)
			}
			v.set(l)
			l.workers = v.workers
			var ab []float64
			for k := 0; k < 40; k++ {
				a, b := l.step()
				ab = append(ab, a, b)
			}
			if ref == nil {
				ref, refAB = l, ab
				continue
			}
			for i := range ab {
				require.Equal(t, math.Float64bits(refAB[i]), math.Float64bits(ab[i]), "%v %s: coefficient %d", sides, v.name, i)
			}
			for i := range l.a {
				require.Equal(t, math.Float64bits(ref.a[i]), math.Float64bits(l.a[i]), "%v %s: a[%d]", sides, v.name, i)
				require.Equal(t, math.Float64bits(ref.b[i]), math.Float64bits(l.b[i]), "%v %s: b[%d]", sides, v.name, i)
			}
		}
	}
}

// TestLambdaMaxRandomRegularScale (TOKENDIST_SCALE ≥ 1e6; issue 26's row is 1e7)
// certifies λ_max of RandomRegular(n, 4), n = TOKENDIST_SCALE, to 1 % of the gap
// (IntervalTol 0.01, the step budget's setting, default Delta 1e-6) and checks the memory
// target: the graph plus every byte LambdaMax allocates stays within 100 bytes per node. Its wall and CPU times are logged, not asserted (the
// machine is shared); so are the uncertified default run's figures when
// TOKENDIST_SCALE_DEFAULT is set (17 minutes at 10^7 before issue 26).
func TestLambdaMaxRandomRegularScale(t *testing.T) {
	if scaleTop() < 1e6 {
		t.Skip("set TOKENDIST_SCALE=1e7 (about 0.9 GB)")
	}
	n := int(scaleTop())
	h0 := heapInUse()
	b0 := time.Now()
	g, err := RandomRegular(n, 4, 1)
	build := time.Since(b0)
	require.NoError(t, err)
	graphBytes := heapInUse() - h0
	opts := []SpectralOptions{{IntervalTol: 0.01}, {IntervalTol: 0.01, Delta: 1e-3}}
	if os.Getenv("TOKENDIST_SCALE_DEFAULT") != "" {
		opts = append(opts, SpectralOptions{})
	}
	for _, o := range opts {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		c0, t0 := processCPU(), time.Now()
		sp, err := LambdaMax(g, &o)
		wall, cpu := time.Since(t0), processCPU()-c0
		runtime.ReadMemStats(&m1)
		require.NoError(t, err)
		alloc := m1.TotalAlloc - m0.TotalAlloc
		perNode := float64(graphBytes+alloc) / float64(n)
		t.Logf("RandomRegular(%d, 4) built in %v; LambdaMax %+v: [Lower, Upper] = [%.9f, %.9f] (width %.4f of the gap 1 − Upper, Delta %g), λ_2 = %.12f, λ_n = %.12f, %d iterations; wall %v, process CPU %v (build excluded); graph %.1f B/node, LambdaMax allocates %.1f B/node, total %.1f B/node",
			n, build.Round(time.Millisecond), o, sp.Lower, sp.Upper, (sp.Upper-sp.Lower)/(1-sp.Upper), sp.Delta, sp.Lambda2, sp.LambdaN, sp.Iterations, wall.Round(time.Millisecond), time.Duration(cpu).Round(time.Millisecond),
			float64(graphBytes)/float64(n), float64(alloc)/float64(n), perNode)
		require.LessOrEqual(t, float64(alloc)/float64(n), 100.0, "LambdaMax allocates %.1f bytes per node, want ≤ 100", float64(alloc)/float64(n))
		require.LessOrEqual(t, perNode, 100.0, "graph plus LambdaMax use %.1f bytes per node, want ≤ 100", perNode)
	}
	// The per-iteration cost of the gather kernel (the only one before issue 26) and of
	// the propagation-blocked one, in this process, after 5 warm-up iterations each.
	ln, err := newLazyNet(g)
	require.NoError(t, err)
	par.Acquire()
	defer par.Release()
	for _, binnedOn := range []bool{false, true} {
		l := newLanczos(ln, 1)
		l.bin = nil
		if binnedOn {
			l.bin = newBinned(ln, binShiftFor(ln.g.Order()), l.workers)
		}
		for k := 0; k < 5; k++ {
			l.step()
		}
		const iters = 20
		t0 := time.Now()
		for k := 0; k < iters; k++ {
			l.step()
		}
		t.Logf("binned %v: %v per iteration (%d workers)", binnedOn, (time.Since(t0) / iters).Round(time.Millisecond), l.workers)
	}
}

// lanczosRun runs Lanczos on g with options o and returns its spectrum and the Ritz
// values and bounds of every convergence check (lanczosTrace).
func lanczosRun(t *testing.T, g *Graph, o SpectralOptions) (Spectrum, []lanczosCheck) {
	t.Helper()
	var checks []lanczosCheck
	lanczosTrace = func(k int, top, bot ritz, _ float64) { checks = append(checks, lanczosCheck{k: k, top: top, bot: bot}) }
	certTrace = func(k int, c certInterval) {
		require.Equal(t, k, checks[len(checks)-1].k)
		checks[len(checks)-1].cert = c
	}
	defer func() { lanczosTrace, certTrace = nil, nil }()
	o.Method = SpectralLanczos
	sp, err := LambdaMax(g, &o)
	require.NoError(t, err)
	require.NotEmpty(t, checks)
	require.Equal(t, sp.Iterations, checks[len(checks)-1].k)
	return sp, checks
}

type lanczosCheck struct {
	k        int
	top, bot ritz
	cert     certInterval // at the final check, and at every check under IntervalTol
}

// doubleCover returns the bipartite double cover of g: nodes (v, 0) = v and (v, 1) =
// n + v, an edge (u, 0)–(v, 1) and (v, 0)–(u, 1) for each edge (u, v). For a d-regular g
// it is d-regular and bipartite, so λ_n of its transition matrix is (1 − d)/(d + 1).
func doubleCover(t *testing.T, g *Graph) *Graph {
	t.Helper()
	n := g.Order()
	var edges [][2]int
	for u := 0; u < n; u++ {
		for _, v := range g.Neighbors(u) {
			if int(v) > u {
				edges = append(edges, [2]int{u, n + int(v)}, [2]int{int(v), n + u})
			}
		}
	}
	c, err := NewGraph(2*n, edges)
	require.NoError(t, err)
	return c
}

// TestLanczosShortcuts checks LambdaMax's Lanczos against closed forms where its
// shortcuts decide when it stops (SpectralOptions, Spectrum.Bound2):
//   - Torus(40, 40) at the default Tol (seed 2): λ_n = −3/5 is Gershgorin's bound, so |λ_n| can
//     never reach λ_2 ≈ 0.995 and the run stops at the first check at which λ_2 meets Tol,
//     with λ_n still unconverged and reporting the bound θ_n − (1 − d)/(d + 1) that holds
//     regardless;
//   - the double cover of RandomRegular(300, 16): λ_n = −15/17 in closed form and λ_2 ≈
//     0.5 is clearly smaller in absolute value, so the run stops at the first check at
//     which λ_n meets Tol, with λ_2 unconverged and reporting the bound 1 − θ_2;
//   - Torus(41, 41) at GapTol 10^−2 to 0.5: the run stops at the first check at which λ_2's
//     bound is at most GapTol·(1 − θ_2 − bound), and the gap 1 − λ_max is then accurate
//     to GapTol relative against the closed form;
//   - K_{20,20} (λ_2 = 1/21, λ_n = −19/21): the Krylov space is invariant after two
//     iterations (breakdown) and the values are exact.
//
// In every case the values are within their bounds of the closed form.
func TestLanczosShortcuts(t *testing.T) {
	torus40, _ := Torus(40, 40)
	cf40, _ := TorusSpectrum(40, 40)
	sp, checks := lanczosRun(t, torus40, SpectralOptions{Seed: 2}) // a start from which λ_n has not converged at the stop
	const tol = 1e-10
	for _, c := range checks[:len(checks)-1] {
		require.Greater(t, c.top.bound, tol, "Torus(40, 40): λ_2 met Tol at iteration %d, but the run went on", c.k)
	}
	require.LessOrEqual(t, sp.Bound2, tol)
	require.Greater(t, sp.BoundN, tol, "Torus(40, 40): λ_n converged: the shortcut is not exercised")
	require.GreaterOrEqual(t, sp.BoundN, sp.LambdaN-(-3.0/5))
	require.LessOrEqual(t, math.Abs(sp.Lambda2-cf40.Lambda2), sp.Bound2+cf40.Bound2)
	require.LessOrEqual(t, math.Abs(sp.LambdaN-cf40.LambdaN), sp.BoundN+cf40.BoundN)
	require.Equal(t, sp.Lambda2, sp.LambdaMax)

	rr, err := RandomRegular(300, 16, 2)
	require.NoError(t, err)
	cover := doubleCover(t, rr)
	sp, checks = lanczosRun(t, cover, SpectralOptions{Tol: 1e-8})
	for _, c := range checks[:len(checks)-1] {
		require.Greater(t, c.bot.bound, 1e-8, "double cover: λ_n met Tol at iteration %d, but the run went on", c.k)
	}
	require.Greater(t, len(checks), 1)
	require.LessOrEqual(t, sp.BoundN, 1e-8)
	require.LessOrEqual(t, math.Abs(sp.LambdaN-(-15.0/17)), sp.BoundN)
	require.Equal(t, -sp.LambdaN, sp.LambdaMax)
	require.Greater(t, sp.Bound2, 1e-8, "double cover: λ_2 converged: the shortcut is not exercised")
	require.Equal(t, 1-sp.Lambda2, sp.Bound2, "λ_2 stopped unconverged: its bound is 1 − θ_2 (λ_2 ∈ [θ_2, 1))")
	require.Less(t, sp.Lambda2, 0.7)

	torus41, _ := Torus(41, 41)
	cf41, _ := TorusSpectrum(41, 41)
	for _, gapTol := range []float64{1e-2, 0.1, 0.3, 0.5} {
		sp, checks = lanczosRun(t, torus41, SpectralOptions{GapTol: gapTol})
		for _, c := range checks[:len(checks)-1] {
			require.Greater(t, c.top.bound, gapTol*(1-math.Abs(c.top.theta)-c.top.bound), "Torus(41, 41), GapTol %v: met at iteration %d, but the run went on", gapTol, c.k)
		}
		require.LessOrEqual(t, sp.Bound2, gapTol*(1-sp.Lambda2-sp.Bound2), "GapTol %v", gapTol)
		require.Greater(t, sp.Bound2, 1e-10, "GapTol %v should stop well before the default Tol", gapTol)
		gap, trueGap := 1-sp.LambdaMax, 1-cf41.LambdaMax
		require.LessOrEqual(t, math.Abs(gap-trueGap), gapTol*trueGap, "GapTol %v", gapTol)
		require.LessOrEqual(t, math.Abs(sp.Lambda2-cf41.Lambda2), sp.Bound2+cf41.Bound2, "GapTol %v", gapTol)
		require.LessOrEqual(t, math.Abs(sp.LambdaN-cf41.LambdaN), sp.BoundN+cf41.BoundN, "GapTol %v", gapTol)
	}

	var kab [][2]int
	for i := 0; i < 20; i++ {
		for j := 20; j < 40; j++ {
			kab = append(kab, [2]int{i, j})
		}
	}
	k2020, err := NewGraph(40, kab)
	require.NoError(t, err)
	sp, _ = lanczosRun(t, k2020, SpectralOptions{})
	require.LessOrEqual(t, sp.Iterations, 3)
	// λ_n sets λ_max and is exact; λ_2 does not, and reports its certified bound, which
	// the polynomial of the (numerically) broken-down recurrence puts within 1e-9.
	require.LessOrEqual(t, sp.Bound2, 1e-9)
	require.LessOrEqual(t, sp.BoundN, 1e-12+ritzRounding)
	require.LessOrEqual(t, sp.Upper-sp.Lower, 1e-9)
	require.InDelta(t, 1.0/21, sp.Lambda2, sp.Bound2)
	require.InDelta(t, -19.0/21, sp.LambdaN, sp.BoundN)
}

// TestLanczosStoppingRule checks, at every convergence check of many runs, the stopping
// rule that Spectrum's doc states: Lanczos stops at the first check at which each end has
// met the tolerance or is clearly smaller in absolute value than the other (its interval
// θ ± bound entirely below the other's), λ_n also when Gershgorin's bound (1−d)/(d+1)
// shows |λ_n| < θ_2; an end that stopped unconverged reports the bound that holds
// regardless, 1 − θ_2 or θ_n − (1−d)/(d+1) plus the rounding allowance, and the end
// that does not set λ_max at least its certified bound.
func TestLanczosStoppingRule(t *testing.T) {
	var gs []*Graph
	add := func(g *Graph, err error) {
		require.NoError(t, err)
		gs = append(gs, g)
	}
	for seed := range uint64(12) {
		add(RandomRegular(200+2*int(seed), 3+int(seed%4), seed))
		add(erdosRenyi(150, 0.08, seed))
		add(wattsStrogatz(160, 4+2*int(seed%3), 0.3, seed))
		add(barabasiAlbert(150, 1+int(seed%3), seed))
		// Double covers of dense random regular graphs: λ_n = (1−d)/(d+1) and λ_2
		// clearly smaller, so the λ_2 end may stop unconverged.
		rr, err := RandomRegular(100+2*int(seed), 12+int(seed%5), seed)
		require.NoError(t, err)
		gs = append(gs, doubleCover(t, rr))
	}
	// Double covers of random 7-regular graphs: |λ_n| = 3/4 and λ_2 ≈ (1 + 2√6)/8 ≈ 0.74,
	// so the two ends are within their bounds of each other for a while.
	for seed := range uint64(40) {
		rr, err := RandomRegular(40+2*int(seed), 7, seed)
		require.NoError(t, err)
		gs = append(gs, doubleCover(t, rr))
	}
	for d := 3; d <= 8; d++ {
		add(Hypercube(d))
	}
	stopped := [2]int{} // runs whose λ_2 or λ_n end stopped unconverged
	for _, g := range gs {
		gLo := float64(1-g.MaxDegree()) / float64(g.MaxDegree()+1)
		for _, tol := range []float64{1e-2, 1e-3, 1e-5, 1e-8} {
			sp, checks := lanczosRun(t, g, SpectralOptions{Tol: tol})
			for i, c := range checks {
				topAcc, botAcc := c.top.bound <= tol, c.bot.bound <= tol
				topDone := topAcc || c.top.theta+c.top.bound < -c.bot.theta-c.bot.bound
				botDone := botAcc || -c.bot.theta+c.bot.bound < c.top.theta-c.top.bound || -gLo < c.top.theta
				last := i == len(checks)-1
				require.Equal(t, last, topDone && botDone, "%v tol %g, check %d at k = %d: %+v %+v", g, tol, i, c.k, c.top, c.bot)
				if !last {
					continue
				}
				want2, wantN := c.top.bound, c.bot.bound
				if !topAcc {
					want2 = math.Max(want2, 1-c.top.theta)
					stopped[0]++
				}
				if !botAcc {
					wantN = math.Max(wantN, c.bot.theta-gLo+ritzRounding)
					stopped[1]++
				}
				// The end that does not set λ_max reports at least its certified bound.
				if c.top.theta >= -c.bot.theta {
					wantN = math.Max(wantN, c.bot.theta-c.cert.loN)
				} else {
					want2 = math.Max(want2, c.cert.up2-c.top.theta)
				}
				require.Equal(t, want2, sp.Bound2, "%v tol %g", g, tol)
				require.Equal(t, wantN, sp.BoundN, "%v tol %g", g, tol)
			}
		}
	}
	t.Logf("%d runs; λ_2 stopped unconverged in %d, λ_n in %d", 4*len(gs), stopped[0], stopped[1])
	// Both shortcuts were exercised.
	require.Positive(t, stopped[0])
	require.Positive(t, stopped[1])
}

// TestLanczosOverlappingEnds checks the stopping rule at checks where the two ends'
// intervals overlap, [θ_2 − b_2, θ_2 + b_2] and [−θ_n − b_n, −θ_n + b_n], while an end
// has not met its tolerance: neither end is then clearly smaller in absolute value, so
// the unconverged end may not stop (λ_n still may when Gershgorin's bound shows |λ_n|
// < θ_2), and Lanczos goes on. The networks are double covers of random 7-regular
// graphs (|λ_n| = 3/4, λ_2 ≈ 0.74), with starts and tolerances at which such a check
// comes first: λ_n converged while λ_2's interval holds 3/4 (Tol 1e-2 and 1e-5), and
// λ_2 converged (GapTol 0.1) while λ_n's interval reaches into λ_2's. At the stop, the
// end that sets λ_max has met its tolerance.
func TestLanczosOverlappingEnds(t *testing.T) {
	for _, c := range []struct {
		n    int
		seed uint64
		o    SpectralOptions
	}{
		{78, 29, SpectralOptions{Tol: 1e-2, Seed: 1}},
		{92, 36, SpectralOptions{Tol: 1e-5, Seed: 2}},
		{84, 32, SpectralOptions{GapTol: 0.1, Seed: 3}},
	} {
		rr, err := RandomRegular(c.n, 7, c.seed)
		require.NoError(t, err)
		g := doubleCover(t, rr)
		gLo := -3.0 / 4
		sp, checks := lanczosRun(t, g, c.o)
		overlapping := 0
		for i, ch := range checks {
			top, bot := ch.top, ch.bot
			topAcc, botAcc := top.bound <= c.o.tol(top.theta, top.bound), bot.bound <= c.o.tol(bot.theta, bot.bound)
			overlap := top.theta-top.bound <= -bot.theta+bot.bound && -bot.theta-bot.bound <= top.theta+top.bound
			if overlap && (!topAcc || !botAcc && -gLo >= top.theta) {
				overlapping++
				require.Less(t, i, len(checks)-1, "%v %+v: stopped at k = %d with overlapping intervals, λ_2 %+v, λ_n %+v", g, c.o, ch.k, top, bot)
			}
		}
		require.Positive(t, overlapping, "%v %+v: no check with overlapping intervals and an unconverged end", g, c.o)
		last := checks[len(checks)-1]
		if sp.LambdaMax == sp.Lambda2 {
			require.LessOrEqual(t, last.top.bound, c.o.tol(last.top.theta, last.top.bound), "%v %+v: λ_2 sets λ_max", g, c.o)
		} else {
			require.LessOrEqual(t, last.bot.bound, c.o.tol(last.bot.theta, last.bot.bound), "%v %+v: λ_n sets λ_max", g, c.o)
		}
	}
}

// TestLanczosMaxIterBounds: when MaxIter runs out before the stopping rule holds, the
// bounds are those of the last check (min(r, r²/gap) plus the rounding allowance), the
// end that does not set λ_max at least its certified bound; an unconverged end is
// widened to the bound that holds regardless only when the rule stops the run (both
// ends done). Torus(40, 40) from seed 0 with MaxIter 32: at k = 32, θ_2 > 3/5 settles
// λ_n by Gershgorin's bound while λ_2, which sets λ_max, is unconverged, and its
// widened bound 1 − θ_2 would differ from its Ritz bound.
func TestLanczosMaxIterBounds(t *testing.T) {
	g, err := Torus(40, 40)
	require.NoError(t, err)
	var last lanczosCheck
	lanczosTrace = func(k int, top, bot ritz, _ float64) { last = lanczosCheck{k: k, top: top, bot: bot} }
	certTrace = func(k int, c certInterval) { last.cert = c }
	defer func() { lanczosTrace, certTrace = nil, nil }()
	sp, err := LambdaMax(g, &SpectralOptions{Method: SpectralLanczos, Seed: 0, MaxIter: 32})
	require.ErrorIs(t, err, ErrNotConverged)
	require.Equal(t, 32, last.k)
	require.Greater(t, last.top.bound, 1e-10, "λ_2 converged: the case is not exercised")
	require.Less(t, 3.0/5, last.top.theta, "λ_n is not done by Gershgorin's bound")
	require.Greater(t, 1-last.top.theta, last.top.bound, "the widened bound would not differ")
	require.Equal(t, last.top.bound, sp.Bound2)
	require.Equal(t, math.Max(last.bot.bound, last.bot.theta-last.cert.loN), sp.BoundN)
}

// closeEndsNetworks are networks whose two spectral ends are equal or close in absolute
// value, |λ_n| ≈ λ_2, where Lanczos must not stop the end that sets λ_max early: the
// hypercubes (λ_2 = |λ_n| = (d−1)/(d+1)), and the hypercube with one chord (which moves
// the two ends apart by less than 10^-2).
func closeEndsNetworks(t *testing.T) []*Graph {
	var gs []*Graph
	for d := 3; d <= 9; d++ {
		h, err := Hypercube(d)
		require.NoError(t, err)
		gs = append(gs, h)
		var edges [][2]int
		for v := range h.Order() {
			for _, w := range h.Neighbors(v) {
				if int(w) > v {
					edges = append(edges, [2]int{v, int(w)})
				}
			}
		}
		edges = append(edges, [2]int{0, h.Order() - 1})
		c, err := NewGraph(h.Order(), edges)
		require.NoError(t, err)
		gs = append(gs, c)
	}
	return gs
}

// TestLanczosCloseEnds: on networks whose ends are close, λ_max from Lanczos agrees
// with the dense solver within the tolerance asked for, and both ends' values lie
// within their reported bounds (at Tol ≤ 1e-6, where Spectrum's doc says they hold).
func TestLanczosCloseEnds(t *testing.T) {
	for _, g := range closeEndsNetworks(t) {
		dense, err := LambdaMax(g, &SpectralOptions{Method: SpectralDense})
		require.NoError(t, err)
		for _, tol := range []float64{1e-3, 1e-6, 1e-9} {
			name := fmt.Sprintf("%v tol %g", g, tol)
			sp, err := LambdaMax(g, &SpectralOptions{Method: SpectralLanczos, Tol: tol})
			require.NoError(t, err, name)
			require.LessOrEqual(t, math.Abs(sp.LambdaMax-dense.LambdaMax), tol+1e-12, "%s: λ_max %v, dense %v", name, sp.LambdaMax, dense.LambdaMax)
			// The end that sets λ_max is resolved to the tolerance (Spectrum: "Lanczos
			// stops once λ_max is accurate"); only the other end may stop unconverged.
			maxBound := sp.Bound2
			if -sp.LambdaN > sp.Lambda2 {
				maxBound = sp.BoundN
			}
			require.LessOrEqual(t, maxBound, tol, "%s: the bound of the end that sets λ_max", name)
			if tol > 1e-6 {
				continue // the Ritz-gap bounds are documented to fail at loose tolerances
			}
			require.LessOrEqual(t, math.Abs(sp.Lambda2-dense.Lambda2), sp.Bound2+1e-12, "%s: λ_2", name)
			require.LessOrEqual(t, math.Abs(sp.LambdaN-dense.LambdaN), sp.BoundN+1e-12, "%s: λ_n", name)
		}
	}
}

// certNetworks are connected networks small enough for the dense solver, of every
// family with a random component, from the given seed.
func certNetworks(t *testing.T, seed uint64) []*Graph {
	var gs []*Graph
	add := func(g *Graph, err error) {
		require.NoError(t, err)
		gs = append(gs, g)
	}
	add(RandomRegular(100+2*int(seed%20), 3+int(seed%6), seed))
	add(erdosRenyi(120, 0.06, seed))
	add(wattsStrogatz(130, 4+2*int(seed%3), 0.2, seed))
	add(barabasiAlbert(140, 1+int(seed%3), seed))
	add(RandomTree(110, seed))
	rr, err := RandomRegular(60+2*int(seed%10), 5+int(seed%4), seed)
	require.NoError(t, err)
	gs = append(gs, doubleCover(t, rr))
	return gs
}

// TestCertifiedIntervalProperty checks Lower ≤ λ_max ≤ Upper against the dense solver
// (with its rounding bound) on random networks of every family over 40 seeds, each
// network under the default options, the interval stopping rule (IntervalTol 0.01, and
// 0.3 with Delta 1e-3) and MaxIter 3 and 12 (Upper then is mostly 1 or loose, and must
// still hold), with five Lanczos seeds each; and on the fixed networks of
// closeEndsNetworks, Star(90), Path(100) and Mesh(9, 11). Upper is the upper bound with
// probability ≥ 1 − Delta over the start in exact arithmetic; no case may exceed it.
// Runs whose recurrence ends (k = n − 1) before the interval rule is met report
// ErrNotConverged with an interval that must hold all the same.
func TestCertifiedIntervalProperty(t *testing.T) {
	t.Parallel()
	var gs []*Graph
	for seed := range uint64(40) {
		if !sweepTakes(int(seed), 0, 1) { // -short: every other seed
			continue
		}
		gs = append(gs, certNetworks(t, seed)...)
	}
	gs = append(gs, closeEndsNetworks(t)...)
	for _, f := range []func() (*Graph, error){
		func() (*Graph, error) { return Star(90) },
		func() (*Graph, error) { return Path(100) },
		func() (*Graph, error) { return Mesh(9, 11) },
	} {
		g, err := f()
		require.NoError(t, err)
		gs = append(gs, g)
	}
	opts := []SpectralOptions{{}, {IntervalTol: 0.01}, {IntervalTol: 0.3, Delta: 1e-3}, {MaxIter: 3}, {MaxIter: 12}}
	runs, narrow := 0, 0
	for i, g := range gs {
		dense, err := LambdaMax(g, &SpectralOptions{Method: SpectralDense})
		require.NoError(t, err)
		db := math.Max(dense.Bound2, dense.BoundN)
		for _, o := range opts {
			for s := range uint64(5) {
				o.Method, o.Seed = SpectralLanczos, s+uint64(i)*7
				sp, err := LambdaMax(g, &o)
				if err != nil {
					require.ErrorIs(t, err, ErrNotConverged, "%v %+v", g, o)
				}
				runs++
				require.LessOrEqual(t, sp.Lower, dense.LambdaMax+db, "%v %+v: Lower", g, o)
				require.GreaterOrEqual(t, sp.Upper, dense.LambdaMax-db, "%v %+v: Upper %v, λ_max %v", g, o, sp.Upper, dense.LambdaMax)
				if o.IntervalTol > 0 && err == nil {
					require.LessOrEqual(t, sp.Upper-dense.LambdaMax, o.IntervalTol*(1-dense.LambdaMax)+db, "%v %+v", g, o)
					narrow++
				}
			}
		}
	}
	t.Logf("%d networks, %d runs (%d met IntervalTol): Lower ≤ λ_max ≤ Upper in all", len(gs), runs, narrow)
}

// TestCertifiedLongRun: after 300 iterations on RandomRegular(1000, 16, 1) (λ_max ≈
// 0.508; Tol 1e-300 is never met, so MaxIter ends the run), the Lanczos polynomial at
// x = 1 is far beyond 2^500, where polyExceeds rescales it, and the certified interval
// is narrow: Upper < 1 and Upper − Lower ≤ 1e-9.
func TestCertifiedLongRun(t *testing.T) {
	g, err := RandomRegular(1000, 16, 1)
	require.NoError(t, err)
	sp, err := LambdaMax(g, &SpectralOptions{Method: SpectralLanczos, Tol: 1e-300, MaxIter: 300})
	require.ErrorIs(t, err, ErrNotConverged)
	require.Equal(t, 300, sp.Iterations)
	require.Less(t, sp.Upper, 1.0)
	require.LessOrEqual(t, sp.Lower, sp.Upper)
	require.LessOrEqual(t, sp.Upper-sp.Lower, 1e-9)
	require.InDelta(t, 0.508, sp.LambdaMax, 1e-3)
}

// TestCertifiedDeltaCalibration runs Lanczos with Delta = 0.5 (each end's bound may fail
// for a start with |u·b| < t, t = 0.25/√(2n/π)) from 400 starts on random networks and
// requires the fraction of runs with Upper < λ_max to stay below Delta: the bound is
// probabilistic, and this checks its calibration, not that it never fails.
func TestCertifiedDeltaCalibration(t *testing.T) {
	fails, runs := 0, 0
	for seed := range uint64(10) {
		for _, g := range certNetworks(t, seed)[:4] {
			dense, err := LambdaMax(g, &SpectralOptions{Method: SpectralDense})
			require.NoError(t, err)
			for s := range uint64(10) {
				sp, err := LambdaMax(g, &SpectralOptions{Method: SpectralLanczos, IntervalTol: 0.3, Delta: 0.5, Seed: 1000*seed + s})
				if err != nil {
					require.ErrorIs(t, err, ErrNotConverged)
				}
				runs++
				if sp.Upper < dense.LambdaMax {
					fails++
				}
			}
		}
	}
	t.Logf("Delta 0.5: Upper < λ_max in %d of %d runs", fails, runs)
	require.Less(t, float64(fails), 0.5*float64(runs))
}

// TestIntervalStoppingRule checks the interval stopping rule at every convergence check
// of many runs: Lanczos stops at the first check at which Upper < 1 and Upper − Lower ≤
// IntervalTol·(1 − Upper), reports that check's interval, and Bound2 and BoundN are the
// distances from the Ritz values to the certified ends. With IntervalTol ≥ 1 only the
// first check with Upper < 1 can stop it.
func TestIntervalStoppingRule(t *testing.T) {
	var gs []*Graph
	for seed := range uint64(6) {
		for _, g := range certNetworks(t, seed) {
			if g.Size() >= g.Order() { // not the tree: its gap is too small to certify in n − 1 iterations
				gs = append(gs, g)
			}
		}
	}
	for _, sides := range [][]int{{40, 40}, {7, 90}, {3, 3, 3, 3}} {
		g, err := Torus(sides...)
		require.NoError(t, err)
		gs = append(gs, g)
	}
	h, err := Hypercube(9)
	require.NoError(t, err)
	gs = append(gs, h)
	for _, g := range gs {
		for _, tol := range []float64{1e-3, 0.01, 0.2, 2} {
			sp, checks := lanczosRun(t, g, SpectralOptions{IntervalTol: tol})
			for i, c := range checks {
				met := c.cert.upper < 1 && c.cert.upper-c.cert.lower <= tol*(1-c.cert.upper)
				last := i == len(checks)-1
				require.Equal(t, last, met, "%v IntervalTol %g, check %d at k = %d: %+v", g, tol, i, c.k, c.cert)
			}
			c := checks[len(checks)-1]
			require.Equal(t, c.cert.upper, sp.Upper)
			require.Equal(t, c.cert.lower, sp.Lower)
			require.Equal(t, math.Max(0, c.cert.up2-sp.Lambda2), sp.Bound2)
			require.Equal(t, math.Max(0, sp.LambdaN-c.cert.loN), sp.BoundN)
			require.LessOrEqual(t, sp.Upper-sp.Lower, tol*(1-sp.Upper))
		}
	}
}

// TestStepBudgetCertified checks the default step budget against τ(G, K) from the exact
// λ_max (dense solver): never shorter, and at most about 1 % (IntervalTol 0.01) plus one
// round longer, on networks of several families, including a tree whose gap is too
// small to certify by Lanczos in n − 1 iterations (the budget falls back on the dense
// solver); and that a ring whose τ exceeds DefaultMaxSteps fails with ErrBadParameter.
func TestStepBudgetCertified(t *testing.T) {
	t.Parallel()
	var gs []*Graph
	add := func(g *Graph, err error) {
		require.NoError(t, err)
		gs = append(gs, g)
	}
	add(Torus(30, 30))
	add(RandomRegular(1000, 4, 1))
	add(wattsStrogatz(300, 6, 0.2, 2))
	add(RandomTree(110, 4))
	add(Hypercube(6))
	add(erdosRenyi(400, 0.02, 3))
	for _, g := range gs {
		dense, err := LambdaMax(g, &SpectralOptions{Method: SpectralDense})
		require.NoError(t, err)
		b, err := NewRandomizedDiffusion(g)
		require.NoError(t, err)
		for _, K := range []int64{1, 1000} {
			loads := make(Loads, g.Order())
			loads[0] = K
			tau, err := b.StepBudget(&State{Net: g, Loads: loads})
			require.NoError(t, err, "%v", g)
			exact, err := BalancingTime(dense.LambdaMax, g.Order(), K)
			require.NoError(t, err)
			lam := dense.LambdaMax + 0.01*(1-dense.LambdaMax)
			loose, err := BalancingTime(lam, g.Order(), K)
			require.NoError(t, err)
			require.GreaterOrEqual(t, tau, exact, "%v K=%d", g, K)
			require.LessOrEqual(t, tau, loose+1, "%v K=%d", g, K)
		}
	}
	ring, err := Ring(3000)
	require.NoError(t, err)
	b, err := NewRandomizedDiffusion(ring)
	require.NoError(t, err)
	loads := make(Loads, 3000)
	loads[0] = 10
	_, err = b.StepBudget(&State{Net: ring, Loads: loads})
	require.ErrorIs(t, err, ErrBadParameter)
}

// TestLanczosBinnedAgrees runs 60 Lanczos steps with the propagation-blocked pass A
// (bins of 4096 nodes, so that small networks have many bins and segments) and with the
// gather kernels, on a random 4-regular, a random 5-regular and a Barabási–Albert network:
// every α and β agrees to 1e-12 relative (the additions are in another order), and the
// blocked pass gives the same bits with 1 and 2 workers, with 8- and 16-bit bins and with
// bins of 2^12 and 2^14 nodes.
func TestLanczosBinnedAgrees(t *testing.T) {
	t.Parallel()
	par.Acquire()
	defer par.Release()
	var gs []*Graph
	for i, f := range []func() (*Graph, error){
		func() (*Graph, error) { return RandomRegular(50001, 4, 3) },
		func() (*Graph, error) { return RandomRegular(30000, 5, 4) },
		func() (*Graph, error) { return barabasiAlbert(20000, 3, 5) },
		func() (*Graph, error) { return RandomRegular(2*4096-1, 4, 6) }, // a last bin one node short
	} {
		if !sweepTakes(i, 1, 1) { // -short: every other network, the short last bin among them
			continue
		}
		g, err := f()
		require.NoError(t, err)
		gs = append(gs, g)
	}
	for _, g := range gs {
		ln, err := newLazyNet(g)
		require.NoError(t, err)
		run := func(binnedOn bool, workers int, shift ...int) ([]float64, *lanczos) {
			l := newLanczos(ln, 9)
			l.bin = nil
			if binnedOn {
				l.bin = newBinned(ln, append(shift, 12)[0], workers)
			}
			l.workers = workers
			var ab []float64
			for k := 0; k < 60; k++ {
				a, b := l.step()
				ab = append(ab, a, b)
			}
			return ab, l
		}
		ref, _ := run(false, 2)
		b1, l1 := run(true, 1)
		b2, l2 := run(true, 2)
		binnedWide = true // 16-bit bins: the same bits
		b3, l3 := run(true, 2)
		binnedWide = false
		b4, l4 := run(true, 2, 14) // 4 times larger bins: each node's additions keep their order
		require.Nil(t, l3.bin.bin8)
		require.NotNil(t, l1.bin.bin8)
		for i := range ref {
			require.InDelta(t, ref[i], b1[i], 1e-12*math.Abs(ref[i])+1e-14, "%v: coefficient %d", g, i)
			require.Equal(t, math.Float64bits(b1[i]), math.Float64bits(b2[i]), "%v: coefficient %d, 1 vs 2 workers", g, i)
			require.Equal(t, math.Float64bits(b1[i]), math.Float64bits(b3[i]), "%v: coefficient %d, 8- vs 16-bit bins", g, i)
			require.Equal(t, math.Float64bits(b1[i]), math.Float64bits(b4[i]), "%v: coefficient %d, bins of 2^12 vs 2^14 nodes", g, i)
		}
		for i := range l1.a {
			require.Equal(t, math.Float64bits(l1.a[i]), math.Float64bits(l2.a[i]), "%v: a[%d]", g, i)
			require.Equal(t, math.Float64bits(l1.a[i]), math.Float64bits(l3.a[i]), "%v: a[%d]", g, i)
			require.Equal(t, math.Float64bits(l1.a[i]), math.Float64bits(l4.a[i]), "%v: a[%d]", g, i)
		}
	}
}

// TestCertifyRoundingAllowance: both certified ends lie a full rounding allowance
// (certRounding(k)) beyond the crossing of the Lanczos polynomial with 1/t that the
// bisection finds: |q_k| still exceeds 1/t at up2 − eta and at loN + eta. The Jacobi
// matrices here (α = 0, β = b) have their spectrum in [−2b, 2b] and |q_k| grows like
// (1/b)^k outside it, so both crossings lie strictly inside (gLo, 1) = (−1, 1).
func TestCertifyRoundingAllowance(t *testing.T) {
	for _, tc := range []struct {
		k int
		b float64
	}{{20, 0.3}, {40, 0.25}, {64, 0.4}, {120, 0.45}} {
		alpha, beta := make([]float64, tc.k), make([]float64, tc.k)
		for i := range beta {
			beta[i] = tc.b
		}
		c := newCertifier(1000, 1e-6, -1)
		r := c.certify(alpha, beta, 2*tc.b*0.99, -2*tc.b*0.99)
		eta := certRounding(tc.k)
		if r.up2 >= 1 || r.loN <= -1 {
			t.Fatalf("k %d b %g: up2 %g loN %g: a crossing is not inside (−1, 1)", tc.k, tc.b, r.up2, r.loN)
		}
		if !polyExceeds(alpha, beta, r.up2-eta, c.logLimit) || !polyExceeds(alpha, beta, r.loN+eta, c.logLimit) {
			t.Errorf("k %d b %g: up2 %.17g, loN %.17g are not a rounding allowance (%.3g) beyond the crossings", tc.k, tc.b, r.up2, r.loN, eta)
		}
		if r.up2 < 2*tc.b || r.loN > -2*tc.b {
			t.Errorf("k %d b %g: [%g, %g] does not contain the spectrum's ends ±%g", tc.k, tc.b, r.loN, r.up2, 2*tc.b)
		}
	}
}

// TestBinShiftFor: the bins are the smallest of at least 2^binMinShift nodes that number
// at most binnedMaxBins, at every order around each power of two from 2^16 to 2^31.
func TestBinShiftFor(t *testing.T) {
	bins := func(n, shift int) int { return (n + 1<<shift - 1) >> shift }
	for p := 16; p <= 31; p++ {
		for _, n := range []int{1<<p - 1, 1 << p, 1<<p + 1, 3 << (p - 2), binnedMaxBins<<p - 1, binnedMaxBins << p, binnedMaxBins<<p + 1} {
			s := binShiftFor(n)
			require.GreaterOrEqual(t, s, binMinShift, "n %d", n)
			require.LessOrEqual(t, bins(n, s), binnedMaxBins, "n %d: shift %d gives %d bins", n, s, bins(n, s))
			if s > binMinShift {
				require.Greater(t, bins(n, s-1), binnedMaxBins, "n %d: shift %d is not the smallest", n, s)
			}
		}
	}
	require.Equal(t, 18, binShiftFor(10_000_000)) // 39 bins, the measured choice
	require.Equal(t, 17, binShiftFor(1<<22))      // 32 bins; 2^16 would give 64
}

// TestStencilRunsOnlyWithLocality: tori and grids in index order are described by a few
// stencil runs; a random regular network is not, and finding that out allocates nothing.
func TestStencilRunsOnlyWithLocality(t *testing.T) {
	for _, sides := range [][2]int{{64, 64}, {300, 7}, {1000, 1000}} {
		g, err := Torus(sides[0], sides[1])
		require.NoError(t, err)
		ln, err := newLazyNet(g)
		require.NoError(t, err)
		r := newStencilRuns(ln)
		require.NotNil(t, r, "Torus%v", sides)
		require.LessOrEqual(t, len(r.start)-1, g.Order()/16, "Torus%v", sides)
		require.Equal(t, int32(g.Order()), r.start[len(r.start)-1])
	}
	g, err := RandomRegular(4096, 4, 1)
	require.NoError(t, err)
	ln, err := newLazyNet(g)
	require.NoError(t, err)
	require.Nil(t, newStencilRuns(ln))
	require.Zero(t, testing.AllocsPerRun(3, func() { newStencilRuns(ln) }), "newStencilRuns allocates on a network without locality")
}
