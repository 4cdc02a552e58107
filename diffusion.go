package tokendist

import (
	"errors"
	"fmt"
	"slices"
)

// This file holds what the diffusion schemes of Berenbrink, Cooper, Friedetzky,
// Friedrich and Sauerwald, "Randomized diffusion for indivisible loads" (section 2), share:
// the network as the lazy random walk sees it (lazyNet) and the default step budget. The
// paper's own scheme, RandomizedDiffusion, is in diffusion_randomized.go; the comparators
// of its Table 1 in diffusion_edge.go (RSW, FGS) and diffusion_matching.go (FS); the
// continuous process in diffusion_continuous.go; the spectral tools in spectral.go.
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

// Budget parameters: LambdaMax runs Lanczos under the interval stopping rule with this
// tolerance (Upper within 1 % of the gap) and iteration limit, at the default Delta.
const (
	budgetIntervalTol = 0.01
	budgetMaxIter     = 100000
	// budgetDenseOrder is the largest order for which the budget falls back on the dense
	// solver (O(n³) time) when Lanczos cannot certify λ_max.
	budgetDenseOrder = 1024
)

// stepBudget returns τ(G, K) (BalancingTime) for the network and K, the discrepancy of
// s.Loads (at least 1): the rounds after which Table 1 of Berenbrink et al. bounds
// every scheme's discrepancy. It fails with ErrBadParameter when τ exceeds
// DefaultMaxSteps, so that a run without an explicit budget is never long. λ_max is
// replaced by the certified upper bound Spectrum.Upper of LambdaMax's Lanczos (the
// interval stopping rule at budgetIntervalTol, at most budgetMaxIter iterations of
// O(n + m)), computed once per balancer, so that τ is not underestimated (with
// probability ≥ 1 − Delta over the random start) and is at most about 1 % long. The
// run is abandoned as soon as the certified lower bound alone gives τ(G, 1) >
// DefaultMaxSteps: the budget then fails whatever the K.
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

// lambdaForBudget returns the λ_max that stepBudget uses: the certified upper bound, or,
// when the run was abandoned because τ(lower, n, 1) > DefaultMaxSteps, the lower bound
// (which makes every τ exceed DefaultMaxSteps).
func (ln *lazyNet) lambdaForBudget() (float64, error) {
	n := ln.g.Order()
	if n == 1 {
		return 0, nil
	}
	tooLong := func(lower float64) bool {
		tau, err := BalancingTime(lower, n, 1)
		return err != nil || tau > DefaultMaxSteps
	}
	sp, err := ln.lanczosRun(SpectralOptions{Method: SpectralLanczos, IntervalTol: budgetIntervalTol, MaxIter: budgetMaxIter}, tooLong)
	if errors.Is(err, ErrNotConverged) && n <= budgetDenseOrder {
		// The recurrence ended (k = n − 1) before the interval was narrow enough: a small
		// network with a small gap. The dense solver is exact there.
		sp, err = ln.denseSpectrum()
	}
	if err != nil {
		return 0, err
	}
	if tooLong(sp.Lower) {
		return sp.Lower, nil
	}
	return sp.Upper, nil
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
