package tokendist

import (
	"slices"

	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/simple"
	"gonum.org/v1/gonum/mat"
)

// Graph implements gonum's graph.Undirected with node IDs 0..n-1, so gonum's path,
// community, spectral and traversal packages run on it directly. It also implements
// graph.WeightedUndirected with unit weights (self weight 0, absent weight 0), lists
// its edges (Edges) and exposes its adjacency matrix (Matrix); it passes the applicable
// contract tests of gonum.org/v1/gonum/graph/testgraph.
var (
	_ graph.Undirected         = (*Graph)(nil)
	_ graph.WeightedUndirected = (*Graph)(nil)
)

// Node returns the node with the given ID, or nil if it does not exist (gonum graph.Graph).
func (g *Graph) Node(id int64) graph.Node {
	if id < 0 || id >= int64(g.Order()) {
		return nil
	}
	return simple.Node(id)
}

// Nodes returns all nodes in ascending ID order (gonum graph.Graph); graph.Empty for a
// graph without nodes.
func (g *Graph) Nodes() graph.Nodes {
	if g.Order() == 0 {
		return graph.Empty
	}
	return &rangeNodes{next: 0, end: int64(g.Order()), cur: -1}
}

// From returns the neighbours of node id in ascending order (gonum graph.Graph);
// graph.Empty if id has none or does not exist.
func (g *Graph) From(id int64) graph.Nodes {
	if id < 0 || id >= int64(g.Order()) || g.Degree(int(id)) == 0 {
		return graph.Empty
	}
	return &listNodes{list: g.Neighbors(int(id)), pos: -1}
}

// HasEdgeBetween reports whether nodes xid and yid are adjacent (gonum graph.Graph).
func (g *Graph) HasEdgeBetween(xid, yid int64) bool {
	if xid < 0 || yid < 0 || xid >= int64(g.Order()) || yid >= int64(g.Order()) {
		return false
	}
	return g.HasEdge(int(xid), int(yid))
}

// Edge returns the edge from uid to vid, or nil if there is none (gonum graph.Graph).
func (g *Graph) Edge(uid, vid int64) graph.Edge {
	if !g.HasEdgeBetween(uid, vid) {
		return nil
	}
	return simple.Edge{F: simple.Node(uid), T: simple.Node(vid)}
}

// EdgeBetween returns the edge between xid and yid, or nil (gonum graph.Undirected).
func (g *Graph) EdgeBetween(xid, yid int64) graph.Edge { return g.Edge(xid, yid) }

// WeightedEdge returns the edge from uid to vid with weight 1, or nil if there is none
// (gonum graph.Weighted). O(log deg).
func (g *Graph) WeightedEdge(uid, vid int64) graph.WeightedEdge {
	if !g.HasEdgeBetween(uid, vid) {
		return nil
	}
	return simple.WeightedEdge{F: simple.Node(uid), T: simple.Node(vid), W: 1}
}

// WeightedEdgeBetween is WeightedEdge (gonum graph.WeightedUndirected). O(log deg).
func (g *Graph) WeightedEdgeBetween(xid, yid int64) graph.WeightedEdge {
	return g.WeightedEdge(xid, yid)
}

// Weight returns the weight of the link between xid and yid (gonum graph.Weighted): 1
// and true for adjacent nodes, 0 and true for a node and itself, 0 and false
// otherwise. The network is unweighted, so gonum's weighted algorithms count hops.
// O(log deg).
func (g *Graph) Weight(xid, yid int64) (w float64, ok bool) {
	switch {
	case xid == yid:
		return 0, g.Node(xid) != nil
	case g.HasEdgeBetween(xid, yid):
		return 1, true
	}
	return 0, false
}

// Edges returns every edge once, from the smaller to the larger ID, in EdgeList order
// (gonum's edge listers, e.g. graph encoders); graph.Empty for a graph without edges.
// Each step costs O(1) amortised.
func (g *Graph) Edges() graph.Edges {
	if g.Size() == 0 {
		return graph.Empty
	}
	return &edgeIter{g: g, end: -1}
}

// Matrix returns the adjacency matrix A (A[u][v] = 1 for a link, 0 elsewhere) as a
// read-only mat.Symmetric view that costs no memory; At costs O(log deg). Copy it with
// mat.SymDense.CopySym for dense linear algebra (spectral gaps, transition matrices).
func (g *Graph) Matrix() mat.Matrix { return adjacency{g} }

// adjacency is the adjacency matrix view of a Graph.
type adjacency struct{ g *Graph }

func (a adjacency) Dims() (r, c int)  { return a.g.Order(), a.g.Order() }
func (a adjacency) SymmetricDim() int { return a.g.Order() }
func (a adjacency) T() mat.Matrix     { return a }
func (a adjacency) At(i, j int) float64 {
	n := a.g.Order()
	if i < 0 || i >= n {
		panic(mat.ErrRowAccess)
	}
	if j < 0 || j >= n {
		panic(mat.ErrColAccess)
	}
	if a.g.HasEdge(i, j) {
		return 1
	}
	return 0
}

// rangeNodes iterates over the IDs next..end-1; cur is the current ID, or -1 before the
// first Next and after the last.
type rangeNodes struct {
	next, end int64
	cur       int64
}

func (it *rangeNodes) Next() bool {
	if it.next >= it.end {
		it.cur = -1
		return false
	}
	it.cur = it.next
	it.next++
	return true
}
func (it *rangeNodes) Len() int { return int(it.end - it.next) }
func (it *rangeNodes) Reset()   { it.next, it.cur = 0, -1 }
func (it *rangeNodes) Node() graph.Node {
	if it.cur < 0 {
		return nil
	}
	return simple.Node(it.cur)
}

// NodeSlice returns the remaining nodes and exhausts the iterator (gonum graph.NodeSlicer).
func (it *rangeNodes) NodeSlice() []graph.Node {
	out := make([]graph.Node, 0, it.Len())
	for it.Next() {
		out = append(out, it.Node())
	}
	return out
}

// listNodes iterates over an adjacency list.
type listNodes struct {
	list []int32
	pos  int
}

func (it *listNodes) Next() bool {
	if it.pos+1 >= len(it.list) {
		it.pos = len(it.list)
		return false
	}
	it.pos++
	return true
}
func (it *listNodes) Len() int { return max(0, len(it.list)-it.pos-1) }
func (it *listNodes) Reset()   { it.pos = -1 }
func (it *listNodes) Node() graph.Node {
	if it.pos < 0 || it.pos >= len(it.list) {
		return nil
	}
	return simple.Node(it.list[it.pos])
}

// NodeSlice returns the remaining nodes and exhausts the iterator (gonum graph.NodeSlicer).
func (it *listNodes) NodeSlice() []graph.Node {
	out := make([]graph.Node, 0, it.Len())
	for it.Next() {
		out = append(out, it.Node())
	}
	return out
}

// edgeIter walks the edge ends (u, v) with u < v in CSR order: end is the current end
// (-1 before the first Next, 2m after the last), u its owner, done the edges passed.
type edgeIter struct {
	g       *Graph
	end, u  int
	done    int
	current bool
}

func (it *edgeIter) Next() bool {
	g := it.g
	for it.end+1 < len(g.adj) {
		it.end++
		for it.end >= g.off[it.u+1] {
			it.u++
		}
		if int(g.adj[it.end]) > it.u {
			it.done++
			it.current = true
			return true
		}
	}
	it.end, it.current = len(g.adj), false
	return false
}
func (it *edgeIter) Len() int { return it.g.Size() - it.done }
func (it *edgeIter) Reset()   { it.end, it.u, it.done, it.current = -1, 0, 0, false }
func (it *edgeIter) Edge() graph.Edge {
	if !it.current {
		return nil
	}
	return simple.Edge{F: simple.Node(it.u), T: simple.Node(it.g.adj[it.end])}
}

// EdgeSlice returns the remaining edges and exhausts the iterator (gonum graph.EdgeSlicer).
func (it *edgeIter) EdgeSlice() []graph.Edge {
	out := make([]graph.Edge, 0, it.Len())
	for it.Next() {
		out = append(out, it.Edge())
	}
	return out
}

// FromGonum converts any gonum undirected graph to a *Graph. Nodes are relabelled
// densely in ascending order of their gonum IDs: node i of the result is ids[i] in g.
// Parallel lines of a multigraph become one link; self-loops are rejected (the package
// works on simple graphs). It costs O((n + m) log n).
func FromGonum(g graph.Undirected) (*Graph, []int64, error) {
	if g == nil {
		return nil, nil, ErrNilNetwork
	}
	ids := make([]int64, 0)
	for it := g.Nodes(); it.Next(); {
		ids = append(ids, it.Node().ID())
	}
	slices.Sort(ids)
	if len(ids) >= maxNodes {
		return nil, nil, badParam("gonum graph with %d nodes exceeds the int32 node limit", len(ids))
	}
	index := make(map[int64]int32, len(ids))
	for i, id := range ids {
		index[id] = int32(i)
	}
	var pairs []int32
	for i, id := range ids {
		for it := g.From(id); it.Next(); {
			j, ok := index[it.Node().ID()]
			if !ok {
				return nil, nil, badParam("gonum graph has an edge to unknown node %d", it.Node().ID())
			}
			if int(j) == i {
				return nil, nil, badParam("self-loop at gonum node %d", id)
			}
			if int(j) > i {
				pairs = append(pairs, int32(i), j)
			}
		}
	}
	out, err := fromPairs(len(ids), pairs, false)
	if err != nil {
		return nil, nil, err
	}
	return out, ids, nil
}
