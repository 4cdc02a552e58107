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
