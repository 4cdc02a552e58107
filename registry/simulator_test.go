package registry

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tokendist/tokendist/node"

	"github.com/tokendist/tokendist"
)

// TestRunNetworkModelSimulator: a Spec with a NetworkModel runs in the registered
// Simulator, whose Result gets the balancer's name; without one, Run fails naming the
// package to import.
func TestRunNetworkModelSimulator(t *testing.T) {
	simMu.RLock()
	saved := simulator
	simMu.RUnlock()
	defer RegisterSimulator(saved)

	spec := Spec{
		Network:      Choice{Name: "ring", Params: Params{"n": 8}},
		Loads:        Choice{Name: "point-mass", Params: Params{"tokens": 16}},
		Algorithm:    Choice{Name: "randomized-diffusion"},
		Stop:         StopRule{MaxSteps: 3},
		NetworkModel: &NetworkModel{},
	}
	RegisterSimulator(nil)
	_, err := New().Run(context.Background(), spec, nil)
	if !errors.Is(err, tokendist.ErrBadParameter) || !strings.Contains(err.Error(), "no simulator is linked") {
		t.Fatalf("without a simulator: %v", err)
	}
	var rounds int64
	RegisterSimulator(func(_ context.Context, s Spec, g *tokendist.Graph, l tokendist.Loads, progs node.Programs, ro *tokendist.RunOptions) (tokendist.Result, map[string]float64, error) {
		rounds = ro.MaxSteps
		return tokendist.Result{Status: tokendist.StatusDone, Loads: l}, map[string]float64{"async_events": 7}, nil
	})
	out, err := New().Run(context.Background(), spec, nil)
	if err != nil || rounds != 3 || out.Result.Balancer == "" || out.Metrics["async_events"] != 7 {
		t.Fatalf("with a simulator: rounds %d, result %+v, metrics %v, %v", rounds, out.Result, out.Metrics, err)
	}
}
