package tokendist

import (
	"fmt"
	"slices"
)

// This file holds what the diffusion schemes of Berenbrink, Cooper, Friedetzky,
// Friedrich and Sauerwald, "Randomized diffusion for indivisible loads" (section 2), share,
// and the paper's own scheme, RandomizedDiffusion. The comparators of its Table 1 are in
// diffusion_edge.go (RSW, FGS) and diffusion_matching.go (FS); the continuous process in
// diffusion_continuous.go; the spectral tools in spectral.go.
//
// Every scheme runs on the lazy random walk of the network: with d the maximum degree,
// P[i][j] = 1/(d+1) for every link {i, j} and P[i][i] = 1 − deg(i)/(d+1). On a d-regular
// network, the paper's setting, this is the paper's P (section 2); on other networks
// node i treats its d+1−deg(i) missing links as self-loops, so P stays symmetric and
// doubly stochastic and the uniform load stays its fixed point.

// diffusionChunk is the fixed number of nodes per random stream and per unit of
// parallel work, so that results do not depend on the number of workers.
const diffusionChunk = 4096

// lazyNet is the validated network view shared by the diffusion schemes and the
// spectral tools.
type lazyNet struct {
	net Network
	g   *Graph
	d   int // maximum degree; every node has d+1 slots

	// The λ_max that StepBudget uses, computed on first use.
	budgetLambda float64
	budgetErr    error
	budgetDone   bool
}

// Budget parameters: LambdaMax runs Lanczos with this tolerance and iteration limit.
const (
	budgetTol     = 1e-9
	budgetMaxIter = 3000
)

// stepBudget returns τ(G, K) (BalancingTime) for the network and K, the discrepancy of
// s.Loads (at least 1): the rounds after which Table 1 of Berenbrink et al. bounds
// every scheme's discrepancy. It fails with ErrBadParameter when τ exceeds
// DefaultMaxSteps, so that a run without an explicit budget is never long. λ_max comes from LambdaMax with Lanczos (at most
// budgetMaxIter iterations of O(n + m)), computed once per balancer; the value used is
// λ_max plus its error bound, so τ is not underestimated. It fails when Lanczos cannot
// bound λ_max to a tenth of the spectral gap within the iteration limit (a gap so small
// that τ would be far beyond any practical run).
func (ln *lazyNet) stepBudget(s *State) (int64, error) {
	if !ln.budgetDone {
		ln.budgetDone = true
		ln.budgetLambda, ln.budgetErr = ln.lambdaForBudget()
	}
	if ln.budgetErr != nil {
		return 0, ln.budgetErr
	}
	K := max(s.Loads.Discrepancy(), 1)
	tau, err := BalancingTime(ln.budgetLambda, ln.g.Order(), K)
	if err != nil {
		return 0, err
	}
	if tau > DefaultMaxSteps {
		return 0, badParam("τ(G, K) = %d rounds (λ_max = %.9g, K = %d) exceeds DefaultMaxSteps = %d", tau, ln.budgetLambda, K, DefaultMaxSteps)
	}
	return tau, nil
}

func (ln *lazyNet) lambdaForBudget() (float64, error) {
	if ln.g.Order() == 1 {
		return 0, nil
	}
	sp, err := ln.lanczosSpectrum(SpectralOptions{Method: SpectralLanczos, Tol: budgetTol, MaxIter: budgetMaxIter})
	// λ_max ≤ max(λ_2 + Bound2, −λ_n + BoundN); the bound that matters is the one of
	// the end that sets it.
	lam := max(sp.Lambda2+sp.Bound2, -sp.LambdaN+sp.BoundN)
	bound := lam - sp.LambdaMax
	if err != nil && !(bound <= sp.Gap()/10) {
		return 0, err
	}
	if !(lam < 1) {
		return 0, fmt.Errorf("%w: the spectral gap of %v is below the accuracy %g of λ_max", ErrNotConverged, ln.g, bound)
	}
	return lam, nil
}

// newLazyNet validates net for diffusion: it must have nodes, no isolated node (when it
// has more than one), and be connected.
func newLazyNet(net Network) (*lazyNet, error) {
	g, err := AsGraph(net)
	if err != nil {
		return nil, err
	}
	n := g.Order()
	if n == 0 {
		return nil, badParam("diffusion needs at least one node, got an empty network")
	}
	if n > 1 {
		for v := 0; v < n; v++ {
			if g.Degree(v) == 0 {
				return nil, fmt.Errorf("%w: node %d of %d is isolated (degree 0)", ErrNotConnected, v, n)
			}
		}
		if err := requireConnected(g); err != nil {
			return nil, err
		}
	}
	return &lazyNet{net: net, g: g, d: g.MaxDegree()}, nil
}

// same reports an error unless net is the network ln was built for (the same *Graph,
// or a network with the same links).
func (ln *lazyNet) same(net Network) error {
	if g, ok := net.(*Graph); ok && g == ln.g {
		return nil
	}
	g, err := AsGraph(net)
	if err != nil {
		return err
	}
	if !slices.Equal(g.off, ln.g.off) || !slices.Equal(g.adj, ln.g.adj) {
		return badParam("balancer was built for %v, but Run got %v", ln.g, g)
	}
	return nil
}

// chunks returns the number of fixed-size chunks of the nodes.
func (ln *lazyNet) chunks() int { return (ln.g.Order() + diffusionChunk - 1) / diffusionChunk }

// chunkRange returns the nodes of chunk c.
func (ln *lazyNet) chunkRange(c int) (int, int) {
	return c * diffusionChunk, min(ln.g.Order(), (c+1)*diffusionChunk)
}

// workers returns how many goroutines a step over the chunks may use.
func (ln *lazyNet) workers(limit int) int { return max(1, min(limit, ln.chunks())) }

// backPositions returns, for every edge end e = (k → j), the position of k in j's
// neighbour list, in O(n + m): scanning k upwards, k is the next unseen neighbour of j.
func (ln *lazyNet) backPositions() []int32 {
	g := ln.g
	seen := make([]int32, g.Order())
	pos := make([]int32, len(g.adj))
	for k := 0; k < g.Order(); k++ {
		for e := g.off[k]; e < g.off[k+1]; e++ {
			j := g.adj[e]
			pos[e] = seen[j]
			seen[j]++
		}
	}
	return pos
}

// reverseEnds returns, for every edge end e = (k → j), the index of the end (j → k).
func (ln *lazyNet) reverseEnds() []int32 {
	rev := ln.backPositions()
	for e, j := range ln.g.adj {
		rev[e] += int32(ln.g.off[j])
	}
	return rev
}

// sumChunks adds per-chunk counters in chunk order.
func sumChunks(xs []int64) int64 {
	var t int64
	for _, x := range xs {
		t += x
	}
	return t
}
