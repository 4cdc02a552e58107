package async

import (
	"context"
	"math"

	"github.com/tokendist/tokendist/node"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/registry"
)

// Linking package async registers Simulate as the registry's Simulator, which runs the
// Specs that have a NetworkModel (registry.RegisterSimulator).
func init() { registry.RegisterSimulator(simulateSpec) }

// simulateSpec is the registry.Simulator: Simulate with the Spec's seed and fault
// model, ro.MaxSteps rounds and ro.Workload every NetworkModel.WorkloadEvery; ro.Recorder
// observes the run when it is an Observer (every ObserveEvery() time units if it has
// that method).
func simulateSpec(ctx context.Context, s registry.Spec, g *tokendist.Graph, l tokendist.Loads, progs node.Programs, ro *tokendist.RunOptions) (tokendist.Result, map[string]float64, error) {
	m := s.NetworkModel
	opts := &Options{
		Seed: s.Seed, Rounds: ro.MaxSteps, Faults: m.Model,
		Workload: ro.Workload, WorkloadEvery: m.WorkloadEvery, MaxTime: m.MaxTime,
	}
	if obs, ok := ro.Recorder.(Observer); ok {
		opts.Observer = obs
		if e, ok := obs.(interface{ ObserveEvery() float64 }); ok {
			opts.ObserveEvery = e.ObserveEvery()
		}
	}
	res, err := Simulate(ctx, g, progs, l, opts)
	out := tokendist.Result{
		Status: res.Status, Loads: res.Loads,
		Time: int64(math.Ceil(res.Time)), Moved: res.Moved, Messages: res.Messages,
		Initial: l.Total(), Arrived: res.Arrived, Completed: res.Completed,
	}
	metrics := map[string]float64{
		"async_time": res.Time, "async_events": float64(res.Events), "async_datagrams": float64(res.Datagrams),
		"async_retransmissions": float64(res.Retransmissions), "async_duplicates": float64(res.Duplicates),
		"async_lost": float64(res.Lost), "async_crashes": float64(res.Crashes), "async_in_flight": float64(res.InFlight),
	}
	return out, metrics, err
}
