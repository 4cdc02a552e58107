package tokendist_test

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
	"gonum.org/v1/gonum/stat/distuv"
)

// fndShape is what a generator promises: order, size, degree range, diameter, and the
// three predicates.
type fndShape struct {
	order, size, minDeg, maxDeg, diameter int
	tree, bipartite, regular              bool
}

func fndCheckShape(t *testing.T, name string, g *tokendist.Graph, want fndShape) {
	t.Helper()
	fndCheckSimple(t, g)
	require.True(t, g.Connected(), "%s is not connected", name)
	diam, err := g.Diameter()
	require.NoError(t, err)
	got := fndShape{g.Order(), g.Size(), g.MinDegree(), g.MaxDegree(), diam, g.IsTree(), g.IsBipartite(), g.IsRegular()}
	require.Equal(t, want, got, "%s", name)
}

func TestGenPath(t *testing.T) {
	for n := 1; n <= 40; n++ {
		g := fndMust(tokendist.Path(n))
		deg := min(2, n-1)
		fndCheckShape(t, fmt.Sprintf("Path(%d)", n), g, fndShape{n, n - 1, min(1, n-1), deg, n - 1, true, true, n <= 2})
		for v := 1; v < n; v++ {
			require.True(t, g.HasEdge(v-1, v))
		}
	}
}

func TestGenRing(t *testing.T) {
	for n := 1; n <= 40; n++ {
		g := fndMust(tokendist.Ring(n))
		size, deg := n, 2
		switch n {
		case 1:
			size, deg = 0, 0
		case 2:
			size, deg = 1, 1
		}
		fndCheckShape(t, fmt.Sprintf("Ring(%d)", n), g, fndShape{n, size, deg, deg, n / 2, n <= 2, n%2 == 0 || n == 1, true})
		for v := 0; v < n && n > 1; v++ {
			require.True(t, g.HasEdge(v, (v+1)%n))
		}
	}
}

func TestGenStar(t *testing.T) {
	for n := 1; n <= 30; n++ {
		g := fndMust(tokendist.Star(n))
		diam := min(2, n-1)
		fndCheckShape(t, fmt.Sprintf("Star(%d)", n), g, fndShape{n, n - 1, min(1, n-1), n - 1, diam, true, true, n <= 2})
		require.Equal(t, n-1, g.Degree(0))
	}
}

func TestGenComplete(t *testing.T) {
	for n := 1; n <= 30; n++ {
		g := fndMust(tokendist.Complete(n))
		fndCheckShape(t, fmt.Sprintf("Complete(%d)", n), g, fndShape{n, n * (n - 1) / 2, n - 1, n - 1, min(1, n-1), n <= 2, n <= 2, true})
	}
}

func TestGenHypercube(t *testing.T) {
	for d := 0; d <= 11; d++ {
		g := fndMust(tokendist.Hypercube(d))
		n := 1 << d
		fndCheckShape(t, fmt.Sprintf("Hypercube(%d)", d), g, fndShape{n, d * n / 2, d, d, d, d <= 1, true, true})
		if d <= 6 {
			for u := 0; u < n; u++ {
				for v := 0; v < n; v++ {
					require.Equal(t, bits.OnesCount(uint(u^v)) == 1, g.HasEdge(u, v), "Hypercube(%d) %d-%d", d, u, v)
				}
			}
		}
		if d >= 1 {
			// The hypercube is the torus with d sides of length 2.
			sides := slices.Repeat([]int{2}, d)
			require.Equal(t, g.EdgeList(), fndMust(tokendist.Torus(sides...)).EdgeList())
		}
	}
}

func TestGenKaryTree(t *testing.T) {
	for k := 1; k <= 5; k++ {
		for h := 0; h <= 6; h++ {
			n := 1
			for level, i := 1, 0; i < h; i++ {
				level *= k
				n += level
			}
			if n > 5000 {
				continue
			}
			order, err := tokendist.KaryTreeOrder(tokendist.KaryShape{Height: h, Arity: k})
			require.NoError(t, err)
			require.Equal(t, n, order)
			g := fndMust(tokendist.KaryTree(tokendist.KaryShape{Height: h, Arity: k}))
			name := fmt.Sprintf("KaryTree(KaryShape{Height: %d, Arity: %d})", k, h)
			diam := 2 * h
			if k == 1 {
				diam = h
			}
			// Heap order: the children of v are k·v+1..k·v+k.
			deg := make([]int, n)
			for v := 0; v < n; v++ {
				for c := k*v + 1; c <= k*v+k && c < n; c++ {
					require.True(t, g.HasEdge(v, c), "%s: %d is not a child of %d", name, c, v)
					deg[v]++
					deg[c]++
				}
			}
			for v := 0; v < n; v++ {
				require.Equal(t, deg[v], g.Degree(v), "%s degree of %d", name, v)
			}
			minDeg, maxDeg := slices.Min(deg), slices.Max(deg)
			if h >= 2 {
				require.Equal(t, [2]int{1, k + 1}, [2]int{minDeg, maxDeg}, name)
			}
			fndCheckShape(t, name, g, fndShape{n, n - 1, minDeg, maxDeg, diam, true, true, minDeg == maxDeg})
			if h > 0 {
				c, err := g.Center()
				require.NoError(t, err)
				if k >= 2 {
					require.Zero(t, c, "%s: the root is the centre", name)
				}
			}
		}
	}
}

func TestGenRandomTree(t *testing.T) {
	for n := 1; n <= 40; n++ {
		for seed := uint64(0); seed < 10; seed++ {
			g := fndMust(tokendist.RandomTree(n, seed))
			fndCheckSimple(t, g)
			require.True(t, g.IsTree(), "RandomTree(%d, %d)", n, seed)
			require.True(t, g.IsBipartite())
			again := fndMust(tokendist.RandomTree(n, seed))
			require.Equal(t, g.EdgeList(), again.EdgeList(), "RandomTree(%d, %d) not deterministic", n, seed)
		}
	}
	big := fndMust(tokendist.RandomTree(100000, 3))
	require.True(t, big.IsTree())
}

// TestGenRandomTreeUniform draws many trees on n = 4, 5, 6 labelled nodes: every one of
// the n^(n-2) labelled trees appears, with frequencies passing a chi-square test at
// level 10^-6.
func TestGenRandomTreeUniform(t *testing.T) {
	for _, n := range []int{4, 5, 6} {
		trees := 1
		for i := 0; i < n-2; i++ {
			trees *= n
		}
		draws := 12 * trees
		count := map[string]int{}
		for seed := uint64(0); seed < uint64(draws); seed++ {
			g := fndMust(tokendist.RandomTree(n, seed))
			count[fmt.Sprint(g.EdgeList())]++
		}
		require.Len(t, count, trees, "n = %d: %d distinct trees, want %d", n, len(count), trees)
		expect := float64(draws) / float64(trees)
		chi2 := 0.0
		for _, c := range count {
			chi2 += (float64(c) - expect) * (float64(c) - expect) / expect
		}
		limit := distuv.ChiSquared{K: float64(trees - 1)}.Quantile(1 - 1e-6)
		t.Logf("n = %d: chi² = %.1f with %d degrees of freedom (limit %.1f)", n, chi2, trees-1, limit)
		require.Less(t, chi2, limit, "n = %d: tree frequencies are not uniform", n)
	}
}

// fndBits returns i as a d-bit word, most significant bit first.
func fndBits(i, d int) string {
	s := strconv.FormatInt(int64(i), 2)
	return strings.Repeat("0", d-len(s)) + s
}

// fndShuffleExchange builds the shuffle-exchange graph as the papers' README words it,
// on bit strings: exchange flips i_0, shuffle is i_{d-2}...i_0 i_{d-1}; loops and
// repeats dropped.
func fndShuffleExchange(d int) map[[2]int]bool {
	edges := map[[2]int]bool{}
	add := func(a, b string) {
		u, _ := strconv.ParseInt(a, 2, 64)
		v, _ := strconv.ParseInt(b, 2, 64)
		if u != v {
			edges[[2]int{int(min(u, v)), int(max(u, v))}] = true
		}
	}
	for i := 0; i < 1<<d; i++ {
		s := fndBits(i, d)
		flip := "1"
		if s[d-1] == '1' {
			flip = "0"
		}
		add(s, s[:d-1]+flip)
		add(s, s[1:]+s[:1])
		add(s, s[d-1:]+s[:d-1]) // unshuffle: i_0 i_{d-1} ... i_1
	}
	return edges
}

func TestGenShuffleExchange(t *testing.T) {
	for d := 1; d <= 10; d++ {
		n := 1 << d
		for i := 0; i < n; i++ {
			s := fndBits(i, d)
			sh, _ := strconv.ParseInt(s[1:]+s[:1], 2, 64)
			un, _ := strconv.ParseInt(s[d-1:]+s[:d-1], 2, 64)
			gotSh, err := tokendist.Shuffle(i, d)
			require.NoError(t, err)
			gotUn, err := tokendist.Unshuffle(i, d)
			require.NoError(t, err)
			require.Equal(t, int(sh), gotSh, "Shuffle(%s)", s)
			require.Equal(t, int(un), gotUn, "Unshuffle(%s)", s)
			back, err := tokendist.Unshuffle(gotSh, d)
			require.NoError(t, err)
			require.Equal(t, i, back)
		}
		g := fndMust(tokendist.ShuffleExchange(d))
		fndCheckSimple(t, g)
		want := fndShuffleExchange(d)
		got := map[[2]int]bool{}
		for _, e := range g.EdgeList() {
			got[e] = true
		}
		require.Equal(t, want, got, "ShuffleExchange(%d)", d)
		require.Equal(t, n, g.Order())
		require.LessOrEqual(t, g.MaxDegree(), 3)
		require.True(t, g.Connected())
		diam, err := g.Diameter()
		require.NoError(t, err)
		// The shuffle-exchange graph has diameter 2d - 1 (one exchange or shuffle per
		// step, d bits to set and d - 1 rotations).
		require.Equal(t, 2*d-1, diam, "ShuffleExchange(%d) diameter", d)
	}
}

// fndGridShape returns order, size, minimum and maximum degree, diameter and the
// bipartite and tree predicates of a torus or mesh by their closed forms.
func fndGridShape(wrap bool, sides []int) fndShape {
	n := 1
	for _, s := range sides {
		n *= s
	}
	sh := fndShape{order: n, bipartite: true}
	for _, s := range sides {
		lines := n / s
		switch {
		case s == 1:
		case s == 2:
			sh.size += lines
			sh.maxDeg++
			sh.minDeg++
			sh.diameter++
		case wrap:
			sh.size += lines * s
			sh.maxDeg += 2
			sh.minDeg += 2
			sh.diameter += s / 2
			if s%2 == 1 {
				sh.bipartite = false
			}
		default:
			sh.size += lines * (s - 1)
			sh.maxDeg += 2
			sh.minDeg++
			sh.diameter += s - 1
		}
	}
	sh.regular = sh.minDeg == sh.maxDeg
	sh.tree = sh.size == n-1
	return sh
}

// fndGridAdjacent decides adjacency from coordinates: one coordinate differs, by one
// (or around the wrap when wrap and the side is at least 3).
func fndGridAdjacent(wrap bool, sides []int, u, v int) bool {
	diff := 0
	for _, s := range sides {
		a, b := u%s, v%s
		u, v = u/s, v/s
		if a == b {
			continue
		}
		d := max(a, b) - min(a, b)
		if d != 1 && !(wrap && s > 2 && d == s-1) {
			return false
		}
		diff++
	}
	return diff == 1
}

func TestGenTorusMesh(t *testing.T) {
	t.Parallel()
	var all [][]int
	for _, a := range []int{1, 2, 3, 4, 5, 6} {
		all = append(all, []int{a})
		for _, b := range []int{1, 2, 3, 4, 5} {
			all = append(all, []int{a, b})
			for _, c := range []int{1, 2, 3, 5} {
				all = append(all, []int{a, b, c})
			}
		}
	}
	all = append(all, []int{2, 3, 2, 3}, []int{3, 3, 3, 3}, []int{2, 2, 2, 2, 2}, []int{12}, []int{1, 1, 1})
	for _, sides := range all {
		for _, wrap := range []bool{true, false} {
			name := fmt.Sprintf("Mesh%v", sides)
			gen := tokendist.Mesh
			if wrap {
				name, gen = fmt.Sprintf("Torus%v", sides), tokendist.Torus
			}
			g := fndMust(gen(sides...))
			fndCheckShape(t, name, g, fndGridShape(wrap, sides))
			n := g.Order()
			for u := 0; u < n; u++ {
				for v := 0; v < n; v++ {
					require.Equal(t, fndGridAdjacent(wrap, sides, u, v), g.HasEdge(u, v), "%s: %d-%d", name, u, v)
				}
			}
		}
	}
	// A one-dimensional torus is a ring and a one-dimensional mesh a path.
	for n := 1; n <= 20; n++ {
		require.Equal(t, fndMust(tokendist.Ring(n)).EdgeList(), fndMust(tokendist.Torus(n)).EdgeList())
		require.Equal(t, fndMust(tokendist.Path(n)).EdgeList(), fndMust(tokendist.Mesh(n)).EdgeList())
	}
}

func TestGenRandomRegular(t *testing.T) {
	checked := 0
	for n := 1; n <= 22; n++ {
		for d := 0; d < n; d++ {
			if n*d%2 != 0 || (d == 0 && n > 1) || (d == 1 && n > 2) {
				continue
			}
			distinct := map[string]bool{}
			for seed := uint64(0); seed < 6; seed++ {
				name := fmt.Sprintf("RandomRegular(%d, %d, %d)", n, d, seed)
				g := fndMust(tokendist.RandomRegular(n, d, seed))
				fndCheckSimple(t, g)
				require.Equal(t, n, g.Order(), name)
				require.True(t, g.IsRegular(), name)
				require.Equal(t, d, g.MaxDegree(), name)
				require.True(t, g.Connected(), name)
				again := fndMust(tokendist.RandomRegular(n, d, seed))
				require.Equal(t, g.EdgeList(), again.EdgeList(), "%s is not deterministic", name)
				distinct[fmt.Sprint(g.EdgeList())] = true
				checked++
			}
			// Complete graphs (d = n-1) and tiny cases have one labelled graph; others
			// must vary with the seed.
			if d >= 2 && d <= n-2 && n >= 5 {
				require.Greater(t, len(distinct), 1, "RandomRegular(%d, %d) ignores the seed", n, d)
			}
		}
	}
	for _, tc := range [][2]int{{1000, 3}, {1000, 4}, {999, 6}, {500, 11}, {64, 63}, {65, 62}} {
		for seed := uint64(0); seed < 3; seed++ {
			g := fndMust(tokendist.RandomRegular(tc[0], tc[1], seed))
			fndCheckSimple(t, g)
			require.True(t, g.IsRegular())
			require.Equal(t, tc[1], g.MaxDegree())
			require.True(t, g.Connected())
			checked++
		}
	}
	t.Logf("%d graphs checked", checked)
}

// TestGenBadParameters covers every generator's rejected parameters, including sizes
// too large to represent, which must be rejected before any large allocation.
func TestGenBadParameters(t *testing.T) {
	cases := []struct {
		name  string
		build func() (*tokendist.Graph, error)
		is    error
		words []string
	}{
		{"Path(0)", func() (*tokendist.Graph, error) { return tokendist.Path(0) }, tokendist.ErrBadParameter, []string{"n = 0"}},
		{"Path(-3)", func() (*tokendist.Graph, error) { return tokendist.Path(-3) }, tokendist.ErrBadParameter, []string{"-3"}},
		{"Path(2^31)", func() (*tokendist.Graph, error) { return tokendist.Path(1 << 31) }, tokendist.ErrBadParameter, []string{"2147483648"}},
		{"Path(2^30+2)", func() (*tokendist.Graph, error) { return tokendist.Path(1<<30 + 2) }, tokendist.ErrBadParameter, []string{"1073741826"}},
		{"Ring(0)", func() (*tokendist.Graph, error) { return tokendist.Ring(0) }, tokendist.ErrBadParameter, []string{"n = 0"}},
		{"Ring(2^30)", func() (*tokendist.Graph, error) { return tokendist.Ring(1 << 30) }, tokendist.ErrBadParameter, []string{"1073741824"}},
		{"Star(-1)", func() (*tokendist.Graph, error) { return tokendist.Star(-1) }, tokendist.ErrBadParameter, []string{"-1"}},
		{"Star(2^30+2)", func() (*tokendist.Graph, error) { return tokendist.Star(1<<30 + 2) }, tokendist.ErrBadParameter, []string{"1073741826"}},
		{"Complete(0)", func() (*tokendist.Graph, error) { return tokendist.Complete(0) }, tokendist.ErrBadParameter, []string{"n = 0"}},
		{"Complete(46342)", func() (*tokendist.Graph, error) { return tokendist.Complete(46342) }, tokendist.ErrBadParameter, []string{"46342"}},
		{"Complete(2^20)", func() (*tokendist.Graph, error) { return tokendist.Complete(1 << 20) }, tokendist.ErrBadParameter, []string{"1048576"}},
		{"KaryTree(KaryShape{Height: 2, Arity: 0})", func() (*tokendist.Graph, error) { return tokendist.KaryTree(tokendist.KaryShape{Height: 2, Arity: 0}) }, tokendist.ErrBadParameter, []string{"k = 0"}},
		{"KaryTree(KaryShape{Height: 2, Arity: -2})", func() (*tokendist.Graph, error) { return tokendist.KaryTree(tokendist.KaryShape{Height: 2, Arity: -2}) }, tokendist.ErrBadParameter, []string{"k = -2"}},
		{"KaryTree(KaryShape{Height: -1, Arity: 2})", func() (*tokendist.Graph, error) { return tokendist.KaryTree(tokendist.KaryShape{Height: -1, Arity: 2}) }, tokendist.ErrBadParameter, []string{"h = -1"}},
		{"KaryTree(KaryShape{Height: 31, Arity: 2})", func() (*tokendist.Graph, error) { return tokendist.KaryTree(tokendist.KaryShape{Height: 31, Arity: 2}) }, tokendist.ErrBadParameter, []string{"h = 31"}},
		{"KaryTree(KaryShape{Height: 30, Arity: 2})", func() (*tokendist.Graph, error) { return tokendist.KaryTree(tokendist.KaryShape{Height: 30, Arity: 2}) }, tokendist.ErrBadParameter, []string{"h = 30"}},
		{"KaryTree(KaryShape{Height: 4, Arity: 1000})", func() (*tokendist.Graph, error) {
			return tokendist.KaryTree(tokendist.KaryShape{Height: 4, Arity: 1000})
		}, tokendist.ErrBadParameter, []string{"k = 1000"}},
		{"KaryTree(KaryShape{Height: 2^31, Arity: 1})", func() (*tokendist.Graph, error) {
			return tokendist.KaryTree(tokendist.KaryShape{Height: 1 << 31, Arity: 1})
		}, tokendist.ErrBadParameter, []string{"h = 2147483648"}},
		{"KaryTree(KaryShape{Height: 2^40, Arity: 1})", func() (*tokendist.Graph, error) {
			return tokendist.KaryTree(tokendist.KaryShape{Height: 1 << 40, Arity: 1})
		}, tokendist.ErrBadParameter, []string{"h = 1099511627776"}},
		{"KaryTree(KaryShape{Height: 2, Arity: 2^62})", func() (*tokendist.Graph, error) {
			return tokendist.KaryTree(tokendist.KaryShape{Height: 2, Arity: 1 << 62})
		}, tokendist.ErrBadParameter, []string{"4611686018427387904"}},
		{"RandomTree(0)", func() (*tokendist.Graph, error) { return tokendist.RandomTree(0, 1) }, tokendist.ErrBadParameter, []string{"n = 0"}},
		{"RandomTree(2^30+2)", func() (*tokendist.Graph, error) { return tokendist.RandomTree(1<<30+2, 1) }, tokendist.ErrBadParameter, []string{"1073741826"}},
		{"Hypercube(-1)", func() (*tokendist.Graph, error) { return tokendist.Hypercube(-1) }, tokendist.ErrBadParameter, []string{"d = -1"}},
		{"Hypercube(27)", func() (*tokendist.Graph, error) { return tokendist.Hypercube(27) }, tokendist.ErrBadParameter, []string{"d = 27"}},
		{"Hypercube(30)", func() (*tokendist.Graph, error) { return tokendist.Hypercube(30) }, tokendist.ErrBadParameter, []string{"d = 30"}},
		{"Hypercube(64)", func() (*tokendist.Graph, error) { return tokendist.Hypercube(64) }, tokendist.ErrBadParameter, []string{"d = 64"}},
		{"ShuffleExchange(0)", func() (*tokendist.Graph, error) { return tokendist.ShuffleExchange(0) }, tokendist.ErrBadParameter, []string{"d = 0"}},
		{"ShuffleExchange(30)", func() (*tokendist.Graph, error) { return tokendist.ShuffleExchange(30) }, tokendist.ErrBadParameter, []string{"d = 30"}},
		{"ShuffleExchange(-4)", func() (*tokendist.Graph, error) { return tokendist.ShuffleExchange(-4) }, tokendist.ErrBadParameter, []string{"d = -4"}},
		{"Torus()", func() (*tokendist.Graph, error) { return tokendist.Torus() }, tokendist.ErrBadParameter, []string{"side"}},
		{"Torus(3, 0)", func() (*tokendist.Graph, error) { return tokendist.Torus(3, 0) }, tokendist.ErrBadParameter, []string{"side 1", "length 0"}},
		{"Torus(-4)", func() (*tokendist.Graph, error) { return tokendist.Torus(-4) }, tokendist.ErrBadParameter, []string{"-4"}},
		{"Mesh(2, -1)", func() (*tokendist.Graph, error) { return tokendist.Mesh(2, -1) }, tokendist.ErrBadParameter, []string{"-1"}},
		{"Mesh(2^16, 2^16)", func() (*tokendist.Graph, error) { return tokendist.Mesh(1<<16, 1<<16) }, tokendist.ErrBadParameter, []string{"65536"}},
		{"Mesh(2^20, 2^20, 2^20)", func() (*tokendist.Graph, error) { return tokendist.Mesh(1<<20, 1<<20, 1<<20) }, tokendist.ErrBadParameter, []string{"1048576"}},
		{"Torus(2 × 30)", func() (*tokendist.Graph, error) { return tokendist.Torus(slices.Repeat([]int{2}, 30)...) }, tokendist.ErrBadParameter, []string{"edge ends"}},
		{"Torus(2^15, 2^15)", func() (*tokendist.Graph, error) { return tokendist.Torus(1<<15, 1<<15) }, tokendist.ErrBadParameter, []string{"edge ends"}},
		{"RandomRegular(0, 0)", func() (*tokendist.Graph, error) { return tokendist.RandomRegular(0, 0, 1) }, tokendist.ErrBadParameter, []string{"n = 0"}},
		{"RandomRegular(5, 5)", func() (*tokendist.Graph, error) { return tokendist.RandomRegular(5, 5, 1) }, tokendist.ErrBadParameter, []string{"d = 5"}},
		{"RandomRegular(5, 7)", func() (*tokendist.Graph, error) { return tokendist.RandomRegular(5, 7, 1) }, tokendist.ErrBadParameter, []string{"d = 7"}},
		{"RandomRegular(1, 2)", func() (*tokendist.Graph, error) { return tokendist.RandomRegular(1, 2, 1) }, tokendist.ErrBadParameter, []string{"d = 2"}},
		{"RandomRegular(2, 2)", func() (*tokendist.Graph, error) { return tokendist.RandomRegular(2, 2, 1) }, tokendist.ErrBadParameter, []string{"d = 2"}},
		{"RandomRegular(6, -1)", func() (*tokendist.Graph, error) { return tokendist.RandomRegular(6, -1, 1) }, tokendist.ErrBadParameter, []string{"d = -1"}},
		{"RandomRegular(5, 3) odd", func() (*tokendist.Graph, error) { return tokendist.RandomRegular(5, 3, 1) }, tokendist.ErrBadParameter, []string{"n = 5", "d = 3", "even"}},
		{"RandomRegular(2^30, 4)", func() (*tokendist.Graph, error) { return tokendist.RandomRegular(1<<30, 4, 1) }, tokendist.ErrBadParameter, []string{"1073741824"}},
		{"RandomRegular(2^31-2, 2)", func() (*tokendist.Graph, error) { return tokendist.RandomRegular(1<<31-2, 2, 1) }, tokendist.ErrBadParameter, []string{"2147483646"}},
		{"RandomRegular(4, 0)", func() (*tokendist.Graph, error) { return tokendist.RandomRegular(4, 0, 1) }, tokendist.ErrNotConnected, []string{"0-regular", "4 nodes"}},
		{"RandomRegular(6, 1)", func() (*tokendist.Graph, error) { return tokendist.RandomRegular(6, 1, 1) }, tokendist.ErrNotConnected, []string{"1-regular", "6 nodes"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			g, err := tc.build()
			require.Nil(t, g)
			fndCheckErr(t, err, tc.is, tc.words...)
			require.Less(t, time.Since(start), 200*time.Millisecond, "rejecting %s took too long", tc.name)
		})
	}
	_, err := tokendist.KaryTreeOrder(tokendist.KaryShape{Height: 1, Arity: 0})
	fndCheckErr(t, err, tokendist.ErrBadParameter, "k = 0")
	_, err = tokendist.KaryTreeOrder(tokendist.KaryShape{Height: -2, Arity: 3})
	fndCheckErr(t, err, tokendist.ErrBadParameter, "h = -2")
}

// TestGenLargestAccepted builds generators at the edge of the limits that are still
// cheap, so the rejections above are not too eager.
func TestGenLargestAccepted(t *testing.T) {
	g := fndMust(tokendist.Complete(300))
	require.Equal(t, 300*299/2, g.Size())
	g = fndMust(tokendist.KaryTree(tokendist.KaryShape{Height: 1000, Arity: 1}))
	require.Equal(t, 1001, g.Order())
	g = fndMust(tokendist.KaryTree(tokendist.KaryShape{Height: 1, Arity: 1 << 20}))
	require.Equal(t, 1<<20+1, g.Order())
	g = fndMust(tokendist.Torus(slices.Repeat([]int{2}, 12)...))
	require.Equal(t, 12, g.MaxDegree())
	n, err := tokendist.KaryTreeOrder(tokendist.KaryShape{Height: 30, Arity: 2})
	require.NoError(t, err)
	require.Equal(t, 1<<31-1, n)
	_, err = tokendist.KaryTreeOrder(tokendist.KaryShape{Height: 1<<31 - 2, Arity: 1})
	require.NoError(t, err)
}

// fndLimitNodes and fndLimitEnds are the documented representation limits: node IDs and
// edge-end indices fit in an int32.
const (
	fndLimitNodes = 1 << 31
	fndLimitEnds  = 1<<31 - 1
	// fndFuzzBudget bounds the graphs the fuzzer actually builds.
	fndFuzzBudget = 1 << 15
)

// fndGenCase is one generator call with the closed forms it must satisfy.
type fndGenCase struct {
	name      string
	build     func() (*tokendist.Graph, error)
	domain    bool    // parameters in the documented domain
	order     float64 // closed-form order (may be huge or +Inf)
	ends      float64 // closed-form upper bound on edge ends (2·size)
	exactEnds bool    // ends is exact (not just a bound)
	regular   int     // the degree of a regular family, or -1
	tree      bool
	notConn   bool // domain but no connected graph exists (RandomRegular d = 0, 1)
}

// fndKaryOrder returns (k^(h+1)-1)/(k-1), saturating above 2^62.
func fndKaryOrder(k, h int64) float64 {
	switch {
	case k < 1 || h < 0:
		return 0
	case k == 1:
		return float64(h) + 1
	}
	order, level := 1.0, 1.0
	for i := int64(0); i < h && order < 1<<62; i++ {
		level *= float64(k)
		order += level
	}
	return order
}

func fndGenFor(kind uint8, a, b, c int64, dims uint8, seed uint64) fndGenCase {
	fa, fb := float64(a), float64(b)
	switch kind % 11 {
	case 0:
		return fndGenCase{name: "Path", build: func() (*tokendist.Graph, error) { return tokendist.Path(int(a)) },
			domain: a >= 1, order: fa, ends: 2 * (fa - 1), exactEnds: true, regular: -1, tree: true}
	case 1:
		deg := 2 // Ring(1) is a single node and Ring(2) a single edge
		if a < 3 {
			deg = int(max(a, 1)) - 1
		}
		return fndGenCase{name: "Ring", build: func() (*tokendist.Graph, error) { return tokendist.Ring(int(a)) },
			domain: a >= 1, order: fa, ends: 2 * fa, exactEnds: a >= 3, regular: deg}
	case 2:
		return fndGenCase{name: "Star", build: func() (*tokendist.Graph, error) { return tokendist.Star(int(a)) },
			domain: a >= 1, order: fa, ends: 2 * (fa - 1), exactEnds: true, regular: -1, tree: true}
	case 3:
		return fndGenCase{name: "Complete", build: func() (*tokendist.Graph, error) { return tokendist.Complete(int(a)) },
			domain: a >= 1, order: fa, ends: fa * (fa - 1), exactEnds: true, regular: int(a - 1)}
	case 4:
		order := fndKaryOrder(a, b)
		return fndGenCase{name: "KaryTree", build: func() (*tokendist.Graph, error) {
			return tokendist.KaryTree(tokendist.KaryShape{Height: int(b), Arity: int(a)})
		},
			domain: a >= 1 && b >= 0, order: order, ends: 2 * (order - 1), exactEnds: true, regular: -1, tree: true}
	case 5:
		return fndGenCase{name: "RandomTree", build: func() (*tokendist.Graph, error) { return tokendist.RandomTree(int(a), seed) },
			domain: a >= 1, order: fa, ends: 2 * (fa - 1), exactEnds: true, regular: -1, tree: true}
	case 6:
		order := math.Ldexp(1, int(min(max(a, 0), 2000)))
		return fndGenCase{name: "Hypercube", build: func() (*tokendist.Graph, error) { return tokendist.Hypercube(int(a)) },
			domain: a >= 0, order: order, ends: fa * order, exactEnds: true, regular: int(a)}
	case 7:
		order := math.Ldexp(1, int(min(max(a, 0), 2000)))
		return fndGenCase{name: "ShuffleExchange", build: func() (*tokendist.Graph, error) { return tokendist.ShuffleExchange(int(a)) },
			domain: a >= 1, order: order, ends: 3 * order, regular: -1}
	case 8, 9:
		sides := []int64{a, b, c}[:dims%4]
		wrap := kind%11 == 8
		order, ends := 1.0, 0.0
		ok := len(sides) > 0
		for _, s := range sides {
			ok = ok && s >= 1
			order *= float64(s)
		}
		for _, s := range sides {
			switch {
			case s == 2:
				ends += order
			case s > 2 && wrap:
				ends += 2 * order
			case s > 2:
				ends += 2 * order / float64(s) * float64(s-1)
			}
		}
		is := make([]int, len(sides))
		for i, s := range sides {
			is[i] = int(s)
		}
		gc := fndGenCase{name: "Mesh", build: func() (*tokendist.Graph, error) { return tokendist.Mesh(is...) },
			domain: ok, order: order, ends: ends, exactEnds: true, regular: -1}
		if wrap {
			gc.name, gc.build = "Torus", func() (*tokendist.Graph, error) { return tokendist.Torus(is...) }
		}
		return gc
	default:
		n, d := a, b
		return fndGenCase{name: "RandomRegular", build: func() (*tokendist.Graph, error) { return tokendist.RandomRegular(int(n), int(d), seed) },
			domain: n >= 1 && d >= 0 && d < n && n*d%2 == 0, order: fa, ends: fa * fb, exactEnds: true, regular: int(d),
			notConn: (d == 0 && n > 1) || (d == 1 && n > 2)}
	}
}

// FuzzGenerators calls a generator with arbitrary parameters. Outside the documented
// domain, or beyond the int32 limits, it must return a "tokendist: " error (and no
// graph); inside, a simple connected graph with the closed-form order and size.
func FuzzGenerators(f *testing.F) {
	f.Add(uint8(0), int64(10), int64(0), int64(0), uint8(0), uint64(1))
	f.Add(uint8(1), int64(2), int64(0), int64(0), uint8(0), uint64(1))
	f.Add(uint8(3), int64(46342), int64(0), int64(0), uint8(0), uint64(1))
	f.Add(uint8(4), int64(3), int64(4), int64(0), uint8(0), uint64(1))
	f.Add(uint8(4), int64(1), int64(1<<40), int64(0), uint8(0), uint64(1))
	f.Add(uint8(5), int64(17), int64(0), int64(0), uint8(0), uint64(9))
	f.Add(uint8(6), int64(27), int64(0), int64(0), uint8(0), uint64(1))
	f.Add(uint8(7), int64(6), int64(0), int64(0), uint8(0), uint64(1))
	f.Add(uint8(8), int64(3), int64(2), int64(5), uint8(3), uint64(1))
	f.Add(uint8(9), int64(4), int64(1), int64(0), uint8(2), uint64(1))
	f.Add(uint8(10), int64(10), int64(3), int64(0), uint8(0), uint64(4))
	f.Add(uint8(10), int64(5), int64(4), int64(0), uint8(0), uint64(5))
	f.Add(uint8(10), int64(1), int64(2), int64(0), uint8(0), uint64(5))
	f.Fuzz(func(t *testing.T, kind uint8, a, b, c int64, dims uint8, seed uint64) {
		gc := fndGenFor(kind, a, b, c, dims, seed)
		tooBig := gc.order >= fndLimitNodes || gc.ends > fndLimitEnds
		if gc.domain && !tooBig && (gc.order > fndFuzzBudget || gc.ends > fndFuzzBudget) {
			return // valid but too large to build in a fuzz iteration
		}
		g, err := gc.build()
		if !gc.domain || tooBig || gc.notConn {
			if err == nil || g != nil {
				t.Fatalf("%s(%d, %d, %d; dims %d): accepted (%v, %v)", gc.name, a, b, c, dims, g, err)
			}
			require.True(t, strings.HasPrefix(err.Error(), "tokendist: "), "%s: error %q lacks the prefix", gc.name, err)
			want := tokendist.ErrBadParameter
			if gc.domain && !tooBig && gc.notConn {
				want = tokendist.ErrNotConnected
			}
			require.True(t, errors.Is(err, want), "%s: error %q is not %q", gc.name, err, want)
			return
		}
		require.NoError(t, err, "%s(%d, %d, %d; dims %d)", gc.name, a, b, c, dims)
		fndCheckSimple(t, g)
		require.Equal(t, gc.order, float64(g.Order()), "%s: order %d, want %v", gc.name, g.Order(), gc.order)
		if ends := float64(2 * g.Size()); ends > gc.ends || (gc.exactEnds && ends != gc.ends) {
			t.Fatalf("%s: %d edge ends, want %v (exact %v)", gc.name, 2*g.Size(), gc.ends, gc.exactEnds)
		}
		require.True(t, g.Connected(), "%s: not connected", gc.name)
		if gc.tree && !g.IsTree() {
			t.Fatalf("%s: not a tree", gc.name)
		}
		if gc.regular >= 0 && (!g.IsRegular() || g.MaxDegree() != gc.regular) {
			t.Fatalf("%s: degrees %d..%d, want %d-regular", gc.name, g.MinDegree(), g.MaxDegree(), gc.regular)
		}
	})
}
