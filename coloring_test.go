package tokendist_test

import (
	"errors"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
)

// dxRandomGraph returns G(n, p) built through NewGraph, fixed by seed.
func dxRandomGraph(t testing.TB, n int, p float64, seed uint64) *tokendist.Graph {
	r := rand.New(rand.NewPCG(seed, 11))
	var edges [][2]int
	for u := 0; u < n; u++ {
		for v := u + 1; v < n; v++ {
			if r.Float64() < p {
				edges = append(edges, [2]int{u, v})
			}
		}
	}
	g, err := tokendist.NewGraph(n, edges)
	require.NoError(t, err)
	return g
}

// dxRandomBipartite returns a random bipartite graph with sides a and b (not a forest in
// general), fixed by seed.
func dxRandomBipartite(t testing.TB, a, b int, p float64, seed uint64) *tokendist.Graph {
	r := rand.New(rand.NewPCG(seed, 12))
	var edges [][2]int
	for u := 0; u < a; u++ {
		for v := a; v < a+b; v++ {
			if r.Float64() < p {
				edges = append(edges, [2]int{u, v})
			}
		}
	}
	g, err := tokendist.NewGraph(a+b, edges)
	require.NoError(t, err)
	return g
}

// dxCheckColoring asserts that ec is a proper colouring of g whose matchings list every
// edge once with its colour, and returns χ.
func dxCheckColoring(t testing.TB, g *tokendist.Graph, ec *tokendist.EdgeColoring) int {
	t.Helper()
	require.NoError(t, ec.Validate(g))
	require.Same(t, g, ec.Graph())
	edges := 0
	for c := 0; c < ec.Colors(); c++ {
		m := ec.Matching(c)
		seen := map[int32]bool{}
		for i := 0; i < len(m); i += 2 {
			u, v := m[i], m[i+1]
			require.Less(t, u, v)
			require.Equal(t, c, ec.Color(int(u), int(v)))
			require.Equal(t, c, ec.Color(int(v), int(u)))
			require.False(t, seen[u] || seen[v], "colour %d is not a matching", c)
			seen[u], seen[v] = true, true
			edges++
		}
	}
	require.Equal(t, g.Size(), edges)
	return ec.Colors()
}

// TestColoringPropertiesRandomGraphs colours well over 1000 random graphs: Misra–Gries
// never uses more than Δ+1 colours and König exactly Δ on bipartite graphs (forests
// included); every colouring is validated.
func TestColoringPropertiesRandomGraphs(t *testing.T) {
	t.Parallel()
	graphs := 0
	check := func(g *tokendist.Graph) {
		graphs++
		mg, err := tokendist.MisraGriesColoring(g)
		require.NoError(t, err, "%v", g)
		require.LessOrEqual(t, dxCheckColoring(t, g, mg), g.MaxDegree()+1, "Misra–Gries on %v", g)
		if g.IsBipartite() {
			k, err := tokendist.BipartiteColoring(g)
			require.NoError(t, err, "%v", g)
			require.Equal(t, g.MaxDegree(), dxCheckColoring(t, g, k), "König on %v", g)
		} else {
			_, err := tokendist.BipartiteColoring(g)
			require.ErrorIs(t, err, tokendist.ErrBadParameter)
		}
		d, err := tokendist.DefaultColoring(g)
		require.NoError(t, err)
		dxCheckColoring(t, g, d)
	}
	for seed := uint64(0); seed < 300; seed++ {
		n := 1 + int(seed%40)
		tree, err := tokendist.RandomTree(n, seed)
		require.NoError(t, err)
		check(tree)
		check(dxRandomGraph(t, n, []float64{0.05, 0.1, 0.3, 0.7}[seed%4], seed))
		check(dxRandomBipartite(t, 1+int(seed%13), 1+int(seed%17), []float64{0.1, 0.3, 0.6}[seed%3], seed))
		d := 3 + int(seed%5)
		if nn := 10 + int(seed%30); nn*d%2 == 0 {
			g, err := tokendist.RandomRegular(nn, d, seed)
			require.NoError(t, err)
			check(g)
		}
	}
	for n := 1; n <= 12; n++ {
		for _, mk := range []func(int) (*tokendist.Graph, error){tokendist.Path, tokendist.Ring, tokendist.Star, tokendist.Complete} {
			g, err := mk(n)
			require.NoError(t, err)
			check(g)
		}
	}
	require.GreaterOrEqual(t, graphs, 1000)
}

// TestColoringForestsKönigSweep: every labelled tree on up to 7 nodes (Cayley's n^(n-2))
// gets exactly Δ colours.
func TestColoringForestsKönigSweep(t *testing.T) {
	t.Parallel()
	for n := 1; n <= 7; n++ {
		count := 0
		dxAllTrees(n, func(g *tokendist.Graph) {
			count++
			ec, err := tokendist.BipartiteColoring(g)
			require.NoError(t, err)
			require.Equal(t, g.MaxDegree(), dxCheckColoring(t, g, ec))
		})
		want := 1
		for i := 0; i < n-2; i++ {
			want *= n
		}
		require.Equal(t, want, count, "labelled trees on %d nodes", n)
	}
}

// TestBipartiteColoringForestGreedy: a forest takes BipartiteColoring's breadth-first
// greedy pass, as its doc states: from each unvisited node in index order, every node's
// edges to its children, in adjacency order, get the colours 0, 1, ... skipping the
// colour of the edge to its parent. The colours are recomputed here by that rule, on
// random trees and on a forest of two.
func TestBipartiteColoringForestGreedy(t *testing.T) {
	var gs []*tokendist.Graph
	for seed := range uint64(20) {
		gs = append(gs, must(tokendist.RandomTree(5+int(seed), seed)))
	}
	gs = append(gs, must(tokendist.NewGraph(7, [][2]int{{0, 3}, {3, 1}, {3, 2}, {4, 5}, {6, 5}})))
	for _, g := range gs {
		ec, err := tokendist.BipartiteColoring(g)
		require.NoError(t, err)
		n := g.Order()
		want := map[[2]int]int{}
		seen := make([]bool, n)
		for root := 0; root < n; root++ {
			if seen[root] {
				continue
			}
			seen[root] = true
			parentColor := map[int]int{root: -1}
			for queue := []int{root}; len(queue) > 0; queue = queue[1:] {
				u, c := queue[0], 0
				for _, w := range g.Neighbors(u) {
					v := int(w)
					if seen[v] {
						continue // the parent
					}
					if c == parentColor[u] {
						c++
					}
					seen[v] = true
					want[[2]int{min(u, v), max(u, v)}] = c
					parentColor[v] = c
					queue = append(queue, v)
					c++
				}
			}
		}
		require.Len(t, want, g.Size(), "%v", g)
		for e, c := range want {
			require.Equal(t, c, ec.Color(e[0], e[1]), "%v: edge %v", g, e)
		}
	}
}

func TestHypercubeColoring(t *testing.T) {
	for d := 0; d <= 9; d++ {
		ec, err := tokendist.HypercubeColoring(d)
		require.NoError(t, err)
		g, err := tokendist.Hypercube(d)
		require.NoError(t, err)
		require.NoError(t, ec.Validate(g)) // an equal graph built separately
		require.Equal(t, d, dxCheckColoring(t, ec.Graph(), ec))
		for _, e := range g.EdgeList() {
			require.Equal(t, bits.TrailingZeros(uint(e[0]^e[1])), ec.Color(e[0], e[1]))
		}
	}
}

func TestRingColoring(t *testing.T) {
	for n := 1; n <= 41; n++ {
		ec, err := tokendist.RingColoring(n)
		require.NoError(t, err)
		want := map[bool]int{true: 2, false: 3}[n%2 == 0]
		switch n {
		case 1:
			want = 0
		case 2:
			want = 1
		}
		require.Equal(t, want, dxCheckColoring(t, ec.Graph(), ec), "ring of %d", n)
	}
}

func TestGridColorings(t *testing.T) {
	for a := 1; a <= 7; a++ {
		for b := 1; b <= 6; b++ {
			for _, sides := range [][]int{{a}, {a, b}, {a, b, 3}, {2, a, b}} {
				tor, err := tokendist.TorusColoring(sides...)
				require.NoError(t, err)
				want := 0
				for _, s := range sides {
					switch {
					case s <= 2:
						want += s - 1 // no edge, or one per line
					case s%2 == 1:
						want += 3 // parity plus the wrap-around edge
					default:
						want += 2
					}
				}
				require.Equal(t, want, dxCheckColoring(t, tor.Graph(), tor), "Torus%v", sides)
				if dxAllEven(sides) {
					require.Equal(t, tor.Graph().MaxDegree(), tor.Colors())
				}
				mesh, err := tokendist.MeshColoring(sides...)
				require.NoError(t, err)
				require.Equal(t, mesh.Graph().MaxDegree(), dxCheckColoring(t, mesh.Graph(), mesh), "Mesh%v", sides)
			}
		}
	}
}

func dxAllEven(sides []int) bool {
	for _, s := range sides {
		if s%2 == 1 {
			return false
		}
	}
	return true
}

func TestColoringBadInput(t *testing.T) {
	ring5, _ := tokendist.Ring(5)
	ring6, _ := tokendist.Ring(6)
	path6, _ := tokendist.Path(6)
	ecRing6, err := tokendist.RingColoring(6)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		err  error
		want error
		text string
	}{
		{"König on an odd cycle", dxErr(tokendist.BipartiteColoring(ring5)), tokendist.ErrBadParameter, "odd cycle"},
		{"improper", dxErr(tokendist.NewEdgeColoring(ring6, func(u, v int) int { return 0 })), tokendist.ErrInvalidColoring, "node 0"},
		{"negative colour", dxErr(tokendist.NewEdgeColoring(ring6, func(u, v int) int { return -1 })), tokendist.ErrInvalidColoring, "colour -1"},
		{"other network", ecRing6.Validate(path6), tokendist.ErrInvalidColoring, "6 nodes and 6 edges"},
		{"same size, other edges", dxMustColor(t, path6).Validate(dxMustGraph(tokendist.NewGraph(6, [][2]int{{0, 2}, {1, 2}, {2, 3}, {3, 4}, {4, 5}}))), tokendist.ErrInvalidColoring, "node 0"},
		{"nil graph König", dxErr(tokendist.BipartiteColoring(nil)), tokendist.ErrNilNetwork, ""},
		{"nil graph Misra–Gries", dxErr(tokendist.MisraGriesColoring(nil)), tokendist.ErrNilNetwork, ""},
		{"nil graph NewEdgeColoring", dxErr(tokendist.NewEdgeColoring(nil, nil)), tokendist.ErrNilNetwork, ""},
		{"bad hypercube", dxErr(tokendist.HypercubeColoring(-1)), tokendist.ErrBadParameter, "-1"},
		{"bad ring", dxErr(tokendist.RingColoring(0)), tokendist.ErrBadParameter, "0"},
		{"bad torus", dxErr(tokendist.TorusColoring(3, 0)), tokendist.ErrBadParameter, "length 0"},
		{"bad mesh", dxErr(tokendist.MeshColoring()), tokendist.ErrBadParameter, "side"},
		{"nil colouring", (*tokendist.EdgeColoring)(nil).Validate(ring6), tokendist.ErrInvalidColoring, "nil"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Error(t, tc.err)
			require.True(t, errors.Is(tc.err, tc.want), "%v is not %v", tc.err, tc.want)
			require.True(t, strings.HasPrefix(tc.err.Error(), "tokendist: "), tc.err.Error())
			require.Contains(t, tc.err.Error(), tc.text)
		})
	}
}

func dxErr[T any](_ T, err error) error { return err }

func dxMustGraph(g *tokendist.Graph, err error) *tokendist.Graph {
	if err != nil {
		panic(err)
	}
	return g
}

func dxMustColor(t testing.TB, g *tokendist.Graph) *tokendist.EdgeColoring {
	ec, err := tokendist.DefaultColoring(g)
	require.NoError(t, err)
	return ec
}

// TestColoringHubs colours graphs with one or two hubs of high degree, where the colour
// table keeps short lists for the many low-degree nodes: K_{2,N} (bipartite with
// cycles), wheels (not bipartite), and a star plus a long cycle through its leaves.
func TestColoringHubs(t *testing.T) {
	for _, n := range []int{5, 40, 3000} {
		var k2n, wheel [][2]int
		for v := 2; v < n+2; v++ {
			k2n = append(k2n, [2]int{0, v}, [2]int{1, v})
		}
		for v := 1; v < n; v++ {
			wheel = append(wheel, [2]int{0, v}, [2]int{v, v%(n-1) + 1})
		}
		g, err := tokendist.NewGraph(n+2, k2n)
		require.NoError(t, err)
		k, err := tokendist.BipartiteColoring(g)
		require.NoError(t, err)
		require.Equal(t, n, dxCheckColoring(t, g, k))
		mg, err := tokendist.MisraGriesColoring(g)
		require.NoError(t, err)
		require.LessOrEqual(t, dxCheckColoring(t, g, mg), n+1)
		w, err := tokendist.NewGraph(n, wheel)
		require.NoError(t, err)
		mg, err = tokendist.MisraGriesColoring(w)
		require.NoError(t, err)
		require.LessOrEqual(t, dxCheckColoring(t, w, mg), w.MaxDegree()+1)
	}
	// A big bipartite hub graph: a dense n·Δ table would need 4·10^10 entries.
	var edges [][2]int
	const leaves = 200_000
	for v := 2; v < leaves+2; v++ {
		edges = append(edges, [2]int{0, v}, [2]int{1, v})
	}
	g, err := tokendist.NewGraph(leaves+2, edges)
	require.NoError(t, err)
	k, err := tokendist.BipartiteColoring(g)
	require.NoError(t, err)
	require.Equal(t, leaves, k.Colors())
}
