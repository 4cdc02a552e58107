package tokendist_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
)

// Helpers shared by the foundation's test files carry the prefix fnd so that they do
// not collide with other test files of package tokendist_test.

// fndMust returns g, panicking on err (for generators whose parameters are valid).
func fndMust(g *tokendist.Graph, err error) *tokendist.Graph {
	if err != nil {
		panic(err)
	}
	return g
}

// fndCheckSimple verifies every rule of a simple undirected graph in CSR form: ascending
// neighbour lists without loops or repeats, symmetry, Size = Σ deg / 2, consistent
// Offset/EdgeIndex/EdgeList/HasEdge and Min/MaxDegree.
func fndCheckSimple(t testing.TB, g *tokendist.Graph) {
	t.Helper()
	n := g.Order()
	sum, mx, mn := 0, 0, -1
	var edges [][2]int
	for v := 0; v < n; v++ {
		nb := g.Neighbors(v)
		if len(nb) != g.Degree(v) {
			t.Fatalf("node %d: %d neighbours, degree %d", v, len(nb), g.Degree(v))
		}
		if g.Offset(v) != sum {
			t.Fatalf("node %d: offset %d, want %d", v, g.Offset(v), sum)
		}
		for i, w := range nb {
			switch {
			case w < 0 || int(w) >= n:
				t.Fatalf("node %d: neighbour %d out of range", v, w)
			case int(w) == v:
				t.Fatalf("node %d: self-loop", v)
			case i > 0 && nb[i-1] >= w:
				t.Fatalf("node %d: neighbours not strictly ascending: %v", v, nb)
			case !slices.Contains(g.Neighbors(int(w)), int32(v)):
				t.Fatalf("edge (%d, %d) not symmetric", v, w)
			case g.EdgeIndex(v, int(w)) != sum+i:
				t.Fatalf("EdgeIndex(%d, %d) = %d, want %d", v, w, g.EdgeIndex(v, int(w)), sum+i)
			case !g.HasEdge(v, int(w)):
				t.Fatalf("HasEdge(%d, %d) false", v, w)
			}
			if int(w) > v {
				edges = append(edges, [2]int{v, int(w)})
			}
		}
		sum += len(nb)
		mx = max(mx, len(nb))
		if mn < 0 || len(nb) < mn {
			mn = len(nb)
		}
	}
	if mn < 0 {
		mn = 0
	}
	require.Equal(t, 2*g.Size(), sum, "Σ degree %d != 2·Size %d", sum, 2*g.Size())
	require.Equal(t, mx, g.MaxDegree(), "Max/MinDegree %d/%d, want %d/%d", g.MaxDegree(), g.MinDegree(), mx, mn)
	require.Equal(t, mn, g.MinDegree(), "Max/MinDegree %d/%d, want %d/%d", g.MaxDegree(), g.MinDegree(), mx, mn)
	require.Equal(t, (mx == mn), g.IsRegular(), "IsRegular %v with degrees %d..%d", g.IsRegular(), mn, mx)
	got := g.EdgeList()
	require.True(t, slices.Equal(got, edges) || (len(got) == 0 && len(edges) == 0), "EdgeList %v, want %v", got, edges)
}

// fndFloyd returns all hop distances by Floyd–Warshall (-1: unreachable).
func fndFloyd(g *tokendist.Graph) [][]int {
	n := g.Order()
	const inf = 1 << 30
	d := make([][]int, n)
	for u := range d {
		d[u] = make([]int, n)
		for v := range d[u] {
			if u != v {
				d[u][v] = inf
			}
		}
		for _, v := range g.Neighbors(u) {
			d[u][v] = 1
		}
	}
	for k := 0; k < n; k++ {
		for u := 0; u < n; u++ {
			for v := 0; v < n; v++ {
				d[u][v] = min(d[u][v], d[u][k]+d[k][v])
			}
		}
	}
	for u := range d {
		for v := range d[u] {
			if d[u][v] >= inf {
				d[u][v] = -1
			}
		}
	}
	return d
}

// fndRandomGraph returns an Erdős–Rényi graph G(n, p) built with NewGraph from edges
// listed in random order and orientation.
func fndRandomGraph(t testing.TB, n int, p float64, seed uint64) *tokendist.Graph {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	var edges [][2]int
	for u := 0; u < n; u++ {
		for v := u + 1; v < n; v++ {
			if r.Float64() < p {
				if r.IntN(2) == 0 {
					edges = append(edges, [2]int{u, v})
				} else {
					edges = append(edges, [2]int{v, u})
				}
			}
		}
	}
	r.Shuffle(len(edges), func(i, j int) { edges[i], edges[j] = edges[j], edges[i] })
	return fndMust(tokendist.NewGraph(n, edges))
}

// fndBruteBipartite tries every 2-colouring.
func fndBruteBipartite(g *tokendist.Graph) bool {
	n := g.Order()
	for mask := 0; mask < 1<<n; mask++ {
		ok := true
		for _, e := range g.EdgeList() {
			if (mask>>e[0])&1 == (mask>>e[1])&1 {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return n == 0
}

// fndCheckErr checks that err is a "tokendist: " error wrapping is and mentioning each
// of the words.
func fndCheckErr(t testing.TB, err, is error, words ...string) {
	t.Helper()
	require.Error(t, err)
	require.True(t, strings.HasPrefix(err.Error(), "tokendist: "), "error %q lacks the prefix", err)
	if is != nil {
		require.True(t, errors.Is(err, is), "error %q is not %q", err, is)
	}
	for _, w := range words {
		require.Contains(t, err.Error(), w)
	}
}

func TestGraphNewGraphBadInput(t *testing.T) {
	cases := []struct {
		name  string
		n     int
		edges [][2]int
		words []string
	}{
		{"negative order", -1, nil, []string{"-1"}},
		{"self-loop", 3, [][2]int{{0, 1}, {2, 2}}, []string{"self-loop", "2"}},
		{"repeated edge", 3, [][2]int{{0, 1}, {1, 2}, {1, 0}}, []string{"repeated", "(0, 1)"}},
		{"endpoint too large", 3, [][2]int{{0, 3}}, []string{"(0, 3)"}},
		{"negative endpoint", 3, [][2]int{{-1, 2}}, []string{"(-1, 2)"}},
		{"edge on empty graph", 0, [][2]int{{0, 0}}, []string{"(0, 0)"}},
		{"too many nodes", 1 << 31, nil, []string{"2147483648"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, err := tokendist.NewGraph(tc.n, tc.edges)
			require.Nil(t, g)
			fndCheckErr(t, err, tokendist.ErrBadParameter, tc.words...)
		})
	}
}

func TestGraphNewGraphNormalises(t *testing.T) {
	g := fndMust(tokendist.NewGraph(5, [][2]int{{4, 0}, {2, 1}, {0, 2}, {3, 0}, {1, 4}}))
	fndCheckSimple(t, g)
	require.Equal(t, []int32{2, 3, 4}, g.Neighbors(0))
	require.Equal(t, [][2]int{{0, 2}, {0, 3}, {0, 4}, {1, 2}, {1, 4}}, g.EdgeList())
	require.Equal(t, "Graph(n=5, m=5, Δ=3)", g.String())
	require.False(t, g.HasEdge(0, 1))
	require.False(t, g.HasEdge(-1, 0))
	require.False(t, g.HasEdge(0, 5))
	require.Equal(t, -1, g.EdgeIndex(0, 1))

	// Rebuilding from EdgeList gives the same graph.
	h := fndMust(tokendist.NewGraph(g.Order(), g.EdgeList()))
	require.Equal(t, g.EdgeList(), h.EdgeList())
}

func TestGraphEmptyAndSingle(t *testing.T) {
	g := fndMust(tokendist.NewGraph(0, nil))
	fndCheckSimple(t, g)
	require.Equal(t, 0, g.Order())
	require.False(t, g.Connected())
	require.False(t, g.IsTree())
	require.True(t, g.IsBipartite())
	_, err := g.Diameter()
	fndCheckErr(t, err, tokendist.ErrNotConnected)
	_, err = g.BFS(0)
	fndCheckErr(t, err, tokendist.ErrBadParameter, "root 0")
	_, _, err = g.BFSTree(0)
	fndCheckErr(t, err, tokendist.ErrBadParameter, "root 0")

	one := fndMust(tokendist.NewGraph(1, nil))
	require.True(t, one.Connected())
	require.True(t, one.IsTree())
	d, err := one.Diameter()
	require.NoError(t, err)
	require.Zero(t, d)
	c, err := one.Center()
	require.NoError(t, err)
	require.Zero(t, c)
}

// TestGraphQueriesBruteForce checks every query against brute force on random graphs:
// BFS and eccentricities against Floyd–Warshall, Diameter and Center against the
// eccentricities, IsBipartite against all 2-colourings, IsTree against its definition.
func TestGraphQueriesBruteForce(t *testing.T) {
	graphs := 0
	for n := 1; n <= 11; n++ {
		for _, p := range []float64{0.15, 0.3, 0.6} {
			for seed := uint64(0); seed < 8; seed++ {
				g := fndRandomGraph(t, n, p, seed*100+uint64(n))
				fndCheckQueries(t, g)
				graphs++
			}
		}
	}
	// Trees (the O(n) paths of Diameter and Center) and connected trees with one extra
	// edge (just not a tree).
	for n := 1; n <= 14; n++ {
		for seed := uint64(0); seed < 10; seed++ {
			tr := fndMust(tokendist.RandomTree(n, seed))
			fndCheckQueries(t, tr)
			if n >= 3 {
				edges := tr.EdgeList()
				for u := 0; u < n; u++ {
					if v := (u + 2) % n; !tr.HasEdge(u, v) {
						edges = append(edges, [2]int{u, v})
						break
					}
				}
				fndCheckQueries(t, fndMust(tokendist.NewGraph(n, edges)))
			}
			graphs++
		}
	}
	t.Logf("%d graphs checked", graphs)
}

func fndCheckQueries(t *testing.T, g *tokendist.Graph) {
	t.Helper()
	fndCheckSimple(t, g)
	n := g.Order()
	dist := fndFloyd(g)
	connected := true
	for v := 0; v < n; v++ {
		bfs, err := g.BFS(v)
		require.NoError(t, err)
		for w := 0; w < n; w++ {
			require.Equal(t, dist[v][w], int(bfs[w]), "%v: BFS(%d)[%d]", g, v, w)
			if dist[v][w] < 0 {
				connected = false
			}
		}
	}
	require.Equal(t, connected, g.Connected(), "%v", g)
	require.Equal(t, connected && g.Size() == n-1, g.IsTree(), "%v", g)
	bip := fndBruteBipartite(g)
	require.Equal(t, bip, g.IsBipartite(), "%v %v", g, g.EdgeList())
	side, ok := g.Bipartition()
	require.Equal(t, bip, ok)
	if ok {
		require.Len(t, side, n)
		for _, e := range g.EdgeList() {
			require.NotEqual(t, side[e[0]], side[e[1]], "edge %v inside one side", e)
		}
		for v := 0; v < n; v++ {
			require.Contains(t, []int8{0, 1}, side[v])
			// Each component's smallest node is on side 0.
			smallest := true
			for w := 0; w < v; w++ {
				if dist[v][w] >= 0 {
					smallest = false
				}
			}
			if smallest {
				require.Zero(t, side[v], "node %d is its component's smallest", v)
			}
		}
	} else {
		require.Nil(t, side)
	}

	if !connected {
		_, err := g.Diameter()
		fndCheckErr(t, err, tokendist.ErrNotConnected)
		_, err = g.Eccentricities()
		fndCheckErr(t, err, tokendist.ErrNotConnected)
		_, err = g.Center()
		fndCheckErr(t, err, tokendist.ErrNotConnected)
		for root := 0; root < n; root++ {
			_, _, err = g.BFSTree(root)
			fndCheckErr(t, err, tokendist.ErrNotConnected, fmt.Sprintf("root %d", root))
		}
		return
	}
	ecc := make([]int, n)
	for v := range ecc {
		ecc[v] = slices.Max(dist[v])
	}
	got, err := g.Eccentricities()
	require.NoError(t, err)
	require.Equal(t, ecc, got)
	diam, err := g.Diameter()
	require.NoError(t, err)
	require.Equal(t, slices.Max(ecc), diam, "%v", g)
	center, err := g.Center()
	require.NoError(t, err)
	require.Equal(t, slices.Index(ecc, slices.Min(ecc)), center, "%v %v ecc %v", g, g.EdgeList(), ecc)
	for root := 0; root < n; root++ {
		fndCheckBFSTree(t, g, root, dist[root])
	}
}

// fndCheckBFSTree checks that BFSTree(root) is a spanning tree of g whose edges are
// g's, whose parent array matches it, and which preserves distances from root.
func fndCheckBFSTree(t *testing.T, g *tokendist.Graph, root int, dist []int) {
	t.Helper()
	tr, parent, err := g.BFSTree(root)
	require.NoError(t, err)
	require.True(t, tr.IsTree())
	require.Equal(t, g.Order(), tr.Order())
	require.Len(t, parent, g.Order())
	require.Equal(t, int32(-1), parent[root])
	for _, e := range tr.EdgeList() {
		require.True(t, g.HasEdge(e[0], e[1]), "tree edge %v not in the graph", e)
		require.True(t, int(parent[e[0]]) == e[1] || int(parent[e[1]]) == e[0], "tree edge %v is not a parent link", e)
	}
	tdist, err := tr.BFS(root)
	require.NoError(t, err)
	for v := range tdist {
		require.Equal(t, dist[v], int(tdist[v]), "BFS tree from %d changes the distance to %d", root, v)
		if v != root {
			require.Equal(t, dist[v]-1, dist[parent[v]])
			// Neighbours are scanned in ascending order, so the parent is the first
			// node of the previous layer (in BFS visit order) adjacent to v; with
			// distance layers visited in order, no neighbour of v in the previous layer
			// that was visited before parent[v] exists.
			for _, w := range g.Neighbors(v) {
				if dist[w] == dist[v]-1 && fndVisitedBefore(g, root, int(w), int(parent[v])) {
					t.Fatalf("BFSTree(%d): parent of %d is %d, but %d was visited earlier", root, v, parent[v], w)
				}
			}
		}
	}
}

// fndVisitedBefore reports whether a is dequeued before b in a BFS from root that scans
// neighbours in ascending order.
func fndVisitedBefore(g *tokendist.Graph, root, a, b int) bool {
	seen := make([]bool, g.Order())
	queue := []int{root}
	seen[root] = true
	for h := 0; h < len(queue); h++ {
		u := queue[h]
		if u == a {
			return a != b
		}
		if u == b {
			return false
		}
		for _, v := range g.Neighbors(u) {
			if !seen[v] {
				seen[v] = true
				queue = append(queue, int(v))
			}
		}
	}
	return false
}

func TestGraphBFSBadRoot(t *testing.T) {
	g := fndMust(tokendist.Path(4))
	for _, root := range []int{-1, 4, 100} {
		_, err := g.BFS(root)
		fndCheckErr(t, err, tokendist.ErrBadParameter, fmt.Sprintf("root %d", root))
		_, _, err = g.BFSTree(root)
		fndCheckErr(t, err, tokendist.ErrBadParameter, fmt.Sprintf("root %d", root))
	}
}

// fndFuncNet is a Network given by its adjacency lists.
type fndFuncNet struct {
	n  int
	nb func(v int) []int32
}

func (f fndFuncNet) Order() int              { return f.n }
func (f fndFuncNet) Neighbors(v int) []int32 { return f.nb(v) }

func fndListNet(lists ...[]int32) fndFuncNet {
	return fndFuncNet{len(lists), func(v int) []int32 { return lists[v] }}
}

func TestGraphAsGraph(t *testing.T) {
	// A custom ring given by a function converts to the package's ring.
	for n := 3; n <= 12; n++ {
		ring := fndFuncNet{n, func(v int) []int32 {
			a, b := int32((v+n-1)%n), int32((v+1)%n)
			return []int32{min(a, b), max(a, b)}
		}}
		g, err := tokendist.AsGraph(ring)
		require.NoError(t, err)
		fndCheckSimple(t, g)
		require.Equal(t, fndMust(tokendist.Ring(n)).EdgeList(), g.EdgeList())
	}
	// A *Graph converts to itself.
	h := fndMust(tokendist.Hypercube(3))
	g, err := tokendist.AsGraph(h)
	require.NoError(t, err)
	require.Same(t, h, g)
	// An empty network is a valid (empty) graph.
	g, err = tokendist.AsGraph(fndListNet())
	require.NoError(t, err)
	require.Zero(t, g.Order())
}

func TestGraphAsGraphRejects(t *testing.T) {
	cases := []struct {
		name  string
		net   tokendist.Network
		is    error
		words []string
	}{
		{"nil", nil, tokendist.ErrNilNetwork, nil},
		{"nil graph", (*tokendist.Graph)(nil), tokendist.ErrNilNetwork, nil},
		{"negative order", fndFuncNet{-2, nil}, tokendist.ErrBadParameter, []string{"-2"}},
		{"unsorted", fndListNet([]int32{2, 1}, []int32{0}, []int32{0}), tokendist.ErrBadParameter, []string{"node 0"}},
		{"duplicate", fndListNet([]int32{1, 1}, []int32{0}), tokendist.ErrBadParameter, []string{"node 0"}},
		{"self-loop", fndListNet([]int32{0, 1}, []int32{0}), tokendist.ErrBadParameter, []string{"node 0"}},
		{"out of range", fndListNet([]int32{1}, []int32{0, 2}), tokendist.ErrBadParameter, []string{"node 1"}},
		{"negative neighbour", fndListNet([]int32{-1}), tokendist.ErrBadParameter, []string{"node 0"}},
		{"missing back edge", fndListNet([]int32{1}, []int32{}), tokendist.ErrBadParameter, []string{"symmetric"}},
		{"missing forward edge", fndListNet([]int32{}, []int32{0}), tokendist.ErrBadParameter, []string{"symmetric"}},
		// Degrees match at every node, but 0–2 is only listed by 0 and 1–2 only by 2.
		{"asymmetric with equal degrees", fndListNet([]int32{2}, []int32{}, []int32{1}), tokendist.ErrBadParameter, []string{"symmetric"}},
		{"asymmetric 4-cycle", fndListNet([]int32{1, 3}, []int32{0, 2}, []int32{1, 3}, []int32{1, 2}), tokendist.ErrBadParameter, []string{"symmetric"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, err := tokendist.AsGraph(tc.net)
			require.Nil(t, g)
			fndCheckErr(t, err, tc.is, tc.words...)
		})
	}
}

// TestGraphAsGraphRandomAsymmetric drops one direction of one edge of random graphs:
// AsGraph must reject every such network.
func TestGraphAsGraphRandomAsymmetric(t *testing.T) {
	for seed := uint64(0); seed < 200; seed++ {
		g := fndRandomGraph(t, 2+int(seed%9), 0.5, seed)
		if g.Size() == 0 {
			continue
		}
		e := g.EdgeList()[int(seed)%g.Size()]
		from, to := e[0], e[1]
		if seed%2 == 1 {
			from, to = to, from
		}
		lists := make([][]int32, g.Order())
		for v := range lists {
			lists[v] = slices.Clone(g.Neighbors(v))
		}
		i := slices.Index(lists[from], int32(to))
		lists[from] = slices.Delete(lists[from], i, i+1)
		_, err := tokendist.AsGraph(fndListNet(lists...))
		fndCheckErr(t, err, tokendist.ErrBadParameter)
	}
}

// TestGraphAdjacencyBytes pins the adjacency layout: 4-byte neighbour entries stored
// contiguously, node after node, so the adjacency costs 4 bytes per edge end.
func TestGraphAdjacencyBytes(t *testing.T) {
	g := fndMust(tokendist.Hypercube(6))
	require.Equal(t, uintptr(4), unsafe.Sizeof(g.Neighbors(0)[0]))
	for v := 0; v+1 < g.Order(); v++ {
		a, b := g.Neighbors(v), g.Neighbors(v+1)
		end := unsafe.Add(unsafe.Pointer(unsafe.SliceData(a)), uintptr(len(a))*unsafe.Sizeof(a[0]))
		require.Equal(t, end, unsafe.Pointer(unsafe.SliceData(b)), "lists of %d and %d not contiguous", v, v+1)
		require.Equal(t, len(a), cap(a), "Neighbors(%d) exposes the next list through its capacity", v)
	}
}

// TestGraphConcurrentReaders uses one graph from several goroutines at once (run with
// -race): a Graph is immutable and safe for concurrent readers, including the parallel
// Eccentricities.
func TestGraphConcurrentReaders(t *testing.T) {
	g := fndMust(tokendist.RandomRegular(600, 5, 3))
	wantEcc, err := g.Eccentricities()
	require.NoError(t, err)
	wantEdges := g.EdgeList()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for k := 0; k < 8; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ecc, err := g.Eccentricities()
			if err != nil || !slices.Equal(ecc, wantEcc) {
				errs <- fmt.Errorf("goroutine %d: eccentricities differ (%v)", k, err)
				return
			}
			dist, _ := g.BFS(k)
			for v, d := range dist {
				if int(d) > ecc[k] || (v != k && d <= 0) {
					errs <- fmt.Errorf("goroutine %d: bad distance %d to %d", k, d, v)
					return
				}
			}
			edges := 0
			for it := g.Edges(); it.Next(); edges++ {
			}
			if edges != len(wantEdges) || !g.HasEdge(wantEdges[k][0], wantEdges[k][1]) {
				errs <- fmt.Errorf("goroutine %d: %d edges", k, edges)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// fndFuzzGraph builds a graph on 1 + data[0] % 12 nodes from the byte pairs of data.
func fndFuzzGraph(data []byte) *tokendist.Graph {
	if len(data) == 0 {
		data = []byte{0}
	}
	n := 1 + int(data[0])%12
	seen := map[[2]int]bool{}
	var edges [][2]int
	for i := 1; i+1 < len(data); i += 2 {
		u, v := int(data[i])%n, int(data[i+1])%n
		if u == v || seen[[2]int{min(u, v), max(u, v)}] {
			continue
		}
		seen[[2]int{min(u, v), max(u, v)}] = true
		edges = append(edges, [2]int{u, v})
	}
	return fndMust(tokendist.NewGraph(n, edges))
}

// FuzzAsGraph converts arbitrary adjacency lists: AsGraph must either reject them with
// a "tokendist: " error or return a graph with exactly those lists.
func FuzzAsGraph(f *testing.F) {
	f.Add([]byte{3, 2, 1, 2, 2, 0, 2, 2, 0, 1})
	f.Add([]byte{3, 1, 2, 0, 1, 1})
	f.Add([]byte{4, 2, 1, 3, 2, 0, 2, 2, 1, 3, 2, 1, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		n := int(data[0]) % 10
		lists := make([][]int32, n)
		pos := 1
		for v := 0; v < n && pos < len(data); v++ {
			k := int(data[pos]) % 6
			pos++
			for i := 0; i < k && pos < len(data); i++ {
				lists[v] = append(lists[v], int32(int8(data[pos])))
				pos++
			}
		}
		g, err := tokendist.AsGraph(fndListNet(lists...))
		valid := true
		for u, nb := range lists {
			for i, v := range nb {
				if v < 0 || int(v) >= n || int(v) == u || (i > 0 && nb[i-1] >= v) || !slices.Contains(lists[v], int32(u)) {
					valid = false
				}
			}
		}
		if !valid {
			if err == nil || g != nil || !strings.HasPrefix(err.Error(), "tokendist: ") || !errors.Is(err, tokendist.ErrBadParameter) {
				t.Fatalf("%v accepted or badly rejected: %v", lists, err)
			}
			return
		}
		require.NoError(t, err, "%v rejected", lists)
		for v := range lists {
			if !slices.Equal(lists[v], g.Neighbors(v)) && len(lists[v])+len(g.Neighbors(v)) > 0 {
				t.Fatalf("node %d: %v, want %v", v, g.Neighbors(v), lists[v])
			}
		}
		fndCheckSimple(t, g)
	})
}

// FuzzNetworkEntryPoints hands arbitrary adjacency lists (often not a valid network:
// asymmetric, unsorted, out of range, self-loops) to every entry point that takes a
// Network: each must return a short prefixed error or a result, never panic or hang.
func FuzzNetworkEntryPoints(f *testing.F) {
	f.Add([]byte{3, 2, 1, 2, 2, 0, 2, 2, 0, 1}, uint8(0))
	f.Add([]byte{4, 1, 1, 2, 0, 2, 2, 1, 3, 1, 2}, uint8(1))
	f.Add([]byte{2, 1, 1, 1, 0}, uint8(2))
	f.Add([]byte{3, 1, 5, 1, 200, 0}, uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		if len(data) == 0 {
			return
		}
		n := int(data[0]) % 12
		lists := make([][]int32, n)
		pos := 1
		for v := 0; v < n && pos < len(data); v++ {
			k := int(data[pos]) % 5
			pos++
			for i := 0; i < k && pos < len(data); i++ {
				lists[v] = append(lists[v], int32(int8(data[pos])))
				pos++
			}
		}
		net := fndListNet(lists...)
		ctx := context.Background()
		calls := []func() error{
			func() error { _, err := tokendist.AsGraph(net); return err },
			func() error { _, err := tokendist.LambdaMax(net, nil); return err },
			func() error { _, err := tokendist.DistanceLoads(net, 0); return err },
			func() error { _, err := tokendist.MSD(net); return err },
			func() error { _, err := tokendist.Fringe(net, []int{0}); return err },
			func() error { _, _, err := tokendist.MinFringe(net, 1); return err },
			func() error { _, err := tokendist.Peripheral(net); return err },
			func() error { _, err := tokendist.LeightonTime(net, 3); return err },
			func() error { _, err := tokendist.ConstructSubgraph(net, 0); return err },
			func() error {
				b, err := tokendist.NewRandomizedDiffusion(net)
				if err != nil {
					return err
				}
				_, err = tokendist.Run(ctx, net, make(tokendist.Loads, n), b, &tokendist.RunOptions{MaxSteps: 5})
				return err
			},
			func() error {
				b, err := tokendist.NewRSWDiffusion(net)
				if err != nil {
					return err
				}
				_, err = tokendist.Run(ctx, net, make(tokendist.Loads, n), b, &tokendist.RunOptions{MaxSteps: 5})
				return err
			},
			func() error { _, err := tokendist.NewHypercubeBalance(net, nil); return err },
			func() error { _, err := tokendist.NewContinuousDiffusion(net, make([]float64, n)); return err },
			func() error { _, err := tokendist.TransitionMatrix(net); return err },
			func() error { _, err := tokendist.Stabilities(net); return err },
		}
		fuzzPrefixed(t, calls[int(which)%len(calls)]())
	})
}
