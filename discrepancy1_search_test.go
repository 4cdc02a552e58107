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

// This file holds the exhaustive searches of issue 18 on DISCREPANCY-1's termination
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
				b, err := tokendist.NewDiscrepancy1(g, ec, 0)
				require.NoError(t, err)
				for k := range sim.cycles {
					r, err := tokendist.Run(context.Background(), g, x.Clone(), b, &tokendist.RunOptions{NoStability: true, MaxSteps: int64(2 * (k + 1) * tr.chi * n)})
					require.NoError(t, err)
					require.Equal(t, sim.cycles[k].end, []int64(r.Loads), "%s cycle %d from %v", tr.code, k+1, x)
					require.Equal(t, sim.cycles[k].maxA, b.LocalMax(), "%s cycle %d from %v", tr.code, k+1, x)
					runs++
				}
			}
		}
	}
	t.Logf("%d runs agree", runs)
}

// TestDiscrepancy1GlobalRuleExhaustive checks the global termination rule (localMax(v)
// the same in cycles k − 1 and k at every node ⇒ discrepancy ≤ 1 after cycle k) from
// every load vector of the box, on every coloured tree up to isomorphism with χ = Δ and
// χ = Δ + 1 colours and n or n + 1 as the known node count. TOKENDIST_LONG=1 widens it.
func TestDiscrepancy1GlobalRuleExhaustive(t *testing.T) {
	lim := d1sLimits(map[int]int64{2: 12, 3: 8, 4: 5, 5: 3, 6: 2},
		map[int]int64{2: 40, 3: 30, 4: 16, 5: 10, 6: 7, 7: 5, 8: 3})
	extras := 0
	if dxLong || os.Getenv("TOKENDIST_D1K") != "" {
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
						}
					})
				}
			}
		}
		t.Logf("n = %d: %d coloured trees, loads ≤ %d", n, trees, K)
	}
	t.Logf("%d two-cycle windows, the rule held in %d, never with discrepancy ≥ 2", total, held)
}
