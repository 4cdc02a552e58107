package registry

import (
	"context"
	"math"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/async"
	"github.com/tokendist/tokendist/internal/errs"
)

// NetworkModel asks Registry.Run to run the algorithm's node programs
// (tokendist.NodeAlgorithm) in the event simulator of package async, on the network and
// fault model it embeds, instead of Run's synchronous stepper. Its JSON keys are those of
// an experiment file's network_model block: delay, loss, duplicate, reorder,
// reorder_delay, tick_interval, drift, crashes, crash_rate, down_time (see
// async.FaultModel) and the three below.
type NetworkModel struct {
	async.FaultModel
	// Patience is tokendist.NodeOptions.Patience.
	Patience int64 `json:"patience,omitempty"`
	// WorkloadEvery is async.Options.WorkloadEvery: the Spec's workload is applied
	// every WorkloadEvery time units (0: 1).
	WorkloadEvery float64 `json:"workload_every,omitempty"`
	// MaxTime is async.Options.MaxTime (0: async.DefaultMaxTime).
	MaxTime float64 `json:"max_time,omitempty"`
}

// asyncMetrics are the figures of an asynchronous run that Registry.Run adds to
// Result.Metrics.
var asyncMetrics = []string{"async_time", "async_events", "async_datagrams", "async_retransmissions",
	"async_duplicates", "async_lost", "async_crashes", "async_in_flight"}

// runAsync runs the node programs of b in async.Simulate: the Spec's rounds are its
// step budget (stop.max_steps or τ), its seed the simulation's, its workload applied
// every WorkloadEvery time units.
func runAsync(ctx context.Context, s Spec, g *tokendist.Graph, l tokendist.Loads, b tokendist.Balancer, ro *tokendist.RunOptions) (tokendist.Result, map[string]float64, error) {
	m := s.NetworkModel
	fail := tokendist.Result{Balancer: tokendist.BalancerName(b), Status: tokendist.StatusFailed}
	switch {
	case ro.Churn != nil:
		return fail, nil, errs.BadParam("network_model: churn is not supported (model faults with crashes and loss)")
	case s.Steady != nil:
		return fail, nil, errs.BadParam("network_model: steady is not supported")
	case s.Stop.UseTarget || s.Stop.NoStability || s.Stop.StopWhenStable:
		return fail, nil, errs.BadParam("network_model: only stop.max_steps and stop.tau apply (as the number of rounds)")
	}
	na, ok := b.(tokendist.NodeAlgorithm)
	if !ok {
		return fail, nil, errs.BadParam("network_model: algorithm %s has no node programs (it does not implement tokendist.NodeAlgorithm)", s.Algorithm.Name)
	}
	progs, err := na.NodePrograms(g, &tokendist.NodeOptions{Patience: m.Patience})
	if err != nil {
		return fail, nil, wrapf(err, "network_model: algorithm %s: NodePrograms", s.Algorithm.Name)
	}
	res, err := async.Simulate(ctx, g, progs, l, &async.Options{
		Seed: s.Seed, Rounds: ro.MaxSteps, Faults: m.FaultModel,
		Workload: ro.Workload, WorkloadEvery: m.WorkloadEvery, MaxTime: m.MaxTime,
	})
	out := tokendist.Result{
		Balancer: fail.Balancer, Status: res.Status, Loads: res.Loads,
		Time: int64(math.Ceil(res.Time)), Moved: res.Moved, Messages: res.Messages,
		Initial: l.Total(), Arrived: res.Arrived, Completed: res.Completed,
	}
	metrics := make(map[string]float64, len(asyncMetrics))
	for i, v := range []float64{res.Time, float64(res.Events), float64(res.Datagrams), float64(res.Retransmissions),
		float64(res.Duplicates), float64(res.Lost), float64(res.Crashes), float64(res.InFlight)} {
		metrics[asyncMetrics[i]] = v
	}
	return out, metrics, wrapf(err, "network_model")
}
