package tokendist_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/tokendist/tokendist"

	"github.com/stretchr/testify/require"
)

// fndOverheadSteps is the number of steps per benchmark operation in the overhead
// comparison.
const fndOverheadSteps = 200

// fndBareSteps restores the initial loads in s (so that every operation does the same
// work as a Run from those loads) and calls Step fndOverheadSteps times: the baseline
// for Run.
func fndBareSteps(b testing.TB, s *tokendist.State, loads tokendist.Loads, bal tokendist.Balancer) {
	copy(s.Loads, loads)
	s.Steps, s.Time, s.Moved, s.Messages = 0, 0, 0, 0
	for k := 0; k < fndOverheadSteps; k++ {
		if err := bal.Step(s); err != nil {
			b.Fatal(err)
		}
		s.Steps++
	}
}

func fndRunSteps(b testing.TB, g *tokendist.Graph, loads tokendist.Loads, bal tokendist.Balancer) {
	r, err := tokendist.Run(context.Background(), g, loads, bal, &tokendist.RunOptions{MaxSteps: fndOverheadSteps, NoStability: true})
	if err != nil || r.Steps != fndOverheadSteps {
		b.Fatalf("Run: %v after %d steps", err, r.Steps)
	}
}

// BenchmarkRunOverhead compares Run (input validation, copying the loads, first and last
// sample, final invariant check, per-step stop rules) with a bare loop calling Step on
// one State, for 200 steps of nearest-neighbour token exchange (O(n) per step) on a ring
// of 10^6 nodes.
func BenchmarkRunOverhead(b *testing.B) {
	g, loads := fndRing1e6(), fndLoads1e6()
	bal := fndNeighbourExchange{}
	b.Run("bare-Step-loop", func(b *testing.B) {
		s := &tokendist.State{Net: g, Loads: loads.Clone()}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			fndBareSteps(b, s, loads, bal)
		}
	})
	b.Run("Run", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			fndRunSteps(b, g, loads, bal)
		}
	})
}

// TestRunOverhead measures the ratio of BenchmarkRunOverhead's two sides and requires
// Run to cost at most 5% more than the bare loop. Timing on a shared machine is noisy,
// so it runs only with TOKENDIST_LONG=1, interleaves the two sides and compares the
// fastest of ten runs of each.
func TestRunOverhead(t *testing.T) {
	tokendist.LongTest(t)
	g, loads := fndRing1e6(), fndLoads1e6()
	bal := fndNeighbourExchange{}
	s := &tokendist.State{Net: g, Loads: loads.Clone()}
	fndRunSteps(t, g, loads, bal) // warm up
	bare, run := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
	for round := 0; round < 10; round++ {
		start := time.Now()
		fndBareSteps(t, s, loads, bal)
		bare = min(bare, time.Since(start))
		start = time.Now()
		fndRunSteps(t, g, loads, bal)
		run = min(run, time.Since(start))
	}
	ratio := float64(run) / float64(bare)
	t.Logf("%d steps on Ring(10^6): bare loop %v, Run %v, ratio %.3f", fndOverheadSteps, bare, run, ratio)
	require.LessOrEqual(t, ratio, 1.05, "Run costs %.1f%% more than a bare Step loop, want ≤ 5%%", 100*(ratio-1))
}
