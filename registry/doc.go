// Package registry names what an experiment is made of: network generators, load
// distributions, algorithms (every balancer constructor of package tokendist) and
// metrics, each an Entry with typed, documented parameters (Param, Params) and the
// section of the paper it comes from. Default returns the process-wide registry of the
// built-in entries (what the tokendist command sees); New returns a fresh registry with
// the same built-in entries, to which a user adds their own without touching Default.
//
// A Spec names one run: a network, loads and an algorithm with their parameters, stop
// rules, a seed and metrics. Canonical fills in every default, so equal runs have equal
// Specs (the experiment package keys its database by them); Build returns the network,
// loads and balancer; Run runs the Spec through tokendist.Run and computes its metrics
// into a Result.
//
//	reg := registry.Default()
//	res, err := reg.Run(ctx, registry.Spec{
//		Network:   registry.Choice{Name: "ring", Params: registry.Params{"n": 64}},
//		Loads:     registry.Choice{Name: "point-mass", Params: registry.Params{"tokens": 640}},
//		Algorithm: registry.Choice{Name: "randomized-diffusion"},
//		Seed:      1,
//	}, nil)
//
// Names are looked up exactly; an unknown name is an error wrapping ErrUnknownName (and
// tokendist.ErrBadParameter) that lists the known ones. Every error starts with
// "tokendist: ". A Registry is safe for concurrent use; registering is done before
// running. Costs are those of the entries: a lookup is O(1), Canonical O(size of the
// Spec), Run the cost of the run.
package registry
