package tokendist

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// The random network families of network science: G(n, p), Barabási–Albert,
// Watts–Strogatz and random geometric graphs. Each is fixed by its seed, built in
// O(n + m) expected time (Watts–Strogatz: O(n·k) with a hash set), and connected: the
// families that can come out disconnected are redrawn from the same random stream, at
// most maxConnectDraws times, and otherwise refused with ErrNotConnected.

// maxConnectDraws bounds the redraws of a family that may come out disconnected.
const maxConnectDraws = 100

// maxExpectedIsolated is the expected number of isolated nodes above which a draw is
// refused at once: a graph is then connected with probability below e^-40 or so, and
// redrawing would only waste time.
const maxExpectedIsolated = 40

// ErdosRenyi returns a connected G(n, p) random graph, fixed by seed: every one of the
// n(n-1)/2 possible edges is present independently with probability p. Connected
// rule: draws are repeated, at most 100 times, until one is connected, so the result
// follows G(n, p) conditioned on connectivity (Batagelj and Brandes' geometric skipping
// draws each, in O(n + m) time). Above the connectivity threshold p = (ln n + c)/n a
// draw is connected with probability about exp(-e^-c); where the expected number of
// isolated nodes, n(1-p)^(n-1), exceeds 40 the call fails at once with ErrNotConnected.
// It rejects p outside (0, 1] and expected sizes beyond the memory budget.
func ErdosRenyi(n int, p float64, seed uint64) (*Graph, error) {
	if err := checkOrder("ErdosRenyi", n); err != nil {
		return nil, err
	}
	if !(p > 0 && p <= 1) {
		return nil, badParam("ErdosRenyi needs 0 < p ≤ 1, got p = %v", p)
	}
	if err := checkExpectedEnds(fmt.Sprintf("ErdosRenyi(%d, %v)", n, p), p*float64(n)*float64(n-1)); err != nil {
		return nil, err
	}
	if iso := float64(n) * math.Pow(1-p, float64(n-1)); n > 1 && iso > maxExpectedIsolated {
		return nil, fmt.Errorf("%w: ErdosRenyi(%d, %v) expects %.3g isolated nodes; p must be near or above the connectivity threshold ln(n)/n = %.4g",
			ErrNotConnected, n, p, iso, math.Log(float64(n))/float64(n))
	}
	r := rand.New(rand.NewPCG(seed, 0x676e70))
	if g, err := drawConnected(n, func() []int32 { return gnpPairs(n, p, r) }); g != nil || err != nil {
		return g, err
	}
	return nil, fmt.Errorf("%w: ErdosRenyi(%d, %v) drew no connected graph in %d draws; raise p above the connectivity threshold ln(n)/n = %.4g",
		ErrNotConnected, n, p, maxConnectDraws, math.Log(float64(n))/float64(n))
}

// drawConnected builds a graph on n nodes from the pairs draw returns until one is
// connected, at most maxConnectDraws times. It returns nil and no error when none is.
func drawConnected(n int, draw func() []int32) (*Graph, error) {
	for range maxConnectDraws {
		g, err := fromPairs(n, draw(), false)
		if err != nil || g.Connected() {
			return g, err
		}
	}
	return nil, nil
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

// BarabasiAlbert returns a Barabási–Albert preferential-attachment graph on n nodes,
// fixed by seed: it starts from the complete graph on nodes 0..m and adds nodes
// m+1..n-1 one at a time, each joined to m distinct earlier nodes chosen with
// probability proportional to their degree. The graph is connected, has exactly
// m(m+1)/2 + (n-m-1)·m edges and minimum degree m; its degree distribution tends to
// P(k) = 2m(m+1)/(k(k+1)(k+2)) for k ≥ m (Bollobás, Riordan, Spencer, Tusnády 2001).
// It costs O(n·m) expected time and 8 bytes per edge besides the graph. It rejects
// m < 1 and n ≤ m.
func BarabasiAlbert(n, m int, seed uint64) (*Graph, error) {
	if err := checkOrder("BarabasiAlbert", n); err != nil {
		return nil, err
	}
	if m < 1 || n <= m {
		return nil, badParam("BarabasiAlbert needs 1 ≤ m < n, got n = %d, m = %d", n, m)
	}
	edges := int64(m)*int64(m+1)/2 + int64(n-m-1)*int64(m)
	if err := checkEnds(fmt.Sprintf("BarabasiAlbert(%d, %d)", n, m), 2*edges); err != nil {
		return nil, err
	}
	if err := checkAlloc(fmt.Sprintf("BarabasiAlbert(%d, %d)", n, m), 2*edges, 4); err != nil {
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
	return fromPairs(n, pairs, false)
}

func containsInt32(s []int32, x int32) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// WattsStrogatz returns a connected Watts–Strogatz small-world graph, fixed by seed: the
// ring lattice in which every node is joined to its k nearest nodes (k/2 on each side),
// with each lattice edge (u, u+j), j = 1..k/2, rewired with probability beta to
// (u, w), w uniform among the nodes not u and not already adjacent to u (Watts and
// Strogatz 1998, the order NetworkX uses: j outer, u inner). It has exactly n·k/2 edges;
// beta = 0 gives the lattice and beta = 1 a graph close to a random one. Disconnected
// draws are redrawn, at most 100 times, then refused with ErrNotConnected (with k = 2 and beta > 0 a draw is
// often disconnected). It costs O(n·k) expected time
// and a hash set of the edges while it builds. It rejects odd k, k < 2, k ≥ n and beta
// outside [0, 1].
func WattsStrogatz(n, k int, beta float64, seed uint64) (*Graph, error) {
	if err := checkOrder("WattsStrogatz", n); err != nil {
		return nil, err
	}
	switch {
	case k < 2 || k%2 != 0 || k >= n:
		return nil, badParam("WattsStrogatz needs an even k with 2 ≤ k < n, got n = %d, k = %d", n, k)
	case !(beta >= 0 && beta <= 1):
		return nil, badParam("WattsStrogatz needs 0 ≤ beta ≤ 1, got beta = %v", beta)
	}
	edges := int64(n) * int64(k/2)
	if err := checkEnds(fmt.Sprintf("WattsStrogatz(%d, %d)", n, k), 2*edges); err != nil {
		return nil, err
	}
	// The pair list (8 bytes an edge) and the hash set (about 48 bytes an edge).
	if err := checkAlloc(fmt.Sprintf("WattsStrogatz(%d, %d)", n, k), edges, 56); err != nil {
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
	if g, err := drawConnected(n, draw); g != nil || err != nil {
		return g, err
	}
	return nil, fmt.Errorf("%w: WattsStrogatz(%d, %d, %v) drew no connected graph in %d draws; raise k or lower beta",
		ErrNotConnected, n, k, beta, maxConnectDraws)
}

// RandomGeometric returns a connected random geometric graph, fixed by seed: n points
// uniform in the unit square [0, 1)², two joined when their Euclidean distance is at
// most radius (Penrose 2003). For radius ≤ 1 the expected number of edges is
// n(n-1)/2 · (π r² − 8r³/3 + r⁴/2). Disconnected draws are redrawn, at most 100 times,
// then refused with ErrNotConnected (the threshold is near r = sqrt(ln n / (π n))); where
// n(1 − π r²)^(n−1) exceeds 40 expected isolated nodes the call fails at once. Points are
// bucketed in cells of side ≥ radius, so it costs O(n + m) expected time and 28 bytes a
// node besides the graph. It rejects radius outside (0, √2].
func RandomGeometric(n int, radius float64, seed uint64) (*Graph, error) {
	if err := checkOrder("RandomGeometric", n); err != nil {
		return nil, err
	}
	if !(radius > 0 && radius <= math.Sqrt2) {
		return nil, badParam("RandomGeometric needs 0 < radius ≤ √2, got radius = %v", radius)
	}
	r2 := radius * radius
	pEdge := 1.0
	if radius <= 1 {
		pEdge = math.Pi*r2 - 8*r2*radius/3 + r2*r2/2
	}
	if err := checkExpectedEnds(fmt.Sprintf("RandomGeometric(%d, %v)", n, radius), pEdge*float64(n)*float64(n-1)); err != nil {
		return nil, err
	}
	if err := checkAlloc(fmt.Sprintf("RandomGeometric(%d, %v)", n, radius), int64(n), 28); err != nil {
		return nil, err
	}
	if iso := float64(n) * math.Pow(max(0, 1-math.Pi*r2), float64(n-1)); n > 1 && iso > maxExpectedIsolated {
		return nil, fmt.Errorf("%w: RandomGeometric(%d, %v) expects %.3g isolated nodes; radius must be near or above the connectivity threshold sqrt(ln n/(π n)) = %.4g",
			ErrNotConnected, n, radius, iso, math.Sqrt(math.Log(float64(n))/(math.Pi*float64(n))))
	}
	xs, ys := make([]float64, n), make([]float64, n)
	r := rand.New(rand.NewPCG(seed, 0x726767))
	draw := func() []int32 {
		for v := range n {
			xs[v], ys[v] = r.Float64(), r.Float64()
		}
		return geometricPairs(xs, ys, radius)
	}
	if g, err := drawConnected(n, draw); g != nil || err != nil {
		return g, err
	}
	return nil, fmt.Errorf("%w: RandomGeometric(%d, %v) drew no connected graph in %d draws; raise the radius above sqrt(ln n/(π n)) = %.4g",
		ErrNotConnected, n, radius, maxConnectDraws, math.Sqrt(math.Log(float64(n))/(math.Pi*float64(n))))
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
		return badParam("%s would have about %.3g edge ends, more than the int32 limit allows", what, ends)
	}
	return checkAlloc(what, int64(ends*1.1)+1024, 8)
}
