package tokendist_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
)

// dxD1Run runs DISCREPANCY-1 until its termination rule fires (or maxCycles cycles) with
// Observations 2 and 3 checked on every step, and returns the result with the
// discrepancy at the start of every cycle.
func dxD1Run(t *testing.T, g *tokendist.Graph, ec *tokendist.EdgeColoring, n int, loads tokendist.Loads, maxCycles int64) (tokendist.Result, *tokendist.Discrepancy1, []int64) {
	t.Helper()
	b, err := tokendist.NewDiscrepancy1(g, ec, &tokendist.Discrepancy1Options{Nodes: n})
	require.NoError(t, err)
	cycle := 2 * int64(max(1, b.Colors())) * int64(max(n, g.Order()))
	r := dxRunChecked(t, g, loads, b, tokendist.RunOptions{NoStability: true, MaxSteps: maxCycles * cycle})
	var perCycle []int64
	for k := int64(0); k*cycle < int64(len(r.Trace)); k++ {
		perCycle = append(perCycle, r.Trace[k*cycle].Discrepancy)
	}
	return r, b, perCycle
}

// dxCCCompare runs DISCREPANCY-1 from loads with the global check and with the
// convergecast termination, and checks the exact overhead of the latter: it stops on the
// same cycle, 2⌈D/2⌉ steps (and model-time units) later, with discrepancy ≤ 1, after
// (n − 1) control messages per convergecast (cycles 2..k) and n − 1 for the broadcast on
// top of the load messages of the extra steps. It returns the overhead in steps.
func dxCCCompare(t *testing.T, g *tokendist.Graph, ec *tokendist.EdgeColoring, nodes int, loads tokendist.Loads) int64 {
	t.Helper()
	opts := &tokendist.RunOptions{NoStability: true, MaxSteps: 1 << 22}
	glob, err := tokendist.NewDiscrepancy1(g, ec, &tokendist.Discrepancy1Options{Nodes: nodes})
	require.NoError(t, err)
	rg, err := tokendist.Run(context.Background(), g, loads.Clone(), glob, opts)
	require.NoError(t, err)
	require.Equal(t, tokendist.StatusDone, rg.Status)
	cc, err := tokendist.NewDiscrepancy1(g, ec, &tokendist.Discrepancy1Options{Nodes: nodes, Convergecast: true})
	require.NoError(t, err)
	rc, err := tokendist.Run(context.Background(), g, loads.Clone(), cc, opts)
	require.NoError(t, err)
	require.Equal(t, tokendist.StatusDone, rc.Status)

	n := int64(g.Order())
	require.LessOrEqual(t, rc.Discrepancy(), int64(1), "%v from %v", g.EdgeList(), loads)
	require.LessOrEqual(t, rc.Discrepancy(), rg.Discrepancy())
	require.Equal(t, loads.Total(), rc.Loads.Total())
	if n == 1 {
		require.Equal(t, rg.Steps, rc.Steps)
		return 0
	}
	require.Equal(t, d1Report(rg).Cycles, d1Report(rc).Cycles, "same deciding cycle")
	diam, err := g.Diameter()
	require.NoError(t, err)
	delay := int64(2 * ((diam + 1) / 2))
	require.Equal(t, rg.Steps+delay, rc.Steps, "overhead 2⌈D/2⌉ steps, D = %d", diam)
	require.Equal(t, rg.Time+delay, rc.Time)
	chi := int64(ec.Colors())
	var loadMsgs int64
	for s := rg.Steps; s < rc.Steps; s++ {
		loadMsgs += int64(len(ec.Matching(int(s % chi))))
	}
	k := d1Report(rg).Cycles
	require.Equal(t, rg.Messages+loadMsgs+(n-1)*(k-1)+(n-1), rc.Messages, "control messages")
	return delay
}

// TestDiscrepancy1ConvergecastTable checks the convergecast termination on named trees.
func TestDiscrepancy1ConvergecastTable(t *testing.T) {
	kary := func(h, k int) *tokendist.Graph {
		return dxMustGraph(tokendist.KaryTree(tokendist.KaryShape{Height: h, Arity: k}))
	}
	for _, tc := range []struct {
		name  string
		g     *tokendist.Graph
		nodes int
		loads tokendist.Loads
		delay int64
	}{
		{"single node", dxMustGraph(tokendist.Path(1)), 0, tokendist.Loads{7}, 0},
		{"edge", dxMustGraph(tokendist.Path(2)), 0, tokendist.Loads{0, 9}, 2},
		{"erratum path", dxMustGraph(tokendist.Path(3)), 0, tokendist.Loads{0, 17, 22}, 2},
		{"path 8, D = 7", dxMustGraph(tokendist.Path(8)), 0, tokendist.Loads{0, 0, 0, 0, 0, 0, 0, 50}, 8},
		{"path 9, D = 8", dxMustGraph(tokendist.Path(9)), 0, tokendist.Loads{30, 0, 0, 0, 0, 0, 0, 0, 3}, 8},
		{"star 9", dxMustGraph(tokendist.Star(9)), 0, tokendist.Loads{5, 6, 7, 8, 9, 9, 8, 7, 6}, 2},
		{"T_{3,2}, n known 20", kary(3, 2), 20, tokendist.Loads{40, 0, 3, 0, 0, 0, 0, 0, 9, 0, 0, 0, 1, 0, 2}, 6},
		{"T_{2,3}", kary(2, 3), 0, tokendist.Loads{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ec, err := tokendist.BipartiteColoring(tc.g)
			require.NoError(t, err)
			require.Equal(t, tc.delay, dxCCCompare(t, tc.g, ec, tc.nodes, tc.loads))
		})
	}
}

// TestDiscrepancy1ConvergecastProperty runs both terminations over many seeds: random
// trees, stars and paths with permuted colourings, random, point-mass and
// THRESHOLD-1-stable loads, sometimes a larger known n.
func TestDiscrepancy1ConvergecastProperty(t *testing.T) {
	seeds := uint64(300)
	if testing.Short() {
		seeds = 60
	}
	for seed := uint64(0); seed < seeds; seed++ {
		n := 1 + int(seed%25)
		g, err := tokendist.RandomTree(n, seed)
		require.NoError(t, err)
		switch seed % 7 {
		case 0:
			g, err = tokendist.Star(n)
		case 1:
			g, err = tokendist.Path(n)
		}
		require.NoError(t, err)
		ec := dxPermutedColoring(t, g, seed)
		var loads tokendist.Loads
		if seed%3 == 0 {
			loads, err = tokendist.PointMass(n, int64(5*n+int(seed%11)), int(seed)%n)
		} else {
			loads, err = tokendist.RandomRange(n, 0, 4*int64(n), seed)
		}
		require.NoError(t, err)
		if seed%5 == 4 {
			t1, err := tokendist.NewThreshold1(g, ec)
			require.NoError(t, err)
			r, err := tokendist.Run(context.Background(), g, loads, t1, nil)
			require.NoError(t, err)
			loads = r.Loads
		}
		nodes := n + int(seed%4/3)*2
		dxCCCompare(t, g, ec, nodes, loads)
	}
}

// TestDiscrepancy1ConvergecastSpanningTree runs the convergecast termination on a BFS
// tree of a torus through NewSpanningTree.
func TestDiscrepancy1ConvergecastSpanningTree(t *testing.T) {
	torus := dxMustGraph(tokendist.Torus(6, 5))
	b, err := tokendist.NewSpanningTree(torus, tokendist.AutoRoot, func(tree *tokendist.Graph) (tokendist.Balancer, error) {
		return tokendist.NewDiscrepancy1(tree, nil, &tokendist.Discrepancy1Options{Convergecast: true})
	})
	require.NoError(t, err)
	loads, err := tokendist.RandomRange(30, 0, 100, 3)
	require.NoError(t, err)
	r, err := tokendist.Run(context.Background(), torus, loads, b, &tokendist.RunOptions{NoStability: true})
	require.NoError(t, err)
	require.Equal(t, tokendist.StatusDone, r.Status)
	require.LessOrEqual(t, r.Discrepancy(), int64(1))
}

// TestDiscrepancy1WithBadInput: the options constructor validates like NewDiscrepancy1.
func TestDiscrepancy1WithBadInput(t *testing.T) {
	ring := dxMustGraph(tokendist.Ring(6))
	_, err := tokendist.NewDiscrepancy1(ring, nil, &tokendist.Discrepancy1Options{Convergecast: true})
	require.ErrorIs(t, err, tokendist.ErrNotTree)
	path := dxMustGraph(tokendist.Path(4))
	_, err = tokendist.NewDiscrepancy1(path, nil, &tokendist.Discrepancy1Options{Nodes: 3, Convergecast: true})
	require.ErrorIs(t, err, tokendist.ErrBadParameter)
	require.ErrorContains(t, err, "n = 3")
	_, err = tokendist.NewDiscrepancy1(nil, nil, nil)
	require.ErrorIs(t, err, tokendist.ErrNilNetwork)
	b, err := tokendist.NewDiscrepancy1(path, nil, nil)
	require.NoError(t, err)
	require.Equal(t, "DISCREPANCY-1", b.String())
}

// TestDiscrepancy1ConvergecastNoAlloc: a step with the convergecast allocates nothing.
func TestDiscrepancy1ConvergecastNoAlloc(t *testing.T) {
	g := dxMustGraph(tokendist.RandomTree(200, 1))
	b, err := tokendist.NewDiscrepancy1(g, nil, &tokendist.Discrepancy1Options{Convergecast: true})
	require.NoError(t, err)
	loads, err := tokendist.RandomRange(200, 0, 1000, 1)
	require.NoError(t, err)
	s := &tokendist.State{Net: g, Loads: loads, Workers: 1}
	require.NoError(t, b.Init(s))
	allocs := testing.AllocsPerRun(2000, func() {
		require.NoError(t, b.Step(s))
		s.Steps++
	})
	require.Zero(t, allocs)
}

// The exhaustive searches of issue 18 on DISCREPANCY-1's termination
// (docs/proofs/discrepancy1.md): a naive simulator independent of the library's stepper
// (checked against it), every edge-coloured tree up to isomorphism, and every load
// vector of a box. The box {0..K}^n (with a zero, since the protocol only sees
// differences) is closed under the algorithm up to a shift (loads stay between the
// minimum and the maximum), so checking every window of w consecutive cycles that
// starts in the box covers every window of every run that starts in it.

// d1sTree is an edge-coloured tree: pairs[c] lists the edges of colour c as (u, v).
type d1sTree struct {
	n, chi int
	edges  [][2]int
	colors []int
	pairs  [][]int32
	code   string
}

// d1sCanon is a canonical code of the coloured tree (AHU with edge colours, minimum
// over all roots).
func d1sCanon(n int, edges [][2]int, colors []int) string {
	adj := make([][][2]int, n)
	for i, e := range edges {
		adj[e[0]] = append(adj[e[0]], [2]int{e[1], colors[i]})
		adj[e[1]] = append(adj[e[1]], [2]int{e[0], colors[i]})
	}
	var enc func(v, p, c int) string
	enc = func(v, p, c int) string {
		var kids []string
		for _, a := range adj[v] {
			if a[0] != p {
				kids = append(kids, enc(a[0], v, a[1]))
			}
		}
		sort.Strings(kids)
		return "(" + strconv.Itoa(c) + strings.Join(kids, "") + ")"
	}
	best := ""
	for r := 0; r < n; r++ {
		if s := enc(r, -1, -1); best == "" || s < best {
			best = s
		}
	}
	return best
}

// d1sTrees returns every tree on n nodes with every proper edge colouring by colours
// 0..chi-1 where chi = Δ + extra, up to colour-preserving isomorphism. Colour order
// matters (colour t mod χ is active at step t), so colours are not permuted.
func d1sTrees(n, extra int) []d1sTree {
	if n == 1 {
		return []d1sTree{{n: 1, pairs: nil}}
	}
	seen := map[string]bool{}
	shapes := map[string]bool{}
	var out []d1sTree
	dxAllTrees(n, func(g *tokendist.Graph) {
		edges := g.EdgeList()
		plain := make([]int, len(edges))
		if sc := d1sCanon(n, edges, plain); shapes[sc] {
			return
		} else {
			shapes[sc] = true
		}
		deg := make([]int, n)
		for _, e := range edges {
			deg[e[0]]++
			deg[e[1]]++
		}
		chi := slices.Max(deg) + extra
		colors := make([]int, len(edges))
		var rec func(i int)
		rec = func(i int) {
			if i == len(edges) {
				if slices.Max(colors) != chi-1 { // the library's χ is the largest colour used + 1
					return
				}
				code := d1sCanon(n, edges, colors)
				if seen[code] {
					return
				}
				seen[code] = true
				t := d1sTree{n: n, chi: chi, edges: edges, colors: slices.Clone(colors), code: code}
				t.pairs = make([][]int32, chi)
				for j, e := range edges {
					t.pairs[colors[j]] = append(t.pairs[colors[j]], int32(e[0]), int32(e[1]))
				}
				out = append(out, t)
				return
			}
			for c := 0; c < chi; c++ {
				ok := true
				for j := 0; j < i && ok; j++ {
					if colors[j] == c && (edges[j][0] == edges[i][0] || edges[j][0] == edges[i][1] || edges[j][1] == edges[i][0] || edges[j][1] == edges[i][1]) {
						ok = false
					}
				}
				if ok {
					colors[i] = c
					rec(i + 1)
				}
			}
		}
		rec(0)
	})
	return out
}

// d1sCycle is one cycle's record at every node.
type d1sCycle struct {
	maxA, minA []int64 // largest / smallest load held during the A-phase (from its start)
	maxC, minC []int64 // the same over the whole cycle
	end        []int64 // load at the end of the cycle
	steep      []bool  // some edge at v carried a token across a discrepancy ≥ 2
	swap1      []bool  // some edge at v swapped across a discrepancy of exactly 1
	disc, gMax int64   // discrepancy, maximum and minimum at the end of the cycle
	gMin       int64
}

// d1sSim is a naive DISCREPANCY-1: phases of χ·n steps, THRESHOLD-1 with localMax
// (A-phase), THRESHOLD-1 PLUS (B-phase).
type d1sSim struct {
	t      d1sTree
	phase  int
	loads  []int64
	lmax   []int64
	cycles []d1sCycle
}

func newD1sSim(t d1sTree, known, cycles int) *d1sSim {
	s := &d1sSim{t: t, phase: t.chi * known, loads: make([]int64, t.n), lmax: make([]int64, t.n)}
	s.cycles = make([]d1sCycle, cycles)
	for i := range s.cycles {
		c := &s.cycles[i]
		c.maxA, c.minA, c.maxC, c.minC, c.end = make([]int64, t.n), make([]int64, t.n), make([]int64, t.n), make([]int64, t.n), make([]int64, t.n)
		c.steep, c.swap1 = make([]bool, t.n), make([]bool, t.n)
	}
	return s
}

// run simulates len(s.cycles) cycles from x, recording each.
func (s *d1sSim) run(x []int64) {
	copy(s.loads, x)
	L := s.loads
	for k := range s.cycles {
		c := &s.cycles[k]
		copy(s.lmax, L)
		copy(c.minA, L)
		copy(c.maxC, L)
		copy(c.minC, L)
		clear(c.steep)
		clear(c.swap1)
		for half := 0; half < 2; half++ {
			for step := 0; step < s.phase; step++ {
				p := s.t.pairs[step%s.t.chi]
				for i := 0; i+1 < len(p); i += 2 {
					u, v := p[i], p[i+1]
					a, b := L[u], L[v]
					var x int64
					switch {
					case a-b >= 2:
						x = 1
					case b-a >= 2:
						x = -1
					case a-b == 1 && (half == 0 || a != s.lmax[u]):
						x = 1
					case b-a == 1 && (half == 0 || b != s.lmax[v]):
						x = -1
					}
					if x != 0 {
						if a-b >= 2 || b-a >= 2 {
							c.steep[u], c.steep[v] = true, true
						} else {
							c.swap1[u], c.swap1[v] = true, true
						}
					}
					a, b = a-x, b+x
					L[u], L[v] = a, b
					if half == 0 {
						s.lmax[u], s.lmax[v] = max(s.lmax[u], a), max(s.lmax[v], b)
						c.minA[u], c.minA[v] = min(c.minA[u], a), min(c.minA[v], b)
					}
					c.maxC[u], c.maxC[v] = max(c.maxC[u], a), max(c.maxC[v], b)
					c.minC[u], c.minC[v] = min(c.minC[u], a), min(c.minC[v], b)
				}
			}
			if half == 0 {
				copy(c.maxA, s.lmax)
			}
		}
		copy(c.end, L)
		c.gMax, c.gMin = slices.Max(L), slices.Min(L)
		c.disc = c.gMax - c.gMin
	}
}

// d1sBox calls f on every vector of {0..K}^n with a zero entry.
func d1sBox(n int, K int64, f func(x []int64)) {
	x := make([]int64, n)
	for {
		if slices.Contains(x, 0) {
			f(x)
		}
		i := 0
		for i < n && x[i] == K {
			x[i] = 0
			i++
		}
		if i == n {
			return
		}
		x[i]++
	}
}

// d1sLimits returns the load bound K for trees on n nodes: the quick default, or a
// larger one under TOKENDIST_LONG (or TOKENDIST_D1K="n:K,n:K" for custom sweeps).
func d1sLimits(quick, long map[int]int64) map[int]int64 {
	lim := quick
	if dxLong {
		lim = long
	}
	if s := os.Getenv("TOKENDIST_D1K"); s != "" {
		lim = map[int]int64{}
		for _, f := range strings.Split(s, ",") {
			var n int
			var k int64
			if _, err := fmt.Sscanf(f, "%d:%d", &n, &k); err == nil {
				lim[n] = k
			}
		}
	}
	return lim
}

// TestD1SimMatchesStepper checks the naive simulator against the library's stepper:
// same loads after every cycle and the same localMax, on every coloured tree ≤ 5 nodes.
func TestD1SimMatchesStepper(t *testing.T) {
	runs := 0
	for n := 2; n <= 5; n++ {
		for _, tr := range d1sTrees(n, 1) {
			g, err := tokendist.NewGraph(n, tr.edges)
			require.NoError(t, err)
			ec, err := tokendist.NewEdgeColoring(g, func(u, v int) int {
				for i, e := range tr.edges {
					if e == [2]int{u, v} || e == [2]int{v, u} {
						return tr.colors[i]
					}
				}
				return -1
			})
			require.NoError(t, err)
			sim := newD1sSim(tr, n, 3)
			for seed := uint64(0); seed < 6; seed++ {
				x, err := tokendist.RandomRange(n, 0, 9, seed+uint64(100*n))
				require.NoError(t, err)
				sim.run(x)
				b, err := tokendist.NewDiscrepancy1(g, ec, nil)
				require.NoError(t, err)
				for k := range sim.cycles {
					r, err := tokendist.Run(context.Background(), g, x.Clone(), b, &tokendist.RunOptions{NoStability: true, MaxSteps: int64(2 * (k + 1) * tr.chi * n)})
					require.NoError(t, err)
					require.Equal(t, sim.cycles[k].end, []int64(r.Loads), "%s cycle %d from %v", tr.code, k+1, x)
					require.Equal(t, sim.cycles[k].maxA, d1Report(r).LocalMax, "%s cycle %d from %v", tr.code, k+1, x)
					runs++
				}
			}
		}
	}
	t.Logf("%d runs agree", runs)
}

// TestDiscrepancy1GlobalRuleExhaustive checks the global termination rule (localMax(v)
// the same in cycles k − 1 and k at every node ⇒ discrepancy ≤ 1 after cycle k), and
// the stronger Conjecture 2 of docs/proofs/discrepancy1.md (⇒ discrepancy ≤ 1 already
// after cycle k − 1), from
// every load vector of the box, on every coloured tree up to isomorphism with χ = Δ and
// χ = Δ + 1 colours and n or n + 1 as the known node count. TOKENDIST_LONG=1 widens it.
func TestDiscrepancy1GlobalRuleExhaustive(t *testing.T) {
	lim := d1sLimits(map[int]int64{2: 12, 3: 8, 4: 5, 5: 3, 6: 2},
		map[int]int64{2: 40, 3: 30, 4: 16, 5: 10, 6: 7, 7: 5, 8: 3})
	extras := 0 // χ = Δ only; χ = Δ + 1 as well under TOKENDIST_LONG=1
	if dxLong {
		extras = 1
	}
	total, held := 0, 0
	for n := 2; n <= 9; n++ {
		K, ok := lim[n]
		if !ok {
			continue
		}
		trees := 0
		for extra := 0; extra <= extras; extra++ {
			for _, tr := range d1sTrees(n, extra) {
				trees++
				for known := n; known <= n+1; known++ {
					if known > n && (extra == 1 || n > 6 || !dxLong) {
						continue
					}
					sim := newD1sSim(tr, known, 2)
					d1sBox(n, K, func(x []int64) {
						total++
						sim.run(x)
						if slices.Equal(sim.cycles[0].maxA, sim.cycles[1].maxA) {
							held++
							if sim.cycles[1].disc > 1 {
								require.Failf(t, "global rule fails", "%s (χ = %d, known n = %d) from %v: discrepancy %d after cycle 2", tr.code, tr.chi, known, x, sim.cycles[1].disc)
							}
							// The stronger statement of docs/proofs/discrepancy1.md (Conjecture
							// 2): the discrepancy is ≤ 1 already at the end of cycle k − 1.
							if sim.cycles[0].disc > 1 {
								require.Failf(t, "Conjecture 2 fails", "%s (χ = %d, known n = %d) from %v: discrepancy %d after cycle 1", tr.code, tr.chi, known, x, sim.cycles[0].disc)
							}
						}
					})
				}
			}
		}
		t.Logf("n = %d: %d coloured trees, loads ≤ %d", n, trees, K)
	}
	t.Logf("%d two-cycle windows, the rule held in %d, never with discrepancy ≥ 2", total, held)
}

// d1sRule is a candidate local termination rule: whether node v stops at the end of
// cycle j (0-based) given its own records of cycles j−w+1..j.
type d1sRule struct {
	name string
	w    int // cycles of history used
	fire func(cs []d1sCycle, j, v int) bool
}

// d1sRules is the family of candidate local rules of issue 18: windows of a node's
// A-phase localMax / localMin, its load range over the A-phase or the whole cycle, its
// load at cycle ends, and the exchanges on its own edges.
func d1sRules() []d1sRule {
	same := func(f func(c *d1sCycle) []int64) func(cs []d1sCycle, j, v, w int) bool {
		return func(cs []d1sCycle, j, v, w int) bool {
			for i := j - w + 2; i <= j; i++ {
				if f(&cs[i])[v] != f(&cs[i-1])[v] {
					return false
				}
			}
			return true
		}
	}
	each := func(p func(c *d1sCycle, v int) bool) func(cs []d1sCycle, j, v, w int) bool {
		return func(cs []d1sCycle, j, v, w int) bool {
			for i := j - w + 1; i <= j; i++ {
				if !p(&cs[i], v) {
					return false
				}
			}
			return true
		}
	}
	maxA := same(func(c *d1sCycle) []int64 { return c.maxA })
	minA := same(func(c *d1sCycle) []int64 { return c.minA })
	end := same(func(c *d1sCycle) []int64 { return c.end })
	rangeA := each(func(c *d1sCycle, v int) bool { return c.maxA[v]-c.minA[v] <= 1 })
	rangeC := each(func(c *d1sCycle, v int) bool { return c.maxC[v]-c.minC[v] <= 1 })
	flat := each(func(c *d1sCycle, v int) bool { return !c.steep[v] })
	var rules []d1sRule
	add := func(name string, w int, f func(cs []d1sCycle, j, v, w int) bool) {
		rules = append(rules, d1sRule{name: fmt.Sprintf("%s, w = %d", name, w), w: w, fire: func(cs []d1sCycle, j, v int) bool { return f(cs, j, v, w) }})
	}
	and := func(f, g func(cs []d1sCycle, j, v, w int) bool) func(cs []d1sCycle, j, v, w int) bool {
		return func(cs []d1sCycle, j, v, w int) bool { return f(cs, j, v, w) && g(cs, j, v, w) }
	}
	for w := 2; w <= 4; w++ {
		add("L1 localMax unchanged", w, maxA)
	}
	for w := 2; w <= 3; w++ {
		add("L2 localMax and localMin unchanged", w, and(maxA, minA))
		add("L3 load at cycle ends unchanged", w, end)
	}
	for w := 1; w <= 3; w++ {
		add("L4 A-phase range ≤ 1", w, rangeA)
		add("L5 cycle range ≤ 1", w, rangeC)
		add("L6 no exchange across discrepancy ≥ 2 at v", w, flat)
	}
	for w := 2; w <= 3; w++ {
		add("L7 localMax unchanged and no steep exchange", w, and(maxA, flat))
	}
	for w := 1; w <= 2; w++ {
		add("L8 A-phase range ≤ 1 and no steep exchange", w, and(rangeA, flat))
		add("L9 cycle range ≤ 1 and no steep exchange", w, and(rangeC, flat))
	}
	return rules
}

// d1sFromGraph turns a coloured graph into a d1sTree.
func d1sFromGraph(g *tokendist.Graph, ec *tokendist.EdgeColoring) d1sTree {
	tr := d1sTree{n: g.Order(), chi: ec.Colors(), edges: g.EdgeList()}
	tr.pairs = make([][]int32, tr.chi)
	for _, e := range tr.edges {
		c := ec.Color(e[0], e[1])
		tr.colors = append(tr.colors, c)
		tr.pairs[c] = append(tr.pairs[c], int32(e[0]), int32(e[1]))
	}
	return tr
}

// d1sCounterexample pins a counterexample to a candidate local rule.
type d1sCounterexample struct {
	n           int
	edges       [][2]int
	colors      []int
	loads       []int64
	node, cycle int
	disc        int64
}

// TestDiscrepancy1LocalRuleCounterexamples pins one counterexample to every candidate
// local termination rule of d1sRules (found by TestDiscrepancy1LocalRuleSearch with
// TOKENDIST_D1K="2:40,3:30,4:14,5:7", or TestDiscrepancy1LocalRuleRandom with
// TOKENDIST_LONG=1): the node's rule holds at the end of the cycle while the
// discrepancy is still ≥ 2. The three-node ones come from exhaustive boxes (smallest
// n first); the others are the first hit of the random sweep, not minimal.
func TestDiscrepancy1LocalRuleCounterexamples(t *testing.T) {
	pins := map[string]d1sCounterexample{
		"L1 localMax unchanged, w = 2":                       {n: 3, edges: [][2]int{{0, 1}, {0, 2}}, colors: []int{0, 1}, loads: []int64{25, 14, 0}, node: 1, cycle: 2, disc: 2},
		"L1 localMax unchanged, w = 3":                       {n: 5, edges: [][2]int{{0, 2}, {1, 2}, {1, 3}, {2, 4}}, colors: []int{2, 0, 2, 1}, loads: []int64{73, 56, 80, 24, 67}, node: 1, cycle: 3, disc: 10},
		"L1 localMax unchanged, w = 4":                       {n: 5, edges: [][2]int{{0, 3}, {1, 2}, {1, 4}, {2, 3}}, colors: []int{0, 0, 1, 1}, loads: []int64{12, 23, 4, 17, 69}, node: 1, cycle: 4, disc: 5},
		"L2 localMax and localMin unchanged, w = 2":          {n: 3, edges: [][2]int{{0, 1}, {0, 2}}, colors: []int{0, 1}, loads: []int64{7, 23, 0}, node: 0, cycle: 2, disc: 2},
		"L3 load at cycle ends unchanged, w = 2":             {n: 3, edges: [][2]int{{0, 1}, {0, 2}}, colors: []int{0, 1}, loads: []int64{12, 26, 0}, node: 0, cycle: 2, disc: 2},
		"L2 localMax and localMin unchanged, w = 3":          {n: 5, edges: [][2]int{{0, 2}, {1, 2}, {1, 3}, {2, 4}}, colors: []int{2, 0, 2, 1}, loads: []int64{73, 56, 80, 24, 67}, node: 1, cycle: 3, disc: 10},
		"L3 load at cycle ends unchanged, w = 3":             {n: 5, edges: [][2]int{{0, 2}, {1, 2}, {1, 3}, {2, 4}}, colors: []int{2, 0, 2, 1}, loads: []int64{73, 56, 80, 24, 67}, node: 1, cycle: 3, disc: 10},
		"L4 A-phase range ≤ 1, w = 1":                        {n: 3, edges: [][2]int{{0, 1}, {0, 2}}, colors: []int{0, 1}, loads: []int64{12, 9, 0}, node: 1, cycle: 1, disc: 2},
		"L5 cycle range ≤ 1, w = 1":                          {n: 3, edges: [][2]int{{0, 1}, {0, 2}}, colors: []int{0, 1}, loads: []int64{5, 13, 0}, node: 0, cycle: 1, disc: 2},
		"L6 no exchange across discrepancy ≥ 2 at v, w = 1":  {n: 3, edges: [][2]int{{0, 1}, {0, 2}}, colors: []int{0, 1}, loads: []int64{0, 11, 0}, node: 2, cycle: 1, disc: 2},
		"L4 A-phase range ≤ 1, w = 2":                        {n: 3, edges: [][2]int{{0, 1}, {0, 2}}, colors: []int{0, 1}, loads: []int64{21, 19, 0}, node: 1, cycle: 2, disc: 2},
		"L5 cycle range ≤ 1, w = 2":                          {n: 3, edges: [][2]int{{0, 1}, {0, 2}}, colors: []int{0, 1}, loads: []int64{11, 25, 0}, node: 0, cycle: 2, disc: 2},
		"L6 no exchange across discrepancy ≥ 2 at v, w = 2":  {n: 3, edges: [][2]int{{0, 1}, {0, 2}}, colors: []int{0, 1}, loads: []int64{0, 20, 0}, node: 2, cycle: 2, disc: 2},
		"L4 A-phase range ≤ 1, w = 3":                        {n: 3, edges: [][2]int{{0, 1}, {0, 2}}, colors: []int{0, 1}, loads: []int64{30, 28, 0}, node: 1, cycle: 3, disc: 2},
		"L5 cycle range ≤ 1, w = 3":                          {n: 5, edges: [][2]int{{0, 2}, {1, 2}, {1, 3}, {2, 4}}, colors: []int{2, 0, 2, 1}, loads: []int64{73, 56, 80, 24, 67}, node: 1, cycle: 3, disc: 10},
		"L6 no exchange across discrepancy ≥ 2 at v, w = 3":  {n: 3, edges: [][2]int{{0, 1}, {0, 2}}, colors: []int{0, 1}, loads: []int64{0, 29, 0}, node: 2, cycle: 3, disc: 2},
		"L7 localMax unchanged and no steep exchange, w = 2": {n: 13, edges: [][2]int{{0, 2}, {0, 8}, {0, 9}, {0, 10}, {1, 7}, {3, 12}, {4, 5}, {5, 9}, {6, 12}, {7, 10}, {9, 11}, {11, 12}}, colors: []int{2, 3, 0, 1, 3, 3, 3, 2, 0, 2, 3, 2}, loads: []int64{53, 56, 0, 48, 41, 60, 72, 7, 11, 0, 4, 56, 74}, node: 4, cycle: 3, disc: 11},
		"L7 localMax unchanged and no steep exchange, w = 3": {n: 13, edges: [][2]int{{0, 2}, {0, 8}, {0, 9}, {0, 10}, {1, 7}, {3, 12}, {4, 5}, {5, 9}, {6, 12}, {7, 10}, {9, 11}, {11, 12}}, colors: []int{2, 3, 0, 1, 3, 3, 3, 2, 0, 2, 3, 2}, loads: []int64{53, 56, 0, 48, 41, 60, 72, 7, 11, 0, 4, 56, 74}, node: 4, cycle: 4, disc: 2},
		"L8 A-phase range ≤ 1 and no steep exchange, w = 1":  {n: 3, edges: [][2]int{{0, 1}, {0, 2}}, colors: []int{0, 1}, loads: []int64{11, 11, 0}, node: 1, cycle: 1, disc: 2},
		"L9 cycle range ≤ 1 and no steep exchange, w = 1":    {n: 4, edges: [][2]int{{0, 1}, {0, 2}, {0, 3}}, colors: []int{0, 1, 2}, loads: []int64{7, 13, 8, 0}, node: 2, cycle: 1, disc: 2},
		"L8 A-phase range ≤ 1 and no steep exchange, w = 2":  {n: 3, edges: [][2]int{{0, 1}, {0, 2}}, colors: []int{0, 1}, loads: []int64{20, 20, 0}, node: 1, cycle: 2, disc: 2},
		"L9 cycle range ≤ 1 and no steep exchange, w = 2":    {n: 13, edges: [][2]int{{0, 2}, {0, 8}, {0, 9}, {0, 10}, {1, 7}, {3, 12}, {4, 5}, {5, 9}, {6, 12}, {7, 10}, {9, 11}, {11, 12}}, colors: []int{2, 3, 0, 1, 3, 3, 3, 2, 0, 2, 3, 2}, loads: []int64{53, 56, 0, 48, 41, 60, 72, 7, 11, 0, 4, 56, 74}, node: 4, cycle: 3, disc: 11},
	}
	rules := d1sRules()
	require.Len(t, pins, len(rules))
	for _, rule := range rules {
		ce, ok := pins[rule.name]
		require.True(t, ok, rule.name)
		t.Run(rule.name, func(t *testing.T) {
			g, err := tokendist.NewGraph(ce.n, ce.edges)
			require.NoError(t, err)
			ec, err := tokendist.NewEdgeColoring(g, func(u, v int) int {
				for i, e := range ce.edges {
					if e == [2]int{u, v} || e == [2]int{v, u} {
						return ce.colors[i]
					}
				}
				return -1
			})
			require.NoError(t, err)
			sim := newD1sSim(d1sFromGraph(g, ec), ce.n, ce.cycle)
			sim.run(ce.loads)
			require.True(t, rule.fire(sim.cycles, ce.cycle-1, ce.node), "the rule holds at node %d after cycle %d", ce.node, ce.cycle)
			require.Equal(t, ce.disc, sim.cycles[ce.cycle-1].disc)
			require.GreaterOrEqual(t, ce.disc, int64(2))
			// The library's stepper reaches the same loads.
			b, err := tokendist.NewDiscrepancy1(g, ec, nil)
			require.NoError(t, err)
			r, err := tokendist.Run(context.Background(), g, tokendist.Loads(ce.loads).Clone(), b,
				&tokendist.RunOptions{NoStability: true, MaxSteps: int64(2 * ce.cycle * ec.Colors() * ce.n)})
			require.NoError(t, err)
			require.Equal(t, ce.disc, r.Discrepancy())
			if strings.HasPrefix(rule.name, "L1 ") && rule.w == 2 {
				require.Equal(t, int64(ce.cycle), d1Report(r).Decisions[ce.node], "the paper's rule, as Decisions reports it")
			}
		})
	}
}

// d1Report returns the Discrepancy1Report of a DISCREPANCY-1 run.
func d1Report(r tokendist.Result) tokendist.Discrepancy1Report {
	return r.Report.(tokendist.Discrepancy1Report)
}

// TestDiscrepancy1ConvergecastSchedule checks the convergecast's control messages step
// by step (NewDiscrepancy1's doc comment) on a tree whose counts by height and by depth
// differ, and where a node's height is set by its higher child: edges 0–1, 1–2, 1–5,
// 5–6, 0–3, 3–4, 4–7, centre 0, radius r = 3. By height, nodes 2, 6 and 7 (height 0) send
// their AND at the first step of a cycle, nodes 4 and 5 (height 1) at the second and
// nodes 1 and 3 (height 2) at the third: 3, 2, 2 messages, after every cycle from the
// second on. By depth, nodes 1 and 3 hear "stop" at step r of the cycle after the
// deciding one, nodes 2, 4 and 5 at step r + 1 and nodes 6 and 7 at step r + 2: 2, 3, 2
// messages, once. A step's control messages are its message count minus the load
// messages of its matching (two per edge of the colour). The global check decides after
// cycle K (the run ends after K cycles of L = 2χn steps); the convergecast run ends 2r
// steps later.
func TestDiscrepancy1ConvergecastSchedule(t *testing.T) {
	g, err := tokendist.NewGraph(8, [][2]int{{0, 1}, {1, 2}, {1, 5}, {5, 6}, {0, 3}, {3, 4}, {4, 7}})
	require.NoError(t, err)
	ec, err := tokendist.BipartiteColoring(g)
	require.NoError(t, err)
	chi := int64(ec.Colors())
	L := 2 * chi * 8
	const r = 3
	up, down := []int64{3, 2, 2}, []int64{2, 3, 2}
	for _, loads := range []tokendist.Loads{{0, 9, 0, 4, 17, 2, 0, 5}, {30, 0, 0, 0, 0, 0, 0, 0}, {1, 1, 1, 1, 1, 2, 1, 1}} {
		glob, err := tokendist.NewDiscrepancy1(g, ec, nil)
		require.NoError(t, err)
		rg, err := tokendist.Run(context.Background(), g, loads, glob, &tokendist.RunOptions{NoStability: true})
		require.NoError(t, err)
		require.Equal(t, tokendist.StatusDone, rg.Status)
		require.Zero(t, rg.Steps%L, "the global check stops at the end of a cycle")
		K := rg.Steps / L
		require.GreaterOrEqual(t, K, int64(2))

		cc, err := tokendist.NewDiscrepancy1(g, ec, &tokendist.Discrepancy1Options{Convergecast: true})
		require.NoError(t, err)
		var control []int64 // control messages of step 0, 1, ...
		last := int64(0)
		res, err := tokendist.Run(context.Background(), g, loads, cc, &tokendist.RunOptions{NoStability: true, SampleEvery: 1,
			Recorder: tokendist.RecorderFunc(func(s *tokendist.State, smp tokendist.Sample) error {
				if smp.Step > 0 {
					step := smp.Step - 1
					control = append(control, smp.Messages-last-int64(len(ec.Matching(int(step%chi)))))
				}
				last = smp.Messages
				return nil
			})})
		require.NoError(t, err)
		require.Equal(t, tokendist.StatusDone, res.Status)
		require.Equal(t, K*L+2*r, res.Steps, "loads %v: 2r steps after the global check", loads)
		want := make([]int64, res.Steps)
		for c := int64(2); c <= K; c++ {
			for p := int64(0); p < r; p++ {
				want[c*L+p] = up[p]
			}
		}
		for p := int64(0); p < r; p++ {
			want[K*L+r+p] = down[p]
		}
		require.Equal(t, want, control, "loads %v: control messages by step (K = %d, L = %d)", loads, K, L)
	}
}
