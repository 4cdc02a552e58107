package registry

import (
	"context"
	"sync"

	"github.com/tokendist/tokendist/node"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/faults"
	"github.com/tokendist/tokendist/internal/errs"
)

// NetworkModel asks Registry.Run to run the algorithm's node programs
// (tokendist.NodeAlgorithm) in an event simulator (the registered Simulator: package
// async's), under the fault model it embeds, instead of Run's synchronous stepper. Its
// JSON keys are those of an experiment file's network_model block: delay, loss,
// duplicate, reorder, reorder_delay, tick_interval, drift, crashes, crash_rate,
// down_time (see faults.Model) and the three below.
type NetworkModel struct {
	faults.Model
	// Patience is node.Options.Patience.
	Patience int64 `json:"patience,omitempty"`
	// WorkloadEvery is async.Options.WorkloadEvery: the Spec's workload is applied
	// every WorkloadEvery time units (0: 1).
	WorkloadEvery float64 `json:"workload_every,omitempty"`
	// MaxTime is async.Options.MaxTime (0: async.DefaultMaxTime).
	MaxTime float64 `json:"max_time,omitempty"`
}

// Simulator runs a Spec that has a NetworkModel: the node programs progs of its
// algorithm on g from l, with the Spec's seed, ro.MaxSteps rounds and ro.Workload
// (and ro.Recorder, which package async's uses as its async.Observer if it is one). It
// returns the run's Result (Balancer is filled in by Run) and the metrics it adds to
// Result.Metrics (package async's: async_time, async_events, async_datagrams,
// async_retransmissions, async_duplicates, async_lost, async_crashes, async_in_flight).
type Simulator func(ctx context.Context, s Spec, g *tokendist.Graph, l tokendist.Loads, progs node.Programs, ro *tokendist.RunOptions) (tokendist.Result, map[string]float64, error)

var (
	simMu     sync.RWMutex
	simulator Simulator
)

// RegisterSimulator makes f the process-wide Simulator that every Registry's Run uses
// for a Spec with a NetworkModel (a later call replaces it). Package async registers
// its event simulator when it is linked, so a program that runs such Specs imports it
// (the tokendist command does, through package experiment; a Go program may import it
// for its side effect: import _ "github.com/tokendist/tokendist/async"), while a
// program that only resolves a Spec's names (a fleet node) links no simulator. Safe
// for concurrent use. O(1).
func RegisterSimulator(f Simulator) {
	simMu.Lock()
	defer simMu.Unlock()
	simulator = f
}

// runAsync runs the node programs of b with the registered Simulator: the Spec's
// rounds are its step budget (stop.max_steps or τ), its seed the simulation's, its
// workload applied every WorkloadEvery time units.
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
	simMu.RLock()
	sim := simulator
	simMu.RUnlock()
	if sim == nil {
		return fail, nil, errs.BadParam("network_model: no simulator is linked (import _ \"github.com/tokendist/tokendist/async\")")
	}
	progs, err := na.NodePrograms(g, &node.Options{Patience: m.Patience})
	if err != nil {
		return fail, nil, wrapf(err, "network_model: algorithm %s: NodePrograms", s.Algorithm.Name)
	}
	out, metrics, err := sim(ctx, s, g, l, progs, ro)
	out.Balancer = fail.Balancer
	return out, metrics, wrapf(err, "network_model")
}
