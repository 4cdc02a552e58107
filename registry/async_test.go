package registry_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/tokendist/tokendist/node"

	"github.com/tokendist/tokendist"
	_ "github.com/tokendist/tokendist/async" // registers the simulator that runs network_model Specs
	"github.com/tokendist/tokendist/faults"
	"github.com/tokendist/tokendist/registry"
)

// gift is a one-step balancer with node programs: every node gives half its load to
// its first neighbour.
type gift struct{}

func (gift) Step(s *tokendist.State) error {
	if s.Steps > 0 {
		return nil
	}
	give := make(tokendist.Loads, len(s.Loads))
	for v := range s.Loads {
		if len(s.Net.Neighbors(v)) > 0 {
			give[v] = s.Loads[v] / 2
		}
	}
	for v, k := range give {
		s.Loads[v] -= k
		s.Loads[s.Net.Neighbors(v)[0]] += k
		s.Moved += k
		if len(s.Net.Neighbors(v)) > 0 {
			s.Messages++
		}
	}
	return nil
}

func (gift) NodePrograms(tokendist.Network, *node.Options) (node.Programs, error) {
	return giftPrograms{}, nil
}

type giftPrograms struct{}

func (giftPrograms) Program(int) (node.Program, error) { return giftProgram{}, nil }

type giftProgram struct{}

func (giftProgram) Start(c *node.Context) error {
	if c.Degree == 0 {
		return nil
	}
	return c.Send(0, node.Message{Tokens: c.Load / 2, Counted: true})
}
func (giftProgram) Receive(*node.Context, int, node.Message) error { return nil }
func (giftProgram) Tick(*node.Context) error                       { return nil }
func (giftProgram) Idle() bool                                     { return true }
func (giftProgram) AppendState(b []byte) []byte                    { return b }
func (giftProgram) RestoreState([]byte) error                      { return nil }

func giftRegistry(t *testing.T) *registry.Registry {
	reg := registry.New()
	err := reg.RegisterAlgorithm(registry.Entry{Name: "gift", Doc: "half to the first neighbour, once"},
		func(*tokendist.Graph, tokendist.Loads, registry.Params) (tokendist.Balancer, error) {
			return gift{}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestRunNetworkModel(t *testing.T) {
	reg := giftRegistry(t)
	spec := registry.Spec{
		Network:   registry.Choice{Name: "ring", Params: registry.Params{"n": 12}},
		Loads:     registry.Choice{Name: "random-range", Params: registry.Params{"lo": 0, "hi": 100}},
		Algorithm: registry.Choice{Name: "gift"},
		Stop:      registry.StopRule{MaxSteps: 1},
		Seed:      3,
	}
	sync, err := reg.Run(context.Background(), spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	spec.NetworkModel = &registry.NetworkModel{Model: faults.Model{
		Delay: faults.Exponential(0.1, 2), Loss: 0.2, Duplicate: 0.2, Reorder: 0.2,
		Crashes: []faults.Crash{{Node: 3, At: 0.5, DownFor: 2, Point: faults.CrashBeforePersist}},
	}}
	out, err := reg.Run(context.Background(), spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.Result.Status != tokendist.StatusDone || !slices.Equal(out.Result.Loads, sync.Result.Loads) ||
		out.Result.Moved != sync.Result.Moved || out.Result.Messages != sync.Result.Messages {
		t.Fatalf("async %v %v moved %d, sync %v moved %d", out.Result.Status, out.Result.Loads, out.Result.Moved, sync.Result.Loads, sync.Result.Moved)
	}
	if out.Metrics["async_lost"] == 0 || out.Metrics["async_events"] == 0 || out.Metrics["async_crashes"] != 1 {
		t.Fatalf("metrics %v", out.Metrics)
	}
	if out.Spec.NetworkModel == nil || out.Spec.NetworkModel.Loss != 0.2 {
		t.Fatalf("canonical spec lost the network model: %+v", out.Spec.NetworkModel)
	}

	// An algorithm without node programs, and options async does not support.
	bad := spec
	bad.Algorithm = registry.Choice{Name: "discrepancy-1"}
	bad.Network = registry.Choice{Name: "path", Params: registry.Params{"n": 8}}
	if _, err := reg.Run(context.Background(), bad, nil); !errors.Is(err, tokendist.ErrBadParameter) {
		t.Fatal(err)
	}
	bad = spec
	bad.Stop.UseTarget = true
	if _, err := reg.Run(context.Background(), bad, nil); !errors.Is(err, tokendist.ErrBadParameter) {
		t.Fatal(err)
	}
	bad = spec
	bad.NetworkModel = &registry.NetworkModel{Model: faults.Model{Loss: 2}}
	if _, err := reg.Run(context.Background(), bad, nil); !errors.Is(err, tokendist.ErrBadParameter) {
		t.Fatal(err)
	}
}

// TestPerfectTreeBatchParam: the perfect-tree entry's batch parameter reaches
// PerfectTreeOptions.Batch: the same loads and moves, fewer steps.
func TestPerfectTreeBatchParam(t *testing.T) {
	reg := registry.New()
	spec := registry.Spec{
		Network:   registry.Choice{Name: "random-tree", Params: registry.Params{"n": 40}},
		Loads:     registry.Choice{Name: "point-mass", Params: registry.Params{"tokens": 400}},
		Algorithm: registry.Choice{Name: "perfect-tree"},
		Seed:      5,
	}
	plain, err := reg.Run(context.Background(), spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	spec.Algorithm.Params = registry.Params{"batch": true}
	batched, err := reg.Run(context.Background(), spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(plain.Result.Loads, batched.Result.Loads) || plain.Result.Moved != batched.Result.Moved ||
		batched.Result.Steps >= plain.Result.Steps {
		t.Fatalf("batch: loads %v moved %d steps %d; per token: %v moved %d steps %d", batched.Result.Loads,
			batched.Result.Moved, batched.Result.Steps, plain.Result.Loads, plain.Result.Moved, plain.Result.Steps)
	}
}
