package animate

import (
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/internal/errs"
	"gonum.org/v1/gonum/graph/layout"
)

// point is a node's place in [0, 1]².
type point struct{ x, y float64 }

// place computes the layout l (LayoutAuto: chosen from the structure) into m.pos and
// m.wrap. O(n + m), or the force layout's cost.
func (m *Movie) place(l Layout) error {
	g := m.g
	n := g.Order()
	m.wrap = make([]bool, len(m.links))
	auto := l == LayoutAuto
	if auto || l == LayoutCircle {
		if cyc := cycleOrder(g); cyc != nil {
			m.layout, m.pos = LayoutCircle, make([]point, n)
			for i, v := range cyc {
				a := 2*math.Pi*float64(i)/float64(n) - math.Pi/2
				m.pos[v] = point{0.5 + 0.5*math.Cos(a), 0.5 + 0.5*math.Sin(a)}
			}
			return nil
		}
		if !auto {
			return errs.BadParam("animate: layout circle needs a ring (a connected 2-regular network)")
		}
	}
	if auto || l == LayoutLattice {
		if r, c, ok := latticeShape(m.links, n); ok {
			m.layout, m.pos = LayoutLattice, make([]point, n)
			s := float64(max(r, c) - 1)
			if s == 0 {
				s = 1
			}
			ox, oy := (1-float64(c-1)/s)/2, (1-float64(r-1)/s)/2
			for v := range n {
				m.pos[v] = point{ox + float64(v%c)/s, oy + float64(v/c)/s}
			}
			for i, e := range m.links {
				u, v := e[0], e[1]
				m.wrap[i] = (u/c == v/c && v-u == c-1 && c > 2) || (u%c == v%c && (v-u)/c == r-1 && r > 2)
			}
			return nil
		}
		if !auto {
			return errs.BadParam("animate: layout lattice needs a row-major grid (Mesh, Torus or Path)")
		}
	}
	if auto || l == LayoutHypercube {
		if d, ok := cubeDim(g, m.links); ok {
			m.layout, m.pos = LayoutHypercube, make([]point, n)
			var lo, hi point = point{math.Inf(1), math.Inf(1)}, point{math.Inf(-1), math.Inf(-1)}
			for v := range n {
				var p point
				for i := range d {
					if v>>i&1 == 1 {
						a := math.Pi * float64(i) / float64(d)
						s := 1 + 0.09*float64(i)
						p.x += s * math.Cos(a)
						p.y += s * math.Sin(a)
					}
				}
				m.pos[v] = p
				lo = point{min(lo.x, p.x), min(lo.y, p.y)}
				hi = point{max(hi.x, p.x), max(hi.y, p.y)}
			}
			normalize(m.pos, lo, hi)
			return nil
		}
		if !auto {
			return errs.BadParam("animate: layout hypercube needs 2^d nodes joined when they differ in one bit")
		}
	}
	if auto || l == LayoutTree {
		if g.IsTree() {
			m.layout, m.pos = LayoutTree, treeLayout(g)
			return nil
		}
		if !auto {
			return errs.BadParam("animate: layout tree needs a tree")
		}
	}
	m.layout, m.pos = LayoutForce, forceLayout(g)
	return nil
}

// normalize maps the box lo..hi onto [0, 1]², keeping the aspect ratio.
func normalize(pos []point, lo, hi point) {
	s := max(hi.x-lo.x, hi.y-lo.y)
	if s <= 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		for i := range pos {
			pos[i] = point{0.5, 0.5}
		}
		return
	}
	ox, oy := (1-(hi.x-lo.x)/s)/2, (1-(hi.y-lo.y)/s)/2
	for i, p := range pos {
		pos[i] = point{ox + (p.x-lo.x)/s, oy + (p.y-lo.y)/s}
	}
}

// cycleOrder returns the nodes of g in the order of its cycle if g is a connected
// 2-regular network (a ring), else nil. O(n).
func cycleOrder(g *tokendist.Graph) []int {
	n := g.Order()
	if n < 3 || g.MinDegree() != 2 || g.MaxDegree() != 2 {
		return nil
	}
	out := make([]int, 0, n)
	prev, v := -1, 0
	for range n {
		if v == 0 && len(out) > 0 {
			return nil // back at the start early: two or more cycles
		}
		out = append(out, v)
		nb := g.Neighbors(v)
		next := int(nb[0])
		if next == prev {
			next = int(nb[1])
		}
		prev, v = v, next
	}
	return out
}

// latticeShape finds r × c = n (c largest first, c ≥ 2: a single column fits only when
// the single row does) such that every link (u < v, as EdgeList gives them) joins
// row-major grid neighbours, with or without wrap-around. O(m · d(n)).
func latticeShape(links [][2]int, n int) (r, c int, ok bool) {
	if n < 2 || len(links) == 0 {
		return 0, 0, false
	}
	for c = n; c >= 2; c-- {
		if n%c == 0 && gridFits(links, n/c, c) {
			return n / c, c, true
		}
	}
	return 0, 0, false
}

// gridFits reports whether every link joins neighbours of the row-major r × c grid.
// With u < v, a link in one row has v%c > u%c and one in one column has v/c > u/c.
func gridFits(links [][2]int, r, c int) bool {
	for _, e := range links {
		u, v := e[0], e[1]
		row := u/c == v/c && (v-u == 1 || v-u == c-1)
		col := u%c == v%c && (v/c-u/c == 1 || v/c-u/c == r-1)
		if !row && !col {
			return false
		}
	}
	return true
}

// cubeDim returns d if g has 2^d nodes, is d-regular and every link joins nodes that
// differ in one bit. O(n + m).
func cubeDim(g *tokendist.Graph, links [][2]int) (int, bool) {
	n := g.Order()
	if n < 2 || n&(n-1) != 0 {
		return 0, false
	}
	d := bits.TrailingZeros(uint(n))
	if g.MinDegree() != d || g.MaxDegree() != d {
		return 0, false
	}
	for _, e := range links {
		if x := e[0] ^ e[1]; x&(x-1) != 0 {
			return 0, false
		}
	}
	return d, true
}

// treeLayout layers tree g from its centre: depth down, leaves left to right in
// depth-first order, each inner node above the middle of its children. O(n).
func treeLayout(g *tokendist.Graph) []point {
	n := g.Order()
	root, _ := g.Center() // a tree is connected: Center cannot fail
	par := make([]int32, n)
	depth := make([]int, n)
	for i := range par {
		par[i] = -2
	}
	par[root] = int32(root) // visited; the root's parent is never read
	// Iterative depth-first order (preorder), children in ascending order.
	order := make([]int, 0, n)
	stack := []int{root}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		order = append(order, v)
		nb := g.Neighbors(v)
		for i := len(nb) - 1; i >= 0; i-- {
			w := int(nb[i])
			if par[w] == -2 {
				par[w] = int32(v)
				depth[w] = depth[v] + 1
				stack = append(stack, w)
			}
		}
	}
	xs := make([]float64, n)
	lo, hi := make([]float64, n), make([]float64, n)
	for i := range lo {
		lo[i], hi[i] = math.Inf(1), math.Inf(-1)
	}
	leaves, maxDepth := 0.0, 0
	for _, v := range order {
		maxDepth = max(maxDepth, depth[v])
		if (v == root && g.Degree(v) == 0) || (v != root && g.Degree(v) == 1) {
			xs[v] = leaves
			leaves++
		}
	}
	for i := len(order) - 1; i >= 0; i-- {
		v := order[i]
		if !math.IsInf(lo[v], 1) {
			xs[v] = (lo[v] + hi[v]) / 2
		}
		if i > 0 { // order[0] is the root
			p := par[v]
			lo[p], hi[p] = min(lo[p], xs[v]), max(hi[p], xs[v])
		}
	}
	pos := make([]point, n)
	w := max(leaves-1, 1)
	h := float64(max(maxDepth, 1))
	for v := range n {
		pos[v] = point{xs[v] / w, float64(depth[v]) / h}
	}
	if maxDepth == 0 {
		pos[root] = point{0.5, 0.5}
	}
	return pos
}

// forceLayout is gonum's Eades layout from a fixed seed: O(U · (n log n + m)) with
// U = 100 updates up to 2000 nodes, 40 beyond.
func forceLayout(g *tokendist.Graph) []point {
	n := g.Order()
	pos := make([]point, n)
	if n == 1 {
		pos[0] = point{0.5, 0.5}
		return pos
	}
	u := 100
	if n > 2000 {
		u = 40
	}
	e := layout.EadesR2{Repulsion: 1, Rate: 0.05, Updates: u, Theta: 0.5, Src: rand.NewPCG(0x616e696d, 0x617465)}
	opt := layout.NewOptimizerR2(g, e.Update)
	for opt.Update() {
	}
	lo, hi := point{math.Inf(1), math.Inf(1)}, point{math.Inf(-1), math.Inf(-1)}
	for v := range n {
		c := opt.Coord2(int64(v))
		pos[v] = point{c.X, c.Y}
		lo = point{min(lo.x, c.X), min(lo.y, c.Y)}
		hi = point{max(hi.x, c.X), max(hi.y, c.Y)}
	}
	normalize(pos, lo, hi)
	return pos
}
