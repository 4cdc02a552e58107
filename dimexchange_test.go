package tokendist_test

import (
	"context"
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/tokendisttest"
)

// dxLong enables the larger sweeps (TOKENDIST_LONG=1).
var dxLong = tokendist.LongTests()

// dxAllTrees calls f on every labelled tree on n nodes, decoding every Prüfer sequence.
func dxAllTrees(n int, f func(g *tokendist.Graph)) {
	if n <= 2 {
		g, err := tokendist.Path(n)
		if err != nil {
			panic(err)
		}
		f(g)
		return
	}
	seq := make([]int, n-2)
	deg := make([]int, n)
	for {
		for i := range deg {
			deg[i] = 1
		}
		for _, x := range seq {
			deg[x]++
		}
		edges := make([][2]int, 0, n-1)
		for _, x := range seq {
			for leaf := 0; leaf < n; leaf++ {
				if deg[leaf] == 1 {
					edges = append(edges, [2]int{leaf, x})
					deg[leaf]--
					deg[x]--
					break
				}
			}
		}
		var last []int
		for v := 0; v < n; v++ {
			if deg[v] == 1 {
				last = append(last, v)
			}
		}
		edges = append(edges, [2]int{last[0], last[1]})
		g, err := tokendist.NewGraph(n, edges)
		if err != nil {
			panic(err)
		}
		f(g)
		i := 0
		for i < len(seq) && seq[i] == n-1 {
			seq[i] = 0
			i++
		}
		if i == len(seq) {
			return
		}
		seq[i]++
	}
}

// dxCOrdering follows the observer that starts at v at a time ≡ 0 (mod χ) for n rounds
// (Houle et al., section 4.1) and returns the nodes it stands on after each round.
func dxCOrdering(ec *tokendist.EdgeColoring, v int) []int {
	g := ec.Graph()
	order := make([]int, 0, g.Order())
	x := v
	for r := 0; r < g.Order(); r++ {
		order = append(order, x)
		for c := 0; c < ec.Colors(); c++ {
			for _, y := range g.Neighbors(x) {
				if ec.Color(x, int(y)) == c {
					x = int(y)
					break
				}
			}
		}
	}
	return order
}

// dxReference is a direct transcription of the paper's per-node pseudocode (sections 1.1,
// 2 and 5), written for clarity, not speed: every node looks for its edge of colour
// t mod χ and applies the protocol from its own side. The optimised stepper must agree
// with it on every step.
type dxReference struct {
	ec       *tokendist.EdgeColoring
	protocol string // "T1", "T2" or "D1"
	nodes    int    // n known to the nodes (D1)
	localMax []int64
}

func (r *dxReference) step(t int, load []int64) {
	g := r.ec.Graph()
	chi := r.ec.Colors()
	if chi == 0 {
		return
	}
	phase := chi * r.nodes
	if r.protocol == "D1" && t%(2*phase) == 0 {
		r.localMax = append(r.localMax[:0], load...)
	}
	plus := r.protocol == "D1" && t%(2*phase) >= phase
	next := append([]int64(nil), load...)
	for v := 0; v < g.Order(); v++ {
		for _, w := range g.Neighbors(v) {
			if r.ec.Color(v, int(w)) != t%chi {
				continue
			}
			lv, lw := load[v], load[w] // exchanged load values
			send := false
			switch {
			case r.protocol == "T2":
				send = lv >= lw+2
			case plus:
				send = lv >= lw+2 || lv == lw+1 && lv != r.localMax[v]
			default: // THRESHOLD-1, also the A-phase of DISCREPANCY-1
				send = lv >= lw+1
			}
			if send {
				next[v]--
				next[w]++
			}
		}
	}
	copy(load, next)
	if r.protocol == "D1" && !plus {
		for v, x := range load {
			r.localMax[v] = max(r.localMax[v], x)
		}
	}
}

// TestStepperMatchesReference compares every step of the three protocols with the
// reference transcription on every labelled tree with up to 6 nodes and on larger
// random trees, with colour orders permuted.
func TestStepperMatchesReference(t *testing.T) {
	check := func(g *tokendist.Graph, ec *tokendist.EdgeColoring, seed uint64) {
		loads, err := tokendist.RandomRange(g.Order(), 0, 9, seed)
		require.NoError(t, err)
		for _, p := range []string{"T1", "T2", "D1"} {
			var b tokendist.Balancer
			switch p {
			case "T1":
				b, err = tokendist.NewThreshold1(g, ec)
			case "T2":
				b, err = tokendist.NewThreshold2(g, ec)
			case "D1":
				b, err = tokendist.NewDiscrepancy1(g, ec, &tokendist.Discrepancy1Options{Nodes: g.Order() + int(seed%2)})
			}
			require.NoError(t, err)
			ref := &dxReference{ec: ec, protocol: p, nodes: g.Order() + int(seed%2)}
			want := loads.Clone()
			rec := tokendist.RecorderFunc(func(s *tokendist.State, _ tokendist.Sample) error {
				if s.Steps > 0 {
					ref.step(int(s.Steps-1), want)
				}
				if !dxEqual(want, s.Loads) {
					return errors.New("stepper and reference differ")
				}
				return nil
			})
			steps := int64(4 * max(1, ec.Colors()) * g.Order())
			_, err := tokendist.Run(context.Background(), g, loads, b, &tokendist.RunOptions{MaxSteps: steps, NoStability: true, SampleEvery: 1, Recorder: rec})
			require.NoError(t, err, "%s on %v from %v", p, g.EdgeList(), loads)
		}
	}
	for n := 1; n <= 6; n++ {
		dxAllTrees(n, func(g *tokendist.Graph) {
			ec, err := tokendist.BipartiteColoring(g)
			require.NoError(t, err)
			check(g, ec, uint64(n))
		})
	}
	for seed := uint64(0); seed < 40; seed++ {
		g, err := tokendist.RandomTree(5+int(seed), seed)
		require.NoError(t, err)
		ec := dxPermutedColoring(t, g, seed)
		check(g, ec, seed)
	}
}

// dxPermutedColoring returns g's König colouring with its colours renamed by a rotation
// and a reversal chosen by seed, so that step orders other than the default are tested.
func dxPermutedColoring(t testing.TB, g *tokendist.Graph, seed uint64) *tokendist.EdgeColoring {
	base, err := tokendist.BipartiteColoring(g)
	require.NoError(t, err)
	chi := base.Colors()
	ec, err := tokendist.NewEdgeColoring(g, func(u, v int) int {
		c := (base.Color(u, v) + int(seed)) % chi
		if seed%2 == 1 {
			c = chi - 1 - c
		}
		return c
	})
	require.NoError(t, err)
	return ec
}

func dxEqual(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestContractThreshold2(t *testing.T) {
	tokendisttest.Check(t, tokendisttest.Case{Name: "threshold2", New: func(g *tokendist.Graph) (tokendist.Balancer, error) {
		return tokendist.NewThreshold2(g, nil)
	}})
}

func TestContractThreshold1(t *testing.T) {
	tokendisttest.Check(t, tokendisttest.Case{Name: "threshold1", New: func(g *tokendist.Graph) (tokendist.Balancer, error) {
		return tokendist.NewThreshold1(g, nil)
	}})
}

func TestContractDiscrepancy1(t *testing.T) {
	tokendisttest.Check(t, tokendisttest.Case{Name: "discrepancy1", New: func(g *tokendist.Graph) (tokendist.Balancer, error) {
		return tokendist.NewDiscrepancy1(g, nil, nil)
	}})
}

func TestContractCustomProtocol(t *testing.T) {
	tokendisttest.Check(t, tokendisttest.Case{Name: "halving", New: func(g *tokendist.Graph) (tokendist.Balancer, error) {
		return tokendist.NewDimensionExchange(g, nil, dxHalving{})
	}})
}

// dxHalving is a user protocol: the heavier end sends half the difference (rounded down),
// the integer version of Cybenko's averaging.
type dxHalving struct{}

func (dxHalving) Send(_ int64, _, _ int, lu, lv int64) int64 { return (lu - lv) / 2 }

// TestParallelSplitDeterministic runs the protocols on networks large enough for the
// matchings to be split across cores and checks that the result does not depend on the
// number of workers.
func TestParallelSplitDeterministic(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs two cores")
	}
	tree, err := tokendist.KaryTree(tokendist.KaryShape{Height: 16, Arity: 2}) // 131071 nodes: matchings of ~43000 edges
	require.NoError(t, err)
	treeColoring, err := tokendist.BipartiteColoring(tree)
	require.NoError(t, err)
	cubeColoring, err := tokendist.HypercubeColoring(16) // 32768 edges per dimension
	require.NoError(t, err)
	cube := cubeColoring.Graph()
	type mk func(g *tokendist.Graph) (tokendist.Balancer, error)
	for _, tc := range []struct {
		name string
		g    *tokendist.Graph
		new  mk
	}{
		{"T1", tree, func(g *tokendist.Graph) (tokendist.Balancer, error) { return tokendist.NewThreshold1(g, treeColoring) }},
		{"T2", cube, func(g *tokendist.Graph) (tokendist.Balancer, error) { return tokendist.NewThreshold2(g, cubeColoring) }},
		{"D1", tree, func(g *tokendist.Graph) (tokendist.Balancer, error) {
			return tokendist.NewDiscrepancy1(g, treeColoring, nil)
		}},
		{"custom", cube, func(g *tokendist.Graph) (tokendist.Balancer, error) {
			return tokendist.NewDimensionExchange(g, cubeColoring, dxHalving{})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			loads, err := tokendist.RandomRange(tc.g.Order(), 0, 50, 3)
			require.NoError(t, err)
			var results []tokendist.Result
			for _, workers := range []int{1, 2} {
				b, err := tc.new(tc.g)
				require.NoError(t, err)
				r, err := tokendist.Run(context.Background(), tc.g, loads, b, &tokendist.RunOptions{MaxSteps: 40, Workers: workers})
				require.NoError(t, err)
				results = append(results, r)
			}
			require.Equal(t, results[0], results[1])
			require.Positive(t, results[0].Moved)
		})
	}
}

// TestStepDoesNotAllocate checks Step on the sequential and the split path.
func TestStepDoesNotAllocate(t *testing.T) {
	small, err := tokendist.RandomTree(200, 1)
	require.NoError(t, err)
	big, err := tokendist.KaryTree(tokendist.KaryShape{Height: 16, Arity: 2})
	require.NoError(t, err)
	for _, g := range []*tokendist.Graph{small, big} {
		for _, name := range []string{"T1", "T2", "D1", "custom"} {
			var b interface {
				tokendist.Balancer
				tokendist.Initializer
			}
			switch name {
			case "T1":
				b, err = tokendist.NewThreshold1(g, nil)
			case "T2":
				b, err = tokendist.NewThreshold2(g, nil)
			case "D1":
				b, err = tokendist.NewDiscrepancy1(g, nil, nil)
			case "custom":
				b, err = tokendist.NewDimensionExchange(g, nil, dxHalving{})
			}
			require.NoError(t, err)
			loads, err := tokendist.RandomRange(g.Order(), 0, 20, 1)
			require.NoError(t, err)
			s := &tokendist.State{Net: g, Loads: loads, Workers: 2}
			require.NoError(t, b.Init(s))
			allocs := testing.AllocsPerRun(50, func() {
				require.NoError(t, b.Step(s))
				s.Steps++
			})
			require.Zero(t, allocs, "%s on %v", name, g)
		}
	}
}

func TestCustomProtocol(t *testing.T) {
	cube, err := tokendist.Hypercube(6)
	require.NoError(t, err)
	ec, err := tokendist.HypercubeColoring(6)
	require.NoError(t, err)
	b, err := tokendist.NewDimensionExchange(cube, ec, dxHalving{})
	require.NoError(t, err)
	require.Equal(t, "DIMENSION-EXCHANGE(tokendist_test.dxHalving)", b.String())
	loads, err := tokendist.RandomRange(cube.Order(), 0, 1000, 1)
	require.NoError(t, err)
	r, err := tokendist.Run(context.Background(), cube, loads, b, nil)
	require.NoError(t, err)
	require.Equal(t, tokendist.StatusStable, r.Status)
	// Integer halving on the hypercube by dimension: discrepancy ≤ d after one round
	// (Plaxton; Hosseini et al.), and the run is stable from the next round on.
	require.LessOrEqual(t, r.Discrepancy(), int64(6))
	// A protocol that overdraws a node is an error naming the edge.
	greedy := tokendist.ProtocolFunc(func(_ int64, _, _ int, lu, lv int64) int64 { return lu + 1 })
	b, err = tokendist.NewDimensionExchange(cube, ec, greedy)
	require.NoError(t, err)
	_, err = tokendist.Run(context.Background(), cube, loads, b, nil)
	require.ErrorIs(t, err, tokendist.ErrBadParameter)
	require.Contains(t, err.Error(), "over edge")
}

func TestDimensionExchangeBadInput(t *testing.T) {
	ring, _ := tokendist.Ring(6)
	path, _ := tokendist.Path(6)
	disconnected, _ := tokendist.NewGraph(4, [][2]int{{0, 1}, {2, 3}})
	pathColoring := dxMustColor(t, path)
	ringColoring := dxMustColor(t, ring)
	improper := &tokendist.EdgeColoring{} // the zero value colours nothing
	treeBuilder := func(tree *tokendist.Graph) (tokendist.Balancer, error) { return tokendist.NewThreshold1(tree, nil) }
	for _, tc := range []struct {
		name string
		err  error
		want error
		text string
	}{
		{"THRESHOLD-1 on a ring", dxErr(tokendist.NewThreshold1(ring, nil)), tokendist.ErrNotTree, "6 nodes, 6 edges"},
		{"DISCREPANCY-1 on a ring", dxErr(tokendist.NewDiscrepancy1(ring, nil, nil)), tokendist.ErrNotTree, "6 nodes"},
		{"THRESHOLD-1 on a forest", dxErr(tokendist.NewThreshold1(disconnected, nil)), tokendist.ErrNotTree, "connected=false"},
		{"colouring of another network", dxErr(tokendist.NewThreshold2(path, ringColoring)), tokendist.ErrInvalidColoring, "6 edges"},
		{"colouring of a path on a tree", dxErr(tokendist.NewThreshold1(dxMustGraph(tokendist.Star(6)), pathColoring)), tokendist.ErrInvalidColoring, "node 0"},
		{"zero colouring", dxErr(tokendist.NewThreshold2(path, improper)), tokendist.ErrInvalidColoring, "nil"},
		{"DISCREPANCY-1 with n too small", dxErr(tokendist.NewDiscrepancy1(path, nil, &tokendist.Discrepancy1Options{Nodes: 3})), tokendist.ErrBadParameter, "n = 3"},
		{"DISCREPANCY-1 cycles overflow", dxErr(tokendist.NewDiscrepancy1(path, nil, &tokendist.Discrepancy1Options{Nodes: math.MaxInt64 / 2})), tokendist.ErrBadParameter, "overflow"},
		{"nil protocol", dxErr(tokendist.NewDimensionExchange(path, nil, nil)), tokendist.ErrBadParameter, "Protocol"},
		{"nil graph", dxErr(tokendist.NewThreshold2(nil, nil)), tokendist.ErrNilNetwork, ""},
		{"spanning tree of a disconnected graph", dxErr(tokendist.NewSpanningTree(disconnected, 0, treeBuilder)), tokendist.ErrNotConnected, "4 nodes"},
		{"spanning tree root out of range", dxErr(tokendist.NewSpanningTree(ring, 9, treeBuilder)), tokendist.ErrBadParameter, "root 9"},
		{"spanning tree nil builder", dxErr(tokendist.NewSpanningTree(ring, 0, nil)), tokendist.ErrBadParameter, "constructor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Error(t, tc.err)
			require.True(t, errors.Is(tc.err, tc.want), "%v is not %v", tc.err, tc.want)
			require.True(t, strings.HasPrefix(tc.err.Error(), "tokendist: "), tc.err.Error())
			require.Contains(t, tc.err.Error(), tc.text)
		})
	}
	// A balancer built for one network refuses to run on another.
	b, err := tokendist.NewThreshold2(path, nil)
	require.NoError(t, err)
	_, err = tokendist.Run(context.Background(), ring, make(tokendist.Loads, 6), b, nil)
	require.ErrorIs(t, err, tokendist.ErrInvalidColoring)
	st, err := tokendist.NewSpanningTree(ring, 0, treeBuilder)
	require.NoError(t, err)
	_, err = tokendist.Run(context.Background(), path, make(tokendist.Loads, 6), st, nil)
	require.ErrorIs(t, err, tokendist.ErrBadParameter)
}

// TestProtocolSendLimits: a Protocol may send across edge (u, v), u < v, at most u's load
// (a positive count) or at most v's load (a negative one, from the upper end). Sending a
// node's whole load is allowed; one token more, from either end, is an error naming the
// protocol, the count, the edge and the loads, and the edge's loads stay unchanged.
func TestProtocolSendLimits(t *testing.T) {
	g, err := tokendist.Path(2)
	require.NoError(t, err)
	for _, tc := range []struct {
		send  int64
		after tokendist.Loads
		err   string
	}{
		{7, tokendist.Loads{0, 12}, ""},
		{-5, tokendist.Loads{12, 0}, ""},
		{0, tokendist.Loads{7, 5}, ""},
		{8, nil, "sends 8 tokens over edge (0, 1) with loads 7 and 5"},
		{-6, nil, "sends -6 tokens over edge (0, 1) with loads 7 and 5"},
	} {
		send := tc.send
		p := tokendist.ProtocolFunc(func(_ int64, u, v int, lu, lv int64) int64 {
			require.Equal(t, []int64{0, 1, 7, 5}, []int64{int64(u), int64(v), lu, lv})
			return send
		})
		b, err := tokendist.NewDimensionExchange(g, nil, p)
		require.NoError(t, err)
		s := &tokendist.State{Net: g, Loads: tokendist.Loads{7, 5}, Workers: 1}
		require.NoError(t, b.Init(s))
		err = b.Step(s)
		if tc.err == "" {
			require.NoError(t, err, "send %d", send)
			require.Equal(t, tc.after, s.Loads, "send %d", send)
			require.Equal(t, max(send, -send), s.Moved)
			continue
		}
		require.ErrorIs(t, err, tokendist.ErrBadParameter, "send %d", send)
		require.True(t, strings.HasPrefix(err.Error(), "tokendist: "), "%v", err)
		require.ErrorContains(t, err, "protocol")
		require.ErrorContains(t, err, tc.err)
		require.Equal(t, tokendist.Loads{7, 5}, s.Loads, "send %d: loads changed", send)
	}
}
