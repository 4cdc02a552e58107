package tokendist

import (
	"errors"
	"fmt"
	"math/bits"
)

// ErrInvalidColoring reports an edge colouring that is not a proper colouring of
// exactly the given network.
var ErrInvalidColoring = errors.New("tokendist: invalid edge colouring")

// EdgeColoring is a proper edge colouring of a graph: every edge has a colour in
// 0..Colors()-1 and the edges at any node have distinct colours, so each colour class is
// a matching. It stores the colour of every edge end (indexed like the graph's CSR
// adjacency, see Graph.EdgeIndex) and each colour's matching as a flat array of pairs
// u0, v0, u1, v1, ... with u < v in ascending order, the form the dimension-exchange
// stepper walks (Houle, Symvonis and Wood, section 1.1). An EdgeColoring is immutable
// and safe for concurrent readers.
//
// Build one with NewEdgeColoring (your own colours), BipartiteColoring (König: exactly
// Δ colours on bipartite graphs and trees), MisraGries (Vizing: at most Δ+1 colours on
// any simple graph), DefaultColoring, or the natural colourings HypercubeColoring,
// RingColoring, TorusColoring and MeshColoring.
type EdgeColoring struct {
	g     *Graph
	color []int32   // colour of edge end i
	chi   int       // number of colours
	match [][]int32 // match[c] = flat pairs of colour c, slices of one array
}

// NewEdgeColoring builds a colouring of g from colourOf(u, v), called once per edge with
// u < v, and validates it: colours must be in 0..chi-1 for some chi and proper, else the
// error wraps ErrInvalidColoring and names the offending edge. The number of colours is
// one more than the largest colour used. It costs O(m log Δ) plus the calls.
func NewEdgeColoring(g *Graph, colorOf func(u, v int) int) (*EdgeColoring, error) {
	if g == nil {
		return nil, ErrNilNetwork
	}
	color := make([]int32, len(g.adj))
	for u := 0; u < g.Order(); u++ {
		for i, v := range g.Neighbors(u) {
			if int(v) > u {
				c := colorOf(u, int(v))
				if c < 0 || c > 1<<30 {
					return nil, fmt.Errorf("%w: edge (%d, %d) has colour %d", ErrInvalidColoring, u, v, c)
				}
				color[g.off[u]+i] = int32(c)
				color[g.EdgeIndex(int(v), u)] = int32(c)
			}
		}
	}
	return newColoring(g, color)
}

// newColoring validates per-end colours and builds the matchings.
func newColoring(g *Graph, color []int32) (*EdgeColoring, error) {
	chi := 0
	for _, c := range color {
		chi = max(chi, int(c)+1)
	}
	seen := make([]int32, chi) // seen[c] = 1 + last node that had colour c at an end
	for u := 0; u < g.Order(); u++ {
		for i, v := range g.Neighbors(u) {
			c := color[g.off[u]+i]
			if c < 0 {
				return nil, fmt.Errorf("%w: edge (%d, %d) has colour %d", ErrInvalidColoring, u, v, c)
			}
			if color[g.EdgeIndex(int(v), u)] != c {
				return nil, fmt.Errorf("%w: edge (%d, %d) has two colours", ErrInvalidColoring, u, v)
			}
			if seen[c] == int32(u)+1 {
				return nil, fmt.Errorf("%w: two edges at node %d have colour %d", ErrInvalidColoring, u, c)
			}
			seen[c] = int32(u) + 1
		}
	}
	// One flat array holds every matching, colour after colour.
	start := make([]int, chi+1)
	for _, c := range color {
		start[c+1]++ // two ends per edge = two entries per pair
	}
	for c := 0; c < chi; c++ {
		start[c+1] += start[c]
	}
	flat := make([]int32, len(color))
	fill := append([]int(nil), start[:chi]...)
	for u := 0; u < g.Order(); u++ {
		for i, v := range g.Neighbors(u) {
			if int(v) > u {
				c := color[g.off[u]+i]
				flat[fill[c]], flat[fill[c]+1] = int32(u), v
				fill[c] += 2
			}
		}
	}
	match := make([][]int32, chi)
	for c := range match {
		match[c] = flat[start[c]:start[c+1]:start[c+1]]
	}
	return &EdgeColoring{g: g, color: color, chi: chi, match: match}, nil
}

// Graph returns the coloured graph.
func (ec *EdgeColoring) Graph() *Graph { return ec.g }

// Colors returns the number of colours χ.
func (ec *EdgeColoring) Colors() int { return ec.chi }

// Color returns the colour of edge (u, v), or -1 if u and v are not adjacent.
func (ec *EdgeColoring) Color(u, v int) int {
	if u < 0 || u >= ec.g.Order() {
		return -1
	}
	i := ec.g.EdgeIndex(u, v)
	if i < 0 {
		return -1
	}
	return int(ec.color[i])
}

// EndColor returns the colour of edge end i (0 ≤ i < 2·Size()), in CSR order.
func (ec *EdgeColoring) EndColor(i int) int { return int(ec.color[i]) }

// Matching returns colour c's edges as flat pairs u0, v0, u1, v1, ... (u < v, ascending).
// The slice is read-only.
func (ec *EdgeColoring) Matching(c int) []int32 { return ec.match[c] }

// String returns a short description such as "EdgeColoring(χ=3, m=7)".
func (ec *EdgeColoring) String() string {
	return fmt.Sprintf("EdgeColoring(χ=%d, m=%d)", ec.chi, ec.g.Size())
}

// Validate checks that ec is a proper colouring of exactly net (same nodes and edges),
// returning an error wrapping ErrInvalidColoring otherwise. It costs O(m log Δ).
func (ec *EdgeColoring) Validate(net Network) error {
	if ec == nil || ec.g == nil {
		return fmt.Errorf("%w: nil colouring", ErrInvalidColoring)
	}
	g, err := AsGraph(net)
	if err != nil {
		return err
	}
	if g != ec.g {
		if g.Order() != ec.g.Order() || g.Size() != ec.g.Size() {
			return fmt.Errorf("%w: colouring of a graph with %d nodes and %d edges used on one with %d nodes and %d edges",
				ErrInvalidColoring, ec.g.Order(), ec.g.Size(), g.Order(), g.Size())
		}
		for u := 0; u < g.Order(); u++ {
			a, b := g.Neighbors(u), ec.g.Neighbors(u)
			for i := range a {
				if i >= len(b) || a[i] != b[i] {
					return fmt.Errorf("%w: the network's edges at node %d differ from the coloured graph's", ErrInvalidColoring, u)
				}
			}
		}
	}
	_, err = newColoring(ec.g, ec.color)
	return err
}

// twins returns, for every edge end i = (u, v), the index of the reverse end (v, u), in
// O(n + m): visiting u in ascending order meets the ends (v, u), u < v, in the order of
// v's sorted adjacency list.
func twins(g *Graph) []int32 {
	twin := make([]int32, len(g.adj))
	next := make([]int, g.Order())
	copy(next, g.off[:g.Order()])
	for u := 0; u < g.Order(); u++ {
		for i := g.off[u]; i < g.off[u+1]; i++ {
			v := g.adj[i]
			if int(v) > u {
				j := next[v]
				next[v]++
				twin[i], twin[j] = int32(j), int32(i)
			}
		}
	}
	return twin
}

// forestColoring colours the edges of a forest with Δ colours in O(n + m): a
// breadth-first search gives every node's child edges the colours 0, 1, ... skipping the
// colour of the edge to its parent (the depth-first colouring of Houle et al., section
// 4.1). It returns nil if g has a cycle.
func forestColoring(g *Graph) []int32 {
	n := g.Order()
	color := make([]int32, len(g.adj))
	for i := range color {
		color[i] = -1
	}
	twin := twins(g)
	seen := make([]bool, n)
	queue := make([]int32, 0, n)
	for root := 0; root < n; root++ {
		if seen[root] {
			continue
		}
		seen[root] = true
		queue = append(queue[:0], int32(root))
		for h := 0; h < len(queue); h++ {
			u := queue[h]
			parent := int32(-1) // colour of the edge to u's parent
			for i := g.off[u]; i < g.off[u+1]; i++ {
				if color[i] >= 0 {
					parent = color[i]
					break
				}
			}
			c := int32(0)
			for i := g.off[u]; i < g.off[u+1]; i++ {
				if color[i] >= 0 {
					continue // the parent edge
				}
				v := g.adj[i]
				if seen[v] {
					return nil // a second path to v: a cycle
				}
				seen[v] = true
				if c == parent {
					c++
				}
				color[i], color[twin[i]] = c, c
				c++
				queue = append(queue, v)
			}
		}
	}
	return color
}

// BipartiteColoring returns a proper edge colouring of a bipartite graph with exactly Δ
// colours (König's edge-colouring theorem), the colouring Houle et al. use for trees
// (section 4.1, χ = Δ). Forests (trees included) take a breadth-first greedy pass in
// O(n + m); other bipartite graphs take König's alternating-path algorithm, O(m·(Δ + ℓ))
// where ℓ is the length of the longest path flipped (at most n), with an n·Δ colour
// table. A graph with an odd cycle is rejected with an error wrapping ErrBadParameter;
// use MisraGries there.
func BipartiteColoring(g *Graph) (*EdgeColoring, error) {
	if g == nil {
		return nil, ErrNilNetwork
	}
	if color := forestColoring(g); color != nil {
		return newColoring(g, color)
	}
	if !g.IsBipartite() {
		return nil, badParam("König colouring needs a bipartite graph; %v has an odd cycle (use MisraGries)", g)
	}
	t, err := newColorTable(g, g.MaxDegree())
	if err != nil {
		return nil, err
	}
	var path []int32
	for u := 0; u < g.Order(); u++ {
		for _, v := range g.Neighbors(u) {
			if int(v) < u {
				continue
			}
			a, b := t.free(u), t.free(int(v))
			if t.at(int(v), a) >= 0 {
				// Flip the a/b path from v: it cannot reach u (the graph is bipartite
				// and a is free at u), and afterwards a is free at v.
				path = t.flip(int(v), b, a, path)
			}
			t.set(u, int(v), a)
		}
	}
	return newColoring(g, t.endColors())
}

// colorTable is the working state of the alternating-path colourings: nb[v·k + c] is
// the neighbour joined to v by an edge of colour c, or -1 if c is free at v.
type colorTable struct {
	g  *Graph
	k  int
	nb []int32
}

// maxColorTable bounds the n·k colour table (4 bytes per entry).
const maxColorTable = 1 << 30

func newColorTable(g *Graph, k int) (*colorTable, error) {
	if int64(g.Order())*int64(k) > maxColorTable {
		return nil, badParam("%v with %d colours needs a colour table of %d entries, more than %d",
			g, k, int64(g.Order())*int64(k), maxColorTable)
	}
	t := &colorTable{g: g, k: k, nb: make([]int32, g.Order()*k)}
	for i := range t.nb {
		t.nb[i] = -1
	}
	return t, nil
}

// at returns the neighbour of v along colour c, or -1.
func (t *colorTable) at(v, c int) int32 { return t.nb[v*t.k+c] }

// isFree reports whether colour c is free at v.
func (t *colorTable) isFree(v, c int) bool { return t.nb[v*t.k+c] < 0 }

// free returns the smallest colour free at v; one exists while v has an uncoloured edge
// and k ≥ deg(v).
func (t *colorTable) free(v int) int {
	row := t.nb[v*t.k : (v+1)*t.k]
	for c, w := range row {
		if w < 0 {
			return c
		}
	}
	panic(fmt.Sprintf("tokendist: internal error: no free colour at node %d", v))
}

// set colours edge (u, v) with c.
func (t *colorTable) set(u, v, c int) {
	t.nb[u*t.k+c] = int32(v)
	t.nb[v*t.k+c] = int32(u)
}

// flip swaps colours a and b on the maximal path that starts at v with its a edge and
// alternates a, b (b must be free at v), reusing path's storage. Every node on the
// path has its a and b neighbours exchanged; at both ends one of them is free.
func (t *colorTable) flip(v, b, a int, path []int32) []int32 {
	path = path[:0]
	x, c, d := int32(v), a, b
	for x >= 0 {
		path = append(path, x)
		x = t.at(int(x), c)
		c, d = d, c
	}
	for _, y := range path {
		row := t.nb[int(y)*t.k:]
		row[a], row[b] = row[b], row[a]
	}
	return path
}

// endColors reads the table back into per-end colours.
func (t *colorTable) endColors() []int32 {
	color := make([]int32, len(t.g.adj))
	for i := range color {
		color[i] = -1
	}
	for u := 0; u < t.g.Order(); u++ {
		for c, w := range t.nb[u*t.k : (u+1)*t.k] {
			if w >= 0 {
				color[t.g.EdgeIndex(u, int(w))] = int32(c)
			}
		}
	}
	return color
}

// MisraGries returns a proper edge colouring of any simple graph with at most Δ+1
// colours, by the algorithm of Misra and Gries (1992) that makes Vizing's theorem
// constructive (the D+1 colouring Houle et al. cite in section 1.1). Each edge first
// takes a colour free at both ends if there is one; otherwise a maximal fan at one end
// is built, a two-coloured path inverted and a prefix of the fan rotated. It costs
// O(m·(Δ + n)) in the worst case and far less on sparse random graphs, with an n·(Δ+1)
// colour table.
func MisraGries(g *Graph) (*EdgeColoring, error) {
	if g == nil {
		return nil, ErrNilNetwork
	}
	t, err := newColorTable(g, g.MaxDegree()+1)
	if err != nil {
		return nil, err
	}
	mg := misraGries{t: t, mark: make([]int32, g.Order())}
	for u := 0; u < g.Order(); u++ {
		for _, v := range g.Neighbors(u) {
			if int(v) > u {
				mg.color(u, int(v))
			}
		}
	}
	return newColoring(g, t.endColors())
}

// misraGries holds the buffers of one Misra–Gries run.
type misraGries struct {
	t     *colorTable
	fan   []int32
	path  []int32
	mark  []int32 // mark[w] == stamp: w is in the current fan
	stamp int32
}

// color colours the uncoloured edge (x, f).
func (mg *misraGries) color(x, f int) {
	t := mg.t
	// Fast path: a colour free at both ends.
	for c := 0; c < t.k; c++ {
		if t.isFree(x, c) && t.isFree(f, c) {
			t.set(x, f, c)
			return
		}
	}
	// Maximal fan F[0] = f, F[i+1] a neighbour of x whose edge colour is free at F[i].
	mg.stamp++
	mg.fan = append(mg.fan[:0], int32(f))
	mg.mark[f] = mg.stamp
	for {
		last := int(mg.fan[len(mg.fan)-1])
		next := int32(-1)
		for c := 0; c < t.k; c++ {
			if w := t.at(x, c); w >= 0 && mg.mark[w] != mg.stamp && t.isFree(last, c) {
				next = w
				break
			}
		}
		if next < 0 {
			break
		}
		mg.mark[next] = mg.stamp
		mg.fan = append(mg.fan, next)
	}
	c := t.free(x)
	d := t.free(int(mg.fan[len(mg.fan)-1]))
	// Invert the cd path from x (c is free at x, so it starts with x's d edge).
	if t.at(x, d) >= 0 {
		mg.path = t.flip(x, c, d, mg.path)
	}
	// The longest fan prefix still valid ends, by the Misra–Gries lemma, at a node
	// where d is free; take the first such node.
	w := -1
	for i, y := range mg.fan {
		if t.isFree(int(y), d) {
			w = i
			break
		}
		if i+1 == len(mg.fan) || !t.isFree(int(y), mg.edgeColor(x, int(mg.fan[i+1]))) {
			break
		}
	}
	if w < 0 {
		panic(fmt.Sprintf("tokendist: internal error: Misra–Gries found no rotatable fan at node %d", x))
	}
	// Rotate the prefix: (x, F[i]) takes the colour of (x, F[i+1]); (x, F[w]) takes d.
	for i := 0; i < w; i++ {
		y, z := int(mg.fan[i]), int(mg.fan[i+1])
		cz := mg.edgeColor(x, z)
		t.nb[z*t.k+cz] = -1
		t.set(x, y, cz)
	}
	t.set(x, int(mg.fan[w]), d)
}

// edgeColor returns the colour of the coloured edge (x, y) by scanning x's row.
func (mg *misraGries) edgeColor(x, y int) int {
	t := mg.t
	for c := 0; c < t.k; c++ {
		if t.at(x, c) == int32(y) {
			return c
		}
	}
	return -1
}

// DefaultColoring returns the colouring the dimension-exchange balancers use when given
// none: BipartiteColoring (Δ colours) on bipartite graphs, trees included, and
// MisraGries (at most Δ+1) on the others.
func DefaultColoring(g *Graph) (*EdgeColoring, error) {
	if g == nil {
		return nil, ErrNilNetwork
	}
	if g.IsBipartite() {
		return BipartiteColoring(g)
	}
	return MisraGries(g)
}

// HypercubeColoring returns the d-dimensional hypercube (as built by Hypercube(d))
// coloured by dimension: the edge flipping bit i has colour i, so χ = d and a round is
// the classical sweep over the d dimensions (Cybenko; Houle et al., section 1.1). Its
// Graph method returns the network to run on. It costs O(n·d).
func HypercubeColoring(d int) (*EdgeColoring, error) {
	g, err := Hypercube(d)
	if err != nil {
		return nil, err
	}
	return NewEdgeColoring(g, func(u, v int) int { return bits.TrailingZeros(uint(u ^ v)) })
}

// RingColoring returns the ring of n nodes (as built by Ring(n)) with its natural
// colouring: edge (i, i+1) has colour i mod 2, and for odd n the closing edge (n-1, 0)
// has colour 2; so χ = 2 for even n and 3 for odd n (1 for n = 2, 0 for n = 1). Its
// Graph method returns the network to run on. It costs O(n).
func RingColoring(n int) (*EdgeColoring, error) {
	g, err := Ring(n)
	if err != nil {
		return nil, err
	}
	return NewEdgeColoring(g, func(u, v int) int {
		if u == 0 && v == n-1 && n > 2 { // the closing edge
			if n%2 == 1 {
				return 2
			}
			return 1
		}
		return u % 2
	})
}

// TorusColoring returns the torus with the given sides (as built by Torus(sides...))
// coloured by dimension and parity: the edge of dimension i from coordinate x to x+1
// has colour base_i + x mod 2, and on an odd side the wrap-around edge gets a third
// colour base_i + 2. Dimension i uses 2 colours (3 for odd sides ≥ 3, 1 for side 2, 0
// for side 1), so χ = Δ when every side is even. Its Graph method returns the network to
// run on. It costs O(n·r) for r dimensions.
func TorusColoring(sides ...int) (*EdgeColoring, error) {
	g, err := Torus(sides...)
	if err != nil {
		return nil, err
	}
	return gridColoring(g, true, sides)
}

// MeshColoring returns the mesh with the given sides (as built by Mesh(sides...))
// coloured by dimension and parity: the edge of dimension i from coordinate x to x+1 has
// colour base_i + x mod 2, so χ = Δ (2 colours per side ≥ 3, 1 per side 2). Its Graph
// method returns the network to run on. It costs O(n·r) for r dimensions.
func MeshColoring(sides ...int) (*EdgeColoring, error) {
	g, err := Mesh(sides...)
	if err != nil {
		return nil, err
	}
	return gridColoring(g, false, sides)
}

// gridColoring colours a Torus or Mesh built from sides by dimension and parity.
func gridColoring(g *Graph, wrap bool, sides []int) (*EdgeColoring, error) {
	base := make([]int, len(sides)+1)
	for i, s := range sides {
		k := 2
		switch {
		case s == 1:
			k = 0
		case s == 2:
			k = 1
		case wrap && s%2 == 1:
			k = 3
		}
		base[i+1] = base[i] + k
	}
	return NewEdgeColoring(g, func(u, v int) int {
		stride := 1
		for i, s := range sides {
			xu, xv := u/stride%s, v/stride%s
			if xu != xv {
				x := min(xu, xv)
				if max(xu, xv)-x > 1 { // the wrap-around edge (s-1, 0)
					x = s - 1
					if s%2 == 1 {
						return base[i] + 2
					}
				}
				return base[i] + x%2
			}
			stride *= s
		}
		return -1 // not a grid edge: NewEdgeColoring rejects it
	})
}
