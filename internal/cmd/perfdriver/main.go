// Command perfdriver runs the workloads docs/performance.md measures with callgrind, k
// rounds each inside perfMeasured, so that callgrind collects only there
// (--toggle-collect='*perfMeasured'). It replaces the test TestPerfDriver (and its
// TOKENDIST_PERF_DRIVER and TOKENDIST_PERF_ROUNDS variables), so that go test runs no
// profiling driver.
//
// Workloads: rd (RandomizedDiffusion on RandomRegular(10^6, 4), loads 490..510, two
// rounds of warm-up), t1 (a THRESHOLD-1 round on the 2^20-node binary tree), floor
// (BenchmarkThreshold1RoundFloor's loop), rrbuild or newgraph (builds of
// RandomRegular(10^6, 4) from seeds 0, 1, …, or NewGraph from its edge list). The build
// of the pre-issue-15 reference generator (rrref) needs unexported code and stays a test:
// TestPerfDriverReference in generators_report_test.go (go test -tags report).
//
//	go build -o /tmp/perfdriver ./internal/cmd/perfdriver
//	GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --toggle-collect='*perfMeasured' \
//	  --cache-sim=yes --LL=1048576,16,64 /tmp/perfdriver -workload rd -rounds 2
package main

import (
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/tokendist/tokendist"
)

// perfMeasured runs f k times; callgrind collects inside it only.
//
//go:noinline
func perfMeasured(f func(), k int) {
	for i := 0; i < k; i++ {
		f()
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

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

func main() {
	which := flag.String("workload", "", "rd, t1, floor, rrbuild or newgraph")
	k := flag.Int("rounds", 0, "measured rounds")
	flag.Parse()
	if *k <= 0 || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: perfdriver -workload rd|t1|floor|rrbuild|newgraph -rounds K")
		os.Exit(2)
	}
	switch *which {
	case "t1", "floor":
		g, err := tokendist.KaryTree(tokendist.KaryShape{Height: 19, Arity: 2})
		must(err)
		ec, err := tokendist.BipartiteColoring(g)
		must(err)
		loads, err := tokendist.RandomRange(g.Order(), 0, 1000, 1)
		must(err)
		d, err := tokendist.NewThreshold1(g, ec)
		must(err)
		s := &tokendist.State{Net: g, Loads: loads, Workers: 1}
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
		if *which == "floor" {
			round = func() { perfFloor(loads, pairs) }
		}
		round()
		perfMeasured(round, *k)
	case "rd":
		g, err := tokendist.RandomRegular(1_000_000, 4, 1)
		must(err)
		l0, err := tokendist.RandomRange(g.Order(), 490, 510, 2)
		must(err)
		rd, err := tokendist.NewRandomizedDiffusion(g)
		must(err)
		s := &tokendist.State{Net: g, Loads: l0.Clone(), Workers: 1, Seed: 1}
		must(rd.Init(s))
		f := func() { must(rd.Step(s)); s.Steps++ }
		for i := 0; i < 2; i++ {
			f()
		}
		perfMeasured(f, *k)
	case "rrbuild", "newgraph": // one build of RandomRegular(10^6, 4) per round
		g, err := tokendist.RandomRegular(1_000_000, 4, 1)
		must(err)
		edges := g.EdgeList()
		seed := uint64(0)
		f := map[string]func(){
			"rrbuild":  func() { _, err := tokendist.RandomRegular(1_000_000, 4, seed); must(err); seed++ },
			"newgraph": func() { _, err := tokendist.NewGraph(1_000_000, edges); must(err) },
		}[*which]
		perfMeasured(f, *k)
	default:
		log.Fatalf("-workload %q: want rd, t1, floor, rrbuild or newgraph", *which)
	}
}
