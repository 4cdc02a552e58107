package registry

import (
	"errors"
	"fmt"

	"github.com/tokendist/tokendist"
)

// RunSize holds the figures a run's cost grows with, known before it runs.
type RunSize struct {
	// N and Edges are the network's nodes and links.
	N, Edges int
	// InitialDiscrepancy is the discrepancy of the initial loads.
	InitialDiscrepancy int64
	// MaxSteps is the step budget the spec's stop rule fixes: Stop.MaxSteps, or τ(G, K)
	// with Stop.Tau (the smaller of the two when both are set); 0 when the balancer's
	// own budget or DefaultMaxSteps applies.
	MaxSteps int64
}

// Size builds the network and initial loads of s (not its balancer) and returns the
// figures its cost grows with, for estimating how long a sweep's remaining runs take.
// With Stop.Tau it computes λ_max through the registry's cache, which the run itself
// then reuses. It costs the network's and loads' construction, O(n + m) for most
// entries, plus LambdaMax (cached) with Stop.Tau. It returns the errors Build returns
// for the network and loads.
func (r *Registry) Size(s Spec) (RunSize, error) {
	s, err := r.Canonical(s)
	if err != nil {
		return RunSize{}, err
	}
	ne, err := r.lookup(KindNetwork, s.Network.Name)
	if err != nil {
		return RunSize{}, err
	}
	le, err := r.lookup(KindLoads, s.Loads.Name)
	if err != nil {
		return RunSize{}, err
	}
	if ne.network == nil || le.loads == nil {
		return RunSize{}, wrapf(tokendist.ErrBadParameter, "entry without a constructor")
	}
	g, err := ne.network(s.Network.Params, DeriveSeed(s.Seed, 1))
	if err != nil {
		return RunSize{}, wrapf(err, "network %s", s.Network.Name)
	}
	if g == nil {
		return RunSize{}, wrapf(tokendist.ErrNilNetwork, "network %s", s.Network.Name)
	}
	l, err := le.loads(g, s.Loads.Params, DeriveSeed(s.Seed, 2))
	if err != nil {
		return RunSize{}, wrapf(err, "loads %s", s.Loads.Name)
	}
	out := RunSize{N: g.Order(), Edges: g.Size(), InitialDiscrepancy: l.Discrepancy(), MaxSteps: s.Stop.MaxSteps}
	if s.Stop.Tau {
		sp, err := r.lambdaMax(g)
		if err != nil {
			return out, wrapf(err, "stop tau")
		}
		tau, err := tokendist.BalancingTime(sp.Upper, g.Order(), max(out.InitialDiscrepancy, 1))
		if err != nil {
			return out, wrapf(err, "stop tau")
		}
		if out.MaxSteps == 0 || tau < out.MaxSteps {
			out.MaxSteps = tau
		}
	}
	return out, nil
}

// treeHint adds to an ErrNotTree from algorithm entry e's constructor the option that
// fixes it: spanning_tree: true when e has that parameter (and it is off), else that the
// algorithm needs a tree network. Other errors are returned as they are.
func treeHint(e *regEntry, p Params, err error) error {
	if !errors.Is(err, tokendist.ErrNotTree) {
		return err
	}
	for _, par := range e.Params {
		if par.Name == "spanning_tree" {
			if on, _ := p["spanning_tree"].(bool); !on {
				return fmt.Errorf("%w (set spanning_tree: true to run %s on a breadth-first spanning tree of the network)", err, e.Name)
			}
		}
	}
	return fmt.Errorf("%w (%s runs on trees only: use a tree network such as kary-tree or random-tree)", err, e.Name)
}
