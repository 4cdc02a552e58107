package tokendist

import (
	"fmt"
	"slices"

	"github.com/tokendist/tokendist/internal/errs"
	"github.com/tokendist/tokendist/internal/nilcheck"
	"github.com/tokendist/tokendist/internal/par"
)

// Network is a network of processors: nodes are the dense integers 0..Order()-1 and
// links are undirected.
//
// Rules for implementations: Neighbors(v) returns v's neighbours in ascending order,
// without duplicates and without v itself; v is adjacent to w exactly when w is adjacent
// to v; the returned slice is read-only and stays valid while the network is used.
// *Graph is the package's implementation; any Network converts to one with AsGraph.
type Network interface {
	// Order returns the number of nodes.
	Order() int
	// Neighbors returns the neighbours of node v in ascending order. Callers must not
	// modify the slice.
	Neighbors(v int) []int32
}

// maxEdgeEnds bounds the adjacency array so that every index fits in an int32.
const maxEdgeEnds = 1<<31 - 1

// badParam returns an error wrapping ErrBadParameter with a message that names the value.
func badParam(format string, args ...any) error { return errs.BadParam(format, args...) }

// Graph is a simple undirected graph in compressed sparse row form: the neighbours of v
// are adj[off[v]:off[v+1]], ascending, stored as int32 (4 bytes per edge end). A Graph
// is immutable once built and safe for concurrent readers.
//
// Graph implements Network and gonum's graph.Undirected (see graph_gonum.go), so every gonum
// graph algorithm runs on it.
type Graph struct {
	off []int   // len n+1
	adj []int32 // len 2m
}

// NewGraph returns the simple undirected graph on nodes 0..n-1 with the given edges.
// It rejects self-loops, repeated edges and endpoints outside 0..n-1. It costs O(n + m
// log Δ) time and O(n + m) memory.
func NewGraph(n int, edges [][2]int) (*Graph, error) {
	if n < 0 {
		return nil, badParam("negative order %d", n)
	}
	if n >= maxNodes {
		return nil, badParam("order %d exceeds the int32 node limit", n)
	}
	flat := make([]int32, 0, 2*len(edges))
	for i, e := range edges {
		for _, x := range e {
			if x < 0 || x >= n {
				return nil, badParam("edge %d (%d, %d) has an endpoint outside 0..%d", i, e[0], e[1], n-1)
			}
		}
		flat = append(flat, int32(e[0]), int32(e[1]))
	}
	return fromPairs(n, flat, false)
}

// fromPairs builds a Graph from a flat list of endpoint pairs. With dedupe, self-loops
// and repeated edges are dropped silently; without it they are errors.
func fromPairs(n int, pairs []int32, dedupe bool) (*Graph, error) {
	if len(pairs) > maxEdgeEnds {
		return nil, badParam("%d edge ends exceed the int32 limit", len(pairs))
	}
	if n < 0 || n >= maxNodes {
		return nil, badParam("order %d outside 0..%d", n, maxNodes-1)
	}
	// off (8 bytes a node, twice) and adj (4 bytes an end).
	if err := checkAlloc(fmt.Sprintf("graph of %d nodes and %d edge ends", n, len(pairs)), int64(n)+1+int64(len(pairs)), 16); err != nil {
		return nil, err
	}
	off := make([]int, n+1)
	for _, x := range pairs {
		off[x+1]++
	}
	for v := 0; v < n; v++ {
		off[v+1] += off[v]
	}
	adj := make([]int32, len(pairs))
	fill := slices.Clone(off[:n])
	for i := 0; i < len(pairs); i += 2 {
		u, v := pairs[i], pairs[i+1]
		adj[fill[u]] = v
		fill[u]++
		adj[fill[v]] = u
		fill[v]++
	}
	g := &Graph{off: off, adj: adj}
	if err := g.normalize(dedupe); err != nil {
		return nil, err // never hand out a half-normalised graph
	}
	return g, nil
}

// normalize sorts each adjacency list and either removes or rejects loops and repeats.
func (g *Graph) normalize(dedupe bool) error {
	n := g.Order()
	w := 0
	start := 0
	for v := 0; v < n; v++ {
		nb := g.adj[start:g.off[v+1]]
		slices.Sort(nb)
		newStart := w
		for i, x := range nb {
			if int(x) == v || (i > 0 && x == nb[i-1]) {
				if !dedupe {
					if int(x) == v {
						return badParam("self-loop at node %d", v)
					}
					return badParam("repeated edge (%d, %d)", v, x)
				}
				continue
			}
			g.adj[w] = x
			w++
		}
		start = g.off[v+1]
		g.off[v] = newStart
	}
	g.off[n] = w
	g.adj = slices.Clip(g.adj[:w])
	return nil
}

// Order returns the number of nodes. It costs O(1).
func (g *Graph) Order() int { return len(g.off) - 1 }

// Neighbors returns the neighbours of v in ascending order; the slice must not be
// modified. It costs O(1). It panics if v is not a node (0 ≤ v < Order()), as a slice
// index does.
func (g *Graph) Neighbors(v int) []int32 { return g.adj[g.off[v]:g.off[v+1]:g.off[v+1]] }

// Degree returns the number of neighbours of v. It costs O(1). It panics if v is not a
// node (0 ≤ v < Order()), as a slice index does.
func (g *Graph) Degree(v int) int { return g.off[v+1] - g.off[v] }

// Size returns the number of edges. It costs O(1).
func (g *Graph) Size() int { return len(g.adj) / 2 }

// MaxDegree returns the largest degree (0 for a graph without nodes). It costs O(n).
func (g *Graph) MaxDegree() int {
	d := 0
	for v := 0; v < g.Order(); v++ {
		d = max(d, g.Degree(v))
	}
	return d
}

// MinDegree returns the smallest degree (0 for a graph without nodes). It costs O(n).
func (g *Graph) MinDegree() int {
	if g.Order() == 0 {
		return 0
	}
	d := g.Degree(0)
	for v := 1; v < g.Order(); v++ {
		d = min(d, g.Degree(v))
	}
	return d
}

// HasEdge reports whether u and v are adjacent, by binary search: O(log deg u). A u or v
// outside 0..Order()-1 is adjacent to nothing, so HasEdge reports false for it (it never
// panics): "is there such an edge" has the answer no, which is not an invalid input.
func (g *Graph) HasEdge(u, v int) bool {
	if u < 0 || v < 0 || u >= g.Order() || v >= g.Order() {
		return false
	}
	_, ok := slices.BinarySearch(g.Neighbors(u), int32(v))
	return ok
}

// EdgeIndex returns the position of v in u's adjacency list, that is the index of the
// edge end (u, v) in the CSR array, or -1 if u and v are not adjacent. Edge ends are
// numbered 0..2·Size()-1; they index per-end arrays such as flows.
// It returns -1 too if u or v is not a node (it never panics).
func (g *Graph) EdgeIndex(u, v int) int {
	if u < 0 || u >= g.Order() || v < 0 || v >= g.Order() {
		return -1
	}
	i, ok := slices.BinarySearch(g.Neighbors(u), int32(v))
	if !ok {
		return -1
	}
	return g.off[u] + i
}

// Offset returns the index of the first edge end of v in the CSR array; the ends of v
// are Offset(v)..Offset(v+1)-1.
// It panics unless 0 ≤ v ≤ Order(), as a slice index does.
func (g *Graph) Offset(v int) int { return g.off[v] }

// EdgeList returns every edge once as a pair (u, v) with u < v, ordered by u then v. It
// costs O(n + m) and allocates the list.
func (g *Graph) EdgeList() [][2]int {
	out := make([][2]int, 0, g.Size())
	for u := 0; u < g.Order(); u++ {
		for _, v := range g.Neighbors(u) {
			if int(v) > u {
				out = append(out, [2]int{u, int(v)})
			}
		}
	}
	return out
}

// AsGraph returns net as a *Graph: net itself if it is one, otherwise a copy built from
// its Neighbors lists, which are checked against the Network rules. It costs O(1) for a
// *Graph and O(n + m log Δ) for a copy.
func AsGraph(net Network) (*Graph, error) {
	if nilcheck.IsNil(net) {
		return nil, fmt.Errorf("%w (%T)", ErrNilNetwork, net)
	}
	if g, ok := net.(*Graph); ok {
		if g == nil {
			return nil, ErrNilNetwork
		}
		return g, nil
	}
	n := net.Order()
	if n < 0 {
		return nil, badParam("network order %d is negative", n)
	}
	if n >= maxNodes {
		return nil, badParam("network order %d exceeds the int32 node limit", n)
	}
	if err := checkAlloc(fmt.Sprintf("AsGraph of %d nodes", n), int64(n)+1, 16); err != nil {
		return nil, err
	}
	var pairs []int32
	for u := 0; u < n; u++ {
		nb := net.Neighbors(u)
		for i, v := range nb {
			if v < 0 || int(v) >= n || int(v) == u || (i > 0 && nb[i-1] >= v) {
				return nil, badParam("neighbours of node %d are not ascending distinct nodes other than %d (entry %d: %d)", u, u, i, v)
			}
			if int(v) > u {
				if len(pairs) >= maxEdgeEnds-1 {
					return nil, badParam("network has more than %d edge ends", maxEdgeEnds)
				}
				pairs = append(pairs, int32(u), v)
			}
		}
	}
	g, err := fromPairs(n, pairs, false)
	if err != nil {
		return nil, err
	}
	// g holds each link as listed by its smaller end; the lists agree exactly when every
	// link is listed by both ends (equal degrees alone are not enough).
	for u := 0; u < n; u++ {
		if !slices.Equal(g.Neighbors(u), net.Neighbors(u)) {
			return nil, badParam("network is not symmetric at node %d", u)
		}
	}
	return g, nil
}

// BFS returns the distance in hops from root to every node; unreachable nodes get -1.
// It costs O(n + m).
func (g *Graph) BFS(root int) ([]int32, error) {
	if root < 0 || root >= g.Order() {
		return nil, badParam("root %d outside 0..%d", root, g.Order()-1)
	}
	dist := make([]int32, g.Order())
	g.bfs(root, dist, make([]int32, 0, g.Order()))
	return dist, nil
}

// bfs fills dist (len n) with hop distances from root (-1 when unreachable), using
// queue's storage, and returns the visit order: its last node is farthest from root.
func (g *Graph) bfs(root int, dist []int32, queue []int32) []int32 {
	for i := range dist {
		dist[i] = -1
	}
	dist[root] = 0
	queue = append(queue[:0], int32(root))
	for h := 0; h < len(queue); h++ {
		u := queue[h]
		du := dist[u] + 1
		for _, v := range g.Neighbors(int(u)) {
			if dist[v] < 0 {
				dist[v] = du
				queue = append(queue, v)
			}
		}
	}
	return queue
}

// farthest returns the last node of a BFS visit order and its distance.
func farthest(order, dist []int32) (int, int32) {
	v := order[len(order)-1]
	return int(v), dist[v]
}

// Connected reports whether the graph is connected (the empty graph is not; a single
// node is). It costs O(n + m).
func (g *Graph) Connected() bool {
	if g.Order() == 0 {
		return false
	}
	// A bit per node and a queue of int32: 4.1 B per node (LambdaMax calls this on
	// every network it prepares, within its memory budget).
	n := g.Order()
	seen := make([]uint64, (n+63)/64)
	queue := make([]int32, 1, n)
	seen[0] = 1
	for h := 0; h < len(queue); h++ {
		for _, j := range g.adj[g.off[queue[h]]:g.off[queue[h]+1]] {
			if seen[j>>6]&(1<<(j&63)) == 0 {
				seen[j>>6] |= 1 << (j & 63)
				queue = append(queue, j)
			}
		}
	}
	return len(queue) == n
}

// IsTree reports whether the graph is connected with exactly n-1 edges. It costs O(n +
// m).
func (g *Graph) IsTree() bool { return g.Order() > 0 && g.Size() == g.Order()-1 && g.Connected() }

// IsRegular reports whether every node has the same degree. It costs O(n).
func (g *Graph) IsRegular() bool { return g.MinDegree() == g.MaxDegree() }

// IsBipartite reports whether the graph has a proper 2-colouring of its nodes. It costs
// O(n + m).
func (g *Graph) IsBipartite() bool {
	_, ok := g.Bipartition()
	return ok
}

// Bipartition returns a side (0 or 1) for every node such that every edge joins the two
// sides, and true; or nil and false if the graph has an odd cycle. Each component's
// smallest node is on side 0. It costs O(n + m).
func (g *Graph) Bipartition() ([]int8, bool) {
	n := g.Order()
	side := make([]int8, n)
	for i := range side {
		side[i] = -1
	}
	queue := make([]int32, 0, n)
	for s := 0; s < n; s++ {
		if side[s] >= 0 {
			continue
		}
		side[s] = 0
		queue = append(queue[:0], int32(s))
		for h := 0; h < len(queue); h++ {
			u := queue[h]
			for _, v := range g.Neighbors(int(u)) {
				switch side[v] {
				case -1:
					side[v] = 1 - side[u]
					queue = append(queue, v)
				case side[u]:
					return nil, false
				}
			}
		}
	}
	return side, true
}

// Eccentricities returns, for every node, the largest distance to any other node. It
// needs a connected graph and costs O(n·(n+m)) (O(n) for a tree is not used here: see
// Diameter).
func (g *Graph) Eccentricities() ([]int, error) {
	if err := requireConnected(g); err != nil {
		return nil, err
	}
	n := g.Order()
	ecc := make([]int, n)
	parallelChunks(n, func(lo, hi int) {
		dist := make([]int32, n)
		queue := make([]int32, 0, n)
		for v := lo; v < hi; v++ {
			_, e := farthest(g.bfs(v, dist, queue), dist)
			ecc[v] = int(e)
		}
	})
	return ecc, nil
}

// Diameter returns the largest distance between two nodes of a connected graph. Trees
// take two breadth-first searches (O(n)); other graphs one per node (O(n·(n+m)), spread
// over the available cores).
func (g *Graph) Diameter() (int, error) {
	if g.Size() == g.Order()-1 && g.Order() > 0 {
		// Possibly a tree: the first search also decides connectivity.
		dist := make([]int32, g.Order())
		queue := make([]int32, 0, g.Order())
		order := g.bfs(0, dist, queue)
		if len(order) != g.Order() {
			return 0, requireConnected(g)
		}
		far, _ := farthest(order, dist)
		_, d := farthest(g.bfs(far, dist, queue), dist)
		return int(d), nil
	}
	ecc, err := g.Eccentricities()
	if err != nil {
		return 0, err
	}
	return slices.Max(ecc), nil
}

// Center returns a node of least eccentricity (the smallest such node). Trees take O(n)
// (the middle of a longest path); other graphs O(n·(n+m)).
func (g *Graph) Center() (int, error) {
	if err := requireConnected(g); err != nil {
		return 0, err
	}
	n := g.Order()
	if g.Size() != n-1 {
		ecc, _ := g.Eccentricities()
		best := 0
		for v, e := range ecc {
			if e < ecc[best] {
				best = v
			}
		}
		return best, nil
	}
	// Tree: the centres are the middle nodes of a longest path; take the smaller.
	dist := make([]int32, n)
	queue := make([]int32, 0, n)
	a, _ := farthest(g.bfs(0, dist, queue), dist)
	dA := make([]int32, n)
	b, _ := farthest(g.bfs(a, dA, queue), dA)
	g.bfs(b, dist, queue)
	diam := dA[b]
	best := -1
	for v := 0; v < n; v++ {
		if dA[v]+dist[v] == diam && (dA[v] == diam/2 || dA[v] == (diam+1)/2) {
			if best < 0 {
				best = v
			}
			ecc := max(dA[v], dist[v])
			if ecc < max(dA[best], dist[best]) {
				best = v
			}
		}
	}
	return best, nil
}

// BFSTree returns a breadth-first spanning tree of a connected graph rooted at root, and
// the parent of every node in it (-1 for the root). Neighbours are scanned in ascending
// order, so the tree is deterministic. It costs O(n + m).
func (g *Graph) BFSTree(root int) (*Graph, []int32, error) {
	if root < 0 || root >= g.Order() {
		return nil, nil, badParam("root %d outside 0..%d", root, g.Order()-1)
	}
	n := g.Order()
	parent := make([]int32, n)
	for i := range parent {
		parent[i] = -2
	}
	parent[root] = -1
	queue := make([]int32, 1, n)
	queue[0] = int32(root)
	pairs := make([]int32, 0, 2*(n-1))
	for h := 0; h < len(queue); h++ {
		u := queue[h]
		for _, v := range g.Neighbors(int(u)) {
			if parent[v] == -2 {
				parent[v] = u
				pairs = append(pairs, u, v)
				queue = append(queue, v)
			}
		}
	}
	if len(queue) != n {
		return nil, nil, fmt.Errorf("%w: node %d is not reachable from root %d", ErrNotConnected, firstUnreached(parent), root)
	}
	t, err := fromPairs(n, pairs, false)
	return t, parent, err
}

func firstUnreached(parent []int32) int {
	for v, p := range parent {
		if p == -2 {
			return v
		}
	}
	return -1
}

// requireConnected returns ErrNotConnected (naming the network) unless g is connected.
func requireConnected(g *Graph) error {
	if !g.Connected() {
		return fmt.Errorf("%w (%d nodes, %d edges)", ErrNotConnected, g.Order(), g.Size())
	}
	return nil
}

// requireTree returns ErrNotTree (naming the network) unless g is a tree.
func requireTree(g *Graph) error {
	if !g.IsTree() {
		return fmt.Errorf("%w (%d nodes, %d edges, connected=%v)", ErrNotTree, g.Order(), g.Size(), g.Connected())
	}
	return nil
}

// String returns a short description such as "Graph(n=8, m=12, Δ=3)".
func (g *Graph) String() string {
	return fmt.Sprintf("Graph(n=%d, m=%d, Δ=%d)", g.Order(), g.Size(), g.MaxDegree())
}

// parallelChunks runs fn over [0, n) split among the available cores; fn gets its own
// range and must write only to per-index outputs.
func parallelChunks(n int, fn func(lo, hi int)) {
	w := par.Workers(n, 64)
	if w > 1 {
		par.Acquire() // released before returning: no goroutine outlives the call
		defer par.Release()
	}
	var g par.Group
	g.For(n, w, fn)
}
