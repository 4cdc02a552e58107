package tokendist

import (
	"fmt"
	"math/bits"

	"github.com/tokendist/tokendist/internal/par"
	"github.com/tokendist/tokendist/internal/rng"
)

// RandomMatching is the dimension exchange over random matchings with randomized
// rounding of Friedrich and Sauerwald (STOC'09, the FS column of Table 1 in Berenbrink
// et al.). Every round draws a random matching with the usual distributed protocol
// (each node is active with probability 1/2, an active node proposes to a uniformly
// random neighbour, and an inactive node that receives exactly one proposal accepts
// it); the two ends of every matched link then split their tokens evenly, and an odd
// token goes to either end with probability 1/2. Tokens are conserved and loads never
// go negative. Table 1: discrepancy O(Ψ_2(G)·√log n) and O(d·log log n/(1 − λ_max)) on
// d-regular graphs; note that a matching round moves less load than a diffusion round,
// so its continuous counterpart needs more rounds than τ(G, K).
//
// Step adds the tokens that crossed each matched link to State.Moved, and one message
// per proposal and per acceptance to State.Messages. A round costs O(n + m) time, uses
// up to State.Workers goroutines on large networks (results do not depend on the number
// of workers) and does not allocate. Run's default budget is τ(G, K) rounds
// (StepBudget).
//
// Dynamic runs: it accepts a Workload and Churn. A proposal sent over a link that is
// down is lost: the receiver does not count it, and the proposer stays active (it
// accepts no proposal itself), so a failed link is never matched.
//
// Node programs: NodePrograms. With RunOptions.NodeStreams node v draws its choices of
// round t from node.Random(seed, t, v, ·), as its program does, at the same O(n + m) per
// round but slower than the default per-chunk streams (docs/performance.md has the factor).
type RandomMatching struct {
	ln          *lazyNet
	prop        []int32 // the neighbour an active node proposes to, or −1
	coin        []uint8 // where an odd token goes if the node's proposal is accepted
	streams     []digits
	moved, msgs []int64
	grp         par.Group
	workers     int
	s           *State
	proposeFn   func(lo, hi int)
	matchFn     func(lo, hi int)
	ready       initGuard
}

var (
	_ Balancer     = (*RandomMatching)(nil)
	_ Initializer  = (*RandomMatching)(nil)
	_ StepBudgeter = (*RandomMatching)(nil)
	_ fmt.Stringer = (*RandomMatching)(nil)
)

// NewRandomMatching returns the FS random-matching balancer for net. It rejects a nil,
// empty or disconnected network and isolated nodes (ErrNotConnected); it costs O(n).
// Run with MaxSteps 0 and UseTarget false stops it after τ(G, K) rounds with
// StatusMaxSteps (StepBudget), or fails before the first step if τ exceeds
// DefaultMaxSteps.
func NewRandomMatching(net Network) (*RandomMatching, error) {
	ln, err := newLazyNet(net)
	if err != nil {
		return nil, err
	}
	b := &RandomMatching{ln: ln}
	b.proposeFn, b.matchFn = b.proposeChunks, b.matchChunks
	return b, nil
}

// String names the scheme.
func (*RandomMatching) String() string { return "RandomMatching" }

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
func (b *RandomMatching) StepBudget(s *State) (int64, error) { return b.ln.stepBudget(s) }

// Init checks that the run's network is the one b was built for and prepares buffers. It
// costs O(n) the first time and O(1) after, plus O(n + m) for a network that is not the
// same *Graph.
func (b *RandomMatching) Init(s *State) error {
	if b == nil {
		return nilReceiver("RandomMatching", "Init")
	}
	b.ready.reset()
	if err := b.ln.same(s.Net); err != nil {
		return err
	}
	if b.prop == nil {
		n, c := b.ln.g.Order(), b.ln.chunks()
		b.prop, b.coin = make([]int32, n), make([]uint8, n)
		b.streams = make([]digits, c)
		b.moved, b.msgs = make([]int64, c), make([]int64, c)
	}
	b.workers = b.ln.workers(s.Workers)
	b.ready.set(s)
	return nil
}

// Step performs one round: draw a random matching and balance across its links. It costs
// O(n + m). Before Init it returns an error wrapping ErrNotInitialized.
func (b *RandomMatching) Step(s *State) error {
	if b == nil {
		return nilReceiver("RandomMatching", "Step")
	}
	if err := b.ready.check(s, b); err != nil {
		return err
	}
	b.s = s
	c := b.ln.chunks()
	b.grp.For(c, b.workers, b.proposeFn)
	b.grp.For(c, b.workers, b.matchFn)
	b.s = nil
	s.Moved += sumChunks(b.moved)
	s.Messages += sumChunks(b.msgs)
	s.Time++
	return nil
}

// proposeChunks is the first pass: each node draws (active, coin, neighbour), batched
// so that one 64-bit draw serves nodes whose ranges 4·deg multiply to at most
// digitLimit.
func (b *RandomMatching) proposeChunks(lo, hi int) {
	off, adj := b.ln.g.off, b.ln.g.adj
	for c := lo; c < hi; c++ {
		v0, v1 := b.ln.chunkRange(c)
		if b.s.NodeStreams {
			b.msgs[c] = b.proposeNodes(v0, v1)
			continue
		}
		st := &b.streams[c]
		rng.Reseed(&st.src, b.s.Seed, b.s.Steps, c)
		var msgs int64
		for i := v0; i < v1; {
			prod, j := uint64(1), i
			for ; j < v1; j++ {
				hi, lo := bits.Mul64(prod, 4*uint64(max(1, off[j+1]-off[j])))
				if hi != 0 || lo > digitLimit {
					break
				}
				prod = lo
			}
			st.begin(prod)
			for k := i; k < j; k++ {
				deg := uint64(max(1, off[k+1]-off[k]))
				active, coin, pick := st.next(2), st.next(2), st.next(deg)
				b.prop[k], b.coin[k] = -1, uint8(coin)
				if active == 1 && off[k+1] > off[k] {
					b.prop[k] = adj[off[k]+int(pick)]
					msgs++
				}
			}
			i = j
		}
		b.msgs[c] = msgs
	}
}

// proposeNodes is proposeChunks' work on nodes v0..v1-1 in node-stream mode
// (State.NodeStreams): node k draws its choices from its own stream with rmNodeChoice,
// as its node program does. It returns the proposals made.
func (b *RandomMatching) proposeNodes(v0, v1 int) (msgs int64) {
	off, adj := b.ln.g.off, b.ln.g.adj
	for k := v0; k < v1; k++ {
		st := newNodeStream(b.s.Seed, b.s.Steps, k)
		active, coin, pick := rmNodeChoice(&st, off[k+1]-off[k])
		b.prop[k], b.coin[k] = -1, uint8(coin)
		if active == 1 && off[k+1] > off[k] {
			b.prop[k] = adj[off[k]+int(pick)]
			msgs++
		}
	}
	return msgs
}

// matchChunks is the second pass: an inactive node with exactly one proposer balances
// with it. It alone writes the proposer's load, which no other node reads.
func (b *RandomMatching) matchChunks(lo, hi int) {
	loads, off, adj, live := b.s.Loads, b.ln.g.off, b.ln.g.adj, b.s.Live
	for c := lo; c < hi; c++ {
		var moved, msgs int64
		v0, v1 := b.ln.chunkRange(c)
		for j := v0; j < v1; j++ {
			if b.prop[j] >= 0 {
				continue
			}
			p, count := -1, 0
			for e := off[j]; e < off[j+1]; e++ {
				if k := int(adj[e]); int(b.prop[k]) == j && (live == nil || live[e]) {
					p, count = k, count+1
				}
			}
			if count != 1 {
				continue
			}
			sum := loads[j] + loads[p]
			half := sum / 2
			xj := half
			if sum%2 == 1 && b.coin[p] == 0 {
				xj++
			}
			moved += max(xj-loads[j], loads[j]-xj)
			msgs++ // the acceptance
			loads[j], loads[p] = xj, sum-xj
		}
		b.moved[c] = moved
		b.msgs[c] += msgs
	}
}
