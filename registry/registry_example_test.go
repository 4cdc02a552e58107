package registry_test

import (
	"context"
	"fmt"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/registry"
)

// ExampleRegistry_Run runs THRESHOLD-1 on the complete binary tree of height 4 from a
// point mass, by names, and reports Theorem 16's bound with the final discrepancy.
func ExampleRegistry_Run() {
	reg := registry.New()
	out, err := reg.Run(context.Background(), registry.Spec{
		Network:   registry.Choice{Name: "kary-tree", Params: registry.Params{"height": 4}},
		Loads:     registry.Choice{Name: "point-mass", Params: registry.Params{"tokens": 1000}},
		Algorithm: registry.Choice{Name: "threshold-1"},
		Metrics:   []string{"threshold1_bound"},
		Seed:      1,
	}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out.N, "nodes:", out.Result.Status, "with discrepancy", out.Result.Discrepancy())
	fmt.Println("Theorem 16 bound:", out.Metrics["threshold1_bound"])
	fmt.Println("canonical network parameters:", out.Spec.Network.Params)
	// Output:
	// 31 nodes: Stable with discrepancy 1
	// Theorem 16 bound: 6
	// canonical network parameters: map[arity:2 height:4]
}

// halver moves half the difference across every edge (u, u+1) of a path, one edge
// parity per step: a toy custom balancer.
type halver struct{}

func (halver) Step(s *tokendist.State) error {
	l := s.Loads
	for u := int(s.Steps % 2); u+1 < len(l); u += 2 {
		d := (l[u] - l[u+1]) / 2
		l[u] -= d
		l[u+1] += d
	}
	return nil
}

// ExampleRegistry_RegisterAlgorithm registers a custom balancer under a name; experiment
// files (through the tokendist command built with this registry) and Specs can then use it.
func ExampleRegistry_RegisterAlgorithm() {
	reg := registry.New()
	err := reg.RegisterAlgorithm(registry.Entry{Name: "halver", Doc: "halve the difference on alternate path edges"},
		func(g *tokendist.Graph, l tokendist.Loads, p registry.Params) (tokendist.Balancer, error) {
			return halver{}, nil
		})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := reg.Run(context.Background(), registry.Spec{
		Network:   registry.Choice{Name: "path", Params: registry.Params{"n": 8}},
		Loads:     registry.Choice{Name: "point-mass", Params: registry.Params{"tokens": 800}},
		Algorithm: registry.Choice{Name: "halver"},
		Stop:      registry.StopRule{MaxSteps: 200},
	}, nil)
	fmt.Println(out.Result.Status, out.Result.Discrepancy(), out.Result.Loads.Total(), err)
	// Output:
	// MaxSteps 6 800 <nil>
}
