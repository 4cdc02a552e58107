package tokendisttest_test

import (
	"testing"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/registry"
	"github.com/tokendist/tokendist/tokendisttest"
)

// TestBuiltinBalancers runs the contract on every algorithm of the default registry,
// with its default parameters: every built-in balancer of the module, and any added to
// the registry later, is held to the same contract a user's balancer is.
func TestBuiltinBalancers(t *testing.T) {
	reg := registry.Default()
	entries := reg.Entries(registry.KindAlgorithm)
	if len(entries) < 10 {
		t.Fatalf("the default registry lists %d algorithms; expected every built-in balancer", len(entries))
	}
	for _, e := range entries {
		params, err := e.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: default parameters: %v", e.Name, err)
		}
		ctor, err := reg.Constructor(registry.KindAlgorithm, e.Name)
		if err != nil {
			t.Fatal(err)
		}
		build := ctor.(registry.AlgorithmFunc)
		// The loads depend on n only, so that an algorithm built for its loads (the
		// multi-balance groups) runs on the same loads for every seed.
		loads := func(n int, _ uint64) (tokendist.Loads, error) { return tokendist.RandomRange(n, 0, 40, 1) }
		mayAllocate := ""
		if e.Name == "ring" {
			// Gao and Rosenberg's dag starts as one task on node 0 and grows.
			loads = func(n int, _ uint64) (tokendist.Loads, error) { return tokendist.PointMass(n, 1, 0) }
			mayAllocate = "the growing dag's tasks are created as they are spawned (Gao and Rosenberg, section 1.3)"
		}
		tokendisttest.Check(t, tokendisttest.Case{
			Name: e.Name,
			New: func(g *tokendist.Graph) (tokendist.Balancer, error) {
				l, err := loads(g.Order(), 1)
				if err != nil {
					return nil, err
				}
				return build(g, l, params)
			},
			Loads:       loads,
			MayAllocate: mayAllocate,
		})
	}
}
