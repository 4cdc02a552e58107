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
// wall time, an unfinished class by its probe estimate scaled by the finished runs'
// ratio of wall time to probe estimate, and without probes by its work (n + m)·τ at
// the wall time per unit of work of the algorithm's finished runs, else of all.
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
	for _, p := range m.probe {
		require.Positive(t, p)
		require.Less(t, p, 10.0) // runs of a few milliseconds
	}
	_, _, ok := m.remaining()
	require.False(t, ok, "no estimate before a run finished")

	// Two runs of randomized-diffusion d=4 took 2 s and 4 s.
	m.finished(Record{Run: todo[0], Wall: 2 * time.Second})
	m.finished(Record{Run: todo[1], Wall: 4 * time.Second})
	calib := 6 / (2 * m.probe[0])
	want := 3 + 3*m.probe[1]*calib + 3*m.probe[2]*calib + 3*m.probe[3]*calib
	sum, longest, ok := m.remaining()
	require.True(t, ok)
	require.InDelta(t, want, sum, 1e-9*want)
	require.InDelta(t, max(3, m.probe[1]*calib, m.probe[2]*calib, m.probe[3]*calib), longest, 1e-9*longest)

	// Without probes: the work at the algorithm's rate, else the rate of all runs.
	copy(m.probe, []float64{0, 0, 0, 0})
	rate := 6 / (2 * w4)
	want = 3 + 3*w6*rate + 3*w4*rate + 3*w6*rate
	sum, _, _ = m.remaining()
	require.InDelta(t, want, sum, 1e-9*want)
	m.finished(Record{Run: todo[6], Wall: time.Second}) // rsw d=4
	rsw := 1 / w4
	want = 3 + 3*w6*rate + 2*1 + 3*w6*rsw
	sum, _, _ = m.remaining()
	require.InDelta(t, want, sum, 1e-9*want)
}

// TestProbeRun checks the probe: a run that ends within it is estimated by its time,
// a long one by its setup and time per step times the budget.
func TestProbeRun(t *testing.T) {
	reg := registry.New()
	later := time.Now().Add(time.Minute)
	short := registry.Spec{Network: registry.Choice{Name: "ring", Params: registry.Params{"n": 8}}, Loads: registry.Choice{Name: "distance"},
		Algorithm: registry.Choice{Name: "randomized-diffusion"}, Seed: 1, Stop: registry.StopRule{MaxSteps: 10, NoStability: true}}
	e := probeRun(reg, short, 10, later)
	require.Positive(t, e)
	require.Less(t, e, probeTime.Seconds())
	long := short
	long.Network = registry.Choice{Name: "hypercube", Params: registry.Params{"d": 10}}
	e1 := probeRun(reg, long, 1<<30, later)
	require.Greater(t, e1, 1000.0, "2^30 steps on 1024 nodes take more than 1000 s")
	require.Zero(t, probeRun(reg, registry.Spec{Network: registry.Choice{Name: "no-such"}}, 10, later))
	require.Zero(t, probeRun(reg, long, 1<<30, time.Now()), "past the deadline")
}

// TestProgressDefaultEvery: SweepOptions.Every of 0 (or below) is the default interval
// of plain progress lines, 10 s; a positive one is kept.
func TestProgressDefaultEvery(t *testing.T) {
	for _, c := range []struct{ every, want time.Duration }{{0, 10 * time.Second}, {-time.Second, 10 * time.Second}, {time.Millisecond, time.Millisecond}} {
		p := newProgress(SweepOptions{Every: c.every}, nil, nil, 0, 1)
		require.Equal(t, c.want, p.every, "Every %v", c.every)
	}
}
