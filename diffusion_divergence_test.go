package tokendist_test

import (
	"context"
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/tokendist/tokendist"
)

// bruteDivergence evaluates Definitions 2.1 and 2.2 with dense matrix powers for t < T.
func bruteDivergence(g *tokendist.Graph, T int) (psi1, psi2sq, ups2sq float64) {
	n := g.Order()
	p := must(tokendist.TransitionMatrix(g))
	pt := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		pt.Set(i, i, 1)
	}
	s1, s2, su := make([]float64, n), make([]float64, n), make([]float64, n)
	for t := 0; t < T; t++ {
		for k := 0; k < n; k++ {
			for i := 0; i < n; i++ {
				top := 0.0
				for _, j := range g.Neighbors(i) {
					diff := pt.At(i, k) - pt.At(int(j), k)
					top = math.Max(top, diff*diff)
					if int(j) > i {
						s1[k] += math.Abs(diff)
						s2[k] += diff * diff
					}
				}
				su[k] += top / 2
			}
		}
		pt.Mul(pt, p)
	}
	for k := 0; k < n; k++ {
		psi1, psi2sq, ups2sq = math.Max(psi1, s1[k]), math.Max(psi2sq, s2[k]), math.Max(ups2sq, su[k])
	}
	return psi1, psi2sq, ups2sq
}

// TestLocalDivergenceMatchesDefinition compares LocalDivergence with a brute-force
// evaluation of the definitions by dense matrix powers, on a sweep of small networks.
func TestLocalDivergenceMatchesDefinition(t *testing.T) {
	const tol = 1e-9
	for name, g := range spectralSweep() {
		if g.Order() > 40 {
			continue
		}
		dv := must(tokendist.LocalDivergence(g, tol, nil))
		// The same rounds as LocalDivergence: the sums agree up to rounding.
		b1, b2, bu := bruteDivergence(g, dv.Rounds)
		require.InDelta(t, b1, dv.Psi1, 1e-11, name)
		require.InDelta(t, b2, dv.Psi2*dv.Psi2, 1e-11, name)
		require.InDelta(t, bu, dv.Upsilon2*dv.Upsilon2, 1e-11, name)
		// And a tighter tolerance moves the sums by at most tol (the tail bound holds).
		fine := must(tokendist.LocalDivergence(g, tol/1000, nil))
		require.InDelta(t, fine.Psi1, dv.Psi1, tol, name)
		require.InDelta(t, fine.Psi2*fine.Psi2, dv.Psi2*dv.Psi2, tol, name)
		require.InDelta(t, fine.Upsilon2*fine.Upsilon2, dv.Upsilon2*dv.Upsilon2, tol, name)
	}
}

// TestLocalDivergenceVertexTransitive checks that on vertex-transitive networks every
// node gives the same sums, so Nodes: []int{0} is exact.
func TestLocalDivergenceVertexTransitive(t *testing.T) {
	for _, g := range []*tokendist.Graph{
		must(tokendist.Hypercube(4)), must(tokendist.Torus(4, 5)), must(tokendist.Ring(9)),
		must(tokendist.Complete(5)), must(tokendist.Torus(3, 3, 3)),
	} {
		all := must(tokendist.LocalDivergence(g, 1e-10, nil))
		one := must(tokendist.LocalDivergence(g, 1e-10, &tokendist.DivergenceOptions{Nodes: []int{0}}))
		require.InDelta(t, all.Psi1, one.Psi1, 1e-9)
		require.InDelta(t, all.Psi2, one.Psi2, 1e-9)
		require.InDelta(t, all.Upsilon2, one.Upsilon2, 1e-9)
	}
}

// hypercubeDivergence holds the local divergences of Hypercube(d), d = 0..12, to
// tolerance 1e-10, computed once (concurrently) for the tests that need them.
var hypercubeDivergence = sync.OnceValue(func() []tokendist.Divergence {
	out := make([]tokendist.Divergence, 13)
	var wg sync.WaitGroup
	for d := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[d] = must(tokendist.LocalDivergence(must(tokendist.Hypercube(d)), 1e-10, &tokendist.DivergenceOptions{Nodes: []int{0}}))
		}()
	}
	wg.Wait()
	return out
})

// TestHypercubePsi1Theorem44 checks Theorem 4.4's closed form against LocalDivergence
// for d ≤ 12, and that it equals d(d+1)/2.
func TestHypercubePsi1Theorem44(t *testing.T) {
	for d, dv := range hypercubeDivergence() {
		cf := must(tokendist.HypercubePsi1(d))
		require.InDelta(t, float64(d*(d+1))/2, cf, 1e-9*cf+1e-12, "d=%d", d)
		require.InDelta(t, cf, dv.Psi1, 1e-9, "d=%d", d)
	}
}

// divergenceFamilies are the families on which the paper's relations are checked.
func divergenceFamilies() map[string]*tokendist.Graph {
	nets := map[string]*tokendist.Graph{}
	for _, s := range []int{3, 4, 7, 12, 20} {
		nets["Torus("+itoa(s)+","+itoa(s)+")"] = must(tokendist.Torus(s, s))
		nets["Ring("+itoa(s)+")"] = must(tokendist.Ring(s))
	}
	nets["Torus(4,4,4)"] = must(tokendist.Torus(4, 4, 4))
	for _, n := range []int{3, 4, 6, 10} {
		nets["Complete("+itoa(n)+")"] = must(tokendist.Complete(n))
	}
	for _, n := range []int{16, 64} {
		for _, d := range []int{3, 4, 6} {
			nets["RandomRegular("+itoa(n)+","+itoa(d)+")"] = must(tokendist.RandomRegular(n, d, uint64(n+d)))
		}
	}
	nets["ShuffleExchange(5)"] = must(tokendist.ShuffleExchange(5))
	nets["Star(7)"] = must(tokendist.Star(7))
	nets["Path(9)"] = must(tokendist.Path(9))
	nets["KaryTree(KaryShape{Height: 4, Arity: 2})"] = must(tokendist.KaryTree(tokendist.KaryShape{Height: 4, Arity: 2}))
	return nets
}

func transitive(name string) bool {
	for _, p := range []string{"Hypercube", "Torus", "Ring", "Complete"} {
		if len(name) >= len(p) && name[:len(p)] == p {
			return true
		}
	}
	return false
}

// TestDivergenceRelations checks the relations the paper states between Ψ_1, Ψ_2 and
// Υ_2 on every family: Υ_2 ≤ Ψ_2 (after Definition 2.2), Ψ_2² ≤ Ψ_1 (after Definition
// 2.1), Υ_2 ≤ √Ψ_1 (section 1.2), the corrected lower bound Υ_2 ≥ √((d+1)/2) (see
// TestErratumUpsilonLowerBound), and Theorem 4.2's Ψ_2 = O(1) on tori.
func TestDivergenceRelations(t *testing.T) {
	const tol = 1e-9
	check := func(name string, d float64, dv tokendist.Divergence) {
		require.LessOrEqual(t, dv.Upsilon2, dv.Psi2+tol, name)
		require.LessOrEqual(t, dv.Psi2*dv.Psi2, dv.Psi1+tol, name)
		require.LessOrEqual(t, dv.Upsilon2, math.Sqrt(dv.Psi1)+tol, name)
		require.GreaterOrEqual(t, dv.Upsilon2*dv.Upsilon2, (d+1)/2-tol, name)
	}
	for d, dv := range hypercubeDivergence() {
		if d > 0 {
			check("Hypercube("+itoa(d)+")", float64(d), dv)
		}
	}
	for name, g := range divergenceFamilies() {
		var opts *tokendist.DivergenceOptions
		if transitive(name) {
			opts = &tokendist.DivergenceOptions{Nodes: []int{0}}
		}
		check(name, float64(g.MaxDegree()), must(tokendist.LocalDivergence(g, tol, opts)))
	}
	// Theorem 4.2: Ψ_2 of the r-dimensional torus stays bounded as the sides double:
	// its increments shrink geometrically (they halve).
	for r, sizes := range map[int][]int{1: {8, 16, 32, 64}, 2: {6, 12, 24}} {
		var psi2 []float64
		for _, s := range sizes {
			sides := make([]int, r)
			for i := range sides {
				sides[i] = s
			}
			dv := must(tokendist.LocalDivergence(must(tokendist.Torus(sides...)), 1e-9, &tokendist.DivergenceOptions{Nodes: []int{0}}))
			require.Less(t, dv.Psi2, 2.5, "r=%d side %d", r, s)
			psi2 = append(psi2, dv.Psi2)
		}
		for i := 2; i < len(psi2); i++ {
			require.Less(t, psi2[i]-psi2[i-1], 0.6*(psi2[i-1]-psi2[i-2]), "Ψ_2 increments of the %d-dimensional torus do not shrink: %v", r, psi2)
		}
	}
}

// TestErratumUpsilonLowerBound pins the counterexamples to "Υ_2(G) ≥ √d for any
// d-regular network" (Berenbrink et al., after Theorem 4.3): the t = 0 term of
// Definition 2.2 is ½(d+1) (node k and its d neighbours each contribute 1), so only
// Υ_2 ≥ √((d+1)/2) holds, with equality on complete graphs, where P^t is uniform for
// t ≥ 1. Υ_2² < d already for K_3 and for every hypercube with d ≥ 2.
func TestErratumUpsilonLowerBound(t *testing.T) {
	for n := 3; n <= 8; n++ {
		dv := must(tokendist.LocalDivergence(must(tokendist.Complete(n)), 1e-12, &tokendist.DivergenceOptions{Nodes: []int{0}}))
		d := float64(n - 1)
		require.InDelta(t, math.Sqrt((d+1)/2), dv.Upsilon2, 1e-12, "K_%d", n)
		require.Less(t, dv.Upsilon2, math.Sqrt(d), "K_%d", n)
	}
	for d, dv := range hypercubeDivergence()[2:] {
		require.Less(t, dv.Upsilon2*dv.Upsilon2, float64(d+2), "H_%d", d+2)
	}
}

// TestErratumTheorem43 pins that Υ_2 of the hypercube is √(d/2 + O(1)), not
// √(d + O(1)) as Theorem 4.3 prints: Υ_2² − d/2 stays in [0.6, 0.85] for d = 2..12
// while Υ_2² − d falls below −(d/2 − 1), so it is not O(1). The theorem's use (Υ_2 =
// Θ(√log n), hence Theorem 1.2's O(log n)) is unaffected.
func TestErratumTheorem43(t *testing.T) {
	for d := 2; d <= 12; d++ {
		dv := hypercubeDivergence()[d]
		u := dv.Upsilon2 * dv.Upsilon2
		require.GreaterOrEqual(t, u-float64(d)/2, 0.6, "d=%d", d)
		require.LessOrEqual(t, u-float64(d)/2, 0.85, "d=%d", d)
		require.Less(t, u-float64(d), -(float64(d)/2 - 1), "d=%d", d)
	}
}

// TestErratumDeltaBound pins a counterexample to "|Δ_ij(t)| ≤ 1" (proof of Theorem 1.1,
// statements 2 and 3): Δ_ij = f_i − f_j + Z_ji − Z_ij (eq. 2.5, f the fractional parts
// of X/(d+1)) reaches 4/3 on the triangle from loads (2, 1, 0): with probability 1/9 node
// 1's excess token goes to node 0 (Z_10 = 1) while node 0's two excess tokens go to
// itself and node 2 (Z_01 = 0), which is the only way to end at loads (2, 0, 1). So
// |Δ_ij| < 2 is all that holds. The per-node sum the proof needs, Σ_j Δ_kj =
// X_k(t) − (X(t−1)P)_k, still lies in [−d, d]; TestOneStepDeviation checks that.
func TestErratumDeltaBound(t *testing.T) {
	g := must(tokendist.Complete(3))
	start := tokendist.Loads{2, 1, 0}
	hits := 0
	const runs = 900
	for seed := uint64(0); seed < runs; seed++ {
		r := must(tokendist.Run(context.Background(), g, start, must(tokendist.NewRandomizedDiffusion(g)), &tokendist.RunOptions{MaxSteps: 1, Seed: seed}))
		if r.Loads[0] == 2 && r.Loads[1] == 0 && r.Loads[2] == 1 {
			hits++
		}
	}
	// The outcome has probability 1/9: expect 100 ± 30.
	require.InDelta(t, runs/9, hits, 30)
	f0, f1 := 2.0/3, 1.0/3 // fractional parts of 2/3 and 1/3
	z10, z01 := 1.0, 0.0   // forced by the outcome (2, 0, 1)
	require.InDelta(t, 4.0/3, f0-f1+z10-z01, 1e-15)
}

// TestOneStepDeviation checks, on the sweep and over many seeds, that one round of
// RandomizedDiffusion deviates from one continuous round by at most d at every node
// (|Σ_j Δ_kj| ≤ d, the bound the proof of Theorem 1.1(2) uses), even on non-regular
// networks.
func TestOneStepDeviation(t *testing.T) {
	for name, g := range diffusionNets() {
		n, d := g.Order(), float64(g.MaxDegree())
		b := must(tokendist.NewRandomizedDiffusion(g))
		for seed := uint64(0); seed < 20; seed++ {
			start := must(tokendist.RandomRange(n, 0, int64(3*g.MaxDegree()+3), seed))
			x := make([]float64, n)
			for i, v := range start {
				x[i] = float64(v)
			}
			c := must(tokendist.NewContinuousDiffusion(g, x))
			c.Step()
			r := must(tokendist.Run(context.Background(), g, start, b, &tokendist.RunOptions{MaxSteps: 1, Seed: seed}))
			for k := range r.Loads {
				require.LessOrEqual(t, math.Abs(float64(r.Loads[k])-c.Loads()[k]), d+1e-9, "%s seed %d node %d", name, seed, k)
			}
		}
	}
}
