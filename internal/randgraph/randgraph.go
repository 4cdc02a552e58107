// Package randgraph draws the random networks of network science, G(n, p),
// Barabási–Albert, Watts–Strogatz and random geometric graphs, as flat lists of
// endpoint pairs (v, w): package gen builds its exported generators on them, and the
// core's internal tests build test networks from the same draws. Each draw is fixed by
// its seed, takes O(n + m) expected time (Watts–Strogatz: O(n·k) with a hash set), and
// is connected: the families that can come out disconnected are redrawn from the same
// random stream, at most maxConnectDraws times, and otherwise refused with
// ErrNotConnected. The pairs are simple: no loops, no edge twice.
package randgraph

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/tokendist/tokendist/internal/dsu"
	"github.com/tokendist/tokendist/internal/errs"
)

// maxNodes and maxEdgeEnds are the core's limits of a *tokendist.Graph: node IDs and
// edge-end offsets fit in an int32.
const (
	maxNodes    = 1 << 31
	maxEdgeEnds = 1<<31 - 1
)

// checkOrder refuses fewer than one node, or more than an int32 can name.
func checkOrder(what string, n int) error {
	if n < 1 {
		return errs.BadParam("%s needs at least one node, got n = %d", what, n)
	}
	if n >= maxNodes {
		return errs.TooLargeParam("%s with n = %d nodes exceeds the int32 node limit", what, n)
	}
	return nil
}

// checkEnds refuses a graph with more than maxEdgeEnds edge ends before anything is
// allocated for it: the pairs and the graph built from them take about 12 bytes an end.
func checkEnds(what string, ends int64) error {
	if ends > maxEdgeEnds {
		return errs.BadParam("%s would have %d edge ends, more than the int32 limit 2^31-1", what, ends)
	}
	return errs.CheckAlloc(what, ends, 12)
}

// maxConnectDraws bounds the redraws of a family that may come out disconnected.
const maxConnectDraws = 100

// maxExpectedIsolated is the expected number of isolated nodes above which a draw is
// refused at once: a graph is then connected with probability below e^-40 or so, and
// redrawing would only waste time.
const maxExpectedIsolated = 40

// ErdosRenyi draws the endpoint pairs of gen.ErdosRenyi (see there).
func ErdosRenyi(n int, p float64, seed uint64) ([]int32, error) {
	if err := checkOrder("ErdosRenyi", n); err != nil {
		return nil, err
	}
	if !(p > 0 && p <= 1) {
		return nil, errs.BadParam("ErdosRenyi needs 0 < p ≤ 1, got p = %v", p)
	}
	if err := checkExpectedEnds(fmt.Sprintf("ErdosRenyi(%d, %v)", n, p), p*float64(n)*float64(n-1)); err != nil {
		return nil, err
	}
	if iso := float64(n) * math.Pow(1-p, float64(n-1)); n > 1 && iso > maxExpectedIsolated {
		return nil, fmt.Errorf("%w: ErdosRenyi(%d, %v) expects %.3g isolated nodes; p must be near or above the connectivity threshold ln(n)/n = %.4g",
			errs.ErrNotConnected, n, p, iso, math.Log(float64(n))/float64(n))
	}
	r := rand.New(rand.NewPCG(seed, 0x676e70))
	if pairs, ok := drawConnected(n, func() []int32 { return gnpPairs(n, p, r) }); ok {
		return pairs, nil
	}
	return nil, fmt.Errorf("%w: ErdosRenyi(%d, %v) drew no connected graph in %d draws; raise p above the connectivity threshold ln(n)/n = %.4g",
		errs.ErrNotConnected, n, p, maxConnectDraws, math.Log(float64(n))/float64(n))
}

// drawConnected draws pairs until they make a connected graph on n nodes, at most
// maxConnectDraws times, and returns them; ok is false when none is connected.
func drawConnected(n int, draw func() []int32) (pairs []int32, ok bool) {
	for range maxConnectDraws {
		if pairs := draw(); connected(n, pairs) {
			return pairs, true
		}
	}
	return nil, false
}

// connected reports whether the pairs join all n nodes, by union–find (dsu): O(m log n)
// time and 4 bytes a node.
func connected(n int, pairs []int32) bool {
	f := make(dsu.Forest, n)
	f.Reset()
	parts := n
	for i := 0; i+1 < len(pairs); i += 2 {
		if a, b := f.Find(pairs[i]), f.Find(pairs[i+1]); a != b {
			f.Link(a, b)
			parts--
		}
	}
	return parts <= 1
}

// gnpPairs draws the edges of one G(n, p) graph as endpoint pairs (v, w), w < v, in
// O(n + m) expected time: Batagelj and Brandes (2005) skip over the absent slots of the
// lower triangle, in row order, a geometric number at a time.
func gnpPairs(n int, p float64, r *rand.Rand) []int32 {
	var pairs []int32
	slots := float64(n) * float64(n-1) / 2
	lq := math.Log1p(-p) // -Inf for p = 1: every skip is then 0
	v, w := 1, -1
	for v < n {
		skip := math.Log(1-r.Float64()) / lq
		if skip >= slots { // past the last slot; also guards the conversion below
			break
		}
		w += 1 + int(skip)
		for w >= v && v < n {
			w -= v
			v++
		}
		if v < n {
			pairs = append(pairs, int32(v), int32(w))
		}
	}
	return pairs
}

// BarabasiAlbert draws the endpoint pairs of gen.BarabasiAlbert (see there).
func BarabasiAlbert(n, m int, seed uint64) ([]int32, error) {
	if err := checkOrder("BarabasiAlbert", n); err != nil {
		return nil, err
	}
	if m < 1 || n <= m {
		return nil, errs.BadParam("BarabasiAlbert needs 1 ≤ m < n, got n = %d, m = %d", n, m)
	}
	edges := int64(m)*int64(m+1)/2 + int64(n-m-1)*int64(m)
	if err := checkEnds(fmt.Sprintf("BarabasiAlbert(%d, %d)", n, m), 2*edges); err != nil {
		return nil, err
	}
	if err := errs.CheckAlloc(fmt.Sprintf("BarabasiAlbert(%d, %d)", n, m), 2*edges, 4); err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(seed, 0x6261))
	// pairs holds every edge end once: drawing a uniform end draws a node with
	// probability proportional to its degree.
	pairs := make([]int32, 0, 2*edges)
	for u := 0; u <= m; u++ {
		for v := u + 1; v <= m; v++ {
			pairs = append(pairs, int32(u), int32(v))
		}
	}
	targets := make([]int32, 0, m)
	for v := m + 1; v < n; v++ {
		targets = targets[:0]
		ends := len(pairs) // the ends of nodes before v only
		for len(targets) < m {
			t := pairs[r.IntN(ends)]
			if !containsInt32(targets, t) {
				targets = append(targets, t)
			}
		}
		for _, t := range targets {
			pairs = append(pairs, int32(v), t)
		}
	}
	return pairs, nil
}

func containsInt32(s []int32, x int32) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// WattsStrogatz draws the endpoint pairs of gen.WattsStrogatz (see there).
func WattsStrogatz(n, k int, beta float64, seed uint64) ([]int32, error) {
	if err := checkOrder("WattsStrogatz", n); err != nil {
		return nil, err
	}
	switch {
	case k < 2 || k%2 != 0 || k >= n:
		return nil, errs.BadParam("WattsStrogatz needs an even k with 2 ≤ k < n, got n = %d, k = %d", n, k)
	case !(beta >= 0 && beta <= 1):
		return nil, errs.BadParam("WattsStrogatz needs 0 ≤ beta ≤ 1, got beta = %v", beta)
	}
	edges := int64(n) * int64(k/2)
	if err := checkEnds(fmt.Sprintf("WattsStrogatz(%d, %d)", n, k), 2*edges); err != nil {
		return nil, err
	}
	// The pair list (8 bytes an edge) and the hash set (about 48 bytes an edge).
	if err := errs.CheckAlloc(fmt.Sprintf("WattsStrogatz(%d, %d)", n, k), edges, 56); err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(seed, 0x7773))
	key := func(u, v int32) uint64 {
		if u > v {
			u, v = v, u
		}
		return uint64(u)<<32 | uint64(v)
	}
	draw := func() []int32 {
		pairs := make([]int32, 0, 2*edges)
		deg := make([]int32, n)
		for j := 1; j <= k/2; j++ {
			for u := 0; u < n; u++ {
				pairs = append(pairs, int32(u), int32((u+j)%n))
			}
		}
		for i := range deg {
			deg[i] = int32(k)
		}
		if beta > 0 {
			set := make(map[uint64]struct{}, edges)
			for i := 0; i < len(pairs); i += 2 {
				set[key(pairs[i], pairs[i+1])] = struct{}{}
			}
			for i := 0; i < len(pairs); i += 2 {
				u, v := pairs[i], pairs[i+1]
				if r.Float64() >= beta || int(deg[u]) >= n-1 {
					continue
				}
				// u has a non-neighbour other than itself, so the rejection loop ends;
				// its expected length is at most n/(n-1-deg u) ≤ n.
				w := int32(r.IntN(n))
				for {
					if _, dup := set[key(u, w)]; !dup && w != u {
						break
					}
					w = int32(r.IntN(n))
				}
				delete(set, key(u, v))
				set[key(u, w)] = struct{}{}
				deg[v]--
				deg[w]++
				pairs[i+1] = w
			}
		}
		return pairs
	}
	if pairs, ok := drawConnected(n, draw); ok {
		return pairs, nil
	}
	return nil, fmt.Errorf("%w: WattsStrogatz(%d, %d, %v) drew no connected graph in %d draws; raise k or lower beta",
		errs.ErrNotConnected, n, k, beta, maxConnectDraws)
}

// RandomGeometric draws the endpoint pairs of gen.RandomGeometric (see there).
func RandomGeometric(n int, radius float64, seed uint64) ([]int32, error) {
	if err := checkOrder("RandomGeometric", n); err != nil {
		return nil, err
	}
	if !(radius > 0 && radius <= math.Sqrt2) {
		return nil, errs.BadParam("RandomGeometric needs 0 < radius ≤ √2, got radius = %v", radius)
	}
	r2 := radius * radius
	pEdge := 1.0
	if radius <= 1 {
		pEdge = math.Pi*r2 - 8*r2*radius/3 + r2*r2/2
	}
	if err := checkExpectedEnds(fmt.Sprintf("RandomGeometric(%d, %v)", n, radius), pEdge*float64(n)*float64(n-1)); err != nil {
		return nil, err
	}
	if err := errs.CheckAlloc(fmt.Sprintf("RandomGeometric(%d, %v)", n, radius), int64(n), 28); err != nil {
		return nil, err
	}
	if iso := float64(n) * math.Pow(max(0, 1-math.Pi*r2), float64(n-1)); n > 1 && iso > maxExpectedIsolated {
		return nil, fmt.Errorf("%w: RandomGeometric(%d, %v) expects %.3g isolated nodes; radius must be near or above the connectivity threshold sqrt(ln n/(π n)) = %.4g",
			errs.ErrNotConnected, n, radius, iso, math.Sqrt(math.Log(float64(n))/(math.Pi*float64(n))))
	}
	xs, ys := make([]float64, n), make([]float64, n)
	r := rand.New(rand.NewPCG(seed, 0x726767))
	draw := func() []int32 {
		for v := range n {
			xs[v], ys[v] = r.Float64(), r.Float64()
		}
		return geometricPairs(xs, ys, radius)
	}
	if pairs, ok := drawConnected(n, draw); ok {
		return pairs, nil
	}
	return nil, fmt.Errorf("%w: RandomGeometric(%d, %v) drew no connected graph in %d draws; raise the radius above sqrt(ln n/(π n)) = %.4g",
		errs.ErrNotConnected, n, radius, maxConnectDraws, math.Sqrt(math.Log(float64(n))/(math.Pi*float64(n))))
}

// geometricPairs returns the pairs of points (xs[i], ys[i]) in [0, 1)² at Euclidean
// distance at most radius. Points are bucketed by a counting sort into c×c cells of
// side 1/c ≥ radius, so a point's neighbours lie in its own cell and the eight around
// it; c ≤ √n + 1 keeps the cell table O(n). It costs O(n + m) expected time for uniform
// points.
func geometricPairs(xs, ys []float64, radius float64) []int32 {
	n := len(xs)
	c := int(min(math.Floor(1/radius), math.Ceil(math.Sqrt(float64(n)))))
	c = max(c, 1)
	cell := func(v int) int {
		return min(int(xs[v]*float64(c)), c-1)*c + min(int(ys[v]*float64(c)), c-1)
	}
	start := make([]int32, c*c+1)
	for v := range n {
		start[cell(v)+1]++
	}
	for i := 0; i < c*c; i++ {
		start[i+1] += start[i]
	}
	fill := make([]int32, c*c)
	copy(fill, start)
	order := make([]int32, n)
	for v := range n {
		ci := cell(v)
		order[fill[ci]] = int32(v)
		fill[ci]++
	}
	r2 := radius * radius
	var pairs []int32
	for cx := range c {
		for cy := range c {
			own := order[start[cx*c+cy]:start[cx*c+cy+1]]
			// Each pair once: within the cell i < j, and with the four cells after it.
			for i, u := range own {
				for _, w := range own[i+1:] {
					if dist2(xs, ys, u, w) <= r2 {
						pairs = append(pairs, u, w)
					}
				}
			}
			for _, d := range [4][2]int{{0, 1}, {1, -1}, {1, 0}, {1, 1}} {
				nx, ny := cx+d[0], cy+d[1]
				if nx >= c || ny < 0 || ny >= c {
					continue
				}
				other := order[start[nx*c+ny]:start[nx*c+ny+1]]
				for _, u := range own {
					for _, w := range other {
						if dist2(xs, ys, u, w) <= r2 {
							pairs = append(pairs, u, w)
						}
					}
				}
			}
		}
	}
	return pairs
}

func dist2(xs, ys []float64, u, w int32) float64 {
	dx, dy := xs[u]-xs[w], ys[u]-ys[w]
	return dx*dx + dy*dy
}

// checkExpectedEnds refuses a random graph whose expected number of edge ends exceeds
// the int32 limit or whose expected size, with room for fluctuation, exceeds the memory
// budget (4 bytes an end in the pair list, 4 in the adjacency).
func checkExpectedEnds(what string, ends float64) error {
	if ends > maxEdgeEnds/2 {
		return errs.BadParam("%s would have about %.3g edge ends, more than the int32 limit allows", what, ends)
	}
	return errs.CheckAlloc(what, int64(ends*1.1)+1024, 8)
}
