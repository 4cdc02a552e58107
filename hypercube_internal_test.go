package tokendist

import (
	"context"
	"fmt"
	"math/bits"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// cubeSeeds is the number of seeds of the default sweep for dimension d: every d ≤ 12 is
// covered, large d with fewer seeds.
func cubeSeeds(d int) int {
	n := 2
	switch {
	case d <= 5:
		n = 16
	case d <= 8:
		n = 6
	case d <= 10:
		n = 3
	}
	if longTests() {
		n *= 4
	}
	return n
}

func mustCube(t testing.TB, d int, se bool) *Graph {
	t.Helper()
	var g *Graph
	var err error
	if se {
		g, err = ShuffleExchange(d)
	} else {
		g, err = Hypercube(d)
	}
	require.NoError(t, err)
	return g
}

// driven is one run driven step by step, with the checks of checkStep after each step.
type driven struct {
	s     State
	core  *cubeCore
	steps int
}

// drive runs b (a *CubeBalancer or *MultiBalancer) to completion like Run, checking
// after every step: conservation of every column, non-negativity, Lemma 2.3 on the
// subcubes the step merged, and for the recursion the paper's bound on the pair
// differences, max pair difference ≤ ⌊δ_{i*}/2^{l−1}⌋ + ξ_low + ξ_high (section 2.3).
func drive(t *testing.T, g *Graph, loads Loads, b Balancer) *driven {
	t.Helper()
	r := &driven{s: State{Net: g, Loads: loads.Clone(), Workers: 2}}
	switch x := b.(type) {
	case *CubeBalancer:
		r.core = &x.core
	case *MultiBalancer:
		r.core = &x.core
	default:
		require.FailNow(t, fmt.Sprintf("drive: %T", b))
	}
	require.NoError(t, b.(Initializer).Init(&r.s))
	c := r.core
	colTotals := columnTotals(c.eng.rows, c.w)
	for !b.(Terminator).Done(&r.s) {
		phase, level := c.phase, c.level
		before := slices.Clone(c.eng.rows)
		var bound []int64
		if phase == phaseTree && level < c.d-1 {
			bound = pairBound(c, level, before)
		}
		require.NoError(t, b.Step(&r.s))
		r.s.Steps++
		r.steps++
		after := c.eng.rows
		got := columnTotals(after, c.w)
		require.True(t, slices.Equal(got, colTotals), "%v step %d: group totals %v, want %v", c, r.steps, got, colTotals)
		for v, x := range after {
			if x < 0 {
				t.Fatalf("%v step %d: negative count %d at row %d", c, r.steps, x, v)
			}
		}
		if c.w > 1 {
			for v := 0; v < c.p; v++ {
				var sum int64
				for _, x := range after[v*c.w : (v+1)*c.w] {
					sum += x
				}
				if sum != r.s.Loads[v] {
					t.Fatalf("%v step %d: node %d holds %d tokens, its groups %d", c, r.steps, v, r.s.Loads[v], sum)
				}
			}
		}
		switch phase {
		case phaseTree:
			checkTreeStep(t, c, level, before, after, bound)
		case phaseAscend:
			checkAscendStep(t, c, level, before, after)
		}
		require.Equal(t, c.times.Total(), r.s.Time, "%v: CubeTimes %+v do not add up to State.Time %d", c, c.times, r.s.Time)
	}
	return r
}

func columnTotals(rows []int64, w int) []int64 {
	tot := make([]int64, w)
	for i, x := range rows {
		tot[i%w] += x
	}
	return tot
}

// subcubeErrors returns, for every key, max − min of column j over the nodes with that key.
func subcubeErrors(rows []int64, w, j, p int, key func(int) int) []int64 {
	lo, hi := make([]int64, p), make([]int64, p)
	seen := make([]bool, p)
	for v := 0; v < p; v++ {
		k, x := key(v), rows[v*w+j]
		if !seen[k] {
			lo[k], hi[k], seen[k] = x, x, true
		}
		lo[k], hi[k] = min(lo[k], x), max(hi[k], x)
	}
	for k := range lo {
		hi[k] -= lo[k]
	}
	return hi
}

// checkLemma23 checks, for every column, that each merged subcube (keyAfter) has error
// at most one more than the larger error of its halves (keyBefore), and at most its
// dimension dimAfter (the induction of section 2.3).
func checkLemma23(t *testing.T, c *cubeCore, before, after []int64, keyBefore, keyAfter func(int) int, dimAfter int) {
	t.Helper()
	for j := 0; j < c.w; j++ {
		eb := subcubeErrors(before, c.w, j, c.p, keyBefore)
		ea := subcubeErrors(after, c.w, j, c.p, keyAfter)
		halves := make([]int64, c.p)
		for v := 0; v < c.p; v++ {
			halves[keyAfter(v)] = max(halves[keyAfter(v)], eb[keyBefore(v)])
		}
		for v := 0; v < c.p; v++ {
			k := keyAfter(v)
			if ea[k] > halves[k]+1 || ea[k] > int64(dimAfter) {
				t.Fatalf("%v group %d: Lemma 2.3 fails at node %d: halves' error %d, merged %d (dimension %d)", c, j, v, halves[k], ea[k], dimAfter)
			}
		}
	}
}

// checkTreeStep checks a bottom-up step of the recursion at level k.
func checkTreeStep(t *testing.T, c *cubeCore, k int, before, after []int64, bound []int64) {
	t.Helper()
	d, leaf := c.d, c.eng.leaf
	keyAfter := func(v int) int { return int(leaf[v] >> (d - 1 - k)) }
	keyBefore := func(v int) int { return v } // single nodes below level d−1
	if k < d-1 {
		keyBefore = func(v int) int { return int(leaf[v] >> (d - 2 - k)) }
	}
	checkLemma23(t, c, before, after, keyBefore, keyAfter, d-k)
	if bound == nil {
		return
	}
	// pair differences of the step, against the bound computed before it.
	dims := c.eng.dims[(1<<k)-1:]
	for v := 0; v < c.p; v++ {
		sub := keyAfter(v)
		i := dims[sub]
		if v>>i&1 != 0 {
			continue
		}
		u := v | 1<<i
		for j := 0; j < c.w; j++ {
			diff := abs64(before[v*c.w+j] - before[u*c.w+j])
			if diff > bound[sub*c.w+j] {
				t.Fatalf("%v level %d group %d: pair (%d, %d) differs by %d > ⌊δ/2^(l−1)⌋ + ξ_low + ξ_high = %d", c, k, j, v, u, diff, bound[sub*c.w+j])
			}
		}
	}
}

// pairBound computes, before the balancing step of level k < d−1, the paper's bound on
// the pair differences of every subcube and group: ⌊δ/2^{l−1}⌋ + ξ_low + ξ_high.
func pairBound(c *cubeCore, k int, rows []int64) []int64 {
	d, w, leaf := c.d, c.w, c.eng.leaf
	l := d - k
	dims := c.eng.dims[(1<<k)-1:]
	n := 1 << k
	sum := make([]int64, n*w)
	lo, hi := make([]int64, 2*n*w), make([]int64, 2*n*w)
	seen := make([]bool, 2*n*w)
	for v := 0; v < c.p; v++ {
		sub := int(leaf[v] >> (d - 1 - k))
		half := int(leaf[v] >> (d - 2 - k))
		sign := int64(-1)
		if v>>dims[sub]&1 == 1 {
			sign = 1
		}
		for j := 0; j < w; j++ {
			x := rows[v*w+j]
			sum[sub*w+j] += sign * x
			h := half*w + j
			if !seen[h] {
				lo[h], hi[h], seen[h] = x, x, true
			}
			lo[h], hi[h] = min(lo[h], x), max(hi[h], x)
		}
	}
	bound := make([]int64, n*w)
	for sub := 0; sub < n; sub++ {
		for j := 0; j < w; j++ {
			e0 := hi[(2*sub)*w+j] - lo[(2*sub)*w+j]
			e1 := hi[(2*sub+1)*w+j] - lo[(2*sub+1)*w+j]
			bound[sub*w+j] = abs64(sum[sub*w+j])>>(l-1) + e0 + e1
		}
	}
	return bound
}

// checkAscendStep checks step j of dimension order: on the hypercube the subcubes of
// dimensions 0..j merge; on the shuffle-exchange the same holds for virtual IDs, where
// physical y holds virtual Shuffle^t(y) after t unshuffles.
func checkAscendStep(t *testing.T, c *cubeCore, j int, before, after []int64) {
	t.Helper()
	vb, va := before, after
	if c.shape.topo == topoShuffleExchange {
		vb, va = virtualRows(c, before, j), virtualRows(c, after, j+1)
	}
	checkLemma23(t, c, vb, va, func(v int) int { return v >> j }, func(v int) int { return v >> (j + 1) }, j+1)
}

func virtualRows(c *cubeCore, rows []int64, shuffles int) []int64 {
	out := make([]int64, len(rows))
	for y := 0; y < c.p; y++ {
		x := y
		for i := 0; i < shuffles%max(c.d, 1); i++ {
			x = shuffle(x, c.d)
		}
		copy(out[x*c.w:(x+1)*c.w], rows[y*c.w:(y+1)*c.w])
	}
	return out
}

// cubeInputs returns the inputs of the sweep for dimension d and a seed: random loads of
// several ranges, a point mass, Lemma 2.4's Hamming-ball packings and dimension order's
// worst case.
func cubeInputs(t testing.TB, d int, seed uint64) map[string]Loads {
	p := 1 << d
	in := map[string]Loads{}
	for _, hi := range []int64{1, 9, 300} {
		l, err := RandomRange(p, 0, hi, seed*31+uint64(hi))
		require.NoError(t, err)
		in[fmt.Sprintf("random0..%d", hi)] = l
	}
	pm, err := PointMass(p, int64(seed%5)*int64(p)+int64(seed), int(seed)%p)
	require.NoError(t, err)
	in["pointmass"] = pm
	m := int64(d + 1 + int(seed%7))
	for _, frac := range []int64{1, 2} { // the ball fills p/2 or p/4 processors
		n := max(0, m*int64(max(1, p/(2*int(frac))))-int64(seed%3)) // m per processor, the last short
		l, err := HammingBallLoads(d, n, m, p-1)
		require.NoError(t, err)
		in[fmt.Sprintf("ball/%d", 2*frac)] = l
	}
	w, err := DimensionOrderWorstLoads(d, m)
	require.NoError(t, err)
	in["dimorder-worst"] = w
	return in
}

func sweepOne(t *testing.T, d int, hc, se *Graph, loads Loads, name string) {
	p := int64(1) << d
	n := loads.Total()
	m := loads.Max()
	type variant struct {
		net      *Graph
		make     func(net Network) (*CubeBalancer, error)
		minError bool
		leighton bool
	}
	vs := []variant{
		{hc, func(g Network) (*CubeBalancer, error) { return NewDimensionOrderBalance(g, nil) }, false, false},
		{hc, func(g Network) (*CubeBalancer, error) { return NewHypercubeBalance(g, nil) }, false, false},
		{hc, func(g Network) (*CubeBalancer, error) { return NewHypercubeBalance(g, &CubeOptions{MinError: true}) }, true, false},
		{hc, func(g Network) (*CubeBalancer, error) {
			return NewDimensionOrderBalance(g, &CubeOptions{MinError: true})
		}, true, false},
	}
	if se != nil {
		vs = append(vs,
			variant{se, func(g Network) (*CubeBalancer, error) { return NewDimensionOrderBalance(g, nil) }, false, false},
			variant{se, func(g Network) (*CubeBalancer, error) {
				return NewDimensionOrderBalance(g, &CubeOptions{MinError: true})
			}, true, false})
	}
	if m*p <= 1<<16 { // Leighton's O(m·p) simulation, on the smaller inputs
		vs = append(vs, variant{hc, func(g Network) (*CubeBalancer, error) { return NewLeightonBalance(g) }, true, true})
		if se != nil {
			vs = append(vs, variant{se, func(g Network) (*CubeBalancer, error) { return NewLeightonBalance(g) }, true, true})
		}
	}
	for _, v := range vs {
		b, err := v.make(v.net)
		require.NoError(t, err)
		r := drive(t, v.net, loads, b)
		final := r.s.Loads
		xi := final.Discrepancy()
		times := b.core.times
		if v.minError {
			require.Equal(t, mustMinimumError(t, n, int(p)), xi, "%v: error", b)
			// The exact outcome: the set-aside minimum a (0 for Leighton alone) plus the
			// remainder R dealt cyclically from processor 0.
			a := final.Min()
			if v.leighton {
				a = 0
			}
			rest := n - a*p
			for u, x := range final {
				want := a + rest/p
				if int64(u) < rest%p {
					want++
				}
				if x != want {
					t.Fatalf("%v: final load %d of processor %d, want %d", b, x, u, want)
				}
			}
		} else {
			require.LessOrEqual(t, xi, int64(d), "%v: error above log p", b)
		}
		if d > 0 {
			delta, err := DimensionDiscrepancies(final)
			require.NoError(t, err)
			require.LessOrEqual(t, slices.Max(delta), p/2, "%v: a final δ_i above p/2", b)
		}
		// Upper bounds and exact costs.
		R := int64(d)
		if v.net == se {
			R = 2 * int64(d)
		}
		switch {
		case v.leighton:
			want, err := LeightonTime(v.net, m)
			require.NoError(t, err)
			require.Equal(t, want, r.s.Time, "%v: Leighton time", b)
			if d > 0 {
				require.Equal(t, m, times.Phases)
			}
		default:
			var ub int64
			var err error
			if b.core.algo == algoRecursive {
				ub, err = HypercubeBalanceTimeBound(d, m)
			} else {
				ub, err = DimensionOrderTimeBound(v.net, m)
			}
			require.NoError(t, err)
			main := times.Select + times.Balance + times.Shuffle
			require.LessOrEqual(t, main, ub, "%v: time above the explicit upper bound", b)
			if v.minError && d > 0 {
				// post-processing: two all-reduces and one phase per unit of error.
				require.Equal(t, 2*R, times.Reduce, "%v", b)
				require.Equal(t, 2*R*times.Phases, times.Route, "%v", b)
				require.LessOrEqual(t, times.Phases, int64(d), "%v: more than log p phases", b)
			}
		}
		// Lemma 2.1: the packed Hamming ball must shed its surplus through its fringe.
		if len(name) > 4 && name[:4] == "ball" && v.net == hc && n > 0 && m >= (n+p-1)/p {
			lb, err := BalanceLowerBound(d, n, m, max(xi, mustMinimumError(t, n, int(p))))
			require.NoError(t, err)
			require.GreaterOrEqual(t, r.s.Time, lb, "%v: faster than Lemma 2.1 allows", b)
		}
	}
}

// TestPairTime checks the pair rule and its cost against the model: the smaller side
// receives the odd token, exactly ⌈|a−b|/2⌉ tokens cross.
func TestPairTime(t *testing.T) {
	for a := int64(0); a <= 12; a++ {
		for b := int64(0); b <= 12; b++ {
			e := cubeEngine{w: 1, rows: []int64{a, b}, totals: Loads{a, b}}
			tm, moved := e.pair(0, 1)
			na, nb := e.rows[0], e.rows[1]
			require.Equal(t, a+b, na+nb)
			require.LessOrEqual(t, abs64(na-nb), int64(1))
			require.Equal(t, abs64(a-b)/2+abs64(a-b)%2, moved, "(%d, %d)", a, b)
			pt, err := PairTime(a, b)
			require.NoError(t, err)
			require.Equal(t, pt, tm)
			require.Equal(t, moved+PairOverhead, tm)
			if (a+b)%2 == 1 {
				require.Equal(t, a < b, na > nb, "(%d, %d): the smaller side gets the odd token", a, b)
			}
		}
	}
}

// TestAllReduceTime checks the selection cost's closed form against its definition
// (recursive halving, whole reduction, recursive doubling) and Plaxton's O(l).
func TestAllReduceTime(t *testing.T) {
	for l := 1; l <= 64; l++ {
		require.LessOrEqual(t, allReduceTime(int64(l), l), int64(4*l), "l = %d", l)
		require.Equal(t, int64(l), allReduceTime(1, l))
		for g := int64(1); g <= 70; g += 23 {
			// simulate: the number of words a processor holds, dimension by dimension.
			words, tm := g*int64(l), int64(0)
			var sent []int64
			for k := 0; k < l; k++ {
				if words > 1 {
					h := (words + 1) / 2
					sent = append(sent, h)
					tm += h
					words = h
				} else {
					tm += words
				}
			}
			for _, h := range sent {
				tm += h
			}
			require.Equal(t, tm, allReduceTime(g*int64(l), l), "g = %d, l = %d", g, l)
		}
	}
}

// TestLeightonRouteCollisionFree simulates the concentration route packet by packet on
// the hypercube (ascending bit fixing) and on the shuffle-exchange (exchange, then
// unshuffle, d rounds): no two packets ever share a processor, every packet arrives,
// and routeHops counts the links each crosses.
func TestLeightonRouteCollisionFree(t *testing.T) {
	for d := 1; d <= 7; d++ {
		p := 1 << d
		for seed := uint64(0); seed < 40; seed++ {
			act, err := RandomRange(p, 0, 1, seed)
			require.NoError(t, err)
			start := int(seed*7919) % p
			var src, dst []int
			k := 0
			for v, a := range act {
				if a == 1 {
					src, dst = append(src, v), append(dst, (start+k)%p)
					k++
				}
			}
			// hypercube
			pos := slices.Clone(src)
			hops := make([]int64, len(src))
			for i := 0; i < d; i++ {
				occupied := map[int]bool{}
				for q := range pos {
					if (pos[q]^dst[q])>>i&1 == 1 {
						pos[q] ^= 1 << i
						hops[q]++
					}
					require.False(t, occupied[pos[q]], "d=%d seed=%d: collision at stage %d", d, seed, i)
					occupied[pos[q]] = true
				}
			}
			for q := range pos {
				require.Equal(t, dst[q], pos[q])
				require.Equal(t, hops[q], routeHops(topoHypercube, d, src[q], dst[q]))
			}
			if d < 2 {
				continue
			}
			// shuffle-exchange: virtual address a lives at Unshuffle^round(a).
			phys := slices.Clone(src)
			hops = make([]int64, len(src))
			for round := 0; round < d; round++ {
				for _, stage := range []string{"exchange", "unshuffle"} {
					occupied := map[int]bool{}
					for q := range phys {
						next := phys[q]
						if stage == "exchange" {
							virt := phys[q]
							for i := 0; i < round; i++ {
								virt = shuffle(virt, d)
							}
							if (virt^dst[q])>>round&1 == 1 {
								next ^= 1
							}
						} else {
							next = unshuffle(next, d)
						}
						if next != phys[q] {
							hops[q]++
						}
						phys[q] = next
						require.False(t, occupied[next], "SE d=%d seed=%d: collision in round %d (%s)", d, seed, round, stage)
						occupied[next] = true
					}
				}
			}
			for q := range phys {
				require.Equal(t, dst[q], phys[q])
				require.Equal(t, hops[q], routeHops(topoShuffleExchange, d, src[q], dst[q]), "SE d=%d %d→%d", d, src[q], dst[q])
			}
		}
	}
}

// TestUnshuffleEmulation checks that the shuffle emulation moves every row to its
// unshuffle neighbour, that moving only the surplus over the necklace minimum is a
// valid flow (every processor ends with its predecessor's row), and its time.
func TestUnshuffleEmulation(t *testing.T) {
	for d := 2; d <= 9; d++ {
		g := mustCube(t, d, true)
		p := 1 << d
		for _, w := range []int{1, 4} {
			groups := make([]Loads, w)
			for j := range groups {
				groups[j], _ = RandomRange(p, 0, 20, uint64(d*10+j))
			}
			b, err := NewMultiBalance(g, groups, nil)
			require.NoError(t, err)
			if w == 1 {
				cb, err := NewDimensionOrderBalance(g, nil)
				require.NoError(t, err)
				s := State{Net: g, Loads: groups[0].Clone(), Workers: 1}
				require.NoError(t, cb.Init(&s))
				checkUnshuffle(t, &cb.core, d)
				continue
			}
			total := make(Loads, p)
			for _, grp := range groups {
				for v, x := range grp {
					total[v] += x
				}
			}
			s := State{Net: g, Loads: total, Workers: 1}
			require.NoError(t, b.Init(&s))
			checkUnshuffle(t, &b.core, d)
		}
	}
}

func checkUnshuffle(t *testing.T, c *cubeCore, d int) {
	t.Helper()
	e := &c.eng
	w, p := c.w, c.p
	before := slices.Clone(e.rows)
	// the surplus flow on edge x → U(x), per group, around x's necklace.
	var moved, tmax int64
	for _, nodes := range necklaceList(e) {
		for _, x := range nodes {
			var f int64
			for j := 0; j < w; j++ {
				mn := before[int(x)*w+j]
				for _, y := range nodes {
					mn = min(mn, before[int(y)*w+j])
				}
				f += before[int(x)*w+j] - mn
			}
			if len(nodes) > 1 {
				moved += f
				tmax = max(tmax, f)
			}
		}
	}
	tm, mv, _ := e.unshuffle()
	require.Equal(t, moved, mv)
	require.Equal(t, tmax+int64(w*(d-1)), tm)
	for x := 0; x < p; x++ {
		u := unshuffle(x, d)
		require.Equal(t, before[x*w:(x+1)*w], e.rows[u*w:(u+1)*w], "d=%d: row of %d did not reach %d", d, x, u)
	}
}

func necklaceList(e *cubeEngine) [][]int32 {
	var out [][]int32
	for q := 0; q+1 < len(e.neckStart); q++ {
		out = append(out, e.neck[e.neckStart[q]:e.neckStart[q+1]])
	}
	return out
}

// TestCubeDetect checks the topology validation.
func TestCubeDetect(t *testing.T) {
	ring4, _ := Ring(4)
	torus22, _ := Torus(2, 2)
	path2, _ := Path(2)
	for _, tc := range []struct {
		name string
		net  Network
		ok   bool
		topo cubeTopology
	}{
		{"Hypercube(0)", mustCube(t, 0, false), true, topoHypercube},
		{"Hypercube(5)", mustCube(t, 5, false), true, topoHypercube},
		{"ShuffleExchange(5)", mustCube(t, 5, true), true, topoShuffleExchange},
		{"ShuffleExchange(2)", mustCube(t, 2, true), true, topoShuffleExchange},
		{"Path(2) is Hypercube(1)", path2, true, topoHypercube},
		{"Torus(2,2) is Hypercube(2)", torus22, true, topoHypercube},
		{"Ring(4) is a relabelled hypercube", ring4, false, 0},
	} {
		shape, err := detectCube("test", tc.net)
		if !tc.ok {
			require.ErrorIs(t, err, ErrBadParameter, tc.name)
			continue
		}
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.topo, shape.topo, tc.name)
		require.Equal(t, bits.TrailingZeros(uint(tc.net.Order())), shape.d)
	}
}

func runQuiet(g *Graph, loads Loads, b Balancer, workers int) (Result, error) {
	return Run(context.Background(), g, loads, b, &RunOptions{Workers: workers, SampleEvery: 1})
}

// TestDimensionOrderWorstLoads checks the construction: dimension order pays exactly
// ⌈m/2⌉ + PairOverhead in each of its first d−1 steps, so its time is within one step of
// DimensionOrderTimeBound, and the input has m = O(n/p).
func TestDimensionOrderWorstLoads(t *testing.T) {
	for d := 1; d <= 12; d++ {
		g := mustCube(t, d, false)
		for _, m := range []int64{0, 1, 2, 7, 64} {
			loads, err := DimensionOrderWorstLoads(d, m)
			require.NoError(t, err)
			require.LessOrEqual(t, loads.Max(), m)
			if d >= 3 && m > 0 {
				require.GreaterOrEqual(t, 8*loads.Total(), m*int64(1<<d)*3, "d=%d m=%d: n/p too small", d, m)
			}
			b, err := NewDimensionOrderBalance(g, nil)
			require.NoError(t, err)
			r, err := Run(context.Background(), g, loads, b, &RunOptions{SampleEvery: 1})
			require.NoError(t, err)
			for j := 0; j < d-1; j++ {
				step := r.Trace[j+1].Time - r.Trace[j].Time
				require.Equal(t, (m+1)/2+PairOverhead, step, "d=%d m=%d step %d", d, m, j)
			}
			ub, err := DimensionOrderTimeBound(g, m)
			require.NoError(t, err)
			require.LessOrEqual(t, ub-r.Time, (m+1)/2+PairOverhead)
		}
	}
}

// TestRecursionNotSlowerThanDimensionOrder compares the two error-log p algorithms on
// the adversarial inputs (Lemma 2.4's balls, and DimensionOrderWorstLoads), for d ≤ 12:
// the recursion's balancing time never exceeds dimension order's time, so its total is
// at most dimension order's plus the selection all-reduces (at most 2d² in all); on the
// dimension-order worst case with d ≥ 8 and m ≥ 4d its balancing part is at least twice
// as fast (the gap grows like d/2: dimension order pays m/2 per dimension, the
// recursion about m in all).
func TestRecursionNotSlowerThanDimensionOrder(t *testing.T) {
	for d := 1; d <= 12; d++ {
		g := mustCube(t, d, false)
		p := int64(1) << d
		for _, m := range []int64{1, 3, int64(d), 16, 100, 1000} {
			inputs := map[string]func() (Loads, error){
				"ball/2":  func() (Loads, error) { return HammingBallLoads(d, m*p/2, m, int(p-1)) },
				"ball/16": func() (Loads, error) { return HammingBallLoads(d, max(1, m*p/16), m, 0) },
				"worst":   func() (Loads, error) { return DimensionOrderWorstLoads(d, m) },
			}
			for name, mk := range inputs {
				loads, err := mk()
				require.NoError(t, err)
				dim, err := NewDimensionOrderBalance(g, nil)
				require.NoError(t, err)
				rec, err := NewHypercubeBalance(g, nil)
				require.NoError(t, err)
				rd, err := Run(context.Background(), g, loads, dim, nil)
				require.NoError(t, err)
				rr, err := Run(context.Background(), g, loads, rec, nil)
				require.NoError(t, err)
				sel := rec.core.times.Select
				require.LessOrEqual(t, sel, int64(2*d*d))
				require.LessOrEqual(t, rec.core.times.Balance, rd.Time, "d=%d m=%d %s", d, m, name)
				require.LessOrEqual(t, rr.Time, rd.Time+sel)
				if name == "worst" && m >= int64(4*d) && d >= 8 {
					require.LessOrEqual(t, 2*rec.core.times.Balance, rd.Time, "d=%d m=%d", d, m)
				}
			}
		}
	}
}

// mustMinimumError is MinimumError for arguments a test knows to be valid.
func mustMinimumError(t testing.TB, n int64, p int) int64 {
	t.Helper()
	v, err := MinimumError(n, p)
	require.NoError(t, err)
	return v
}
