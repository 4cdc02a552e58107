// Package gen generates the random networks of network science, as connected
// *tokendist.Graph values fixed by a seed: G(n, p) (ErdosRenyi), preferential
// attachment (BarabasiAlbert), small worlds (WattsStrogatz) and random geometric
// graphs (RandomGeometric). Heavy-tailed degree distributions (Barabási–Albert) and
// clustered ones (Watts–Strogatz, geometric) test the balancers away from the regular
// networks of the papers.
//
// The networks of the papers themselves (rings, paths, trees, hypercubes, tori,
// shuffle-exchange, random regular graphs and random trees) are the core's generators
// in package tokendist; this package is beside the core, in the manner of gonum's
// graph/graphs/gen, so that the core keeps to what every balancer needs. The registry
// names these families ("erdos-renyi", "barabasi-albert", "watts-strogatz",
// "random-geometric") for experiment files.
//
// Each generator validates its parameters and returns an error starting with
// "tokendist: " that names the bad value, wrapping tokendist.ErrBadParameter,
// ErrTooLarge (the memory budget) or ErrNotConnected (a family that drew no connected
// network in 100 draws, or that is refused at once below its connectivity threshold).
package gen
