package tokendist

import (
	"fmt"
	"math/bits"
)

// EdgeColoring is a proper edge colouring of a graph: every edge has a colour in
// 0..Colors()-1 and the edges at any node have distinct colours, so each colour class is
// a matching. It stores the colour of every edge end (indexed like the graph's CSR
// adjacency, see Graph.EdgeIndex) and each colour's matching as a flat array of pairs
// u0, v0, u1, v1, ... with u < v in ascending order, the form the dimension-exchange
// stepper walks (Houle, Symvonis and Wood, section 1.1). An EdgeColoring is immutable
// and safe for concurrent readers.
//
// Build one with NewEdgeColoring (your own colours), BipartiteColoring (König: exactly
// Δ colours on bipartite graphs and trees), MisraGriesColoring (Vizing: at most Δ+1 colours on
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
// one more than the largest colour used. It costs O(n + m) plus the calls.
func NewEdgeColoring(g *Graph, colorOf func(u, v int) int) (*EdgeColoring, error) {
	if g == nil {
		return nil, ErrNilNetwork
	}
	if colorOf == nil {
		return nil, badParam("NewEdgeColoring needs a colour function, got nil")
	}
	twin := twins(g)
	color := make([]int32, len(g.adj))
	for u := 0; u < g.Order(); u++ {
		for i := g.off[u]; i < g.off[u+1]; i++ {
			if v := int(g.adj[i]); v > u {
				c := colorOf(u, v)
				if c < 0 || c > 1<<30 {
					return nil, fmt.Errorf("%w: edge (%d, %d) has colour %d", ErrInvalidColoring, u, v, c)
				}
				color[i], color[twin[i]] = int32(c), int32(c)
			}
		}
	}
	return newColoring(g, color, twin)
}

// newColoring validates per-end colours (twin from twins(g)) and builds the matchings,
// in O(n + m + χ).
func newColoring(g *Graph, color, twin []int32) (*EdgeColoring, error) {
	chi := 0
	for _, c := range color {
		chi = max(chi, int(c)+1)
	}
	seen := make([]int32, chi) // seen[c] = 1 + last node that had colour c at an end
	for u := 0; u < g.Order(); u++ {
		for i := g.off[u]; i < g.off[u+1]; i++ {
			c := color[i]
			if c < 0 {
				return nil, fmt.Errorf("%w: edge (%d, %d) has colour %d", ErrInvalidColoring, u, g.adj[i], c)
			}
			if color[twin[i]] != c {
				return nil, fmt.Errorf("%w: edge (%d, %d) has two colours", ErrInvalidColoring, u, g.adj[i])
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
		for i := g.off[u]; i < g.off[u+1]; i++ {
			if v := g.adj[i]; int(v) > u {
				c := color[i]
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

// Graph returns the coloured graph, in O(1).
func (ec *EdgeColoring) Graph() *Graph { return ec.g }

// Colors returns the number of colours χ (a round of dimension exchange is χ steps,
// Houle et al., Definition 1), in O(1).
func (ec *EdgeColoring) Colors() int { return ec.chi }

// Color returns the colour of edge (u, v), or -1 if u and v are not adjacent, in
// O(log deg u).
// It panics if u is not a node, as a slice index does.
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

// EndColor returns the colour of edge end i (0 ≤ i < 2·Size()), in CSR order, in O(1).
// It returns -1 if i is not an edge end (it never panics).
func (ec *EdgeColoring) EndColor(i int) int {
	if i < 0 || i >= len(ec.color) {
		return -1
	}
	return int(ec.color[i])
}

// Matching returns colour c's edges, the edges active at steps t ≡ c (mod χ) (Houle et
// al., section 1.1), as flat pairs u0, v0, u1, v1, ... (u < v, ascending), in O(1). The
// slice is read-only. It returns nil unless 0 ≤ c < Colors() (it never panics).
func (ec *EdgeColoring) Matching(c int) []int32 {
	if c < 0 || c >= len(ec.match) {
		return nil
	}
	return ec.match[c]
}

// String returns a short description such as "EdgeColoring(χ=3, m=7)".
func (ec *EdgeColoring) String() string {
	return fmt.Sprintf("EdgeColoring(χ=%d, m=%d)", ec.chi, ec.g.Size())
}

// Validate checks that ec is a proper colouring of exactly net (same nodes and edges),
// returning an error wrapping ErrInvalidColoring otherwise. It costs O(n + m).
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
	_, err = newColoring(ec.g, ec.color, twins(ec.g))
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
// 4.1). It returns the per-end colours and twins(g), or nil if g has a cycle.
func forestColoring(g *Graph) (color, twin []int32) {
	n := g.Order()
	color = make([]int32, len(g.adj))
	for i := range color {
		color[i] = -1
	}
	twin = twins(g)
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
					return nil, nil // a second path to v: a cycle
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
	return color, twin
}

// BipartiteColoring returns a proper edge colouring of a bipartite graph with exactly Δ
// colours (König's edge-colouring theorem), the colouring Houle et al. use for trees
// (section 4.1, χ = Δ). Forests (trees included) take a breadth-first greedy pass in
// O(n + m); other bipartite graphs take König's alternating-path algorithm, O(m·(Δ + ℓ))
// time where ℓ is the length of the longest path flipped (at most n), and O(m) memory.
// A graph with an odd cycle is rejected with an error wrapping ErrBadParameter;
// use MisraGriesColoring there.
func BipartiteColoring(g *Graph) (*EdgeColoring, error) {
	if g == nil {
		return nil, ErrNilNetwork
	}
	if color, twin := forestColoring(g); color != nil {
		return newColoring(g, color, twin)
	}
	if !g.IsBipartite() {
		return nil, badParam("König colouring needs a bipartite graph; %v has an odd cycle (use MisraGriesColoring)", g)
	}
	t := newColorTable(g, g.MaxDegree())
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
	return t.coloring()
}

// colorTable is the working state of the alternating-path colourings: for every node
// v and colour c, the neighbour joined to v by an edge of colour c, or -1 if c is free
// at v. A node of high degree (4·deg(v) ≥ k) keeps a dense row of k entries indexed by
// colour; the others keep a short unordered list of (colour, neighbour) pairs, at most
// deg(v) long. Dense rows then hold at most 8m entries in all, so the table takes O(m)
// memory even when one hub makes Δ large. With many colours, dense rows also keep a
// bitmap of used colours with a summary of full words, so that finding a free colour
// at a hub costs O(k/4096) rather than O(k).
type colorTable struct {
	g     *Graph
	k     int
	off   []int   // v's storage starts at off[v]
	heavy []bool  // v has a dense row
	nb    []int32 // dense: nb[off[v]+c]; list: the neighbour of entry j at nb[off[v]+j]
	col   []int32 // list: the colour of entry j at col[off[v]+j]
	cnt   []int32 // list: number of entries
	mark  []int32 // scratch for free on lists
	stamp int32
	// Bitmaps of dense rows (only when k > bitmapMin): used[boff[v]+c/64] bit c%64 is
	// set when c is used at v; full[soff[v]+w/64] bit w%64 when word w is all ones.
	used, full []uint64
	boff, soff []int
}

// bitmapMin is the number of colours above which dense rows keep bitmaps.
const bitmapMin = 256

func newColorTable(g *Graph, k int) *colorTable {
	n := g.Order()
	t := &colorTable{g: g, k: k, off: make([]int, n+1), heavy: make([]bool, n), cnt: make([]int32, n)}
	maxLight := 0
	for v := 0; v < n; v++ {
		size := g.Degree(v)
		if t.heavy[v] = 4*size >= k; t.heavy[v] {
			size = k
		} else {
			maxLight = max(maxLight, size)
		}
		t.off[v+1] = t.off[v] + size
	}
	t.nb = make([]int32, t.off[n])
	for i := range t.nb {
		t.nb[i] = -1
	}
	t.col = make([]int32, t.off[n])
	t.mark = make([]int32, maxLight+1)
	if k > bitmapMin {
		words := (k + 63) / 64
		t.boff, t.soff = make([]int, n+1), make([]int, n+1)
		for v := 0; v < n; v++ {
			t.boff[v+1], t.soff[v+1] = t.boff[v], t.soff[v]
			if t.heavy[v] {
				t.boff[v+1] += words
				t.soff[v+1] += (words + 63) / 64
			}
		}
		t.used, t.full = make([]uint64, t.boff[n]), make([]uint64, t.soff[n])
	}
	return t
}

// setUsed records in v's bitmap (if any) whether colour c is used.
func (t *colorTable) setUsed(v, c int, used bool) {
	if t.used == nil {
		return
	}
	w := t.boff[v] + c/64
	if used {
		t.used[w] |= 1 << (c % 64)
	} else {
		t.used[w] &^= 1 << (c % 64)
	}
	i := c / 64
	if t.used[w] == ^uint64(0) {
		t.full[t.soff[v]+i/64] |= 1 << (i % 64)
	} else {
		t.full[t.soff[v]+i/64] &^= 1 << (i % 64)
	}
}

// firstFree finds the smallest unused colour of a dense row through its bitmap.
func (t *colorTable) firstFree(v int) int {
	full := t.full[t.soff[v]:t.soff[v+1]]
	for si, f := range full {
		if f == ^uint64(0) {
			continue
		}
		i := si*64 + bits.TrailingZeros64(^f) // first word with a zero bit
		return i*64 + bits.TrailingZeros64(^t.used[t.boff[v]+i])
	}
	return t.k
}

// at returns the neighbour of v along colour c, or -1.
func (t *colorTable) at(v, c int) int32 {
	o := t.off[v]
	if t.heavy[v] {
		return t.nb[o+c]
	}
	for j := o; j < o+int(t.cnt[v]); j++ {
		if t.col[j] == int32(c) {
			return t.nb[j]
		}
	}
	return -1
}

// isFree reports whether colour c is free at v.
func (t *colorTable) isFree(v, c int) bool { return t.at(v, c) < 0 }

// free returns the smallest colour free at v; one exists while v has an uncoloured edge
// and k ≥ deg(v).
func (t *colorTable) free(v int) int {
	o := t.off[v]
	if t.heavy[v] {
		if t.used != nil {
			if c := t.firstFree(v); c < t.k {
				return c
			}
		} else {
			for c, w := range t.nb[o : o+t.k] {
				if w < 0 {
					return c
				}
			}
		}
		panic(fmt.Sprintf("tokendist: internal error: no free colour at node %d", v))
	}
	// Fewer than len(mark) colours are in use, so one of 0..cnt is free.
	t.stamp++
	for j := o; j < o+int(t.cnt[v]); j++ {
		if c := t.col[j]; int(c) < len(t.mark) {
			t.mark[c] = t.stamp
		}
	}
	c := 0
	for t.mark[c] == t.stamp {
		c++
	}
	return c
}

// put records that colour c at v leads to w (w = -1: c becomes free at v).
func (t *colorTable) put(v, c int, w int32) {
	o := t.off[v]
	if t.heavy[v] {
		t.nb[o+c] = w
		t.setUsed(v, c, w >= 0)
		return
	}
	end := o + int(t.cnt[v])
	for j := o; j < end; j++ {
		if t.col[j] == int32(c) {
			if w >= 0 {
				t.nb[j] = w
			} else { // swap-remove
				t.col[j], t.nb[j] = t.col[end-1], t.nb[end-1]
				t.cnt[v]--
			}
			return
		}
	}
	if w >= 0 {
		t.col[end], t.nb[end] = int32(c), w
		t.cnt[v]++
	}
}

// set colours edge (u, v) with c.
func (t *colorTable) set(u, v, c int) {
	t.put(u, c, int32(v))
	t.put(v, c, int32(u))
}

// swap exchanges colours a and b at v.
func (t *colorTable) swap(v, a, b int) {
	o := t.off[v]
	if t.heavy[v] {
		t.nb[o+a], t.nb[o+b] = t.nb[o+b], t.nb[o+a]
		t.setUsed(v, a, t.nb[o+a] >= 0)
		t.setUsed(v, b, t.nb[o+b] >= 0)
		return
	}
	for j := o; j < o+int(t.cnt[v]); j++ {
		switch t.col[j] {
		case int32(a):
			t.col[j] = int32(b)
		case int32(b):
			t.col[j] = int32(a)
		}
	}
}

// edges returns v's coloured edges: for a dense row, row[c] is the neighbour along
// colour c (or -1) and cols is nil; for a list, row[j] has colour cols[j].
func (t *colorTable) edges(v int) (row, cols []int32) {
	o := t.off[v]
	if t.heavy[v] {
		return t.nb[o : o+t.k], nil
	}
	n := int(t.cnt[v])
	return t.nb[o : o+n], t.col[o : o+n]
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
		t.swap(int(y), a, b)
	}
	return path
}

// coloring reads the table back into per-end colours and validates them.
func (t *colorTable) coloring() (*EdgeColoring, error) {
	g := t.g
	color := make([]int32, len(g.adj))
	for i := range color {
		color[i] = -1
	}
	for u := 0; u < g.Order(); u++ {
		row, cols := t.edges(u)
		for j, w := range row {
			if w < 0 {
				continue
			}
			c := int32(j)
			if cols != nil {
				c = cols[j]
			}
			color[g.EdgeIndex(u, int(w))] = c
		}
	}
	return newColoring(g, color, twins(g))
}

// MisraGriesColoring returns a proper edge colouring of any simple graph with at most Δ+1
// colours, by the algorithm of Misra and Gries (1992) that makes Vizing's theorem
// constructive (the D+1 colouring Houle et al. cite in section 1.1). Each edge first
// takes a colour free at both ends if there is one; otherwise a maximal fan at one end
// is built, a two-coloured path inverted and a prefix of the fan rotated. It costs
// O(m·(Δ + n)) time in the worst case, far less on sparse random graphs, and O(m)
// memory.
func MisraGriesColoring(g *Graph) (*EdgeColoring, error) {
	if g == nil {
		return nil, ErrNilNetwork
	}
	t := newColorTable(g, g.MaxDegree()+1)
	mg := misraGries{t: t, mark: make([]int32, g.Order())}
	for u := 0; u < g.Order(); u++ {
		for _, v := range g.Neighbors(u) {
			if int(v) > u {
				mg.color(u, int(v))
			}
		}
	}
	return t.coloring()
}

// misraGries holds the buffers of one Misra–Gries run.
type misraGries struct {
	t        *colorTable
	fan      []int32
	fanColor []int32
	skipped  []int32
	path     []int32
	mark     []int32 // mark[w] == stamp: w is in the current fan
	stamp    int32
}

// color colours the uncoloured edge (x, f).
func (mg *misraGries) color(x, f int) {
	t := mg.t
	// Fast path: a colour free at both ends (all colours on dense rows, else the
	// smallest free colour of either end).
	if t.heavy[x] && t.heavy[f] {
		rx, rf := t.nb[t.off[x]:t.off[x]+t.k], t.nb[t.off[f]:t.off[f]+t.k]
		for c := range rx {
			if rx[c] < 0 && rf[c] < 0 {
				t.set(x, f, c)
				return
			}
		}
	} else {
		if c := t.free(x); t.isFree(f, c) {
			t.set(x, f, c)
			return
		}
		if c := t.free(f); t.isFree(x, c) {
			t.set(x, f, c)
			return
		}
	}
	mg.buildFan(x, f)
	c := t.free(x)
	d := t.free(int(mg.fan[len(mg.fan)-1]))
	// Invert the cd path from x (c is free at x, so it starts with x's d edge, whose
	// colour becomes c).
	if t.at(x, d) >= 0 {
		mg.path = t.flip(x, c, d, mg.path)
		for i, ci := range mg.fanColor {
			if ci == int32(d) {
				mg.fanColor[i] = int32(c)
			}
		}
	}
	// The longest fan prefix still valid ends, by the Misra–Gries lemma, at a node
	// where d is free; take the first such node.
	w := -1
	for i, y := range mg.fan {
		if t.isFree(int(y), d) {
			w = i
			break
		}
		if i+1 == len(mg.fan) || !t.isFree(int(y), int(mg.fanColor[i+1])) {
			break
		}
	}
	if w < 0 {
		panic(fmt.Sprintf("tokendist: internal error: Misra–Gries found no rotatable fan at node %d", x))
	}
	// Rotate the prefix: (x, F[i]) takes the colour of (x, F[i+1]); (x, F[w]) takes d.
	for i := 0; i < w; i++ {
		y, z, cz := int(mg.fan[i]), int(mg.fan[i+1]), int(mg.fanColor[i+1])
		t.put(z, cz, -1)
		t.set(x, y, cz)
	}
	t.set(x, int(mg.fan[w]), d)
}

// buildFan builds a maximal fan of x starting at f: F[0] = f and F[i+1] a neighbour of
// x, not yet in the fan, whose edge colour is free at F[i]; fanColor[i] is the colour
// of (x, F[i]) (-1 for the uncoloured F[0]). It walks x's coloured edges once, keeping
// the edges it skipped because their colour was used at the fan's last node for a
// second look, so it costs O(k + Σ deg F[i]·|skipped|) rather than O(k·|F|).
func (mg *misraGries) buildFan(x, f int) {
	t := mg.t
	mg.stamp++
	mg.fan = append(mg.fan[:0], int32(f))
	mg.fanColor = append(mg.fanColor[:0], -1)
	mg.mark[f] = mg.stamp
	mg.skipped = mg.skipped[:0] // pairs colour, neighbour
	row, cols := t.edges(x)
	pos := 0
	for {
		last := int(mg.fan[len(mg.fan)-1])
		next, nextColor := int32(-1), int32(-1)
		for i := 0; i < len(mg.skipped); i += 2 {
			c, w := mg.skipped[i], mg.skipped[i+1]
			if mg.mark[w] != mg.stamp && t.isFree(last, int(c)) {
				next, nextColor = w, c
				n := len(mg.skipped)
				mg.skipped[i], mg.skipped[i+1] = mg.skipped[n-2], mg.skipped[n-1]
				mg.skipped = mg.skipped[:n-2]
				break
			}
		}
		for next < 0 && pos < len(row) {
			w, c := row[pos], int32(pos)
			if cols != nil {
				c = cols[pos]
			}
			pos++
			if w < 0 || mg.mark[w] == mg.stamp {
				continue
			}
			if t.isFree(last, int(c)) {
				next, nextColor = w, c
			} else {
				mg.skipped = append(mg.skipped, c, w)
			}
		}
		if next < 0 {
			return
		}
		mg.mark[next] = mg.stamp
		mg.fan = append(mg.fan, next)
		mg.fanColor = append(mg.fanColor, nextColor)
	}
}

// DefaultColoring returns the colouring the dimension-exchange balancers use when given
// none: BipartiteColoring (Δ colours) on bipartite graphs, trees included, and
// MisraGriesColoring (at most Δ+1) on the others. It costs what the chosen colouring
// costs: O(n + m) on forests, O(m·(Δ + n)) in the worst case otherwise.
func DefaultColoring(g *Graph) (*EdgeColoring, error) {
	if g == nil {
		return nil, ErrNilNetwork
	}
	if g.IsBipartite() {
		return BipartiteColoring(g)
	}
	return MisraGriesColoring(g)
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
