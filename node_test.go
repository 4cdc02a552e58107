package tokendist

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tokendist/tokendist/node"
)

// nodeNet is a network of the equivalence tests, with the colourings to try.
type nodeNet struct {
	name   string
	g      *Graph
	tree   bool
	colors []*EdgeColoring // nil entry: the default colouring
}

func must[T any](x T, err error) T {
	if err != nil {
		panic(err)
	}
	return x
}

// nodeNets returns the networks of the equivalence tests: paths, stars, random trees
// (with their bipartite colourings), rings, tori, hypercubes and random regular graphs
// (with their natural colourings besides the default).
func nodeNets() []nodeNet {
	var nets []nodeNet
	for _, n := range []int{1, 2, 5, 8} {
		nets = append(nets, nodeNet{name: fmt.Sprintf("path%d", n), g: must(Path(n)), tree: true, colors: []*EdgeColoring{nil}})
	}
	nets = append(nets, nodeNet{name: "star7", g: must(Star(7)), tree: true, colors: []*EdgeColoring{nil}})
	nets = append(nets, nodeNet{name: "star70", g: must(Star(70)), tree: true, colors: []*EdgeColoring{nil}}) // Δ + 1 > 64 slots
	for _, s := range []uint64{1, 2, 3} {
		g := must(RandomTree(11, s))
		nets = append(nets, nodeNet{name: fmt.Sprintf("tree11/%d", s), g: g, tree: true, colors: []*EdgeColoring{nil, must(MisraGriesColoring(g))}})
	}
	nets = append(nets,
		nodeNet{name: "ring7", g: must(Ring(7)), colors: []*EdgeColoring{nil, must(RingColoring(7))}},
		nodeNet{name: "ring8", g: must(Ring(8)), colors: []*EdgeColoring{nil, must(RingColoring(8))}},
		nodeNet{name: "torus3x4", g: must(Torus(3, 4)), colors: []*EdgeColoring{nil, must(TorusColoring(3, 4))}},
		nodeNet{name: "cube3", g: must(Hypercube(3)), colors: []*EdgeColoring{nil, must(HypercubeColoring(3))}},
		nodeNet{name: "rr12x3", g: must(RandomRegular(12, 3, 5)), colors: []*EdgeColoring{nil}},
		nodeNet{name: "rr10x4", g: must(RandomRegular(10, 4, 6)), colors: []*EdgeColoring{nil}},
	)
	return nets
}

// nodeAlg is an algorithm of the equivalence tests, built for one network.
type nodeAlg struct {
	name  string
	build func(nn nodeNet, ec *EdgeColoring) (Balancer, error) // nil, nil: not for this network
	fgs   bool                                                 // needs loads large enough that no send is clamped
	dx    bool                                                 // takes a colouring
}

// halfProtocol is a user protocol that depends on t: even steps move half the
// difference, odd steps one token, from the heavier end.
var halfProtocol = ProtocolFunc(func(t int64, u, v int, lu, lv int64) int64 {
	if t%2 == 0 {
		return (lu - lv) / 2
	}
	return threshold2Send(lu, lv)
})

func nodeAlgs() []nodeAlg {
	return []nodeAlg{
		{name: "THRESHOLD-1", dx: true, build: func(nn nodeNet, ec *EdgeColoring) (Balancer, error) {
			if !nn.tree {
				return nil, nil
			}
			return NewThreshold1(nn.g, ec)
		}},
		{name: "THRESHOLD-2", dx: true, build: func(nn nodeNet, ec *EdgeColoring) (Balancer, error) { return NewThreshold2(nn.g, ec) }},
		{name: "user", dx: true, build: func(nn nodeNet, ec *EdgeColoring) (Balancer, error) {
			return NewDimensionExchange(nn.g, ec, halfProtocol)
		}},
		{name: "RD", build: func(nn nodeNet, _ *EdgeColoring) (Balancer, error) { return NewRandomizedDiffusion(nn.g) }},
		{name: "RM", build: func(nn nodeNet, _ *EdgeColoring) (Balancer, error) { return NewRandomMatching(nn.g) }},
		{name: "RSW", build: func(nn nodeNet, _ *EdgeColoring) (Balancer, error) { return NewRSWDiffusion(nn.g) }},
		{name: "FGSDet", fgs: true, build: func(nn nodeNet, _ *EdgeColoring) (Balancer, error) { return NewFGSDeterministic(nn.g) }},
		{name: "FGSRand", fgs: true, build: func(nn nodeNet, _ *EdgeColoring) (Balancer, error) { return NewFGSRandomized(nn.g) }},
		{name: "SpanningTree(T1)", build: func(nn nodeNet, _ *EdgeColoring) (Balancer, error) {
			return NewSpanningTree(nn.g, AutoRoot, func(t *Graph) (Balancer, error) { return NewThreshold1(t, nil) })
		}},
	}
}

// nodeLoads draws a load vector: small, spread or large, and for FGS a large base with
// small differences (so that no node is ever asked for more than it holds).
func nodeLoads(r *rand.Rand, n int, fgs bool) Loads {
	l := make(Loads, n)
	k := []int64{0, 1, 3, 40, 1000}[r.IntN(5)]
	for v := range l {
		l[v] = r.Int64N(k + 1)
		if fgs {
			l[v] += 10000
		}
	}
	if !fgs && r.IntN(3) == 0 && n > 0 {
		l[r.IntN(n)] += 500 // one hot spot
	}
	return l
}

// runRef is Run with MaxSteps R, node streams and no stability stop.
func runRef(t *testing.T, g *Graph, loads Loads, b Balancer, rounds int64, seed uint64, workers int) Result {
	t.Helper()
	res, err := Run(context.Background(), g, loads, b, &RunOptions{MaxSteps: rounds, Seed: seed, NoStability: true, NodeStreams: true, Workers: workers})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

// checkHost runs the programs of b on the host and compares with Run.
func checkHost(t *testing.T, label string, g *Graph, b Balancer, loads Loads, rounds int64, seed uint64, h *syncHost) {
	t.Helper()
	want := runRef(t, g, loads, b, rounds, seed, 1)
	if err := h.run(loads, rounds, seed, 100*rounds+100); err != nil {
		t.Fatalf("%s: host: %v", label, err)
	}
	got := h.loads()
	moved, msgs := h.counts()
	if !slices.Equal(got, want.Loads) || moved != want.Moved || msgs != want.Messages {
		t.Fatalf("%s: host loads %v moved %d messages %d; Run %v moved %d messages %d (initial %v)",
			label, got, moved, msgs, want.Loads, want.Moved, want.Messages, loads)
	}
}

// TestNodeProgramsSyncEquivalence is the synchronous-equivalence test of issue 24: for
// every algorithm with node programs, on paths, stars, random trees, rings, tori,
// hypercubes and random regular graphs, with several colourings, seeds, load vectors and
// round counts, the synchronous host's loads, Moved and Messages are Run's with
// MaxSteps R (and NodeStreams). Every fourth case also saves and restores programs at
// random times.
func TestNodeProgramsSyncEquivalence(t *testing.T) {
	seeds := 12
	if longTests() {
		seeds = 60
	}
	cases := 0
	for _, nn := range nodeNets() {
		for _, alg := range nodeAlgs() {
			colors := []*EdgeColoring{nil}
			if alg.dx {
				colors = nn.colors
			}
			for ci, ec := range colors {
				b, err := alg.build(nn, ec)
				if err != nil {
					t.Fatalf("%s on %s: %v", alg.name, nn.name, err)
				}
				if b == nil {
					continue
				}
				progs, err := b.(NodeAlgorithm).NodePrograms(nn.g, nil)
				if err != nil {
					t.Fatalf("%s on %s: NodePrograms: %v", alg.name, nn.name, err)
				}
				for s := 0; s < seeds; s++ {
					seed := uint64(1000*s + 7)
					r := rand.New(rand.NewPCG(seed, uint64(len(nn.name))))
					loads := nodeLoads(r, nn.g.Order(), alg.fgs)
					rounds := []int64{1, 2, 5, 13, 30}[s%5]
					h := newSyncHost(nn.g, progs)
					if s%4 == 3 {
						h.restore = rand.New(rand.NewPCG(seed, 1))
					}
					checkHost(t, fmt.Sprintf("%s on %s (colouring %d) seed %d R %d", alg.name, nn.name, ci, seed, rounds), nn.g, b, loads, rounds, seed, h)
					cases++
				}
			}
		}
	}
	t.Logf("%d cases", cases)
}

// TestNodeProgramsDelaysZeroPatience checks that with zero patience random transit
// times change only the time: the final loads, Moved and Messages are still Run's.
func TestNodeProgramsDelaysZeroPatience(t *testing.T) {
	for _, nn := range []nodeNet{nodeNets()[6], nodeNets()[11], nodeNets()[13], nodeNets()[5]} {
		for _, alg := range nodeAlgs() {
			b, err := alg.build(nn, nil)
			if err != nil {
				t.Fatal(err)
			}
			if b == nil {
				continue
			}
			progs := must(b.(NodeAlgorithm).NodePrograms(nn.g, &node.Options{}))
			for s := uint64(0); s < 4; s++ {
				r := rand.New(rand.NewPCG(s, 3))
				loads := nodeLoads(r, nn.g.Order(), alg.fgs)
				h := newSyncHost(nn.g, progs)
				dr := rand.New(rand.NewPCG(s, 4))
				h.delay = func(int64, int, int, int64) int64 { return dr.Int64N(4) }
				h.restore = rand.New(rand.NewPCG(s, 5))
				checkHost(t, fmt.Sprintf("%s on %s seed %d, delayed", alg.name, nn.name, s), nn.g, b, loads, 9, s, h)
			}
		}
	}
}

// TestNodeProgramsPatience delays some messages by up to 8 time units and runs the
// programs with a positive patience: every run ends, the total is conserved (the host
// adds late tokens when they arrive) and no load is negative.
func TestNodeProgramsPatience(t *testing.T) {
	for _, nn := range nodeNets() {
		for _, alg := range nodeAlgs() {
			b, err := alg.build(nn, nil)
			if err != nil {
				t.Fatal(err)
			}
			if b == nil {
				continue
			}
			for _, patience := range []int64{1, 3} {
				progs := must(b.(NodeAlgorithm).NodePrograms(nn.g, &node.Options{Patience: patience}))
				for s := uint64(0); s < 3; s++ {
					r := rand.New(rand.NewPCG(s, 6))
					loads := nodeLoads(r, nn.g.Order(), false) // small loads: FGS clamps here
					h := newSyncHost(nn.g, progs)
					dr := rand.New(rand.NewPCG(s, 7))
					h.delay = func(int64, int, int, int64) int64 {
						if dr.IntN(3) == 0 {
							return dr.Int64N(9)
						}
						return 0
					}
					if s == 2 {
						h.restore = rand.New(rand.NewPCG(s, 8))
					}
					label := fmt.Sprintf("%s on %s patience %d seed %d", alg.name, nn.name, patience, s)
					if err := h.run(loads, 12, s, 10000); err != nil {
						t.Fatalf("%s: %v", label, err)
					}
					got := h.loads()
					if got.Total() != loads.Total() {
						t.Fatalf("%s: total %d, want %d", label, got.Total(), loads.Total())
					}
					for v, x := range got {
						if x < 0 {
							t.Fatalf("%s: node %d has load %d", label, v, x)
						}
					}
				}
			}
		}
	}
}

// TestNodeStreamsWorkers checks that node-stream mode gives the same results for any
// worker count on networks of several chunks.
func TestNodeStreamsWorkers(t *testing.T) {
	nets := []*Graph{must(Torus(70, 70)), must(RandomRegular(9000, 5, 3))}
	for _, g := range nets {
		for _, alg := range nodeAlgs()[3:8] {
			b, err := alg.build(nodeNet{g: g}, nil)
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(1, 2))
			loads := nodeLoads(r, g.Order(), alg.fgs)
			one := runRef(t, g, loads, b, 4, 11, 1)
			four := runRef(t, g, loads, b, 4, 11, 4)
			if !slices.Equal(one.Loads, four.Loads) || one.Moved != four.Moved || one.Messages != four.Messages {
				t.Fatalf("%s on %v: 1 worker and 4 workers differ", alg.name, g)
			}
		}
	}
}

// TestNodeStreamsDefaultUnchanged checks that NodeStreams changes the random choices
// (so the flag is really used) while false leaves Run as it was: the default run equals
// a run with the field explicitly false.
func TestNodeStreamsDefaultUnchanged(t *testing.T) {
	g := must(Torus(8, 8))
	loads := make(Loads, g.Order())
	for v := range loads {
		loads[v] = int64(v * 7 % 23)
	}
	for _, alg := range []nodeAlg{nodeAlgs()[3], nodeAlgs()[4], nodeAlgs()[7]} {
		b := must(alg.build(nodeNet{g: g}, nil))
		def, err := Run(context.Background(), g, loads, b, &RunOptions{MaxSteps: 5, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		node := runRef(t, g, loads, b, 5, 3, 1)
		if slices.Equal(def.Loads, node.Loads) {
			t.Errorf("%s: node streams give the default run's loads", alg.name)
		}
	}
}

// chiSquare returns Σ (observed − expected)² / expected.
func chiSquare(obs []int, expected float64) float64 {
	var x float64
	for _, o := range obs {
		d := float64(o) - expected
		x += d * d / expected
	}
	return x
}

// TestNodeStreamMarginals checks the per-node draws with chi-square tests at a fixed
// seed. Thresholds are the 0.999 quantiles of the chi-square law: a correct stream
// fails one in a thousand seeds, and this seed is fixed.
func TestNodeStreamMarginals(t *testing.T) {
	const draws = 60000
	// RandomizedDiffusion with the subset table: D = 5 slots, r = 2 excess tokens, so
	// the C(5, 2) = 10 subsets must be equally likely (9 degrees of freedom: 27.88).
	table := newSubsetTable(5)
	counts := make([]int, 10)
	mask := make([]uint64, 1)
	for i := 0; i < draws; i++ {
		st := newNodeStream(42, int64(i%97), i/97)
		rdNodeSlots(&st, 5, 2, &table, mask)
		k := -1
		for j, m := range table.masks[table.off[2] : table.off[2]+10] {
			if m == mask[0] {
				k = j
			}
		}
		if k < 0 {
			t.Fatalf("mask %b is not a 2-subset of 5 slots", mask[0])
		}
		counts[k]++
	}
	if x := chiSquare(counts, draws/10.0); x > 27.88 {
		t.Errorf("RandomizedDiffusion subsets: chi-square %.2f > 27.88 (%v)", x, counts)
	}
	// Floyd's algorithm (D = 20 > subsetTableMax): every slot gets an excess token with
	// probability r/D = 3/20 (19 degrees of freedom: 43.82).
	slots := make([]int, 20)
	for i := 0; i < draws; i++ {
		st := newNodeStream(43, int64(i%89), i/89)
		rdNodeSlots(&st, 20, 3, &subsetTable{}, mask)
		if c := popcount(mask[0]); c != 3 || mask[0]>>20 != 0 {
			t.Fatalf("mask %b has %d bits, want 3 of 20", mask[0], c)
		}
		for j := 0; j < 20; j++ {
			slots[j] += int(mask[0] >> j & 1)
		}
	}
	if x := chiSquare(slots, draws*3/20.0); x > 43.82 {
		t.Errorf("Floyd slots: chi-square %.2f > 43.82 (%v)", x, slots)
	}
	// RandomMatching: (active, coin, port) uniform on 2·2·5 = 20 outcomes (43.82).
	out := make([]int, 20)
	for i := 0; i < draws; i++ {
		st := newNodeStream(44, int64(i%101), i/101)
		a, c, p := rmNodeChoice(&st, 5)
		out[a*10+c*5+p]++
	}
	if x := chiSquare(out, draws/20.0); x > 43.82 {
		t.Errorf("RandomMatching choices: chi-square %.2f > 43.82 (%v)", x, out)
	}
	// node.Context.Random and the cached stream agree.
	c := node.Context{ID: 5, Seed: 9}
	st := newNodeStream(9, 3, 5)
	for i := uint64(0); i < 4; i++ {
		if w := st.word(); w != c.Random(3, i) {
			t.Fatalf("word %d: stream %x, Random %x", i, w, c.Random(3, i))
		}
	}
}

func popcount(x uint64) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// TestFGSClampDiffers pins a case where Run's FGSRandomized drives a load negative and
// the programs, which cannot send tokens they do not hold, end elsewhere with
// non-negative loads and the same total.
func TestFGSClampDiffers(t *testing.T) {
	g := must(Star(5))
	b := must(NewFGSRandomized(g))
	loads := Loads{1, 0, 0, 0, 0}
	// The centre's flow to each leaf is 1/5, rounded up with probability 1/5: at a seed
	// where two or more round up, Run's centre goes negative.
	var res Result
	seed := uint64(0)
	for ; seed < 200; seed++ {
		if res = runRef(t, g, loads, b, 1, seed, 1); res.MostNegative < 0 {
			break
		}
	}
	if res.MostNegative >= 0 {
		t.Fatal("no negative load at 200 seeds")
	}
	h := newSyncHost(g, must(b.NodePrograms(g, nil)))
	if err := h.run(loads, 1, seed, 100); err != nil {
		t.Fatal(err)
	}
	got := h.loads()
	if slices.Equal(got, res.Loads) {
		t.Fatalf("programs equal Run %v although Run went negative", res.Loads)
	}
	if got.Total() != loads.Total() {
		t.Fatalf("total %d, want %d", got.Total(), loads.Total())
	}
	for _, x := range got {
		if x < 0 {
			t.Fatalf("negative program load in %v", got)
		}
	}
	// The centre sends its one token on the first port whose flow rounds up.
	if want := 1; int(got[0]) != 0 || got.Total() != 1 || countPositive(got) != want {
		t.Fatalf("programs: %v, want the centre's token at one leaf", got)
	}
	t.Logf("seed %d: Run %v (most negative %d), programs %v", seed, res.Loads, res.MostNegative, got)
}

func countPositive(l Loads) int {
	n := 0
	for _, x := range l {
		if x > 0 {
			n++
		}
	}
	return n
}

// TestNodeProgramsBadInput checks the errors of NodePrograms, Program and RestoreState.
func TestNodeProgramsBadInput(t *testing.T) {
	ring6, ring7 := must(Ring(6)), must(Ring(7))
	wantErr := func(label string, err error, names ...string) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: no error", label)
		}
		if !strings.HasPrefix(err.Error(), "tokendist: ") {
			t.Fatalf("%s: %q does not start with \"tokendist: \"", label, err)
		}
		for _, s := range names {
			if !strings.Contains(err.Error(), s) {
				t.Fatalf("%s: %q does not name %q", label, err, s)
			}
		}
	}
	var algs []NodeAlgorithm
	algs = append(algs, must(NewThreshold2(ring6, nil)), must(NewDimensionExchange(ring6, nil, halfProtocol)))
	algs = append(algs, must(NewRandomizedDiffusion(ring6)), must(NewRandomMatching(ring6)), must(NewRSWDiffusion(ring6)))
	algs = append(algs, must(NewFGSDeterministic(ring6)), must(NewFGSRandomized(ring6)))
	for _, a := range algs {
		name := fmt.Sprint(a)
		_, err := a.NodePrograms(ring7, nil)
		wantErr(name+" on the wrong network", err)
		_, err = a.NodePrograms(nil, nil)
		wantErr(name+" on nil", err)
		_, err = a.NodePrograms(ring6, &node.Options{Patience: -2})
		wantErr(name+" negative patience", err, "-2")
		progs := must(a.NodePrograms(ring6, nil))
		for _, v := range []int{-1, 6, 1 << 40} {
			_, err := progs.Program(v)
			wantErr(fmt.Sprintf("%s Program(%d)", name, v), err, fmt.Sprint(v))
		}
		// RestoreState on garbage: an error, no panic, no change.
		p := must(progs.Program(2))
		c := &node.Context{ID: 2, Degree: 2, Load: 9, Rounds: 3, Seed: 1}
		if err := p.Start(c); err != nil {
			t.Fatal(err)
		}
		// Some messages of round 0, so that the state has content.
		for port := 0; port < 2; port++ {
			for kind := uint8(1); kind < 12; kind++ {
				_ = p.Receive(c, port, node.Message{Kind: kind, Round: int64(kind % 2), Value: 3, Tokens: int64(kind % 2)})
			}
		}
		good := p.AppendState(nil)
		r := rand.New(rand.NewPCG(1, 1))
		bad := [][]byte{nil, {}, {0}, {1, 'Z'}, good[:len(good)-1], append(append([]byte{}, good...), 0)}
		for i := 0; i < 200; i++ {
			b := make([]byte, r.IntN(40))
			for j := range b {
				b[j] = byte(r.Uint32())
			}
			if len(b) > 2 && i%2 == 0 {
				copy(b, good[:2]) // a valid header, garbage after
			}
			bad = append(bad, b)
		}
		for i := 0; i < len(good); i++ { // every single-byte corruption that is not valid
			b := append([]byte{}, good...)
			b[i] ^= 0x80
			bad = append(bad, b)
		}
		other := must(progs.Program(3))
		if err := other.Start(&node.Context{ID: 3, Degree: 2, Load: 1, Rounds: 3}); err != nil {
			t.Fatal(err)
		}
		bad = append(bad, other.AppendState(nil))
		for i, b := range bad {
			fresh := must(progs.Program(2))
			before := fresh.AppendState(nil)
			if err := fresh.RestoreState(b); err != nil {
				wantErr(fmt.Sprintf("%s RestoreState #%d", name, i), err, "node 2")
				if after := fresh.AppendState(nil); string(after) != string(before) {
					t.Fatalf("%s: a failed RestoreState #%d changed the state", name, i)
				}
			} else {
				if again := fresh.AppendState(nil); string(again) != string(b) {
					t.Fatalf("%s: RestoreState #%d accepted bytes it does not save back", name, i)
				}
				// Running on from an accepted state must not panic.
				rc := &node.Context{ID: 2, Degree: 2, Load: 50, Rounds: 4}
				for kind := uint8(1); kind < 12; kind++ {
					_ = fresh.Receive(rc, int(kind%2), node.Message{Kind: kind, Round: int64(kind % 3), Value: 1, Tokens: int64(kind % 2)})
					_ = fresh.Tick(rc)
				}
			}
		}
		// A port out of range and a context of another node.
		wantErr(name+" Receive on a bad port", p.Receive(c, 5, node.Message{}), "5")
		wantErr(name+" another node's context", p.Tick(&node.Context{ID: 4, Degree: 2}), "4")
	}
	var d *DimensionExchange
	_, err := d.NodePrograms(ring6, nil)
	wantErr("nil DimensionExchange", err)
}

// TestNodeStreamsNoAlloc checks that a step in node-stream mode does not allocate.
func TestNodeStreamsNoAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, g := range []*Graph{must(Torus(70, 70)), must(Star(70))} {
		for _, alg := range nodeAlgs()[3:8] {
			b := must(alg.build(nodeNet{g: g}, nil))
			loads := make(Loads, g.Order())
			for v := range loads {
				loads[v] = int64(v%13) + 20000
			}
			s := &State{Net: g, Loads: loads, Seed: 3, Workers: 2, NodeStreams: true}
			if err := b.(Initializer).Init(s); err != nil {
				t.Fatal(err)
			}
			if err := b.Step(s); err != nil { // warm the worker pool
				t.Fatal(err)
			}
			allocs := testing.AllocsPerRun(5, func() {
				if err := b.Step(s); err != nil {
					t.Fatal(err)
				}
				s.Steps++
			})
			if allocs != 0 {
				t.Errorf("%s on %v: %.1f allocations per step", alg.name, g, allocs)
			}
		}
	}
}

// TestNodeProgramsErrorText shows the errors of wrong input (and a protocol that sends
// more than a node holds), which must start with "tokendist: " and name the value.
func TestNodeProgramsErrorText(t *testing.T) {
	ring6, ring7 := must(Ring(6)), must(Ring(7))
	greedy := must(NewDimensionExchange(ring6, nil, ProtocolFunc(func(_ int64, _, _ int, lu, _ int64) int64 { return lu + 1 })))
	progs := must(greedy.NodePrograms(ring6, nil))
	h := newSyncHost(ring6, progs)
	err := h.run(Loads{1, 2, 3, 4, 5, 6}, 3, 1, 100)
	if err == nil || !strings.HasPrefix(err.Error(), "tokendist: ") || !strings.Contains(err.Error(), "sends 2 tokens") {
		t.Fatalf("greedy protocol: %v", err)
	}
	rd := must(NewRandomizedDiffusion(ring6))
	_, err = rd.NodePrograms(ring7, nil)
	t.Log(err)
	if err == nil || !strings.Contains(err.Error(), "n=7") {
		t.Fatalf("wrong network: %v", err)
	}
	_, err = must(NewThreshold2(ring6, nil)).NodePrograms(ring7, nil)
	t.Log(err)
	p := must(must(rd.NodePrograms(ring6, nil)).Program(0))
	err = p.RestoreState([]byte{1, 'R', 9})
	t.Log(err)
	if err == nil || !strings.Contains(err.Error(), "node 0") {
		t.Fatalf("RestoreState: %v", err)
	}
	tree := must(NewSpanningTree(ring6, 0, func(g *Graph) (Balancer, error) { return NewRSWDiffusion(g) }))
	_, err = tree.NodePrograms(ring7, nil)
	t.Log(err)
	if err == nil {
		t.Fatal("SpanningTree on the wrong network")
	}
	noProg := must(NewSpanningTree(ring6, 0, func(g *Graph) (Balancer, error) { return NewDiscrepancy1(g, nil, nil) }))
	_, err = noProg.NodePrograms(ring6, nil)
	t.Log(err)
	if err == nil || !strings.Contains(err.Error(), "no node programs") {
		t.Fatalf("SpanningTree of DISCREPANCY-1: %v", err)
	}
}
