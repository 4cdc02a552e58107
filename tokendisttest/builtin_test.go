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

// TestBuiltinStepBadState: every built-in balancer's Step, called directly after Init,
// returns an error (never panics) on a nil *State and on a State whose Steps is
// negative (issue 36).
func TestBuiltinStepBadState(t *testing.T) {
	reg := registry.Default()
	g, err := tokendist.Ring(8)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := tokendist.KaryTree(tokendist.KaryShape{Height: 2, Arity: 2})
	if err != nil {
		t.Fatal(err)
	}
	cube, err := tokendist.Hypercube(3)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range reg.Entries(registry.KindAlgorithm) {
		params, err := e.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		ctor, err := reg.Constructor(registry.KindAlgorithm, e.Name)
		if err != nil {
			t.Fatal(err)
		}
		build := ctor.(registry.AlgorithmFunc)
		var b tokendist.Balancer
		var s *tokendist.State
		for _, net := range []*tokendist.Graph{tree, cube, g} { // the first network the algorithm accepts
			loads, err := tokendist.RandomRange(net.Order(), 0, 40, 1)
			if err != nil {
				t.Fatal(err)
			}
			if e.Name == "ring" {
				loads, _ = tokendist.PointMass(net.Order(), 1, 0)
			}
			bb, err := build(net, loads, params)
			if err != nil {
				continue
			}
			st := &tokendist.State{Net: net, Loads: loads, Workers: 1}
			if in, ok := bb.(tokendist.Initializer); ok {
				if err := in.Init(st); err != nil {
					continue
				}
			}
			b, s = bb, st
			break
		}
		if b == nil {
			t.Errorf("%s: no test network accepted", e.Name)
			continue
		}
		step := func(st *tokendist.State) (err error) {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s: Step panicked: %v", e.Name, p)
				}
			}()
			return b.Step(st)
		}
		if err := step(nil); err == nil {
			t.Errorf("%s: Step(nil) returned no error", e.Name)
		}
		s.Steps = -1
		if err := step(s); err == nil {
			t.Errorf("%s: Step with Steps = -1 returned no error", e.Name)
		}
	}
}
