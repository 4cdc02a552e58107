package async

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tokendist/tokendist/node"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/faults"
)

// eqNet is a network of the equivalence tests, with the colourings its
// dimension-exchange algorithms use (nil: the default colouring).
type eqNet struct {
	name   string
	g      *tokendist.Graph
	tree   bool
	colors []*tokendist.EdgeColoring
}

func eqMust[T any](x T, err error) T {
	if err != nil {
		panic(err)
	}
	return x
}

func eqNets() []eqNet {
	nets := []eqNet{
		{"path5", eqMust(tokendist.Path(5)), true, []*tokendist.EdgeColoring{nil}},
		{"star9", eqMust(tokendist.Star(9)), true, []*tokendist.EdgeColoring{nil}},
		{"ring8", eqMust(tokendist.Ring(8)), false, []*tokendist.EdgeColoring{nil, eqMust(tokendist.RingColoring(8))}},
		{"torus4x3", eqMust(tokendist.Torus(4, 3)), false, []*tokendist.EdgeColoring{nil, eqMust(tokendist.TorusColoring(4, 3))}},
		{"cube4", eqMust(tokendist.Hypercube(4)), false, []*tokendist.EdgeColoring{nil, eqMust(tokendist.HypercubeColoring(4))}},
		{"rr14x3", eqMust(tokendist.RandomRegular(14, 3, 7)), false, []*tokendist.EdgeColoring{nil}},
	}
	for _, s := range []uint64{1, 2} {
		g := eqMust(tokendist.RandomTree(13, s))
		nets = append(nets, eqNet{fmt.Sprintf("tree13/%d", s), g, true, []*tokendist.EdgeColoring{nil, eqMust(tokendist.MisraGriesColoring(g))}})
	}
	return nets
}

// eqAlg builds one algorithm for a network and colouring; nil, nil: not for it.
type eqAlg struct {
	name  string
	fgs   bool // loads with a large base, so that no node is asked for more than it holds
	build func(nn eqNet, ec *tokendist.EdgeColoring) (tokendist.Balancer, error)
}

func eqAlgs() []eqAlg {
	user := tokendist.ProtocolFunc(func(t int64, u, v int, lu, lv int64) int64 {
		if t%3 == 0 {
			return (lu - lv) / 2
		}
		return (lu - lv) / 3
	})
	return []eqAlg{
		{"THRESHOLD-1", false, func(nn eqNet, ec *tokendist.EdgeColoring) (tokendist.Balancer, error) {
			if !nn.tree {
				return nil, nil
			}
			return tokendist.NewThreshold1(nn.g, ec)
		}},
		{"THRESHOLD-2", false, func(nn eqNet, ec *tokendist.EdgeColoring) (tokendist.Balancer, error) {
			return tokendist.NewThreshold2(nn.g, ec)
		}},
		{"user-protocol", false, func(nn eqNet, ec *tokendist.EdgeColoring) (tokendist.Balancer, error) {
			return tokendist.NewDimensionExchange(nn.g, ec, user)
		}},
		{"randomized-diffusion", false, single(func(g *tokendist.Graph) (tokendist.Balancer, error) { return tokendist.NewRandomizedDiffusion(g) })},
		{"random-matching", false, single(func(g *tokendist.Graph) (tokendist.Balancer, error) { return tokendist.NewRandomMatching(g) })},
		{"rsw-diffusion", false, single(func(g *tokendist.Graph) (tokendist.Balancer, error) { return tokendist.NewRSWDiffusion(g) })},
		{"fgs-deterministic", true, single(func(g *tokendist.Graph) (tokendist.Balancer, error) { return tokendist.NewFGSDeterministic(g) })},
		{"fgs-randomized", true, single(func(g *tokendist.Graph) (tokendist.Balancer, error) { return tokendist.NewFGSRandomized(g) })},
		{"spanning-tree(threshold-1)", false, single(func(g *tokendist.Graph) (tokendist.Balancer, error) {
			return tokendist.NewSpanningTree(g, tokendist.AutoRoot, func(t *tokendist.Graph) (tokendist.Balancer, error) {
				return tokendist.NewThreshold1(t, nil)
			})
		})},
	}
}

// single builds a non-dimension-exchange algorithm once per network (the first colouring).
func single(f func(*tokendist.Graph) (tokendist.Balancer, error)) func(eqNet, *tokendist.EdgeColoring) (tokendist.Balancer, error) {
	return func(nn eqNet, ec *tokendist.EdgeColoring) (tokendist.Balancer, error) {
		if ec != nil {
			return nil, nil
		}
		return f(nn.g)
	}
}

func eqLoads(r *rand.Rand, n int, fgs bool) tokendist.Loads {
	l := make(tokendist.Loads, n)
	k := []int64{0, 2, 30, 500}[r.IntN(4)]
	for v := range l {
		l[v] = r.Int64N(k + 1)
		if fgs {
			l[v] += 10000
		}
	}
	if !fgs && r.IntN(3) == 0 {
		l[r.IntN(n)] += 300
	}
	return l
}

// eqCase is one (algorithm, network, colouring) with a load vector, seed and rounds.
type eqCase struct {
	label  string
	g      *tokendist.Graph
	b      tokendist.Balancer
	loads  tokendist.Loads
	seed   uint64
	rounds int64
}

// eqCases enumerates the cases: every algorithm on every network it runs on, every
// colouring, seeds per combination, R cycling through 1, 4, 11, 30.
func eqCases(t *testing.T, seeds int) []eqCase {
	var out []eqCase
	r := rand.New(rand.NewPCG(24, 24))
	rounds := []int64{1, 4, 11, 30}
	for _, a := range eqAlgs() {
		for _, nn := range eqNets() {
			for ci, ec := range nn.colors {
				b, err := a.build(nn, ec)
				if err != nil {
					t.Fatalf("%s on %s: %v", a.name, nn.name, err)
				}
				if b == nil {
					continue
				}
				for s := 0; s < seeds; s++ {
					out = append(out, eqCase{
						label: fmt.Sprintf("%s/%s/colouring%d/seed%d", a.name, nn.name, ci, s),
						g:     nn.g, b: b, loads: eqLoads(r, nn.g.Order(), a.fgs),
						seed: uint64(s) * 7919, rounds: rounds[len(out)%len(rounds)],
					})
				}
			}
		}
	}
	return out
}

// simulate runs the case's node programs in Simulate under model m.
func (c eqCase) simulate(t *testing.T, m faults.Model, patience int64) Result {
	t.Helper()
	progs, err := c.b.(tokendist.NodeAlgorithm).NodePrograms(c.g, &node.Options{Patience: patience})
	if err != nil {
		t.Fatalf("%s: NodePrograms: %v", c.label, err)
	}
	res, err := Simulate(context.Background(), c.g, progs, c.loads, &Options{Seed: c.seed, Rounds: c.rounds, Faults: m})
	if err != nil {
		t.Fatalf("%s: Simulate: %v", c.label, err)
	}
	if res.Status != tokendist.StatusDone || res.InFlight != 0 {
		t.Fatalf("%s: status %v with %d tokens in flight", c.label, res.Status, res.InFlight)
	}
	return res
}

// run is Run with MaxSteps R, node-keyed streams and no stability stop.
func (c eqCase) run(t *testing.T) tokendist.Result {
	t.Helper()
	want, err := tokendist.Run(context.Background(), c.g, c.loads, c.b,
		&tokendist.RunOptions{MaxSteps: c.rounds, Seed: c.seed, NoStability: true, NodeStreams: true})
	if err != nil {
		t.Fatalf("%s: Run: %v", c.label, err)
	}
	return want
}

// TestSimulateEqualsRun is issue 24's synchronous-equivalence test on the simulator
// itself: with unit delays, no faults and zero patience, Simulate gives exactly Run's
// loads, Moved and Messages for every algorithm with node programs, every network it
// runs on (paths, stars, random trees, rings, tori, hypercubes, random regular graphs),
// every colouring, several seeds and load vectors, and 1 to 30 rounds.
func TestSimulateEqualsRun(t *testing.T) {
	cases := eqCases(t, 6)
	for _, c := range cases {
		want := c.run(t)
		got := c.simulate(t, faults.Model{}, 0)
		if !slices.Equal(got.Loads, want.Loads) || got.Moved != want.Moved || got.Messages != want.Messages {
			t.Fatalf("%s, %d rounds from %v:\nSimulate %v moved %d messages %d\nRun      %v moved %d messages %d",
				c.label, c.rounds, c.loads, got.Loads, got.Moved, got.Messages, want.Loads, want.Moved, want.Messages)
		}
	}
	t.Logf("%d cases", len(cases))
}

// TestSimulateFaultsKeepRunsLoads: with zero patience a node waits for what its round
// needs, so under every fault kind (delay spread, loss, duplication, reordering, crashes
// at each point, drift) the final loads, Moved and Messages are still Run's: faults
// cost time, never tokens or results.
func TestSimulateFaultsKeepRunsLoads(t *testing.T) {
	models := []faults.Model{
		{Delay: faults.Uniform(0.5, 6)},
		{Delay: faults.Pareto(0.5, 1.2), Reorder: 0.3, ReorderDelay: 5},
		{Loss: 0.3, Duplicate: 0.2},
		{CrashRate: 0.02, DownTime: faults.Exponential(1, 4), Drift: 0.3},
		{Delay: faults.Exponential(0.2, 2), Loss: 0.1, Duplicate: 0.1, Reorder: 0.1, ReorderDelay: 3,
			Crashes: []faults.Crash{{Node: 0, At: 2, DownFor: 5, Point: faults.CrashBeforePersist}, {Node: 1, At: 3, DownFor: 2, Point: faults.CrashBeforeSend}}},
	}
	cases := eqCases(t, 2)
	var stats Result
	for i, c := range cases {
		m := models[i%len(models)]
		want := c.run(t)
		got := c.simulate(t, m, 0)
		if !slices.Equal(got.Loads, want.Loads) || got.Moved != want.Moved || got.Messages != want.Messages {
			t.Fatalf("%s under %+v:\nSimulate %v moved %d messages %d\nRun      %v moved %d messages %d",
				c.label, m, got.Loads, got.Moved, got.Messages, want.Loads, want.Moved, want.Messages)
		}
		stats.Crashes += got.Crashes
		stats.Lost += got.Lost
		stats.Retransmissions += got.Retransmissions
	}
	if stats.Crashes == 0 || stats.Lost == 0 || stats.Retransmissions == 0 {
		t.Fatalf("the faults did not happen: %d crashes, %d lost, %d retransmissions", stats.Crashes, stats.Lost, stats.Retransmissions)
	}
	t.Logf("%d cases: %d crashes, %d datagrams lost, %d retransmissions", len(cases), stats.Crashes, stats.Lost, stats.Retransmissions)
}

// TestSimulatePerfectTree: the perfect-tree protocol's programs in the simulator end
// with a perfect distribution and exactly the loads and moves of Run's simulated runtime
// with unit delays; Messages are Run's, or one more when phase 1 ended in a crossing (a
// message the runtime's link reservation never sends; see PerfectTree.NodePrograms).
// Under faults the distribution is still perfect and the total conserved.
func TestSimulatePerfectTree(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	crossings := 0
	for i := 0; i < 40; i++ {
		g := eqMust(tokendist.RandomTree(3+r.IntN(40), uint64(i)))
		if i%5 == 0 {
			g = eqMust(tokendist.KaryTree(tokendist.KaryShape{Height: 3, Arity: 2}))
		}
		loads := eqLoads(r, g.Order(), false)
		b := eqMust(tokendist.NewPerfectTree(g, nil))
		want, err := tokendist.Run(context.Background(), g, loads, b, nil)
		if err != nil {
			t.Fatal(err)
		}
		c := eqCase{label: fmt.Sprintf("perfect-tree/%d", i), g: g, b: b, loads: loads, seed: uint64(i)}
		got := c.simulate(t, faults.Model{}, 0)
		if !slices.Equal(got.Loads, want.Loads) || got.Moved != want.Moved || got.Messages < want.Messages || got.Messages > want.Messages+1 {
			t.Fatalf("%s: Simulate %v moved %d messages %d; Run %v moved %d messages %d",
				c.label, got.Loads, got.Moved, got.Messages, want.Loads, want.Moved, want.Messages)
		}
		if got.Messages > want.Messages {
			crossings++
		}
		faulty := c.simulate(t, faults.Model{Delay: faults.Uniform(0.5, 5), Loss: 0.2, CrashRate: 0.01, DownTime: faults.Constant(3)}, 0)
		if d := faulty.Loads.Discrepancy(); d > 1 || faulty.Loads.Total() != loads.Total() {
			t.Fatalf("%s under faults: discrepancy %d, total %d of %d", c.label, d, faulty.Loads.Total(), loads.Total())
		}
	}
	t.Logf("40 trees, %d with a phase-1 crossing", crossings)
}

// TestSimulatePacedEqualsRun: with Patience 4 the rounds are paced by the nodes' clocks
// (round r owns the ticks [4r, 4r+4)), which agree without drift; unit delays deliver a
// round's messages (at most three hops of one delay each) within its window, so no round
// is given up and the result is still Run's. With delays up to 12 rounds do go without
// messages: the test checks that they then differ for some case (the pacing is not a
// no-op) and that tokens are conserved.
func TestSimulatePacedEqualsRun(t *testing.T) {
	cases := eqCases(t, 2)
	differ := 0
	for _, c := range cases {
		want := c.run(t)
		got := c.simulate(t, faults.Model{}, 4)
		if !slices.Equal(got.Loads, want.Loads) || got.Moved != want.Moved || got.Messages != want.Messages {
			t.Fatalf("%s, %d rounds from %v, patience 4:\nSimulate %v moved %d messages %d\nRun      %v moved %d messages %d",
				c.label, c.rounds, c.loads, got.Loads, got.Moved, got.Messages, want.Loads, want.Moved, want.Messages)
		}
		slow := c.simulate(t, faults.Model{Delay: faults.Uniform(1, 12)}, 4)
		if slow.Loads.Total() != c.loads.Total() {
			t.Fatalf("%s: total %d of %d", c.label, slow.Loads.Total(), c.loads.Total())
		}
		if !slices.Equal(slow.Loads, want.Loads) {
			differ++
		}
	}
	if differ == 0 {
		t.Fatal("delays beyond the window never changed a result")
	}
	t.Logf("%d cases; with delays up to 12, %d ended with other loads than Run's", len(cases), differ)
}
