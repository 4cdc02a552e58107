package tokendist

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"

	"github.com/tokendist/tokendist/internal/dsu"
)

// maxNodes bounds generated networks so that node IDs fit in an int32.
const maxNodes = 1 << 31

func checkOrder(what string, n int) error {
	if n < 1 {
		return badParam("%s needs at least one node, got n = %d", what, n)
	}
	if n >= maxNodes {
		return tooLarge("%s with n = %d nodes exceeds the int32 node limit", what, n)
	}
	return nil
}

// checkEnds rejects a graph with more than maxEdgeEnds edge ends before anything is
// allocated for it.
func checkEnds(what string, ends int64) error {
	if ends > maxEdgeEnds {
		return badParam("%s would have %d edge ends, more than the int32 limit 2^31-1", what, ends)
	}
	// The adjacency array and the pairs it is built from, 4 bytes each per end, and
	// the construction's scratch (with at least one end per node in every generator
	// that calls it, this bounds the per-node arrays too).
	return checkAlloc(what, ends, 12)
}

// checkTreeOrder checks the order of a graph with n-1 edges (paths, stars, trees).
func checkTreeOrder(what string, n int) error {
	if err := checkOrder(what, n); err != nil {
		return err
	}
	return checkEnds(fmt.Sprintf("%s with n = %d", what, n), 2*int64(n-1))
}

// Path returns the path 0 - 1 - ... - n-1. It costs O(n) time and memory.
func Path(n int) (*Graph, error) {
	if err := checkTreeOrder("Path", n); err != nil {
		return nil, err
	}
	pairs := make([]int32, 0, 2*(n-1))
	for v := 1; v < n; v++ {
		pairs = append(pairs, int32(v-1), int32(v))
	}
	return fromPairs(n, pairs, false)
}

// Ring returns the cycle 0 - 1 - ... - n-1 - 0 (the papers' R_p). Ring(1) is a single
// node and Ring(2) a single edge, since the graph is simple. It costs O(n) time and
// memory.
func Ring(n int) (*Graph, error) {
	if err := checkOrder("Ring", n); err != nil {
		return nil, err
	}
	if err := checkEnds(fmt.Sprintf("Ring with n = %d", n), 2*int64(n)); err != nil {
		return nil, err
	}
	pairs := make([]int32, 0, 2*n)
	for v := 0; v < n; v++ {
		pairs = append(pairs, int32(v), int32((v+1)%n))
	}
	return fromPairs(n, pairs, true)
}

// Star returns the star with centre 0 and leaves 1..n-1. It costs O(n) time and memory.
func Star(n int) (*Graph, error) {
	if err := checkTreeOrder("Star", n); err != nil {
		return nil, err
	}
	pairs := make([]int32, 0, 2*(n-1))
	for v := 1; v < n; v++ {
		pairs = append(pairs, 0, int32(v))
	}
	return fromPairs(n, pairs, false)
}

// Complete returns the complete graph K_n. It costs O(n²) time and memory.
func Complete(n int) (*Graph, error) {
	if err := checkOrder("Complete", n); err != nil {
		return nil, err
	}
	if err := checkEnds(fmt.Sprintf("Complete(%d)", n), int64(n)*int64(n-1)); err != nil {
		return nil, err
	}
	pairs := make([]int32, 0, n*(n-1))
	for u := 0; u < n; u++ {
		for v := u + 1; v < n; v++ {
			pairs = append(pairs, int32(u), int32(v))
		}
	}
	return fromPairs(n, pairs, false)
}

// KaryShape names a complete k-ary tree T_{h,k} by its height and arity, so that a call
// site reads KaryTree(KaryShape{Height: 3, Arity: 2}) whatever the papers' subscript
// order. Height h ≥ 0 counts edges from the root to a leaf (T_{0,k} is one node); Arity
// k ≥ 1 is the number of children of every internal node (k = 1 gives a path).
type KaryShape struct {
	Height int // h: levels below the root
	Arity  int // k: children per internal node
}

// KaryTreeOrder returns the number of nodes of the complete k-ary tree of height h,
// (k^(h+1) - 1)/(k - 1), or an error if it is out of range. It costs O(h).
func KaryTreeOrder(t KaryShape) (int, error) {
	k, h := t.Arity, t.Height
	if k < 1 {
		return 0, badParam("k-ary tree needs k ≥ 1, got k = %d", k)
	}
	if h < 0 {
		return 0, badParam("tree height must be ≥ 0, got h = %d", h)
	}
	if k == 1 {
		// A path: no need to count level by level (h may be huge).
		if h >= maxNodes-1 {
			return 0, badParam("KaryTree(k = %d, h = %d) has more than 2^31 nodes", k, h)
		}
		return h + 1, nil
	}
	n, level := 1, 1
	for i := 0; i < h; i++ {
		hi, lo := bits.Mul64(uint64(level), uint64(k))
		if hi != 0 || lo >= maxNodes {
			return 0, badParam("KaryTree(k = %d, h = %d) has more than 2^31 nodes", k, h)
		}
		level = int(lo)
		n += level
		if n >= maxNodes {
			return 0, badParam("KaryTree(k = %d, h = %d) has more than 2^31 nodes", k, h)
		}
	}
	return n, nil
}

// KaryTree returns the complete k-ary tree of height h, the papers' T_{h,k}, with
// (k^(h+1)-1)/(k-1) nodes in heap order: the root is 0 and the children of v are
// k·v+1, ..., k·v+k. KaryTree(KaryShape{Height: h, Arity: 1}) is a path of h+1 nodes. It
// costs O(n) time and memory for its n nodes.
func KaryTree(t KaryShape) (*Graph, error) {
	k, h := t.Arity, t.Height
	n, err := KaryTreeOrder(KaryShape{Height: h, Arity: k})
	if err != nil {
		return nil, err
	}
	if err := checkEnds(fmt.Sprintf("KaryTree(k = %d, h = %d)", k, h), 2*int64(n-1)); err != nil {
		return nil, err
	}
	pairs := make([]int32, 0, 2*(n-1))
	for v := 1; v < n; v++ {
		pairs = append(pairs, int32((v-1)/k), int32(v))
	}
	return fromPairs(n, pairs, false)
}

// RandomTree returns a uniformly random labelled tree on n nodes (a random Prüfer
// sequence decoded in O(n)), fixed by seed.
func RandomTree(n int, seed uint64) (*Graph, error) {
	if err := checkTreeOrder("RandomTree", n); err != nil {
		return nil, err
	}
	if n == 1 {
		return fromPairs(1, nil, false)
	}
	r := rand.New(rand.NewPCG(seed, 0x7265655f74726565))
	prufer := make([]int32, n-2)
	degree := make([]int32, n)
	for i := range prufer {
		prufer[i] = int32(r.IntN(n))
		degree[prufer[i]]++
	}
	pairs := make([]int32, 0, 2*(n-1))
	// Linear-time decoding: ptr scans for the smallest leaf; leaf may drop below it.
	ptr := 0
	for degree[ptr] != 0 {
		ptr++
	}
	leaf := int32(ptr)
	for _, v := range prufer {
		pairs = append(pairs, leaf, v)
		degree[v]--
		if degree[v] == 0 && v < int32(ptr) {
			leaf = v
			continue
		}
		ptr++
		for degree[ptr] != 0 {
			ptr++
		}
		leaf = int32(ptr)
	}
	pairs = append(pairs, leaf, int32(n-1))
	return fromPairs(n, pairs, false)
}

// Hypercube returns the d-dimensional hypercube H_d: nodes 0..2^d-1, with u and v
// adjacent when they differ in exactly one bit. Hypercube(0) is a single node; d ≤ 26
// keeps the d·2^d edge ends within the int32 limit. It costs O(d·2^d) time and memory.
func Hypercube(d int) (*Graph, error) {
	if d < 0 {
		return nil, badParam("hypercube dimension must be in 0..26, got d = %d", d)
	}
	if d > 26 {
		return nil, tooLarge("hypercube dimension must be in 0..26, got d = %d (2^%d nodes)", d, d)
	}
	n := 1 << d
	if err := checkOrder(fmt.Sprintf("Hypercube(%d)", d), n); err != nil {
		return nil, err
	}
	if err := checkEnds(fmt.Sprintf("Hypercube(%d)", d), int64(n)*int64(d)); err != nil {
		return nil, err
	}
	off := make([]int, n+1)
	adj := make([]int32, n*d)
	for v := 0; v < n; v++ {
		off[v+1] = off[v] + d
		nb := adj[off[v]:off[v+1]]
		// Neighbours with a bit cleared come first, largest bit first; then set bits.
		k := 0
		for i := d - 1; i >= 0; i-- {
			if v&(1<<i) != 0 {
				nb[k] = int32(v ^ 1<<i)
				k++
			}
		}
		for i := 0; i < d; i++ {
			if v&(1<<i) == 0 {
				nb[k] = int32(v | 1<<i)
				k++
			}
		}
	}
	return &Graph{off: off, adj: adj}, nil
}

// ShuffleExchange returns the d-dimensional shuffle-exchange graph (Plaxton, section 1):
// nodes 0..2^d-1; exchange edges join i and i XOR 1; shuffle edges join i and its cyclic
// left rotation as a d-bit word. Self-loops (0...0, 1...1, ...) and parallel edges are
// dropped, so the result is simple. d ≤ 29 keeps the up to 3·2^d edge ends within the
// int32 limit. It costs O(2^d) time and memory.
func ShuffleExchange(d int) (*Graph, error) {
	if d < 1 {
		return nil, badParam("shuffle-exchange dimension must be in 1..29, got d = %d", d)
	}
	if d > 29 {
		return nil, tooLarge("shuffle-exchange dimension must be in 1..29, got d = %d (2^%d nodes)", d, d)
	}
	n := 1 << d
	if err := checkOrder(fmt.Sprintf("ShuffleExchange(%d)", d), n); err != nil {
		return nil, err
	}
	if err := checkEnds(fmt.Sprintf("ShuffleExchange(%d)", d), 3*int64(n)); err != nil {
		return nil, err
	}
	pairs := make([]int32, 0, 3*n)
	for i := 0; i < n; i++ {
		if i&1 == 0 {
			pairs = append(pairs, int32(i), int32(i^1))
		}
		pairs = append(pairs, int32(i), int32(shuffle(i, d)))
	}
	return fromPairs(n, pairs, true)
}

// Shuffle returns the cyclic left rotation of the d-bit word i (Plaxton's shuffle). It
// needs 1 ≤ d ≤ 62 and 0 ≤ i < 2^d; otherwise it returns an error wrapping
// ErrBadParameter that names i and d. It costs O(1).
func Shuffle(i, d int) (int, error) {
	if err := checkWord("Shuffle", i, d); err != nil {
		return 0, err
	}
	return shuffle(i, d), nil
}

// Unshuffle returns the cyclic right rotation of the d-bit word i, the inverse of
// Shuffle, with the same domain and the same error outside it. It costs O(1).
func Unshuffle(i, d int) (int, error) {
	if err := checkWord("Unshuffle", i, d); err != nil {
		return 0, err
	}
	return unshuffle(i, d), nil
}

// checkWord checks the domain of Shuffle and Unshuffle: 1 ≤ d ≤ 62, 0 ≤ i < 2^d.
func checkWord(name string, i, d int) error {
	if d < 1 || d > 62 {
		return badParam("%s: word length d = %d (want 1..62)", name, d)
	}
	if i < 0 || i >= 1<<d {
		return badParam("%s: word i = %d is not a %d-bit word (want 0..%d)", name, i, d, 1<<d-1)
	}
	return nil
}

// shuffle is Shuffle without the check, for callers that hold a valid word.
func shuffle(i, d int) int {
	mask := 1<<d - 1
	return ((i << 1) | (i >> (d - 1))) & mask
}

// unshuffle is Unshuffle without the check.
func unshuffle(i, d int) int { return (i >> 1) | ((i & 1) << (d - 1)) }

// Torus returns the torus (wrap-around grid) with the given side lengths, in any number
// of dimensions: node (x_0, ..., x_{r-1}) has index x_0 + s_0·(x_1 + s_1·(...)). A side of
// length 2 gives a single edge per line and a side of 1 none (the graph is simple). It
// costs O(r·n) time and memory for n nodes in r dimensions.
func Torus(sides ...int) (*Graph, error) { return grid("Torus", true, sides) }

// Mesh returns the grid (no wrap-around) with the given side lengths, in any number of
// dimensions, indexed as in Torus. It costs O(r·n) time and memory for n nodes in r
// dimensions.
func Mesh(sides ...int) (*Graph, error) { return grid("Mesh", false, sides) }

func grid(what string, wrap bool, sides []int) (*Graph, error) {
	if len(sides) == 0 {
		return nil, badParam("%s needs at least one side length", what)
	}
	n := 1
	for i, s := range sides {
		if s < 1 {
			return nil, badParam("%s side %d has length %d < 1", what, i, s)
		}
		if n > (maxNodes-1)/s {
			return nil, badParam("%s%v has more than 2^31 nodes", what, sides)
		}
		n *= s
	}
	// Count the edge ends before allocating: many short sides give a large degree.
	var ends int64
	for _, s := range sides {
		switch {
		case s == 2:
			ends += int64(n)
		case s > 2 && wrap:
			ends += 2 * int64(n)
		case s > 2:
			ends += 2 * int64(n/s*(s-1))
		}
	}
	if err := checkEnds(fmt.Sprintf("%s%v", what, sides), ends); err != nil {
		return nil, err
	}
	pairs := make([]int32, 0, ends)
	stride := 1
	for _, s := range sides {
		for v := 0; v < n; v++ {
			x := (v / stride) % s
			switch {
			case x+1 < s:
				pairs = append(pairs, int32(v), int32(v+stride))
			case wrap && s > 2:
				pairs = append(pairs, int32(v), int32(v-(s-1)*stride))
			}
		}
		stride *= s
	}
	return fromPairs(n, pairs, false)
}

// RandomRegular returns a connected simple d-regular graph on n nodes, fixed by seed.
// For d ≥ 3 it draws a random pairing (configuration model), removes loops and repeated
// edges by random switches, and redraws in the rare case the result is disconnected or
// the switches get stuck; for 2d ≥ n-1 it does this for the complement, an
// (n-1-d)-regular graph, instead. The distribution is close to, though not exactly,
// uniform. d = 2 gives a uniformly random Hamiltonian cycle. It costs O(n·d²) expected
// time and, besides the graph, 4 bytes per edge end while it builds. It rejects d < 0,
// d ≥ n, odd n·d and the cases with no connected graph (d = 0 with n > 1, d = 1 with
// n > 2).
func RandomRegular(n, d int, seed uint64) (*Graph, error) {
	if err := checkOrder("RandomRegular", n); err != nil {
		return nil, err
	}
	switch {
	case d < 0 || d >= n:
		return nil, badParam("RandomRegular needs 0 ≤ d < n, got n = %d, d = %d", n, d)
	case n*d%2 != 0:
		return nil, badParam("RandomRegular needs n·d even, got n = %d, d = %d", n, d)
	case d == 0 && n > 1, d == 1 && n > 2:
		return nil, fmt.Errorf("%w: no connected %d-regular graph on %d nodes", ErrNotConnected, d, n)
	case int64(n)*int64(d) > maxEdgeEnds:
		return nil, badParam("RandomRegular(%d, %d) has more than 2^31 edge ends", n, d)
	}
	// The pairing's mate and perm arrays and the graph: 20 bytes per edge end.
	if err := checkAlloc(fmt.Sprintf("RandomRegular(%d, %d)", n, d), int64(n)*int64(d), 20); err != nil {
		return nil, err
	}
	src := rand.NewPCG(seed, 0x726567756c6172)
	r := rand.New(src)
	if d <= 2 {
		perm := r.Perm(n)
		pairs := make([]int32, 0, 2*n)
		for i := 0; i < n && d > 0; i++ {
			if d == 2 || i%2 == 0 {
				pairs = append(pairs, int32(perm[i]), int32(perm[(i+1)%n]))
			}
		}
		return fromPairs(n, pairs, true)
	}
	// Dense graphs are complements of sparse ones: switching a pairing towards a nearly
	// complete graph gets stuck often, its complement's pairing rarely. Any graph with
	// minimum degree ≥ (n-1)/2 is connected (two non-adjacent nodes share a neighbour).
	dense := 2*d >= n-1
	for attempt := 0; attempt < 100; attempt++ {
		if dense {
			if h, ok := randomPairing(n, n-1-d, src, r, false); ok {
				return complement(h), nil
			}
			continue
		}
		if g, ok := randomPairing(n, d, src, r, true); ok {
			return g, nil
		}
	}
	return nil, fmt.Errorf("%w: RandomRegular(%d, %d) found no connected simple graph in 100 draws", ErrNotConnected, n, d)
}

// complement returns the complement of the simple graph h.
func complement(h *Graph) *Graph {
	n := h.Order()
	off := make([]int, n+1)
	for v := 0; v < n; v++ {
		off[v+1] = off[v] + n - 1 - h.Degree(v)
	}
	adj := make([]int32, off[n])
	for v := 0; v < n; v++ {
		out, nb := adj[off[v]:off[v]], h.Neighbors(v)
		for w := int32(0); w < int32(n); w++ {
			if len(nb) > 0 && nb[0] == w {
				nb = nb[1:]
			} else if int(w) != v {
				out = append(out, w)
			}
		}
	}
	return &Graph{off: off, adj: adj}
}

// randomPairing draws a random perfect matching of the n·d points (d per node) and then
// repairs loops and repeated edges by switches: a bad pair {p, p'} and a random pair
// {q, q'} become {p, q}, {p', q'} when that creates no loop or repeat. Such switches can
// get stuck (in K_5, loops at three nodes whose mutual edges are missing admit none), so
// after 8·n·d + 1000 failed tries for one pair it gives up and reports false. With
// connected set it also reports false when the graph is disconnected. r must draw from
// src.
//
// The matching is the Fisher–Yates shuffle of the points that rand.Rand.Shuffle would
// draw from src, taken pairwise; the switches draw q with r.IntN. A switch never creates
// a loop or a repeated edge, so only the points that are bad after the shuffle are
// visited, in increasing order, as a scan over all points would. It costs O(n·d²)
// expected time and 8·n·d + O(n) bytes besides the graph's n+1 offsets.
func randomPairing(n, d int, src *rand.PCG, r *rand.Rand, connected bool) (*Graph, bool) {
	m := n * d
	mate := make([]int32, m)
	perm := make([]int32, m)
	for i := range perm {
		perm[i] = int32(i)
	}
	shufflePairs(perm, mate, src)
	// nb[p] is the node of p's mate; it reuses perm's storage and becomes the adjacency.
	// Collect the bad points (loops and repeats) on the way.
	nb := perm
	var bads []int32
	div := newDivider(uint64(max(d, 1)))
	for u := 0; u < n; u++ {
		s, ms := nb[u*d:u*d+d], mate[u*d:u*d+d]
		for k, x := range ms {
			s[k] = int32(div.div(uint64(x)))
		}
		// Most nodes have neither loops nor repeats: test that first, pairwise.
		clean := true
		for k, v := range s {
			if int(v) == u {
				clean = false
			}
			for _, w := range s[k+1:] {
				if w == v {
					clean = false
				}
			}
		}
		if clean {
			continue
		}
		for k, v := range s {
			if int(v) == u || slices.Contains(s[:k], v) || slices.Contains(s[k+1:], v) {
				bads = append(bads, int32(u*d+k))
			}
		}
	}
	// mult returns the multiplicity of the edge {u, v} among u's points.
	mult := func(u, v int) int {
		c := 0
		for _, w := range nb[u*d : u*d+d] {
			if int(w) == v {
				c++
			}
		}
		return c
	}
	bad := func(p int) bool {
		u, v := p/d, int(nb[p])
		return u == v || mult(u, v) > 1
	}
	budget := 8*m + 1000
	for _, p32 := range bads {
		p := int(p32)
		for tries := 0; bad(p); tries++ {
			if tries == budget {
				return nil, false
			}
			q := r.IntN(m)
			pp, qq := int(mate[p]), int(mate[q])
			u, v, x, y := p/d, int(nb[p]), q/d, int(nb[q])
			if q == p || q == pp || u == x || v == y || mult(u, x) > 0 || mult(v, y) > 0 || (u == y && v == x) || (u == v && x == y) {
				continue
			}
			mate[p], mate[q], mate[pp], mate[qq] = int32(q), int32(p), int32(qq), int32(pp)
			nb[p], nb[q], nb[pp], nb[qq] = int32(x), int32(u), int32(y), int32(v)
		}
	}
	// mate is no longer needed: its storage holds the union–find forest.
	if connected {
		if !regularConnected(nb, n, d, mate, true) {
			return nil, false
		}
	} else {
		for u := 0; u < n; u++ {
			sortSmall(nb[u*d : u*d+d])
		}
	}
	off := make([]int, n+1)
	for v := 0; v < n; v++ {
		off[v+1] = off[v] + d
	}
	return &Graph{off: off, adj: nb}, true
}

// shufflePairs permutes perm by the Fisher–Yates shuffle that rand.Rand.Shuffle (and
// IntN) would draw from src, advancing src by as much, and sets mate[perm[i]] =
// perm[i^1] for every i. len(perm) is even. It steps a copy of src's state inline,
// because the shuffle is limited by memory accesses and an interface call per swap
// leaves fewer of them in flight.
func shufflePairs(perm, mate []int32, src *rand.PCG) {
	st := loadPCG(src)
	pair := func(i int) {
		a, b := perm[i], perm[i+1]
		mate[a], mate[b] = b, a
	}
	for i := len(perm) - 1; i > 0; i-- {
		// j = IntN(i+1), inline.
		n, x, j := uint64(i+1), st.uint64(), uint64(0)
		if n&(n-1) == 0 {
			j = x & (n - 1)
		} else {
			hi, lo := bits.Mul64(x, n)
			if lo < n {
				hi = st.reject(hi, lo, n)
			}
			j = hi
		}
		perm[i], perm[j] = perm[j], perm[i]
	}
	st.store(src)
	// A separate pass: scattering into mate during the shuffle evicts perm from the cache.
	for i := 0; i < len(perm); i += 2 {
		pair(i)
	}
}

// regularConnected reports whether the d-regular graph whose node u has the neighbours
// nb[u·d : u·d+d] is connected. It joins the ends of every edge in a union–find forest
// (smaller root on top, path halving) in node order, which reads nb sequentially and
// keeps the random accesses within the 4n bytes of parent, where a breadth-first search
// fetches a random node's list at every step (docs/performance.md compares the two). With sortLists set it also sorts each list
// (sortSmall) on the way. parent is scratch space for n nodes. It costs O(n·d·log n)
// time in the worst case and no allocation.
func regularConnected(nb []int32, n, d int, parent []int32, sortLists bool) bool {
	f := dsu.Forest(parent[:n])
	f.Reset()
	components := n
	for u := 0; u < n; u++ {
		s := nb[u*d : u*d+d]
		if sortLists {
			sortSmall(s)
		}
		ru := int32(-1) // u's root, once needed
		for _, v := range s {
			if int(v) <= u {
				continue
			}
			if ru < 0 {
				ru = f.Find(int32(u))
			}
			if rv := f.Find(v); rv != ru {
				ru = f.Link(ru, rv)
				components--
			}
		}
	}
	return components == 1
}

// sortSmall sorts s ascending: by a branch-free exchange sort for short s (adjacency
// lists of small degree, where the branches of an insertion sort mispredict), else by
// slices.Sort.
func sortSmall(s []int32) {
	if len(s) == 4 { // the optimal network: 5 exchanges
		a, b, c, d := s[0], s[1], s[2], s[3]
		a, b = min(a, b), max(a, b)
		c, d = min(c, d), max(c, d)
		a, c = min(a, c), max(a, c)
		b, d = min(b, d), max(b, d)
		b, c = min(b, c), max(b, c)
		s[0], s[1], s[2], s[3] = a, b, c, d
		return
	}
	if len(s) > 8 {
		slices.Sort(s)
		return
	}
	for i := len(s) - 1; i > 0; i-- {
		for j := 0; j < i; j++ {
			a, b := s[j], s[j+1]
			s[j], s[j+1] = min(a, b), max(a, b)
		}
	}
}

// pcgState is a copy of a rand.PCG's state that hot loops step inline. It yields exactly
// the stream the rand.PCG would.
type pcgState struct{ hi, lo uint64 }

// loadPCG copies p's state.
func loadPCG(p *rand.PCG) pcgState {
	b, err := p.MarshalBinary()
	if err != nil || len(b) != 20 {
		panic("tokendist: unexpected rand.PCG encoding")
	}
	return pcgState{binary.BigEndian.Uint64(b[4:12]), binary.BigEndian.Uint64(b[12:20])}
}

// store sets p's state to s.
func (s *pcgState) store(p *rand.PCG) {
	b := append([]byte("pcg:"), make([]byte, 16)...)
	binary.BigEndian.PutUint64(b[4:12], s.hi)
	binary.BigEndian.PutUint64(b[12:20], s.lo)
	if err := p.UnmarshalBinary(b); err != nil {
		panic("tokendist: unexpected rand.PCG encoding")
	}
}

// uint64 is rand.PCG.Uint64: a 128-bit LCG step and the DXSM output function.
func (s *pcgState) uint64() uint64 {
	const (
		mulHi    = 2549297995355413924
		mulLo    = 4865540595714422341
		incHi    = 6364136223846793005
		incLo    = 1442695040888963407
		cheapMul = 0xda942042e4dd58b5
	)
	hi, lo := bits.Mul64(s.lo, mulLo)
	hi += s.hi*mulLo + s.lo*mulHi
	lo, c := bits.Add64(lo, incLo, 0)
	hi, _ = bits.Add64(hi, incHi, c)
	s.lo, s.hi = lo, hi
	hi ^= hi >> 32
	hi *= cheapMul
	hi ^= hi >> 48
	hi *= lo | 1
	return hi
}

// reject finishes the rejection loop of rand.Rand.IntN(n) (Lemire's multiply-and-reject
// method) once hi, lo = bits.Mul64(s.uint64(), n) has lo < n, which is rare.
func (s *pcgState) reject(hi, lo, n uint64) uint64 {
	thresh := -n % n
	for lo < thresh {
		hi, lo = bits.Mul64(s.uint64(), n)
	}
	return hi
}
