package tokendist

import (
	"math"
	"math/bits"
	"testing"

	"github.com/stretchr/testify/require"
)

// allBallsFringe returns the least and largest fringe over the Hamming balls of size x
// centred at 0 (every choice of the outer layer S).
func allBallsFringe(t *testing.T, g *Graph, d int, x int64) (lo, hi int) {
	r, y, err := HammingBallShape(d, x)
	require.NoError(t, err)
	var inner, layer []int
	for v := 0; v < 1<<d; v++ {
		switch w := bits.OnesCount(uint(v)); {
		case w < r:
			inner = append(inner, v)
		case w == r:
			layer = append(layer, v)
		}
	}
	lo = math.MaxInt
	forEachSubset(len(layer), int(y), func(mask uint32) {
		set := append([]int(nil), inner...)
		for s := mask; s != 0; s &= s - 1 {
			set = append(set, layer[bits.TrailingZeros32(s)])
		}
		f, err := Fringe(g, set)
		require.NoError(t, err)
		lo, hi = min(lo, f), max(hi, f)
	})
	return lo, hi
}

// TestHypercubeFringeClosedForm checks the Kruskal–Katona closed form against the
// fringe of the ball itself, for every x and d ≤ 10.
func TestHypercubeFringeClosedForm(t *testing.T) {
	for d := 0; d <= 10; d++ {
		g := mustCube(t, d, false)
		p := 1 << d
		for x := 0; x <= p; x++ {
			ball, err := HammingBall(d, x, p-1)
			require.NoError(t, err)
			f, err := Fringe(g, ball)
			require.NoError(t, err)
			closed, err := HypercubeFringe(d, int64(x))
			require.NoError(t, err)
			require.Equal(t, closed, int64(f), "d=%d x=%d: fringe of the ball %d, closed form %d", d, x, f, closed)
		}
	}
}

func totalDisc(l Loads) int64 {
	delta, err := DimensionDiscrepancies(l)
	if err != nil {
		panic(err)
	}
	var a int64
	for _, x := range delta {
		a += x
	}
	return a
}

// TestBinom checks the binomials against Pascal's rule up to n = 62.
func TestBinom(t *testing.T) {
	for n := 1; n <= 62; n++ {
		for k := 0; k <= n; k++ {
			require.Equal(t, binom(n-1, k-1)+binom(n-1, k), binom(n, k), "C(%d, %d)", n, k)
		}
	}
	require.Equal(t, int64(465428353255261088), binom(62, 31)) // math.comb(62, 31)
}
