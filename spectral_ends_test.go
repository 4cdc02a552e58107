package tokendist

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

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
