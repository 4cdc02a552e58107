package tokendist_test

import (
	"context"
	"fmt"

	"github.com/tokendist/tokendist"
)

// ExampleRegistry_Run runs THRESHOLD-1 on the complete binary tree of height 4 from a
// point mass, by names, and reports Theorem 16's bound with the final discrepancy.
func ExampleRegistry_Run() {
	reg := tokendist.NewRegistry()
	out, err := reg.Run(context.Background(), tokendist.Spec{
		Network:   tokendist.Choice{Name: "kary-tree", Params: tokendist.Params{"height": 4}},
		Loads:     tokendist.Choice{Name: "point-mass", Params: tokendist.Params{"tokens": 1000}},
		Algorithm: tokendist.Choice{Name: "threshold-1"},
		Metrics:   []string{"threshold1_bound"},
		Seed:      1,
	}, 1)
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
	reg := tokendist.NewRegistry()
	err := reg.RegisterAlgorithm(tokendist.Entry{Name: "halver", Doc: "halve the difference on alternate path edges"},
		func(g *tokendist.Graph, l tokendist.Loads, p tokendist.Params) (tokendist.Balancer, error) {
			return halver{}, nil
		})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := reg.Run(context.Background(), tokendist.Spec{
		Network:   tokendist.Choice{Name: "path", Params: tokendist.Params{"n": 8}},
		Loads:     tokendist.Choice{Name: "point-mass", Params: tokendist.Params{"tokens": 800}},
		Algorithm: tokendist.Choice{Name: "halver"},
		Stop:      tokendist.StopRule{MaxSteps: 200},
	}, 1)
	fmt.Println(out.Result.Status, out.Result.Discrepancy(), out.Result.Loads.Total(), err)
	// Output:
	// MaxSteps 6 800 <nil>
}
