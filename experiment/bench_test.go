package experiment

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/registry"
)

// BenchmarkDBInsert measures storing a batch of 256 finished runs in one transaction.
func BenchmarkDBInsert(b *testing.B) {
	reg := registry.New()
	f, err := Parse("b.yaml", []byte("networks:\n  - name: path\n    n: 64\nloads:\n  - name: random-range\n    hi: 9\nalgorithms: [threshold-1]\nseeds: 256\n"), reg, false)
	if err != nil {
		b.Fatal(err)
	}
	runs, _ := f.Specs()
	recs := make([]Record, len(runs))
	for i, r := range runs {
		out, err := reg.Run(context.Background(), r.Spec, &tokendist.RunOptions{Workers: 1})
		recs[i] = Record{Run: r, Out: out, Err: err, Wall: time.Millisecond}
	}
	db, err := OpenDB(filepath.Join(b.TempDir(), "b.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		for j := range recs {
			recs[j].Run.Key = runs[j].Key + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('a'+(i/26)%26)) + string(rune('a'+(i/676)%26))
		}
		b.StartTimer()
		if err := db.Insert(recs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/run")
}

// BenchmarkRegistryOverhead measures what Registry.Run adds to a run: Canonical, the
// constructors and the metric bookkeeping, on a 2-node path with a 1-step budget.
func BenchmarkRegistryOverhead(b *testing.B) {
	reg := registry.New()
	s := registry.Spec{Network: registry.Choice{Name: "path", Params: registry.Params{"n": 2}},
		Loads:     registry.Choice{Name: "point-mass", Params: registry.Params{"tokens": 1}},
		Algorithm: registry.Choice{Name: "threshold-1"}, Stop: registry.StopRule{MaxSteps: 1}}
	for i := 0; i < b.N; i++ {
		if _, err := reg.Run(context.Background(), s, &tokendist.RunOptions{Workers: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSweepTau is the benchmark of issue 23: a sweep of randomized diffusion with
// stop tau: true on the hypercube of dimension 10 from the distance loads, one worker
// (and two, the default of tokendist sweep on this 2-core machine, for ten seeds),
// a fresh registry (no cached λ_max or peripheral node) and database per sweep. With
// λ_max and the peripheral node computed once per network, ten seeds cost the runs
// plus one setup; "dense-one-seed" is what one seed cost before (the dense eigensolver
// for λ_max, 1024 nodes, then the run with the same budget).
//
//	go test -run '^$' -bench 'SweepTau' -benchtime 3x ./experiment
func BenchmarkSweepTau(b *testing.B) {
	spec := func(seed uint64) registry.Spec {
		return registry.Spec{Network: registry.Choice{Name: "hypercube", Params: registry.Params{"d": 10}},
			Loads: registry.Choice{Name: "distance"}, Algorithm: registry.Choice{Name: "randomized-diffusion"}, Seed: seed,
			Stop: registry.StopRule{Tau: true, NoStability: true}}
	}
	sweep := func(b *testing.B, seeds, workers int) {
		for b.Loop() {
			b.StopTimer()
			reg := registry.New()
			var runs []Run
			for s := 1; s <= seeds; s++ {
				sp, err := reg.Canonical(spec(uint64(s)))
				if err != nil {
					b.Fatal(err)
				}
				key, err := RunKey(sp)
				if err != nil {
					b.Fatal(err)
				}
				runs = append(runs, Run{Index: s - 1, Spec: sp, Key: key})
			}
			db, err := OpenDB(filepath.Join(b.TempDir(), "b.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			st, err := Sweep(context.Background(), reg, runs, db, SweepOptions{Workers: workers})
			b.StopTimer()
			if err != nil || st.Ran != seeds || st.Failed != 0 {
				b.Fatal(st, err)
			}
			db.Close()
			b.StartTimer()
		}
	}
	b.Run("seeds-1", func(b *testing.B) { sweep(b, 1, 1) })
	b.Run("seeds-10", func(b *testing.B) { sweep(b, 10, 1) })
	b.Run("seeds-10-workers-2", func(b *testing.B) { sweep(b, 10, 2) })
	b.Run("dense-one-seed", func(b *testing.B) {
		g, err := tokendist.Hypercube(10)
		if err != nil {
			b.Fatal(err)
		}
		reg := registry.New()
		sz, err := reg.Size(spec(1))
		if err != nil {
			b.Fatal(err)
		}
		fixed := spec(1)
		fixed.Stop = registry.StopRule{MaxSteps: sz.MaxSteps, NoStability: true}
		for b.Loop() {
			if _, err := tokendist.LambdaMax(g, &tokendist.SpectralOptions{Method: tokendist.SpectralDense}); err != nil {
				b.Fatal(err)
			}
			if _, err := registry.New().Run(context.Background(), fixed, &tokendist.RunOptions{Workers: 1}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
