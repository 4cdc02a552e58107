package tokendist

import (
	"os"
	"strconv"
	"testing"
)

// perfMeasured runs f k times; callgrind collects inside it only
// (--toggle-collect='*perfMeasured').
//
//go:noinline
func perfMeasured(f func(), k int) {
	for i := 0; i < k; i++ {
		f()
	}
}

// TestPerfDriver is the workload docs/performance.md measures with callgrind:
// TOKENDIST_PERF_DRIVER=rd (RandomizedDiffusion on RandomRegular(10^6, 4), loads
// 490..510, two rounds of warm-up), t1 (a THRESHOLD-1 round on the 2^20-node binary
// tree), floor (BenchmarkThreshold1RoundFloor's loop), rrbuild, rrref or newgraph
// (builds of RandomRegular(10^6, 4) from seeds 0, 1, …, by the pre-issue-15
// implementation, or NewGraph from its edge list), TOKENDIST_PERF_ROUNDS rounds:
//
//	GODEBUG=asyncpreemptoff=1 TOKENDIST_PERF_DRIVER=rd TOKENDIST_PERF_ROUNDS=2 \
//	valgrind --tool=callgrind --toggle-collect='*perfMeasured' --cache-sim=yes \
//	--LL=1048576,16,64 ./tokendist.test -test.run TestPerfDriver
func TestPerfDriver(t *testing.T) {
	which := os.Getenv("TOKENDIST_PERF_DRIVER")
	if which == "" {
		t.Skip("set TOKENDIST_PERF_DRIVER to rd, t1 or floor")
	}
	k, err := strconv.Atoi(os.Getenv("TOKENDIST_PERF_ROUNDS"))
	if err != nil {
		t.Fatalf("TOKENDIST_PERF_ROUNDS: %v", err)
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	switch which {
	case "t1", "floor":
		g, err := KaryTree(KaryShape{Height: 19, Arity: 2})
		must(err)
		ec, err := BipartiteColoring(g)
		must(err)
		loads, err := RandomRange(g.Order(), 0, 1000, 1)
		must(err)
		d, err := NewThreshold1(g, ec)
		must(err)
		s := &State{Net: g, Loads: loads, Workers: 1}
		must(d.Init(s))
		var pairs [][]int32
		for c := 0; c < ec.Colors(); c++ {
			pairs = append(pairs, ec.Matching(c))
		}
		round := func() {
			for c := 0; c < 3; c++ {
				must(d.Step(s))
				s.Steps++
			}
		}
		if which == "floor" {
			round = func() { perfFloor(loads, pairs) }
		}
		round()
		perfMeasured(round, k)
	case "rd":
		g, err := RandomRegular(1_000_000, 4, 1)
		must(err)
		l0, err := RandomRange(g.Order(), 490, 510, 2)
		must(err)
		rd, err := NewRandomizedDiffusion(g)
		must(err)
		s := &State{Net: g, Loads: l0.Clone(), Workers: 1, Seed: 1}
		must(rd.Init(s))
		f := func() { must(rd.Step(s)); s.Steps++ }
		for i := 0; i < 2; i++ {
			f()
		}
		perfMeasured(f, k)
	case "rrbuild", "rrref", "newgraph": // one build of RandomRegular(10^6, 4) per round
		g, err := RandomRegular(1_000_000, 4, 1)
		must(err)
		edges := g.EdgeList()
		seed := uint64(0)
		f := map[string]func(){
			"rrbuild":  func() { _, err := RandomRegular(1_000_000, 4, seed); must(err); seed++ },
			"rrref":    func() { _, err := refRandomRegular(1_000_000, 4, seed); must(err); seed++ },
			"newgraph": func() { _, err := NewGraph(1_000_000, edges); must(err) },
		}[which]
		perfMeasured(f, k)
	default:
		t.Fatalf("TOKENDIST_PERF_DRIVER=%q: want rd, t1, floor, rrbuild, rrref or newgraph", which)
	}
}

// perfFloor is one round of BenchmarkThreshold1RoundFloor.
//
//go:noinline
func perfFloor(loads []int64, pairs [][]int32) {
	var sink int32
	for j := range loads {
		loads[j]++
	}
	for _, p := range pairs {
		for _, x := range p {
			sink += x
		}
	}
	if sink == 1 {
		println(sink)
	}
}
