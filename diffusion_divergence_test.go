package tokendist_test

import (
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
	t.Parallel()
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
