package tokendist

import (
	"fmt"
	"math"
	"runtime"
	"sync"
)

// DivergenceOptions configures LocalDivergence; nil or the zero value is the default.
type DivergenceOptions struct {
	// Nodes lists the nodes k the maxima run over (nil: every node). On a
	// vertex-transitive network (Hypercube, Torus, Ring, Complete) every node gives the
	// same sums, so Nodes: []int{0} gives the exact value at 1/n of the cost.
	Nodes []int
	// LambdaMax is the network's λ_max if known (0: LocalDivergence computes it with
	// LambdaMax). It sets the tail bound that stops the sums, so it must not be too small.
	LambdaMax float64
}

// Divergence holds the local divergences of a network (Berenbrink et al., Definitions
// 2.1 and 2.2).
type Divergence struct {
	// Psi1 is the local 1-divergence Ψ_1(G) = max_k Σ_{t≥0} Σ_{{i,j}∈E} |P^t_ik − P^t_jk|
	// (Rabani, Sinclair and Wanka), which bounds RSW's discrepancy.
	Psi1 float64 `json:"psi1"`
	// Psi2 is the local 2-divergence Ψ_2(G) = max_k (Σ_t Σ_{{i,j}∈E} (P^t_ik − P^t_jk)²)^{1/2}.
	Psi2 float64 `json:"psi2"`
	// Upsilon2 is the refined local 2-divergence
	// Υ_2(G) = max_k (½ Σ_t Σ_i max_{j∈N(i)} (P^t_ik − P^t_jk)²)^{1/2} (Definition 2.2).
	Upsilon2 float64 `json:"upsilon2"`
	// ArgPsi1, ArgPsi2 and ArgUpsilon2 are nodes k attaining the maxima (the smallest).
	ArgPsi1     int `json:"arg_psi1"`
	ArgPsi2     int `json:"arg_psi2"`
	ArgUpsilon2 int `json:"arg_upsilon2"`
	// Rounds is the largest number of rounds t summed.
	Rounds int `json:"rounds"`
	// Tol bounds the truncated tails: the true Ψ_1, Ψ_2² and Υ_2² lie in [Psi1,
	// Psi1+Tol], [Psi2², Psi2²+Tol] and [Upsilon2², Upsilon2²+Tol].
	Tol float64 `json:"tol"`
}

// LocalDivergence computes Ψ_1, Ψ_2 and Υ_2 of a connected network exactly as
// Definitions 2.1 and 2.2 of Berenbrink et al. print them, for the transition matrix P
// (TransitionMatrix; the lazy walk with d = maximum degree on non-regular networks).
// For every node k it iterates the column u(t) = P^t e_k (P is symmetric) and adds the
// round's terms until a bound on the rest of each sum is at most tol: with
// x = u − 1/n, ‖B·P^s·x‖₂ ≤ λ_max^s·‖B·x‖₂ for the edge-node incidence matrix B, so the
// rest of the Ψ_2² (and Υ_2², which is smaller term by term) sum after round t is at
// most e₂·λ²/(1 − λ²) and that of Ψ_1 at most √m·√e₂·λ/(1 − λ), where e₂ is round t's
// Ψ_2² term. The cost is O(|Nodes|·T·(n + m)) with T ≈ log(m/tol)/(1 − λ_max) rounds,
// spread over the available cores by node k (results do not depend on the number of
// workers). It rejects tol ≤ 0 or NaN, nodes outside the network, a λ_max outside
// [0, 1), and what LambdaMax rejects (disconnected networks, isolated nodes).
func LocalDivergence(net Network, tol float64, opts *DivergenceOptions) (Divergence, error) {
	var o DivergenceOptions
	if opts != nil {
		o = *opts
	}
	if !(tol > 0) {
		return Divergence{}, badParam("LocalDivergence tolerance %v is not positive", tol)
	}
	ln, err := newLazyNet(net)
	if err != nil {
		return Divergence{}, err
	}
	n := ln.g.Order()
	nodes := o.Nodes
	if nodes == nil {
		nodes = make([]int, n)
		for k := range nodes {
			nodes[k] = k
		}
	}
	for _, k := range nodes {
		if k < 0 || k >= n {
			return Divergence{}, badParam("LocalDivergence node %d outside 0..%d", k, n-1)
		}
	}
	if len(nodes) == 0 {
		return Divergence{}, badParam("LocalDivergence needs at least one node")
	}
	lam := o.LambdaMax
	switch {
	case lam == 0 && n > 1:
		sp, err := LambdaMax(net, nil)
		if err != nil {
			return Divergence{}, err
		}
		// λ_max ≤ max(λ_2 + Bound2, −λ_n + BoundN): each end with its own bound.
		lam = math.Min(max(sp.Lambda2+sp.Bound2, -sp.LambdaN+sp.BoundN)+1e-12, math.Nextafter(1, 0))
	case !(lam >= 0 && lam < 1):
		return Divergence{}, badParam("LocalDivergence λ_max %v is outside [0, 1)", lam)
	}
	// The terms decay like λ^t from at most 2m, so log(2m·n/tol)/(1 − λ) rounds reach
	// tol in exact arithmetic; rounding can stall them above a tiny tol, hence a cap of
	// 4× that (plus slack), after which the result is ErrNotConverged.
	est := math.Log(2*float64(ln.g.Size()+1)*float64(n)/tol)/(1-lam) + 1
	if est*4+1000 > float64(math.MaxInt32) || est*float64(n+2*ln.g.Size())*float64(len(nodes)) > 1<<40 {
		return Divergence{}, badParam("LocalDivergence with tolerance %g and λ_max %v needs about %.3g rounds on %d nodes: too much work", tol, lam, est, len(nodes))
	}
	maxRounds := int(est*4) + 1000
	sums := make([]divSums, len(nodes))
	workers := max(1, min(runtime.GOMAXPROCS(0), len(nodes)))
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			u, v := make([]float64, n), make([]float64, n)
			for i := w; i < len(nodes); i += workers {
				sums[i] = divergenceAt(ln, nodes[i], lam, tol, maxRounds, u, v)
			}
		}(w)
	}
	wg.Wait()
	for i, s := range sums {
		if s.stalled {
			return Divergence{}, fmt.Errorf("%w: LocalDivergence at node %d: the tail bound stayed above tolerance %g after %d rounds (rounding)", ErrNotConverged, nodes[i], tol, s.rounds)
		}
	}
	res := Divergence{Tol: tol, ArgPsi1: nodes[0], ArgPsi2: nodes[0], ArgUpsilon2: nodes[0]}
	for i, s := range sums {
		k := nodes[i]
		better := func(x, best float64, arg int) bool { return x > best || x == best && k < arg }
		if better(s.psi1, res.Psi1, res.ArgPsi1) {
			res.Psi1, res.ArgPsi1 = s.psi1, k
		}
		if better(s.psi2, res.Psi2, res.ArgPsi2) {
			res.Psi2, res.ArgPsi2 = s.psi2, k
		}
		if better(s.ups2, res.Upsilon2, res.ArgUpsilon2) {
			res.Upsilon2, res.ArgUpsilon2 = s.ups2, k
		}
		res.Rounds = max(res.Rounds, s.rounds)
	}
	res.Psi2, res.Upsilon2 = math.Sqrt(res.Psi2), math.Sqrt(res.Upsilon2)
	return res, nil
}

// divSums are the sums of Definitions 2.1 and 2.2 for one node k (before the roots).
type divSums struct {
	psi1, psi2, ups2 float64
	rounds           int
	stalled          bool // the tail bound did not reach tol within the round cap
}

// divergenceAt sums the divergence terms of column k, using u and v as work space.
func divergenceAt(ln *lazyNet, k int, lam, tol float64, maxRounds int, u, v []float64) divSums {
	off, adj := ln.g.off, ln.g.adj
	D := float64(ln.d + 1)
	tail1 := math.Sqrt(float64(ln.g.Size())) * lam / (1 - lam)
	tail2 := lam * lam / (1 - lam*lam)
	clear(u)
	u[k] = 1
	var s divSums
	for {
		var e1, e2, eu float64
		for i := range u {
			ui := u[i]
			sum := float64(ln.d+1-(off[i+1]-off[i])) * ui
			top := 0.0
			for _, j := range adj[off[i]:off[i+1]] {
				uj := u[j]
				sum += uj
				dd := (ui - uj) * (ui - uj)
				top = math.Max(top, dd)
				if int(j) > i {
					e1 += math.Abs(ui - uj)
					e2 += dd
				}
			}
			eu += top
			v[i] = sum / D
		}
		s.psi1 += e1
		s.psi2 += e2
		s.ups2 += eu / 2
		s.rounds++
		if tail1*math.Sqrt(e2) <= tol && tail2*e2 <= tol {
			return s
		}
		if s.rounds >= maxRounds {
			s.stalled = true
			return s
		}
		u, v = v, u
	}
}

// HypercubePsi1 returns Theorem 4.4's closed form for the local 1-divergence of the
// d-dimensional hypercube (n = 2^d), evaluated as printed:
// Ψ_1 = (log₂n + 1)/n · Σ_{p=0}^{log₂n − 1} Σ_{ℓ=p+1}^{log₂n} C(log₂n, ℓ), which equals
// d(d+1)/2 since Σ_p Σ_{ℓ>p} C(d, ℓ) = Σ_ℓ ℓ·C(d, ℓ) = d·2^{d−1}. It costs O(d²) and
// rejects d outside 0..62.
func HypercubePsi1(d int) (float64, error) {
	if d < 0 || d > 62 {
		return 0, badParam("hypercube dimension must be in 0..62, got d = %d", d)
	}
	binom := make([]float64, d+1) // C(d, ℓ)
	binom[0] = 1
	for l := 1; l <= d; l++ {
		binom[l] = binom[l-1] * float64(d-l+1) / float64(l)
	}
	sum := 0.0
	for p := 0; p <= d-1; p++ {
		for l := p + 1; l <= d; l++ {
			sum += binom[l]
		}
	}
	return float64(d+1) / math.Ldexp(1, d) * sum, nil
}
