package experiment

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist/registry"
)

func TestProgressLines(t *testing.T) {
	var buf bytes.Buffer
	runs := make([]Run, 10)
	for i := range runs {
		runs[i] = Run{Index: i, Key: fmt.Sprint("k", i), Spec: registry.Spec{Seed: uint64(i)}}
	}
	p := newProgress(SweepOptions{Progress: &buf, Every: time.Nanosecond}, nil, runs, 2, 1)
	var recs []Record
	for _, r := range runs[:5] {
		recs = append(recs, Record{Run: r, Wall: time.Second})
	}
	p.add(recs, 1)
	time.Sleep(time.Millisecond)
	p.tick()
	p.finish(SweepStats{Ran: 5, Failed: 1, Skipped: 2, Total: 12})
	out := buf.String()
	for _, want := range []string{"sweep: 10 runs to do, 2 already", "sweep: 5/10 runs (50.0%), 1 failed, elapsed 0s, ETA 5s", "5 runs done (1 failed), 2 skipped, 12 total"} {
		require.Contains(t, out, want)
	}
	buf.Reset()
	p = newProgress(SweepOptions{Progress: &buf, Terminal: true}, nil, runs[:4], 0, 2)
	p.add(recs[:2], 0)
	p.tick()
	require.Contains(t, buf.String(), "\r[###############               ] 2/4 runs  50.0%, 0 failed, elapsed 0s, ETA 1s")
}

// TestCostModel checks the ETA's estimates: a class with finished runs by their mean
// wall time, an unfinished class by its work (n + m)·τ at the wall time per unit of work
// of the algorithm's finished runs, else of all finished runs.
func TestCostModel(t *testing.T) {
	reg := registry.New()
	spec := func(d int, alg string, seed uint64) registry.Spec {
		return registry.Spec{Network: registry.Choice{Name: "hypercube", Params: registry.Params{"d": d}},
			Loads: registry.Choice{Name: "distance"}, Algorithm: registry.Choice{Name: alg}, Seed: seed,
			Stop: registry.StopRule{Tau: true, NoStability: true}}
	}
	var todo []Run
	for _, alg := range []string{"randomized-diffusion", "rsw-diffusion"} {
		for _, d := range []int{4, 6} {
			for seed := uint64(1); seed <= 3; seed++ {
				todo = append(todo, Run{Key: fmt.Sprint(alg, d, seed), Spec: spec(d, alg, seed)})
			}
		}
	}
	m := newCostModel(reg, todo)
	size := func(d int) float64 {
		sz, err := reg.Size(spec(d, "randomized-diffusion", 1))
		require.NoError(t, err)
		return float64(sz.N+sz.Edges) * float64(sz.MaxSteps)
	}
	w4, w6 := size(4), size(6)
	require.Equal(t, []float64{w4, w6, w4, w6}, m.work)
	_, _, ok := m.remaining()
	require.False(t, ok, "no estimate before a run finished")

	// Two runs of randomized-diffusion d=4 took 2 s and 4 s.
	m.finished(Record{Run: todo[0], Wall: 2 * time.Second})
	m.finished(Record{Run: todo[1], Wall: 4 * time.Second})
	rate := 6 / (2 * w4)
	// Left: 1 of rd d=4 (mean 3 s), 3 of rd d=6 and 3 of rsw d=6 (work w6 at rate),
	// 3 of rsw d=4 (w4 at rate: rsw has no runs, the rate of all runs applies).
	want := 3 + 3*w6*rate + 3*w4*rate + 3*w6*rate
	sum, longest, ok := m.remaining()
	require.True(t, ok)
	require.InDelta(t, want, sum, 1e-9*want)
	require.InDelta(t, w6*rate, longest, 1e-9*longest)

	// rsw's own rate replaces the global one once one of its runs finished.
	m.finished(Record{Run: todo[6], Wall: time.Second}) // rsw d=4
	rsw := 1 / w4
	want = 3 + 3*w6*rate + 2*1 + 3*w6*rsw
	sum, _, _ = m.remaining()
	require.InDelta(t, want, sum, 1e-9*want)
}
