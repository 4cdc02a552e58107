package tokendist_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
)

// Test helpers for msd_test.go: small-tree enumeration, colourings, an independent
// observer simulation, and the paper's O(n²·MSD) set building as a baseline.

// msdAllTrees returns every unlabelled tree with 1..maxN nodes (maxN ≤ 12), one labelled
// representative per shape, grown leaf by leaf and deduplicated by a canonical form.
// The list is built once.
func msdAllTrees(t testing.TB, maxN int) []*tokendist.Graph {
	all := msdTrees12()
	i := 0
	for i < len(all) && all[i].Order() <= maxN {
		i++
	}
	return all[:i]
}

var msdTrees12 = sync.OnceValue(func() []*tokendist.Graph { return msdGrowTrees(12) })

func msdGrowTrees(maxN int) []*tokendist.Graph {
	type tree [][2]int
	levels := [][]tree{{{}}} // n = 1: no edges
	for n := 2; n <= maxN; n++ {
		seen := map[string]bool{}
		var next []tree
		for _, tr := range levels[n-2] {
			for v := 0; v < n-1; v++ {
				e := append(slices.Clone(tr), [2]int{v, n - 1})
				key := msdCanonicalTree(n, e)
				if !seen[key] {
					seen[key] = true
					next = append(next, e)
				}
			}
		}
		levels = append(levels, next)
	}
	var out []*tokendist.Graph
	for i, lv := range levels {
		for _, e := range lv {
			out = append(out, msdMust(tokendist.NewGraph(i+1, e)))
		}
	}
	return out
}

// msdCanonicalTree is the smallest AHU encoding of the tree over all roots.
func msdCanonicalTree(n int, edges [][2]int) string {
	adj := make([][]int, n)
	for _, e := range edges {
		adj[e[0]] = append(adj[e[0]], e[1])
		adj[e[1]] = append(adj[e[1]], e[0])
	}
	var enc func(v, p int) string
	enc = func(v, p int) string {
		var parts []string
		for _, u := range adj[v] {
			if u != p {
				parts = append(parts, enc(u, v))
			}
		}
		sort.Strings(parts)
		return "(" + strings.Join(parts, "") + ")"
	}
	best := ""
	for r := 0; r < n; r++ {
		if s := enc(r, -1); best == "" || s < best {
			best = s
		}
	}
	return best
}

// msdAllDeltaColorings returns every proper colouring of tree g with Δ colours whose first
// edge (in BFS order from node 0) has colour 0: one per orbit of the cyclic colour
// shift c → c+1 mod Δ, which maps c-phases to (c+1)-phases. It stops at limit
// colourings and reports whether it got them all.
func msdAllDeltaColorings(t testing.TB, g *tokendist.Graph, limit int) ([]*tokendist.EdgeColoring, bool) {
	n, chi := g.Order(), g.MaxDegree()
	if n == 1 {
		ec, err := tokendist.NewEdgeColoring(g, func(u, v int) int { return 0 })
		require.NoError(t, err)
		return []*tokendist.EdgeColoring{ec}, true
	}
	type edge struct{ u, v int }
	var edges []edge
	parent := make([]int, n)
	parent[0] = -1
	queue := []int{0}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, v := range g.Neighbors(u) {
			if int(v) != parent[u] {
				parent[v] = u
				edges = append(edges, edge{u, int(v)})
				queue = append(queue, int(v))
			}
		}
	}
	color := map[[2]int]int{}
	key := func(u, v int) [2]int { return [2]int{min(u, v), max(u, v)} }
	var out []*tokendist.EdgeColoring
	complete := true
	var rec func(i int)
	rec = func(i int) {
		if len(out) >= limit {
			complete = false
			return
		}
		if i == len(edges) {
			cp := msdCopyMap(color)
			ec, err := tokendist.NewEdgeColoring(g, func(u, v int) int { return cp[key(u, v)] })
			require.NoError(t, err)
			out = append(out, ec)
			return
		}
		e := edges[i]
		for c := 0; c < chi; c++ {
			if i == 0 && c != 0 {
				break
			}
			ok := true
			for _, x := range []int{e.u, e.v} {
				for _, y := range g.Neighbors(x) {
					if cc, has := color[key(x, int(y))]; has && cc == c {
						ok = false
					}
				}
			}
			if ok {
				color[key(e.u, e.v)] = c
				rec(i + 1)
				delete(color, key(e.u, e.v))
			}
		}
	}
	rec(0)
	return out, complete
}

func msdCopyMap(m map[[2]int]int) map[[2]int]int {
	cp := make(map[[2]int]int, len(m))
	for k, v := range m {
		cp[k] = v
	}
	return cp
}

// msdSimulateObservers walks every observer step by step from time c for one phase,
// independently of ObserverTour: at step t an observer at x crosses x's edge of colour
// t mod χ if there is one. It returns pos[k][v] = obs(v) at time c + k (k = 0..χn).
func msdSimulateObservers(ec *tokendist.EdgeColoring, c int) [][]int {
	g := ec.Graph()
	n, chi := g.Order(), max(1, ec.Colors())
	next := make([]int, n*chi) // next[x·χ + col]: where an observer at x goes
	for x := 0; x < n; x++ {
		for col := 0; col < chi; col++ {
			next[x*chi+col] = x
		}
		for _, y := range g.Neighbors(x) {
			next[x*chi+ec.Color(x, int(y))] = int(y)
		}
	}
	cur := make([]int, n)
	for v := range cur {
		cur[v] = v
	}
	out := [][]int{slices.Clone(cur)}
	for t := c; t < c+chi*n; t++ {
		col := t % chi
		for v, x := range cur {
			cur[v] = next[x*chi+col]
		}
		out = append(out, slices.Clone(cur))
	}
	return out
}

// msdSideSize returns |T(x, y)|: the nodes on x's side when edge xy is removed.
func msdSideSize(g *tokendist.Graph, x, y int) int {
	seen := map[int]bool{x: true, y: true}
	stack := []int{x}
	cnt := 0
	for len(stack) > 0 {
		u := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		cnt++
		for _, v := range g.Neighbors(u) {
			if !seen[int(v)] {
				seen[int(v)] = true
				stack = append(stack, int(v))
			}
		}
	}
	return cnt
}

// msdPaper is the paper's procedure (end of section 4.3): build SG_i from SG_{i-1} by
// equation (4), testing every pair (p, q) of Z_n, O(n²) per level, until SG_i covers
// 1..n-1. It returns MSD and stability(p) for every p.
func msdPaper(n int, sg1 []int) (int, []int32) {
	stab := make([]int32, n)
	if n == 1 {
		return 0, stab
	}
	in1 := make([]bool, n)
	for _, p := range sg1 {
		in1[p] = true
	}
	cur := slices.Clone(in1)
	for p := 1; p < n; p++ {
		if cur[p] {
			stab[p] = 1
		}
	}
	for i := 1; ; i++ {
		full := true
		for p := 1; p < n; p++ {
			full = full && cur[p]
		}
		if full {
			return i, stab
		}
		nxt := slices.Clone(cur)
		for p := 0; p < n; p++ {
			for q := 0; q < n; q++ {
				if cur[p] && in1[q] {
					nxt[(p+q)%n] = true
				}
			}
		}
		for p := 1; p < n; p++ {
			if nxt[p] && !cur[p] {
				stab[p] = int32(i + 1)
			}
		}
		cur = nxt
	}
}

// msdTheorem11 reports whether |load(v) - load(w)| ≤ stability(gap_c(v, w)) for all pairs,
// Theorem 11's condition, in O(n²).
func msdTheorem11(gp *tokendist.Gaps, stab []int32, l tokendist.Loads) bool {
	for v := range l {
		for w := range l {
			if d := l[v] - l[w]; v != w && d > int64(stab[gp.Gap(v, w)]) {
				return false
			}
		}
	}
	return true
}

// msdForEachLoads calls fn on every vector in {0..hi}^n whose minimum is 0 (stability and
// discrepancy are invariant under adding a constant). fn must not keep the slice.
func msdForEachLoads(n int, hi int64, fn func(l tokendist.Loads)) {
	l := make(tokendist.Loads, n)
	for {
		if slices.Min(l) == 0 {
			fn(l)
		}
		i := 0
		for i < n && l[i] == hi {
			l[i] = 0
			i++
		}
		if i == n {
			return
		}
		l[i]++
	}
}

func msdTreeName(g *tokendist.Graph) string {
	return fmt.Sprintf("n%d%v", g.Order(), g.EdgeList())
}

// msdBFSColoring is a test-only Δ-colouring of a tree: BFS from node 0, each node gives
// its child edges the smallest colours other than its parent edge's.
func msdBFSColoring(t testing.TB, g *tokendist.Graph) *tokendist.EdgeColoring {
	n := g.Order()
	col := map[[2]int]int{}
	parent, pc := make([]int, n), make([]int, n)
	parent[0], pc[0] = -1, -1
	queue := []int{0}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		c := 0
		for _, v := range g.Neighbors(u) {
			if int(v) == parent[u] {
				continue
			}
			if c == pc[u] {
				c++
			}
			col[[2]int{min(u, int(v)), max(u, int(v))}] = c
			parent[v], pc[v] = u, c
			c++
			queue = append(queue, int(v))
		}
	}
	ec, err := tokendist.NewEdgeColoring(g, func(u, v int) int { return col[[2]int{u, v}] })
	require.NoError(t, err)
	return ec
}

// msdAlgorithmColorings returns the distinct colourings that the library's colouring
// algorithms produce for g: König's Δ-colouring (BipartiteColoring) and Misra–Gries.
func msdAlgorithmColorings(t testing.TB, g *tokendist.Graph) []*tokendist.EdgeColoring {
	k, err := tokendist.BipartiteColoring(g)
	require.NoError(t, err)
	mg, err := tokendist.MisraGriesColoring(g)
	require.NoError(t, err)
	return msdDistinct([]*tokendist.EdgeColoring{k, mg})
}

// msdDelayed runs the real THRESHOLD-1 stepper from step skip on (earlier steps do
// nothing), so that a run of skip + χ·n steps is one c-phase with c = skip mod χ: the
// stepper activates colour s.Steps mod χ.
type msdDelayed struct {
	inner *tokendist.DimensionExchange
	skip  int64
}

func (d *msdDelayed) Init(s *tokendist.State) error { return d.inner.Init(s) }

func (d *msdDelayed) Step(s *tokendist.State) error {
	if s.Steps < d.skip {
		return nil
	}
	return d.inner.Step(s)
}

// msdPhaseRunner runs c-phases of the real THRESHOLD-1 stepper through Run, reusing one
// balancer per colouring.
type msdPhaseRunner struct {
	ec *tokendist.EdgeColoring
	th *tokendist.DimensionExchange
}

var msdPhaseRunners = map[*tokendist.EdgeColoring]*msdPhaseRunner{}

// msdPhase runs one c-phase (χ·n steps from a time ≡ c) of THRESHOLD-1 on l through Run
// and returns the final loads.
func msdPhase(t testing.TB, ec *tokendist.EdgeColoring, c int, l tokendist.Loads) tokendist.Loads {
	pr := msdPhaseRunners[ec]
	if pr == nil {
		th, err := tokendist.NewThreshold1(ec.Graph(), ec)
		require.NoError(t, err)
		pr = &msdPhaseRunner{ec: ec, th: th}
		msdPhaseRunners[ec] = pr
	}
	chi := int64(max(1, ec.Colors()))
	b := &msdDelayed{inner: pr.th, skip: int64(c)}
	res, err := tokendist.Run(context.Background(), ec.Graph(), l, b,
		&tokendist.RunOptions{MaxSteps: int64(c) + chi*int64(len(l)), NoStability: true})
	if err != nil {
		t.Fatalf("THRESHOLD-1 run: %v", err)
	}
	return res.Loads
}

// msdPhaseStable reports whether one c-phase of THRESHOLD-1 leaves l unchanged.
func msdPhaseStable(t testing.TB, ec *tokendist.EdgeColoring, c int, l tokendist.Loads) bool {
	return slices.Equal(msdPhase(t, ec, c, l), l)
}

// msdColoredCanonical is a canonical form of an edge-coloured tree up to node relabelling
// and cyclic colour shifts: the smallest colour-labelled AHU encoding over all roots
// and shifts. Both symmetries map the c-phases of one colouring to the phases of the
// other, so the sweeps test one colouring per class.
func msdColoredCanonical(ec *tokendist.EdgeColoring) string {
	g := ec.Graph()
	chi := max(1, ec.Colors())
	var enc func(v, p, shift int) string
	enc = func(v, p, shift int) string {
		var parts []string
		for _, u := range g.Neighbors(v) {
			if int(u) != p {
				parts = append(parts, fmt.Sprint((ec.Color(v, int(u))+shift)%chi)+enc(int(u), v, shift))
			}
		}
		sort.Strings(parts)
		return "(" + strings.Join(parts, ",") + ")"
	}
	// Rooting at the centres (one or two nodes of least eccentricity) suffices: an
	// isomorphism maps centres to centres.
	ecc, err := g.Eccentricities()
	if err != nil {
		panic(err)
	}
	best := ""
	for s := 0; s < chi; s++ {
		for r, e := range ecc {
			if e != slices.Min(ecc) {
				continue
			}
			if e := enc(r, -1, s); best == "" || e < best {
				best = e
			}
		}
	}
	return fmt.Sprint(chi, best)
}

// msdDistinct keeps one colouring per class of msdColoredCanonical on small trees
// (the canonical form costs O(χ·n²)), and drops only identical colourings on others.
func msdDistinct(ecs []*tokendist.EdgeColoring) []*tokendist.EdgeColoring {
	seen := map[string]bool{}
	var out []*tokendist.EdgeColoring
	for _, ec := range ecs {
		var k string
		if ec.Graph().Order() <= 12 {
			k = msdColoredCanonical(ec)
		} else {
			k = fmt.Sprint(ec.Colors(), msdColorsOf(ec))
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, ec)
		}
	}
	return out
}

func msdColorsOf(ec *tokendist.EdgeColoring) []int {
	var out []int
	for _, e := range ec.Graph().EdgeList() {
		out = append(out, ec.Color(e[0], e[1]))
	}
	return out
}
