package tokendist_test

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/multi"
	"gonum.org/v1/gonum/graph/path"
	"gonum.org/v1/gonum/graph/simple"
	"gonum.org/v1/gonum/graph/testgraph"
	"gonum.org/v1/gonum/graph/topo"
	"gonum.org/v1/gonum/mat"
)

// fndBuilder builds a *Graph for gonum's testgraph contract tests. The input goes
// through a simple.UndirectedGraph and FromGonum, so nodes are relabelled densely in
// ascending ID order; the returned nodes and edges carry the new IDs. Weights are
// dropped (a *Graph is unweighted: edges weigh 1, self and absent weights are 0), and
// inputs with a self-loop are skipped (ok = false): a *Graph is simple.
func fndBuilder(nodes []graph.Node, edges []testgraph.WeightedLine, _, _ float64) (graph.Graph, []graph.Node, []testgraph.Edge, float64, float64, bool) {
	ug := simple.NewUndirectedGraph()
	add := func(id int64) {
		if ug.Node(id) == nil {
			ug.AddNode(simple.Node(id))
		}
	}
	for _, n := range nodes {
		add(n.ID())
	}
	for _, e := range edges {
		f, t := e.From().ID(), e.To().ID()
		if f == t {
			return nil, nil, nil, 0, 0, false
		}
		add(f)
		add(t)
		ug.SetEdge(simple.Edge{F: simple.Node(f), T: simple.Node(t)})
	}
	g, ids, err := tokendist.FromGonum(ug)
	if err != nil {
		panic(err)
	}
	index := map[int64]int64{}
	var outNodes []graph.Node
	for i, id := range ids {
		index[id] = int64(i)
		outNodes = append(outNodes, simple.Node(i))
	}
	var outEdges []testgraph.Edge
	seen := map[[2]int64]bool{}
	for _, e := range edges {
		f, t := index[e.From().ID()], index[e.To().ID()]
		if seen[[2]int64{f, t}] || seen[[2]int64{t, f}] {
			continue
		}
		seen[[2]int64{f, t}] = true
		outEdges = append(outEdges, simple.Edge{F: simple.Node(f), T: simple.Node(t)})
	}
	return g, outNodes, outEdges, 0, 0, true
}

// TestGonumTestgraph runs gonum's contract tests for graph implementations that apply to
// an immutable simple undirected graph (the Add/Remove tests need a mutable graph).
func TestGonumTestgraph(t *testing.T) {
	const useEmpty, reversesEdges = true, true
	t.Run("EdgeExistence", func(t *testing.T) { testgraph.EdgeExistence(t, fndBuilder, reversesEdges) })
	t.Run("NodeExistence", func(t *testing.T) { testgraph.NodeExistence(t, fndBuilder) })
	t.Run("ReturnAdjacentNodes", func(t *testing.T) { testgraph.ReturnAdjacentNodes(t, fndBuilder, useEmpty, reversesEdges) })
	t.Run("ReturnAllEdges", func(t *testing.T) { testgraph.ReturnAllEdges(t, fndBuilder, useEmpty) })
	t.Run("ReturnAllNodes", func(t *testing.T) { testgraph.ReturnAllNodes(t, fndBuilder, useEmpty) })
	t.Run("ReturnEdgeSlice", func(t *testing.T) { testgraph.ReturnEdgeSlice(t, fndBuilder, useEmpty) })
	t.Run("ReturnNodeSlice", func(t *testing.T) { testgraph.ReturnNodeSlice(t, fndBuilder, useEmpty) })
	t.Run("Weight", func(t *testing.T) { testgraph.Weight(t, fndBuilder) })
	t.Run("AdjacencyMatrix", func(t *testing.T) { testgraph.AdjacencyMatrix(t, fndBuilder) })
}

// fndGenerated returns small instances of every generator.
func fndGenerated() map[string]*tokendist.Graph {
	return map[string]*tokendist.Graph{
		"Path(7)":     fndMust(tokendist.Path(7)),
		"Ring(9)":     fndMust(tokendist.Ring(9)),
		"Star(5)":     fndMust(tokendist.Star(5)),
		"Complete(6)": fndMust(tokendist.Complete(6)),
		"KaryTree(KaryShape{Height: 2, Arity: 3})": fndMust(tokendist.KaryTree(tokendist.KaryShape{Height: 2, Arity: 3})),
		"RandomTree(30)":        fndMust(tokendist.RandomTree(30, 4)),
		"Hypercube(4)":          fndMust(tokendist.Hypercube(4)),
		"ShuffleExchange(5)":    fndMust(tokendist.ShuffleExchange(5)),
		"Torus(3, 4, 2)":        fndMust(tokendist.Torus(3, 4, 2)),
		"Mesh(4, 3)":            fndMust(tokendist.Mesh(4, 3)),
		"RandomRegular(20, 3)":  fndMust(tokendist.RandomRegular(20, 3, 2)),
		"RandomRegular(12, 8)":  fndMust(tokendist.RandomRegular(12, 8, 2)),
		"Path(1)":               fndMust(tokendist.Path(1)),
		"NewGraph(5, isolated)": fndMust(tokendist.NewGraph(5, [][2]int{{1, 3}})),
	}
}

// TestGonumIterators checks the iterator rules gonum documents: Len is the number of
// items left, Node is nil before the first Next and after the last, Reset restarts,
// and NodeSlice returns the remaining nodes.
func TestGonumIterators(t *testing.T) {
	for name, g := range fndGenerated() {
		check := func(what string, it graph.Nodes, want []int64) {
			t.Helper()
			for round := 0; round < 2; round++ {
				require.Equal(t, len(want), it.Len(), "%s %s: Len", name, what)
				if len(want) == 0 {
					require.True(t, it == graph.Empty, "%s %s: empty iterator is %T, not graph.Empty", name, what, it)
				}
				require.Nil(t, it.Node(), "%s %s: Node before Next", name, what)
				var got []int64
				for it.Next() {
					got = append(got, it.Node().ID())
					require.Equal(t, len(want)-len(got), it.Len(), "%s %s: Len during iteration", name, what)
				}
				require.Equal(t, want, got, "%s %s", name, what)
				require.Nil(t, it.Node(), "%s %s: Node after the last Next", name, what)
				require.False(t, it.Next(), "%s %s: Next after the end", name, what)
				it.Reset()
			}
			// NodeSlice returns what is left.
			s, ok := it.(graph.NodeSlicer)
			require.True(t, ok, "%s %s: no NodeSlicer", name, what)
			if len(want) > 0 {
				it.Next()
				got := s.NodeSlice()
				var ids []int64
				for _, n := range got {
					ids = append(ids, n.ID())
				}
				require.True(t, slices.Equal(want[1:], ids), "%s %s: NodeSlice after one Next: %v", name, what, ids)
				require.Zero(t, it.Len())
			}
		}
		all := make([]int64, g.Order())
		for v := range all {
			all[v] = int64(v)
		}
		check("Nodes", g.Nodes(), all)
		for v := 0; v < g.Order(); v++ {
			var want []int64
			for _, w := range g.Neighbors(v) {
				want = append(want, int64(w))
			}
			check("From", g.From(int64(v)), want)
		}
		for _, bad := range []int64{-1, int64(g.Order()), math.MaxInt64} {
			require.True(t, g.From(bad) == graph.Empty)
			require.Nil(t, g.Node(bad))
			require.Nil(t, g.Edge(0, bad))
			require.False(t, g.HasEdgeBetween(bad, 0))
		}
	}
}

// TestGonumEdgesAndWeights checks Edges (each edge once, u < v), the unit weights and
// the adjacency matrix against the adjacency lists.
func TestGonumEdgesAndWeights(t *testing.T) {
	for name, g := range fndGenerated() {
		var got [][2]int
		for it := g.Edges(); it.Next(); {
			e := it.Edge()
			got = append(got, [2]int{int(e.From().ID()), int(e.To().ID())})
		}
		want := g.EdgeList()
		if len(want) == 0 {
			want = nil
			require.True(t, g.Edges() == graph.Empty)
		}
		require.Equal(t, want, got, name)

		m := g.Matrix()
		r, c := m.Dims()
		require.Equal(t, [2]int{g.Order(), g.Order()}, [2]int{r, c}, name)
		sym, ok := m.(mat.Symmetric)
		require.True(t, ok, "%s: Matrix is not mat.Symmetric", name)
		require.Equal(t, g.Order(), sym.SymmetricDim())
		dense := mat.NewSymDense(max(1, g.Order()), nil)
		if g.Order() > 0 {
			dense.CopySym(sym)
		}
		for u := 0; u < g.Order(); u++ {
			for v := 0; v < g.Order(); v++ {
				want := 0.0
				if g.HasEdge(u, v) {
					want = 1
				}
				require.Equal(t, want, m.At(u, v), "%s At(%d, %d)", name, u, v)
				require.Equal(t, want, dense.At(u, v))
				w, ok := g.Weight(int64(u), int64(v))
				require.Equal(t, want, w)
				require.Equal(t, u == v || want == 1, ok, "%s Weight(%d, %d) ok", name, u, v)
				we := g.WeightedEdge(int64(u), int64(v))
				require.Equal(t, want == 1, we != nil)
				if we != nil {
					require.Equal(t, 1.0, we.Weight())
					require.Equal(t, [2]int64{int64(u), int64(v)}, [2]int64{we.From().ID(), we.To().ID()})
					require.Equal(t, we, g.WeightedEdgeBetween(int64(u), int64(v)))
				}
			}
		}
		// Degrees are the row sums.
		for u := 0; u < g.Order(); u++ {
			require.Equal(t, float64(g.Degree(u)), mat.Sum(mat.NewVecDense(g.Order(), mat.Row(nil, u, m))))
		}
	}
}

// TestGonumAlgorithms runs gonum algorithms on *Graph and compares with the package's
// own queries: all-pairs shortest paths with BFS, connected components with Connected.
func TestGonumAlgorithms(t *testing.T) {
	for name, g := range fndGenerated() {
		paths := path.DijkstraAllPaths(g)
		for u := 0; u < g.Order(); u++ {
			dist, err := g.BFS(u)
			require.NoError(t, err)
			for v := 0; v < g.Order(); v++ {
				w := paths.Weight(int64(u), int64(v))
				if dist[v] < 0 {
					require.True(t, math.IsInf(w, 1), "%s: %d-%d", name, u, v)
				} else {
					require.Equal(t, float64(dist[v]), w, "%s: %d-%d", name, u, v)
				}
			}
		}
		require.Equal(t, g.Connected(), len(topo.ConnectedComponents(g)) == 1, name)
	}
}

// TestGonumFromGonumRoundTrip copies every generated graph into gonum's
// simple.UndirectedGraph and back.
func TestGonumFromGonumRoundTrip(t *testing.T) {
	for name, g := range fndGenerated() {
		ug := simple.NewUndirectedGraph()
		graph.Copy(ug, g)
		back, ids, err := tokendist.FromGonum(ug)
		require.NoError(t, err, name)
		require.Len(t, ids, g.Order())
		for i, id := range ids {
			require.Equal(t, int64(i), id)
		}
		require.Equal(t, g.Order(), back.Order(), name)
		require.Equal(t, g.EdgeList(), back.EdgeList(), name)
	}
}

// TestGonumFromGonumRelabels converts gonum graphs with sparse, negative and unsorted
// node IDs: node i of the result is ids[i], ids ascend, and edges map exactly.
func TestGonumFromGonumRelabels(t *testing.T) {
	ids := []int64{900, -7, 42, 3, 1 << 40, -1 << 50, 8}
	for seed := uint64(0); seed < 30; seed++ {
		src := fndRandomGraph(t, len(ids), 0.4, seed)
		ug := simple.NewUndirectedGraph()
		for _, id := range ids {
			ug.AddNode(simple.Node(id))
		}
		for _, e := range src.EdgeList() {
			ug.SetEdge(simple.Edge{F: simple.Node(ids[e[0]]), T: simple.Node(ids[e[1]])})
		}
		g, got, err := tokendist.FromGonum(ug)
		require.NoError(t, err)
		fndCheckSimple(t, g)
		require.True(t, slices.IsSorted(got))
		require.ElementsMatch(t, ids, got)
		require.Equal(t, src.Size(), g.Size())
		for u := 0; u < g.Order(); u++ {
			for v := 0; v < g.Order(); v++ {
				require.Equal(t, ug.HasEdgeBetween(got[u], got[v]), g.HasEdge(u, v))
			}
		}
	}
	// Parallel lines of a multigraph collapse to one edge.
	mg := multi.NewUndirectedGraph()
	mg.SetLine(mg.NewLine(multi.Node(5), multi.Node(10)))
	mg.SetLine(mg.NewLine(multi.Node(10), multi.Node(5)))
	mg.SetLine(mg.NewLine(multi.Node(10), multi.Node(11)))
	g, got, err := tokendist.FromGonum(mg)
	require.NoError(t, err)
	require.Equal(t, []int64{5, 10, 11}, got)
	require.Equal(t, [][2]int{{0, 1}, {1, 2}}, g.EdgeList())
	// An empty gonum graph gives an empty *Graph.
	g, got, err = tokendist.FromGonum(simple.NewUndirectedGraph())
	require.NoError(t, err)
	require.Zero(t, g.Order())
	require.Empty(t, got)
}

// fndHiddenNode hides one node of a gonum graph from Nodes but not from From.
type fndHiddenNode struct {
	*simple.UndirectedGraph
	hide int64
}

func (h fndHiddenNode) Nodes() graph.Nodes {
	var out []graph.Node
	for _, n := range graph.NodesOf(h.UndirectedGraph.Nodes()) {
		if n.ID() != h.hide {
			out = append(out, n)
		}
	}
	return newFndNodes(out)
}

type fndNodes struct {
	nodes []graph.Node
	i     int
}

func newFndNodes(n []graph.Node) *fndNodes { return &fndNodes{nodes: n, i: -1} }
func (it *fndNodes) Next() bool            { it.i++; return it.i < len(it.nodes) }
func (it *fndNodes) Len() int              { return max(0, len(it.nodes)-it.i-1) }
func (it *fndNodes) Reset()                { it.i = -1 }
func (it *fndNodes) Node() graph.Node {
	if it.i < 0 || it.i >= len(it.nodes) {
		return nil
	}
	return it.nodes[it.i]
}

func TestGonumFromGonumRejects(t *testing.T) {
	_, _, err := tokendist.FromGonum(nil)
	fndCheckErr(t, err, tokendist.ErrNilNetwork)

	loop := multi.NewUndirectedGraph()
	loop.SetLine(loop.NewLine(multi.Node(3), multi.Node(4)))
	loop.SetLine(loop.NewLine(multi.Node(4), multi.Node(4)))
	g, _, err := tokendist.FromGonum(loop)
	require.Nil(t, g)
	fndCheckErr(t, err, tokendist.ErrBadParameter, "self-loop", "4")

	ug := simple.NewUndirectedGraph()
	ug.SetEdge(simple.Edge{F: simple.Node(1), T: simple.Node(77)})
	g, _, err = tokendist.FromGonum(fndHiddenNode{ug, 77})
	require.Nil(t, g)
	fndCheckErr(t, err, tokendist.ErrBadParameter, "unknown node 77")
}
