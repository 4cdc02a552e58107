package tokendist_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
)

// msdQueueBFS is a plain breadth-first search over Z_n, a second reference for sizes the
// O(n²) procedure cannot reach.
func msdQueueBFS(n int, gens []int) []int32 {
	dist := make([]int32, n)
	for i := range dist {
		dist[i] = -1
	}
	dist[0] = 0
	q := []int{0}
	for h := 0; h < len(q); h++ {
		x := q[h]
		for _, g := range gens {
			y := (x + g) % n
			if dist[y] < 0 {
				dist[y] = dist[x] + 1
				q = append(q, y)
			}
		}
	}
	return dist
}

func msdMaxOf(d []int32) int { return int(slices.Max(d)) }

func msdSeq(lo, hi int) []int {
	var s []int
	for i := lo; i <= hi; i++ {
		s = append(s, i)
	}
	return s
}

func msdMust(g *tokendist.Graph, err error) *tokendist.Graph {
	if err != nil {
		panic(err)
	}
	return g
}

// The closed form of SG_1(T_{h,k}) equals the graph-built one, and so does the MSD.
func TestKaryTreeClosedForm(t *testing.T) {
	for k := 1; k <= 7; k++ {
		for h := 0; h <= 7; h++ {
			n, err := tokendist.KaryTreeOrder(tokendist.KaryShape{Height: h, Arity: k})
			require.NoError(t, err)
			if n > 200_000 {
				continue
			}
			g, err := tokendist.KaryTree(tokendist.KaryShape{Height: h, Arity: k})
			require.NoError(t, err)
			want, err := tokendist.StableGaps(g)
			require.NoError(t, err)
			gotN, got, err := tokendist.KaryTreeStableGaps(tokendist.KaryShape{Height: h, Arity: k})
			require.NoError(t, err)
			require.Equal(t, n, gotN)
			require.Equal(t, want, got, "k=%d h=%d", k, h)
			m1, err := tokendist.MSD(g)
			require.NoError(t, err)
			m2, err := tokendist.KaryTreeMSD(tokendist.KaryShape{Height: h, Arity: k}, nil)
			require.NoError(t, err)
			require.Equal(t, m1, m2)
		}
	}
}

func msdCheckTour(t *testing.T, g *tokendist.Graph, ec *tokendist.EdgeColoring) {
	t.Helper()
	n := g.Order()
	tour, err := tokendist.NewObserverTour(ec)
	require.NoError(t, err)
	chi := tour.Colors()
	require.Equal(t, max(1, ec.Colors()), chi)
	require.Equal(t, int64(chi*n), tour.Len())
	arcs := tour.Arcs()
	require.Len(t, arcs, 2*(n-1))
	side := map[[2]int]int{} // |T(x, y)| for every arc
	for _, e := range g.EdgeList() {
		side[e] = msdSideSize(g, e[0], e[1])
		side[[2]int{e[1], e[0]}] = n - side[e]
	}
	// Eulerian: every edge once in each direction, at times of its colour.
	at := map[[2]int]int64{}
	for _, a := range arcs {
		k := [2]int{int(a.From), int(a.To)}
		_, dup := at[k]
		require.False(t, dup)
		at[k] = a.Time
		require.Equal(t, int(a.Color), ec.Color(k[0], k[1]))
		require.Equal(t, int64(a.Color), a.Time%int64(chi))
	}
	// Observation 4: from the arc x→y to the arc y→x the tour spends χ·|T(y, x)| steps.
	L := tour.Len()
	for k, tm := range at {
		d := ((at[[2]int{k[1], k[0]}]-tm)%L + L) % L
		require.Equal(t, int64(chi*side[[2]int{k[1], k[0]}]), d, "Observation 4 on %v", k)
	}
	sg1, err := tokendist.StableGaps(g)
	require.NoError(t, err)
	require.Equal(t, sg1, tour.StableGaps(), "SG_1 by Observation 4")
	for c := 0; c < chi; c++ {
		sim := msdSimulateObservers(ec, c)
		gp, err := tour.Gaps(c)
		require.NoError(t, err)
		require.Equal(t, c, gp.Color())
		if c == 0 {
			for tau := int64(0); tau <= L; tau++ {
				if sim[tau][0] != tour.At(tau) {
					t.Fatalf("%s: At(%d) = %d, observer at %d", msdTreeName(g), tau, tour.At(tau), sim[tau][0])
				}
			}
		}
		for v := 0; v < n; v++ {
			ord := gp.Ordering(v)
			for k := 0; k < n; k++ {
				if ord[k] != sim[k*chi][v] {
					t.Fatalf("%s colour %d: %d-ordering from %d is %v; observer at %d after %d rounds", msdTreeName(g), c, c, v, ord, sim[k*chi][v], k)
				}
			}
			if sim[n*chi][v] != v {
				t.Fatalf("observer of %d does not return after a msdPhase", v)
			}
			for w := 0; w < n; w++ {
				if gp.Observer(v, gp.Gap(v, w)) != w || ord[gp.Gap(v, w)] != w {
					t.Fatalf("Observer(%d, Gap(%d, %d)) != %d", v, v, w, w)
				}
				if x := (v + w) % n; gp.Gap(v, w) != (gp.Gap(v, x)+gp.Gap(x, w))%n { // equation (3)
					t.Fatalf("equation (3) fails for %d, %d, %d", v, x, w)
				}
			}
		}
		// Lemma 9: observers meet at an active edge iff their gap is in SG_1, and when
		// obs(v) is at y and obs(w) at x, gap_c(v, w) = |T(x, y)|.
		met := make([]bool, n*n)
		where := make([]int, n)
		for k := 0; k < chi*n; k++ {
			col := (c + k) % chi
			for v, x := range sim[k] {
				where[x] = v
			}
			for x := 0; x < n; x++ {
				for _, y := range g.Neighbors(x) {
					if ec.Color(x, int(y)) != col {
						continue
					}
					v, w := where[int(y)], where[x]
					if gp.Gap(v, w) != side[[2]int{x, int(y)}] {
						t.Fatalf("Lemma 9: gap(%d, %d) = %d, |T(%d, %d)| = %d", v, w, gp.Gap(v, w), x, y, side[[2]int{x, int(y)}])
					}
					met[v*n+w] = true
				}
			}
		}
		for v := 0; v < n; v++ {
			for w := 0; w < n; w++ {
				_, inSG := slices.BinarySearch(sg1, gp.Gap(v, w))
				if inSG != met[v*n+w] {
					t.Fatalf("Lemma 9: gap(%d, %d) = %d in SG_1 %v, met %v", v, w, gp.Gap(v, w), inSG, met[v*n+w])
				}
			}
		}
	}
}

// msdRandomColoring colours a tree properly with Δ + extra colours, at random.
func msdRandomColoring(t testing.TB, g *tokendist.Graph, extra int, seed uint64) *tokendist.EdgeColoring {
	r := rand.New(rand.NewPCG(seed, 77))
	chi := g.MaxDegree() + extra
	col := map[[2]int]int{}
	used := make([]map[int]bool, g.Order())
	for v := range used {
		used[v] = map[int]bool{}
	}
	for _, e := range g.EdgeList() {
		for {
			c := r.IntN(chi)
			if !used[e[0]][c] && !used[e[1]][c] {
				col[e] = c
				used[e[0]][c], used[e[1]][c] = true, true
				break
			}
		}
	}
	ec, err := tokendist.NewEdgeColoring(g, func(u, v int) int { return col[[2]int{u, v}] })
	require.NoError(t, err)
	return ec
}

// msdColorings returns the colourings the sweeps use on a small tree, one per class
// of msdColoredCanonical: the library's algorithms, every Δ-colouring, and one random
// colouring with two spare colours.
func msdColorings(t testing.TB, g *tokendist.Graph) []*tokendist.EdgeColoring {
	msdColoringsMu.Lock()
	defer msdColoringsMu.Unlock()
	if out, ok := msdColoringsCache[g]; ok {
		return out
	}
	out := msdAlgorithmColorings(t, g)
	all, complete := msdAllDeltaColorings(t, g, 5000)
	require.True(t, complete)
	out = append(out, all...)
	if g.Order() > 1 {
		out = append(out, msdRandomColoring(t, g, 2, uint64(g.Order())))
	}
	out = msdDistinct(out)
	msdColoringsCache[g] = out
	return out
}

var (
	msdColoringsMu    sync.Mutex
	msdColoringsCache = map[*tokendist.Graph][]*tokendist.EdgeColoring{}
)

func msdConnected(g *tokendist.Graph, nodes []int) bool {
	in := make([]int8, g.Order()) // 1: in the set, 2: reached
	for _, v := range nodes {
		in[v] = 1
	}
	in[nodes[0]] = 2
	stack := []int{nodes[0]}
	reached := 1
	for len(stack) > 0 {
		u := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, v := range g.Neighbors(u) {
			if in[v] == 1 {
				in[v] = 2
				reached++
				stack = append(stack, int(v))
			}
		}
	}
	return reached == len(nodes)
}

func TestMSDBadInput(t *testing.T) {
	ring := msdMust(tokendist.Ring(5))
	twoParts := msdMust(tokendist.NewGraph(4, [][2]int{{0, 1}, {2, 3}}))
	path := msdMust(tokendist.Path(5))
	ec := msdBFSColoring(t, path)
	ringEC, err := tokendist.NewEdgeColoring(ring, func(u, v int) int {
		if u == 0 && v == 4 {
			return 2
		}
		return u % 2
	})
	require.NoError(t, err)
	tour, err := tokendist.NewObserverTour(ec)
	require.NoError(t, err)
	gp, err := tour.Gaps(0)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		err  error
		call func() error
	}{
		{"StableGaps ring", tokendist.ErrNotTree, func() error { _, err := tokendist.StableGaps(ring); return err }},
		{"MSD forest", tokendist.ErrNotTree, func() error { _, err := tokendist.MSD(twoParts); return err }},
		{"MSD nil", tokendist.ErrNilNetwork, func() error { _, err := tokendist.MSD(nil); return err }},
		{"Stabilities ring", tokendist.ErrNotTree, func() error { _, err := tokendist.Stabilities(ring); return err }},
		{"StableGapsAt i=0", tokendist.ErrBadParameter, func() error { _, err := tokendist.StableGapsAt(path, 0); return err }},
		{"GapMSD n=0", tokendist.ErrBadParameter, func() error { _, err := tokendist.GapMSD(0, nil, nil); return err }},
		{"GapMSD n=2^31", tokendist.ErrBadParameter, func() error { _, err := tokendist.GapMSD(1<<31, []int{1, 1<<31 - 1}, nil); return err }},
		{"GapMSD gap 0", tokendist.ErrBadParameter, func() error { _, err := tokendist.GapMSD(5, []int{0, 1, 4}, nil); return err }},
		{"GapMSD gap n", tokendist.ErrBadParameter, func() error { _, err := tokendist.GapMSD(5, []int{1, 4, 5}, nil); return err }},
		{"GapMSD not symmetric", tokendist.ErrBadParameter, func() error { _, err := tokendist.GapMSD(5, []int{1, 2, 4}, nil); return err }},
		{"GapMSD no generator", tokendist.ErrBadParameter, func() error { _, err := tokendist.GapMSD(6, []int{2, 4}, nil); return err }},
		{"GapMSD empty", tokendist.ErrBadParameter, func() error { _, err := tokendist.GapMSD(3, nil, nil); return err }},
		{"GapStabilities workers", tokendist.ErrBadParameter, func() error {
			_, err := tokendist.GapStabilities(5, []int{1, 4}, &tokendist.MSDOptions{Workers: -1})
			return err
		}},
		{"KaryTreeStableGaps k=0", tokendist.ErrBadParameter, func() error {
			_, _, err := tokendist.KaryTreeStableGaps(tokendist.KaryShape{Height: 3, Arity: 0})
			return err
		}},
		{"KaryTreeStableGaps huge", tokendist.ErrBadParameter, func() error {
			_, _, err := tokendist.KaryTreeStableGaps(tokendist.KaryShape{Height: 31, Arity: 2})
			return err
		}},
		{"KaryTreeMSD h<0", tokendist.ErrBadParameter, func() error {
			_, err := tokendist.KaryTreeMSD(tokendist.KaryShape{Height: -1, Arity: 2}, nil)
			return err
		}},
		{"Threshold1Bound n=0", tokendist.ErrBadParameter, func() error { _, err := tokendist.Threshold1Bound(0, 0); return err }},
		{"Threshold1Bound D=n", tokendist.ErrBadParameter, func() error { _, err := tokendist.Threshold1Bound(4, 4); return err }},
		{"Threshold1Bound D=0", tokendist.ErrBadParameter, func() error { _, err := tokendist.Threshold1Bound(4, 0); return err }},
		{"KaryTreeBound k=0", tokendist.ErrBadParameter, func() error { _, err := tokendist.KaryTreeBound(tokendist.KaryShape{Height: 2, Arity: 0}); return err }},
		{"NewObserverTour nil", tokendist.ErrBadParameter, func() error { _, err := tokendist.NewObserverTour(nil); return err }},
		{"NewObserverTour ring", tokendist.ErrNotTree, func() error { _, err := tokendist.NewObserverTour(ringEC); return err }},
		{"Gaps colour", tokendist.ErrBadParameter, func() error { _, err := tour.Gaps(2); return err }},
		{"Gaps colour -1", tokendist.ErrBadParameter, func() error { _, err := tour.Gaps(-1); return err }},
		{"Stable length", tokendist.ErrBadLoads, func() error { _, err := gp.Stable(tokendist.Loads{1}); return err }},
		{"WorstStableLoads s", tokendist.ErrBadParameter, func() error { _, err := tokendist.WorstStableLoads(ec, 0, 5); return err }},
		{"WorstStableLoads c", tokendist.ErrBadParameter, func() error { _, err := tokendist.WorstStableLoads(ec, 3, 0); return err }},
		{"WorstStableLoads ring", tokendist.ErrNotTree, func() error { _, err := tokendist.WorstStableLoads(ringEC, 0, 0); return err }},
		{"ConstructSubgraph p=0", tokendist.ErrBadParameter, func() error { _, err := tokendist.ConstructSubgraph(path, 0); return err }},
		{"ConstructSubgraph p>n", tokendist.ErrBadParameter, func() error { _, err := tokendist.ConstructSubgraph(path, 6); return err }},
		{"ConstructSubgraph ring", tokendist.ErrNotTree, func() error { _, err := tokendist.ConstructSubgraph(ring, 2); return err }},
	} {
		err := tc.call()
		require.Error(t, err, tc.name)
		require.True(t, errors.Is(err, tc.err), "%s: %v", tc.name, err)
		require.Regexp(t, "^tokendist: ", err.Error(), tc.name)
	}
}

// msdExhaustive checks Theorem 11 against the stepper on every tree with at most maxN
// nodes: over {0..MSD+1}^n (min 0) when n ≤ boxN, else {0, 1, 2}^n; with every colouring
// class of msdColorings when n ≤ allN, else the library's algorithms'.
func msdExhaustive(t *testing.T, maxN, boxN, allN int) {
	for _, g := range msdAllTrees(t, maxN) {
		n := g.Order()
		stab, err := tokendist.Stabilities(g)
		require.NoError(t, err)
		msd, err := tokendist.MSD(g)
		require.NoError(t, err)
		hi := int64(2)
		if n <= boxN {
			hi = int64(msd + 1)
		}
		colorings := msdAlgorithmColorings(t, g)
		if n <= allN {
			colorings = msdColorings(t, g)
		}
		for _, ec := range colorings {
			tour, err := tokendist.NewObserverTour(ec)
			require.NoError(t, err)
			for c := 0; c < tour.Colors(); c++ {
				gp, err := tour.Gaps(c)
				require.NoError(t, err)
				best := int64(-1)
				msdForEachLoads(n, hi, func(l tokendist.Loads) {
					want := msdTheorem11(gp, stab, l)
					got := msdPhaseStable(t, ec, c, l)
					lemma10, err := gp.Stable(l)
					if want != got || lemma10 != want || err != nil {
						t.Fatalf("%s colour %d loads %v: stepper stable=%v, Theorem 11=%v, Lemma 10=%v (%v)", msdTreeName(g), c, l, got, want, lemma10, err)
					}
					if got {
						best = max(best, l.Discrepancy())
					}
				})
				if hi > int64(msd) {
					require.Equal(t, int64(msd), best, "%s colour %d: largest stable discrepancy", msdTreeName(g), c)
				}
			}
		}
	}
}

// msdRandomLoadsAgree checks, on random loads and random ±1 perturbations of a worst
// stable distribution, that the stepper's verdict equals Lemma 10's for every colour.
func msdRandomLoadsAgree(t *testing.T, ec *tokendist.EdgeColoring, sg1 []int, seed uint64) (bool, error) {
	tour, err := tokendist.NewObserverTour(ec)
	if err != nil {
		return false, err
	}
	require.Equal(t, sg1, tour.StableGaps())
	n := ec.Graph().Order()
	r := rand.New(rand.NewPCG(seed, 5))
	for c := 0; c < tour.Colors(); c++ {
		gp, err := tour.Gaps(c)
		if err != nil {
			return false, err
		}
		w, err := tokendist.WorstStableLoads(ec, c, r.IntN(n))
		if err != nil {
			return false, err
		}
		for rep := 0; rep < 3; rep++ {
			l := w.Clone()
			l[r.IntN(n)]++
			if rep == 2 {
				l, _ = tokendist.RandomRange(n, 0, 1+int64(rep), seed+uint64(c))
			}
			want, err := gp.Stable(l)
			if err != nil {
				return false, err
			}
			got := msdPhaseStable(t, ec, c, l)
			require.Equal(t, want, got, "n=%d colour %d: stepper stable=%v, Lemma 10=%v", n, c, got, want)
		}
	}
	return true, nil
}

// Test helpers of the MSD tests (msd*_test.go, houle_paper_test.go): small-tree enumeration, colourings, an independent
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
	require.NoError(t, err, "THRESHOLD-1 run")
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
