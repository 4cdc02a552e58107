package tokendist

import (
	"fmt"

	"github.com/tokendist/tokendist/internal/par"
	"github.com/tokendist/tokendist/internal/rng"
)

// edgeRule is how an edge-based scheme rounds the continuous flow (X_u − X_v)/(d+1).
type edgeRule uint8

const (
	ruleRSW     edgeRule = iota // round towards zero
	ruleFGSDet                  // round so that the edge's accumulated error is smallest
	ruleFGSRand                 // round up with probability equal to the fraction
)

// edgeDiffusion is the engine of the edge-based schemes of Table 1 (Berenbrink et al.):
// every link {u, v}, u < v, moves an integer flow F from u to v (negative: from v to
// u) that rounds the continuous diffusion flow (X_u − X_v)/(d+1) by the scheme's rule.
// A round takes two passes. The first copies the loads (the round is synchronous) and,
// for FGSRandomized, draws every link's rounding at its lower end, with the chunk's
// stream, and mirrors it to the other end. In the second, every node computes the
// flows of all its links from the copied loads and adds them; both ends of a link
// compute its flow in the lower end's terms, so they agree exactly, and no per-link
// flow array is read at random. Step adds |F| per link to State.Moved and one message
// per link with F ≠ 0 to State.Messages. Both passes cost O(n + m) and use up to
// State.Workers goroutines on networks of more than 4096 nodes; results do not depend
// on the number of workers. Step does not allocate.
type edgeDiffusion struct {
	ln    *lazyNet
	rule  edgeRule
	slots int64
	rev   []int32 // FGSRandomized: the reverse of every end
	old   Loads   // the loads at the start of the round
	// FGSDeterministic: for the end (k → j), (d+1)·(accumulated discrete − continuous
	// flow from k to j); the two ends of a link hold opposite values.
	err []int32
	// FGSRandomized: for both ends of a link, whether it rounds up this round (in the
	// lower end's terms).
	up          []uint8
	streams     []fixedDigits
	moved, msgs []int64
	grp         par.Group
	workers     int
	s           *State
	prepFn      func(lo, hi int)
	applyFn     func(lo, hi int)
	ready       initGuard
}

// String names the scheme by its rule, for errors raised inside the shared code (the
// exported types name themselves with their own String). O(1).
func (b *edgeDiffusion) String() string {
	switch b.rule {
	case ruleFGSDet:
		return "FGSDeterministic"
	case ruleFGSRand:
		return "FGSRandomized"
	}
	return "RSW"
}

func (b *edgeDiffusion) build(net Network, rule edgeRule) error {
	ln, err := newLazyNet(net)
	if err != nil {
		return err
	}
	b.ln, b.rule, b.slots = ln, rule, int64(ln.d+1)
	if rule == ruleFGSRand {
		b.rev = ln.reverseEnds()
	}
	return nil
}

// StepBudget returns Run's default step budget (StepBudgeter): τ(G, K) rounds
// (BalancingTime), the horizon after which Table 1 of Berenbrink et al. bounds the discrepancy,
// with K the discrepancy of s.Loads (at least 1) and λ_max replaced by the certified
// upper bound Spectrum.Upper of LambdaMax (IntervalTol 0.01, Delta 1e-6), computed once
// per balancer: with probability ≥ 1 − 10^-6 over Lanczos's random start the budget is
// not short, and it is at most about 1 % longer than τ from the exact λ_max. It fails
// with ErrBadParameter, naming τ, when τ exceeds DefaultMaxSteps (decided as soon as the
// certified lower bound on λ_max shows it), and with ErrNotConverged when 100000
// Lanczos iterations do not certify λ_max: set RunOptions.MaxSteps or UseTarget there.
// It costs O((n + m)·i) the first time, with i Lanczos iterations (about
// ln(√n·10^6)/√(0.01·gap) at most, far fewer than τ), and O(n) after.
func (b *edgeDiffusion) StepBudget(s *State) (int64, error) { return b.ln.stepBudget(s) }

// Init checks that the run's network is the one the balancer was built for, prepares
// buffers and clears the accumulated rounding errors.
func (b *edgeDiffusion) Init(s *State) error {
	b.ready.reset()
	if err := b.ln.same(s.Net); err != nil {
		return err
	}
	c, ends := b.ln.chunks(), len(b.ln.g.adj)
	if b.old == nil {
		b.old = make(Loads, b.ln.g.Order())
		b.moved, b.msgs = make([]int64, c), make([]int64, c)
		switch b.rule {
		case ruleFGSDet:
			b.err = make([]int32, ends)
		case ruleFGSRand:
			b.up = make([]uint8, ends)
			b.streams = make([]fixedDigits, c)
		}
		b.prepFn, b.applyFn = b.prepChunks, b.applyChunks
	}
	clear(b.err)
	b.workers = b.ln.workers(s.Workers)
	b.ready.set(s)
	return nil
}

// Step performs one synchronous round. Before Init it returns an error wrapping
// ErrNotInitialized.
func (b *edgeDiffusion) Step(s *State) error {
	if err := b.ready.check(s, b); err != nil {
		return err
	}
	b.s = s
	c := b.ln.chunks()
	b.grp.For(c, b.workers, b.prepFn)
	b.grp.For(c, b.workers, b.applyFn)
	b.s = nil
	s.Moved += sumChunks(b.moved)
	s.Messages += sumChunks(b.msgs)
	s.Time++
	return nil
}

// floorDiv returns ⌊a/b⌋ and a − b·⌊a/b⌋ ∈ [0, b) for b > 0, without a branch.
func floorDiv(a, b int64) (int64, int64) {
	q, r := a/b, a%b
	neg := r >> 63 // −1 when r < 0
	return q + neg, r + neg&b
}

// prepChunks is the first pass: copy the loads and, for FGSRandomized, draw every
// link's rounding at its lower end (one digit per link) and mirror it.
func (b *edgeDiffusion) prepChunks(lo, hi int) {
	loads, off, adj, D := b.s.Loads, b.ln.g.off, b.ln.g.adj, b.slots
	for c := lo; c < hi; c++ {
		v0, v1 := b.ln.chunkRange(c)
		copy(b.old[v0:v1], loads[v0:v1])
		if b.rule != ruleFGSRand {
			continue
		}
		if b.s.NodeStreams {
			b.prepNodes(v0, v1)
			continue
		}
		st := &b.streams[c]
		rng.Reseed(&st.src, b.s.Seed, b.s.Steps, c)
		st.reset(uint64(D))
		for u := v0; u < v1; u++ {
			for e := off[u]; e < off[u+1]; e++ {
				if v := int(adj[e]); v > u {
					_, r := floorDiv(loads[u]-loads[v], D)
					up := uint8(0)
					if int64(st.draw()) < r {
						up = 1
					}
					b.up[e], b.up[b.rev[e]] = up, up // distinct bytes: no race with v's chunk
				}
			}
		}
	}
}

// prepNodes draws the roundings of the links of nodes v0..v1-1 in node-stream mode
// (State.NodeStreams): node u draws one digit of range d+1 per link to a higher
// neighbour, in port order, from its own stream (nodeFixed), as its node program does.
func (b *edgeDiffusion) prepNodes(v0, v1 int) {
	loads, off, adj, D := b.s.Loads, b.ln.g.off, b.ln.g.adj, b.slots
	for u := v0; u < v1; u++ {
		nf := nodeFixed{nodeStream: newNodeStream(b.s.Seed, b.s.Steps, u)}
		nf.reset(uint64(D))
		for e := off[u]; e < off[u+1]; e++ {
			if v := int(adj[e]); v > u {
				_, r := floorDiv(loads[u]-loads[v], D)
				up := uint8(0)
				if int64(nf.draw()) < r {
					up = 1
				}
				b.up[e], b.up[b.rev[e]] = up, up
			}
		}
	}
}

// applyChunks is the second pass: every node adds the flows of its links, each
// computed branch-free in the terms of the link's lower end: sign is +1 at the lower
// end and −1 at the upper one, a = sign·(X_k − X_j) is the lower end's difference, F
// the flow from the lower end, and the node's load changes by −sign·F. Moved and
// Messages count each link at its lower end.
func (b *edgeDiffusion) applyChunks(lo, hi int) {
	loads, old, off, adj, D := b.s.Loads, b.old, b.ln.g.off, b.ln.g.adj, b.slots
	live := b.s.Live
	for c := lo; c < hi; c++ {
		var moved, msgs int64
		v0, v1 := b.ln.chunkRange(c)
		for k := v0; k < v1; k++ {
			xk := old[k]
			acc := xk
			for e := off[k]; e < off[k+1]; e++ {
				if live != nil && !live[e] {
					continue // a link that is down carries no flow; FGS keeps its error
				}
				j := int(adj[e])
				low := int64(k-j) >> 63 // −1 at the lower end, else 0
				sign := -2*low - 1
				a := sign * (xk - old[j])
				var f int64
				switch b.rule {
				case ruleRSW:
					f = a / D // Go's division rounds towards zero: ⌊|a|/(d+1)⌋ downhill
				case ruleFGSDet:
					el := sign * int64(b.err[e])
					q, r := floorDiv(a-el, D)
					q -= (D - 1 - 2*r) >> 63 // round half up: q+1 when 2r ≥ D
					f = q
					b.err[e] = int32(sign * (el + D*f - a))
				case ruleFGSRand:
					q, _ := floorDiv(a, D)
					f = q + int64(b.up[e])
				}
				acc -= sign * f
				af := max(f, -f)
				moved += af & low
				msgs -= (-af >> 63) & low
			}
			loads[k] = acc
		}
		b.moved[c], b.msgs[c] = moved, msgs
	}
}

// RSWDiffusion is the discrete diffusion of Rabani, Sinclair and Wanka (FOCS'98, [14] in
// Berenbrink et al.): every link moves ⌊|X_u − X_v|/(d+1)⌋ tokens from its higher to
// its lower end (the edge-based round-down of Table 1). It is deterministic, conserves
// tokens and never makes a load negative. Its discrepancy after τ(G, K) rounds is
// O(Ψ_1(G)) (LocalDivergence), Θ(log² n) on hypercubes (Berenbrink et al., Corollary
// 4.1) and Θ(n^{1/r}) on r-dimensional tori; d·diam(G) is a lower bound.
//
// The three edge-based schemes (RSW, FGSDeterministic, FGSRandomized) share one
// engine: a synchronous round costs O(n + m) time. Step adds |F| per link to
// State.Moved and one message per link with F ≠ 0 to State.Messages, uses up to
// State.Workers goroutines on large networks (results do not depend on the number of
// workers) and does not allocate. On a non-regular network d is the maximum degree (the
// lazy walk of TransitionMatrix). Run's default budget is τ(G, K) rounds (StepBudget).
//
// Dynamic runs: the three schemes accept a Workload (a round diffuses the loads the
// workload left) and Churn: a link that is down carries no flow in that round (its
// share stays at both ends, d is unchanged), and FGSDeterministic keeps its accumulated
// error until the link is back.
type RSWDiffusion struct{ edgeDiffusion }

var (
	_ Balancer     = (*RSWDiffusion)(nil)
	_ Initializer  = (*RSWDiffusion)(nil)
	_ StepBudgeter = (*RSWDiffusion)(nil)
	_ fmt.Stringer = (*RSWDiffusion)(nil)
)

// NewRSWDiffusion returns the RSW balancer for net. It rejects a nil, empty or
// disconnected network and isolated nodes (ErrNotConnected); it costs O(n + m).
// Run with MaxSteps 0 and UseTarget false stops it after τ(G, K) rounds with
// StatusMaxSteps (StepBudget), or fails before the first step if τ exceeds
// DefaultMaxSteps.
func NewRSWDiffusion(net Network) (*RSWDiffusion, error) {
	b := &RSWDiffusion{}
	if err := b.build(net, ruleRSW); err != nil {
		return nil, err
	}
	return b, nil
}

// String names the scheme.
func (*RSWDiffusion) String() string { return "RSW" }

// FGSDeterministic is the deterministic ("quasirandom") diffusion of Friedrich, Gairing
// and Sauerwald (SODA'10, [10] in Berenbrink et al.): every link {u, v} rounds the flow
// (X_u − X_v)/(d+1) up or down so that its accumulated rounding error (the sum over
// rounds of discrete minus continuous flow) is as small as possible; the error stays in
// (−1/2, 1/2] (ties round up: the link's lower end sends the extra token). Table 1:
// discrepancy Θ(log n) on hypercubes and O(1) on constant-dimensional tori after
// τ(G, K) rounds. It conserves
// tokens but may make loads negative, so it implements InvariantKeeper with Conserves
// only and Run counts the negative loads (Result.NegativeSteps, Result.MostNegative,
// Sample.Negative). A round costs O(n + m); see RSWDiffusion for the passes.
type FGSDeterministic struct{ edgeDiffusion }

var (
	_ Balancer        = (*FGSDeterministic)(nil)
	_ Initializer     = (*FGSDeterministic)(nil)
	_ StepBudgeter    = (*FGSDeterministic)(nil)
	_ InvariantKeeper = (*FGSDeterministic)(nil)
	_ fmt.Stringer    = (*FGSDeterministic)(nil)
)

// NewFGSDeterministic returns the deterministic FGS balancer for net. It rejects a nil,
// empty or disconnected network and isolated nodes (ErrNotConnected); it costs O(n + m).
// Run with MaxSteps 0 and UseTarget false stops it after τ(G, K) rounds with
// StatusMaxSteps (StepBudget), or fails before the first step if τ exceeds
// DefaultMaxSteps.
func NewFGSDeterministic(net Network) (*FGSDeterministic, error) {
	b := &FGSDeterministic{}
	if err := b.build(net, ruleFGSDet); err != nil {
		return nil, err
	}
	return b, nil
}

// String names the scheme.
func (*FGSDeterministic) String() string { return "FGSDeterministic" }

// Invariants declares that loads may go negative.
func (*FGSDeterministic) Invariants() Invariant { return Conserves }

// FGSRandomized is the randomized edge-based diffusion of Friedrich, Gairing and
// Sauerwald (SODA'10, [10] in Berenbrink et al.): every link {u, v}, independently, moves
// ⌈(X_u − X_v)/(d+1)⌉ tokens with probability equal to the fractional part and
// ⌊(X_u − X_v)/(d+1)⌋ otherwise. Table 1: discrepancy O(d·log log n/(1 − λ_max)) on
// d-regular graphs after τ(G, K) rounds. It conserves tokens but may make loads
// negative (see FGSDeterministic for how Run counts them). A round costs O(n + m) plus
// one digit per link; see RSWDiffusion for the passes.
//
// Node programs: NodePrograms. With RunOptions.NodeStreams the lower end u of every
// link draws its digit of round t from node.Random(seed, t, u, ·), as its program does,
// at the same O(n + m) per round but slower than the default per-chunk streams (no
// packed fast path; docs/performance.md has the factor).
type FGSRandomized struct{ edgeDiffusion }

var (
	_ Balancer        = (*FGSRandomized)(nil)
	_ Initializer     = (*FGSRandomized)(nil)
	_ StepBudgeter    = (*FGSRandomized)(nil)
	_ InvariantKeeper = (*FGSRandomized)(nil)
	_ fmt.Stringer    = (*FGSRandomized)(nil)
)

// NewFGSRandomized returns the randomized FGS balancer for net. It rejects a nil, empty
// or disconnected network and isolated nodes (ErrNotConnected); it costs O(n + m).
// Run with MaxSteps 0 and UseTarget false stops it after τ(G, K) rounds with
// StatusMaxSteps (StepBudget), or fails before the first step if τ exceeds
// DefaultMaxSteps.
func NewFGSRandomized(net Network) (*FGSRandomized, error) {
	b := &FGSRandomized{}
	if err := b.build(net, ruleFGSRand); err != nil {
		return nil, err
	}
	return b, nil
}

// String names the scheme.
func (*FGSRandomized) String() string { return "FGSRandomized" }

// Invariants declares that loads may go negative.
func (*FGSRandomized) Invariants() Invariant { return Conserves }
