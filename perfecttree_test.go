package tokendist_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/tokendisttest"
	"go.uber.org/goleak"
)

// TOKENDIST_LONG=1 enables the larger sweeps of this file (all labelled trees on 5
// nodes, more random trees, the n = 10⁴ targets).
var ptLong = tokendist.LongTests()

func ptMust[T any](x T, err error) T {
	if err != nil {
		panic(err)
	}
	return x
}

// ptPolicies returns one instance of every delay policy.
func ptPolicies() []tokendist.Delays {
	return []tokendist.Delays{
		ptMust(tokendist.NewUnitDelays()),
		ptMust(tokendist.NewRandomDelays(5)),
		ptMust(tokendist.NewSerialDelays()),
		ptMust(tokendist.NewReverseDelays(7)),
		ptMust(tokendist.NewSlowLinkDelays(6)),
	}
}

// ptLabelledTrees returns every labelled tree on n nodes (Prüfer sequences), n ≥ 1.
func ptLabelledTrees(n int) []*tokendist.Graph {
	if n <= 2 {
		return []*tokendist.Graph{ptMust(tokendist.Path(n))}
	}
	var out []*tokendist.Graph
	code := make([]int, n-2)
	for {
		deg := make([]int, n)
		for i := range deg {
			deg[i] = 1
		}
		for _, x := range code {
			deg[x]++
		}
		var edges [][2]int
		for _, x := range code {
			for j := 0; j < n; j++ {
				if deg[j] == 1 {
					edges = append(edges, [2]int{j, x})
					deg[j]--
					deg[x]--
					break
				}
			}
		}
		var last []int
		for j := 0; j < n; j++ {
			if deg[j] == 1 {
				last = append(last, j)
			}
		}
		edges = append(edges, [2]int{last[0], last[1]})
		out = append(out, ptMust(tokendist.NewGraph(n, edges)))
		i := 0
		for ; i < len(code) && code[i] == n-1; i++ {
			code[i] = 0
		}
		if i == len(code) {
			return out
		}
		code[i]++
	}
}

// ptCaterpillar is a path of spine nodes with legs leaves on each.
func ptCaterpillar(spine, legs int) *tokendist.Graph {
	var e [][2]int
	for i := 1; i < spine; i++ {
		e = append(e, [2]int{i - 1, i})
	}
	k := spine
	for i := 0; i < spine; i++ {
		for j := 0; j < legs; j++ {
			e = append(e, [2]int{i, k})
			k++
		}
	}
	return ptMust(tokendist.NewGraph(k, e))
}

type ptTree struct {
	name string
	g    *tokendist.Graph
}

// ptFamilies returns the sweep's trees: random trees up to 200 nodes, stars, paths,
// caterpillars and complete k-ary trees.
func ptFamilies(randomCount int) []ptTree {
	var out []ptTree
	for s := 0; s < randomCount; s++ {
		n := 2 + s*37%199
		out = append(out, ptTree{fmt.Sprintf("RandomTree(%d,%d)", n, s), ptMust(tokendist.RandomTree(n, uint64(s)))})
	}
	for _, n := range []int{1, 2, 3, 9, 60, 200} {
		out = append(out, ptTree{fmt.Sprintf("Star(%d)", n), ptMust(tokendist.Star(n))})
		out = append(out, ptTree{fmt.Sprintf("Path(%d)", n), ptMust(tokendist.Path(n))})
	}
	out = append(out, ptTree{"Caterpillar(10,3)", ptCaterpillar(10, 3)}, ptTree{"Caterpillar(25,6)", ptCaterpillar(25, 6)})
	for _, kh := range [][2]int{{2, 6}, {3, 4}, {4, 3}, {7, 2}} {
		out = append(out, ptTree{fmt.Sprintf("KaryTree(KaryShape{Height: %d, Arity: %d})", kh[0], kh[1]), ptMust(tokendist.KaryTree(tokendist.KaryShape{Height: kh[1], Arity: kh[0]}))})
	}
	return out
}

// ptLoadSets returns the sweep's loads for n nodes: random, all on one node, all zero,
// T < N, N divides T.
func ptLoadSets(n int, seed uint64) map[string]tokendist.Loads {
	return map[string]tokendist.Loads{
		"random":   ptMust(tokendist.RandomRange(n, 0, 30, seed)),
		"point":    ptMust(tokendist.PointMass(n, int64(3*n+int(seed)%n), int(seed)%n)),
		"zero":     make(tokendist.Loads, n),
		"T<N":      ptMust(tokendist.UniformRandom(n, int64(int(seed*7)%n), seed)),
		"N|T":      ptMust(tokendist.UniformRandom(n, int64(4*n), seed)),
		"T=N-1@0":  ptMust(tokendist.PointMass(n, int64(n-1), 0)),
		"T=2N+1@0": ptMust(tokendist.PointMass(n, int64(2*n+1), n-1)),
	}
}

// ptShape is what the paper's analysis fixes about a run, given the elected root: the
// phase-2 moves are Σ over edges of |T_S − Avg·|S|| (S the side away from the root, all
// tokens of an edge going one way), the phase-3 moves are Σ_v (final_v − Avg)·depth_v,
// and the excess over the optimum is at most Σ_v (final_v − Avg)·depth_v + the same for
// an optimal placement ≤ 2·height·(T mod N).
type ptShape struct {
	phase2, phase3, height int64
}

func ptShapeOf(g *tokendist.Graph, initial, final tokendist.Loads, root int, avg int64) ptShape {
	_, parent, err := g.BFSTree(root)
	if err != nil {
		panic(err)
	}
	depth := ptMust(g.BFS(root))
	order := make([]int, g.Order())
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return int(depth[b] - depth[a]) })
	sum := make([]int64, g.Order())
	size := make([]int64, g.Order())
	var s ptShape
	for _, v := range order {
		sum[v] += initial[v]
		size[v]++
		if p := parent[v]; p >= 0 {
			d := sum[v] - avg*size[v]
			if d < 0 {
				d = -d
			}
			s.phase2 += d
			sum[p] += sum[v]
			size[p] += size[v]
		}
		s.phase3 += (final[v] - avg) * int64(depth[v])
		s.height = max(s.height, int64(depth[v]))
	}
	return s
}

// ptVerify checks one completed run against the paper's theorems and the exact shape
// of its message and move counts.
func ptVerify(g *tokendist.Graph, initial tokendist.Loads, r ptResult) error {
	if err := r.CheckTheorems(g); err != nil {
		return err
	}
	if got := r.Loads.Total(); got != initial.Total() {
		return fmt.Errorf("total %d, want %d", got, initial.Total())
	}
	n := int64(g.Order())
	if r.Messages[0] != 2*(n-1) {
		return fmt.Errorf("phase 1 sent %d messages, want 2(N-1) = %d", r.Messages[0], 2*(n-1))
	}
	if r.Messages[1] != r.Moves[1] || r.Messages[2] != r.Moves[2]+n-1 || r.Moves[0] != 0 {
		return fmt.Errorf("messages %v do not match moves %v (+ N-1 Finished)", r.Messages, r.Moves)
	}
	s := ptShapeOf(g, initial, r.Loads, r.Root, r.Avg)
	if r.Moves[1] != s.phase2 || r.Moves[2] != s.phase3 {
		return fmt.Errorf("moves %v, want phase 2 = %d and phase 3 = %d", r.Moves, s.phase2, s.phase3)
	}
	if r.TotalMoves() < r.OptimalMoves {
		return fmt.Errorf("moves %d below the optimum %d", r.TotalMoves(), r.OptimalMoves)
	}
	if r.Extra == 0 && r.ExcessMoves != 0 {
		return fmt.Errorf("N divides T but moves %d exceed the optimum %d", r.TotalMoves(), r.OptimalMoves)
	}
	if r.ExcessMoves > 2*s.height*r.Extra {
		return fmt.Errorf("excess %d > 2·height·(T mod N) = %d", r.ExcessMoves, 2*s.height*r.Extra)
	}
	return nil
}

func ptRun(t testing.TB, g *tokendist.Graph, l tokendist.Loads, o *tokendist.PerfectTreeOptions, seed uint64, what string) ptResult {
	t.Helper()
	r, err := runPT(context.Background(), g, l, o, seed)
	if err == nil {
		err = ptVerify(g, l, r)
	}
	require.NoError(t, err, "%s on %v from %v (%+v): %v\n%v", what, g, l, o, err, r)
	return r
}

func TestPerfectTreeContract(t *testing.T) {
	for _, p := range []tokendist.Delays{ptMust(tokendist.NewUnitDelays()), ptMust(tokendist.NewRandomDelays(4))} {
		tokendisttest.Check(t, tokendisttest.Case{
			Name: "PerfectTree-" + fmt.Sprint(p),
			New: func(g *tokendist.Graph) (tokendist.Balancer, error) {
				return tokendist.NewPerfectTree(g, &tokendist.PerfectTreeOptions{Delays: p, ShufflePorts: true})
			},
		})
	}
}

func TestPerfectTreeBadInput(t *testing.T) {
	tree := ptMust(tokendist.Path(4))
	ring := ptMust(tokendist.Ring(5))
	forest := ptMust(tokendist.NewGraph(4, [][2]int{{0, 1}, {2, 3}}))
	good := tokendist.Loads{1, 2, 3, 4}
	neg := tokendist.Loads{1, -2, 3, 4}
	ctx := context.Background()
	runSim := func(g *tokendist.Graph, l tokendist.Loads) error {
		_, err := runPT(ctx, g, l, nil, 0)
		return err
	}
	runConc := func(g *tokendist.Graph, l tokendist.Loads) error {
		_, err := runPTGoroutines(ctx, g, l, nil, 0)
		return err
	}
	opt := func(g *tokendist.Graph, l tokendist.Loads) error {
		_, err := tokendist.OptimalPerfectMoves(g, l)
		return err
	}
	viaRun := func(g *tokendist.Graph, l tokendist.Loads) error {
		b, err := tokendist.NewPerfectTree(tree, nil)
		if err != nil {
			return err
		}
		_, err = tokendist.Run(ctx, g, l, b, nil)
		return err
	}
	huge := tokendist.Loads{math.MaxInt64 - 2, 0, 0, 0}
	cases := []struct {
		name string
		fn   func(*tokendist.Graph, tokendist.Loads) error
		g    *tokendist.Graph
		l    tokendist.Loads
		want error
	}{
		{"sim ring", runSim, ring, make(tokendist.Loads, 5), tokendist.ErrNotTree},
		{"sim forest", runSim, forest, good, tokendist.ErrNotTree},
		{"sim negative", runSim, tree, neg, tokendist.ErrBadLoads},
		{"sim short", runSim, tree, good[:3], tokendist.ErrBadLoads},
		{"sim nil graph", runSim, nil, good, tokendist.ErrNilNetwork},
		{"sim near overflow", runSim, tree, huge, tokendist.ErrBadLoads},
		{"conc ring", runConc, ring, make(tokendist.Loads, 5), tokendist.ErrNotTree},
		{"conc forest", runConc, forest, good, tokendist.ErrNotTree},
		{"conc negative", runConc, tree, neg, tokendist.ErrBadLoads},
		{"conc long", runConc, tree, append(good.Clone(), 1), tokendist.ErrBadLoads},
		{"conc nil graph", runConc, nil, good, tokendist.ErrNilNetwork},
		{"conc near overflow", runConc, tree, huge, tokendist.ErrBadLoads},
		{"optimum ring", opt, ring, make(tokendist.Loads, 5), tokendist.ErrNotTree},
		{"optimum negative", opt, tree, neg, tokendist.ErrBadLoads},
		{"optimum short", opt, tree, good[:2], tokendist.ErrBadLoads},
		{"Run on a ring", viaRun, ring, make(tokendist.Loads, 5), tokendist.ErrNotTree},
		{"Run negative", viaRun, tree, neg, tokendist.ErrBadLoads},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.fn(tc.g, tc.l)
			require.ErrorIs(t, err, tc.want)
			require.Regexp(t, "^tokendist: ", err.Error())
		})
	}
	for name, f := range map[string]func() error{
		"NewPerfectTree(ring)": func() error { _, err := tokendist.NewPerfectTree(ring, nil); return err },
		"NewPerfectTree(nil)":  func() error { _, err := tokendist.NewPerfectTree(nil, nil); return err },
		"NewRandomDelays(0)":   func() error { _, err := tokendist.NewRandomDelays(0); return err },
		"NewReverseDelays(-1)": func() error { _, err := tokendist.NewReverseDelays(-1); return err },
		"NewSlowLinkDelays(0)": func() error { _, err := tokendist.NewSlowLinkDelays(0); return err },
		"CheckTheorems(mismatch)": func() error {
			return tokendist.PerfectTreeReport{N: 3}.CheckTheorems(tree)
		},
	} {
		err := f()
		require.Error(t, err, name)
		require.Regexp(t, "^tokendist: ", err.Error(), name)
		require.True(t, errors.Is(err, tokendist.ErrNotTree) || errors.Is(err, tokendist.ErrBadParameter) || errors.Is(err, tokendist.ErrNilNetwork), "%s: %v", name, err)
	}
}

// ptBruteOptimum places the T mod N larger shares on every possible set of nodes and
// returns the least Σ over edges of |flow|.
func ptBruteOptimum(g *tokendist.Graph, l tokendist.Loads) int64 {
	n := g.Order()
	total := l.Total()
	avg, extra := total/int64(n), int(total%int64(n))
	best := int64(math.MaxInt64)
	target := make(tokendist.Loads, n)
	_, parent, _ := g.BFSTree(0)
	depth := ptMust(g.BFS(0))
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return int(depth[b] - depth[a]) })
	for mask := 0; mask < 1<<n; mask++ {
		if ptPopcount(mask) != extra {
			continue
		}
		for v := range target {
			target[v] = avg + int64(mask>>v&1)
		}
		diff := make([]int64, n)
		var cost int64
		for _, v := range order {
			diff[v] += l[v] - target[v]
			if p := parent[v]; p >= 0 {
				cost += max(diff[v], -diff[v])
				diff[p] += diff[v]
			}
		}
		best = min(best, cost)
	}
	return best
}

func ptPopcount(x int) int {
	c := 0
	for ; x > 0; x &= x - 1 {
		c++
	}
	return c
}

func TestIsPerfectDistribution(t *testing.T) {
	for _, tc := range []struct {
		l    tokendist.Loads
		want bool
	}{
		{tokendist.Loads{}, false},
		{tokendist.Loads{0}, true},
		{tokendist.Loads{5}, true},
		{tokendist.Loads{2, 2, 3}, true},
		{tokendist.Loads{3, 2, 3}, true},
		{tokendist.Loads{1, 3, 3}, false},
		{tokendist.Loads{4, 2, 2}, false},
		{tokendist.Loads{0, 0, 1, 1}, true},
	} {
		require.Equal(t, tc.want, tokendist.IsPerfectDistribution(tc.l), "%v", tc.l)
	}
}

// ptRecorder wraps a policy and records the delivery time of every message.
type ptRecorder struct {
	p        tokendist.Delays
	arrivals []int64 // by message number
	delays   []int64
	links    map[[2]int][]int64
}

func (r *ptRecorder) Reset(n int, seed uint64) {
	r.p.Reset(n, seed)
	r.arrivals, r.delays, r.links = nil, nil, map[[2]int][]int64{}
}

func (r *ptRecorder) Delay(now int64, from, to int, seq int64) int64 {
	d := r.p.Delay(now, from, to, seq)
	if seq != int64(len(r.delays)) {
		panic(fmt.Sprintf("message number %d after %d messages", seq, len(r.delays)))
	}
	r.delays = append(r.delays, d)
	r.arrivals = append(r.arrivals, now+d)
	r.links[[2]int{from, to}] = append(r.links[[2]int{from, to}], d)
	return d
}

// TestPerfectTreeTargets runs the size targets (TOKENDIST_LONG=1): n = 10⁴,
// T = 10⁵ in the simulated runtime within 5 s, and n = 10⁴ goroutines within 10 s.
func TestPerfectTreeTargets(t *testing.T) {
	tokendist.LongTest(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	g := ptMust(tokendist.RandomTree(10_000, 1))
	for name, l := range map[string]tokendist.Loads{
		"uniform": ptMust(tokendist.UniformRandom(10_000, 100_000, 2)),
		"point":   ptMust(tokendist.PointMass(10_000, 100_000, 17)),
	} {
		start := time.Now()
		r, err := runPT(context.Background(), g, l, nil, 0)
		require.NoError(t, err)
		require.NoError(t, ptVerify(g, l, r))
		sim := time.Since(start)
		start = time.Now()
		c, err := runPTGoroutines(context.Background(), g, l, nil, 0)
		require.NoError(t, err)
		require.NoError(t, ptVerify(g, l, c))
		conc := time.Since(start)
		t.Logf("%s: simulated %v (time %d, moves %d), concurrent %v", name, sim, r.Time, r.TotalMoves(), conc)
		require.Less(t, sim, 5*time.Second)
		require.Less(t, conc, 10*time.Second)
	}
}

// ptResult is what the perfect-tree tests check after a run: the protocol's report, the
// run's status and its final loads.
type ptResult struct {
	tokendist.PerfectTreeReport
	Status tokendist.Status
	Loads  tokendist.Loads
}

// runPT runs the perfect-tree protocol on g from l through Run until every node is
// Finished (no step budget), with the run's seed, and returns its outcome with Run's
// error.
func runPT(ctx context.Context, g *tokendist.Graph, l tokendist.Loads, o *tokendist.PerfectTreeOptions, seed uint64) (ptResult, error) {
	b, err := tokendist.NewPerfectTree(g, o)
	if err != nil {
		return ptResult{Status: tokendist.StatusFailed}, err
	}
	res, err := tokendist.Run(ctx, g, l, b, &tokendist.RunOptions{MaxSteps: math.MaxInt64, NoStability: true, Seed: seed})
	rep, _ := res.Report.(tokendist.PerfectTreeReport)
	return ptResult{PerfectTreeReport: rep, Status: res.Status, Loads: res.Loads}, err
}

// runPTGoroutines is runPT with PerfectTreeOptions.Goroutines set.
func runPTGoroutines(ctx context.Context, g *tokendist.Graph, l tokendist.Loads, o *tokendist.PerfectTreeOptions, seed uint64) (ptResult, error) {
	var opts tokendist.PerfectTreeOptions
	if o != nil {
		opts = *o
	}
	opts.Goroutines = true
	return runPT(ctx, g, l, &opts, seed)
}
