package randgraph

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every slot of the lower triangle is drawn with probability p, independently of its
// position: an off-by-one in the geometric skip would bias the first or last slots.
func TestGnpPairsSlotFrequencies(t *testing.T) {
	t.Parallel()
	const n, draws = 6, 20000
	for _, p := range []float64{0.1, 0.5, 0.9} {
		r := rand.New(rand.NewPCG(1, 2))
		count := make(map[[2]int32]int)
		for range draws {
			pairs := gnpPairs(n, p, r)
			for i := 0; i < len(pairs); i += 2 {
				v, w := pairs[i], pairs[i+1]
				require.Less(t, w, v)
				require.Less(t, v, int32(n))
				require.GreaterOrEqual(t, w, int32(0))
				count[[2]int32{v, w}]++
			}
		}
		se := math.Sqrt(p * (1 - p) / draws)
		for v := int32(1); v < n; v++ {
			for w := int32(0); w < v; w++ {
				f := float64(count[[2]int32{v, w}]) / draws
				require.InDeltaf(t, p, f, 5*se, "p = %v, slot (%d, %d)", p, v, w)
			}
		}
	}
	// p = 1 draws every slot exactly once.
	pairs := gnpPairs(n, 1, rand.New(rand.NewPCG(3, 4)))
	require.Len(t, pairs, n*(n-1))
}

// The cell bucketing finds exactly the pairs a quadratic scan finds, at radii around
// the cell side's boundaries.
func TestGeometricPairsAgainstScan(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 9, 100, 400} {
		for _, radius := range []float64{0.01, 0.05, 0.1, 1.0 / 7, 0.2500001, 0.5, 0.99, 1.2, math.Sqrt2} {
			xs, ys := make([]float64, n), make([]float64, n)
			for i := range n {
				xs[i], ys[i] = r.Float64(), r.Float64()
			}
			got := map[[2]int32]bool{}
			pairs := geometricPairs(xs, ys, radius)
			for i := 0; i < len(pairs); i += 2 {
				u, w := min(pairs[i], pairs[i+1]), max(pairs[i], pairs[i+1])
				require.False(t, got[[2]int32{u, w}], "pair (%d, %d) twice", u, w)
				got[[2]int32{u, w}] = true
			}
			want := 0
			for u := range n {
				for w := u + 1; w < n; w++ {
					if dist2(xs, ys, int32(u), int32(w)) <= radius*radius {
						want++
						require.True(t, got[[2]int32{int32(u), int32(w)}], "n = %d, r = %v: pair (%d, %d) missing", n, radius, u, w)
					}
				}
			}
			require.Len(t, got, want)
		}
	}
}

// connected agrees with a breadth-first search on every pair list of a sweep of small
// random graphs (n ≤ 7, every density), connected or not, with repeated edges and
// loops thrown in.
func TestConnectedAgainstBFS(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for n := 1; n <= 7; n++ {
		for trial := range 300 {
			var pairs []int32
			for range trial % (2 * n) {
				pairs = append(pairs, int32(r.IntN(n)), int32(r.IntN(n)))
			}
			adj := make([][]int32, n)
			for i := 0; i < len(pairs); i += 2 {
				adj[pairs[i]] = append(adj[pairs[i]], pairs[i+1])
				adj[pairs[i+1]] = append(adj[pairs[i+1]], pairs[i])
			}
			seen, queue := make([]bool, n), []int32{0}
			seen[0] = true
			for len(queue) > 0 {
				v := queue[0]
				queue = queue[1:]
				for _, w := range adj[v] {
					if !seen[w] {
						seen[w] = true
						queue = append(queue, w)
					}
				}
			}
			want := !slices.Contains(seen, false)
			require.Equal(t, want, connected(n, pairs), "n = %d, pairs %v", n, pairs)
		}
	}
}
