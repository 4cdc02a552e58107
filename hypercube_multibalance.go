package tokendist

import (
	"fmt"
	"math"
)

// MultiOptions configures NewMultiBalance. The zero value runs the least multi-discrepancy
// recursion on the hypercube (dimension order on the shuffle-exchange) with error at
// most log p per group.
type MultiOptions struct {
	// Ascending multi-balances across dimensions 0, 1, ..., d−1 in order (the
	// straightforward version of Plaxton's section 3.3) instead of the recursion of
	// section 3.1. The shuffle-exchange always uses this order.
	Ascending bool
	// MinError appends the minimum-error post-processing of section 3.1, group after
	// group: an all-reduce of the group's minimum, then Leighton's algorithm on the
	// tokens above it. Each group's block starts where the previous group's ended, so the
	// totals per processor stay within one of each other as well.
	MinError bool
}

// MultiBalancer runs Plaxton's NewMultiBalance (section 3) through Run. The loads Run sees
// are the total tokens per processor; the tokens of each of the g groups live on the
// balancer (Groups). Run checks that the totals are conserved; every step also conserves
// every group. A MultiBalancer may be reused for several runs (each starts from the
// group loads given to NewMultiBalance), not concurrently.
type MultiBalancer struct {
	core  cubeCore
	start []int64 // node-major initial group loads, p·g
	rows  []int64 // node-major current group loads, p·g
}

var (
	_ Balancer     = (*MultiBalancer)(nil)
	_ Initializer  = (*MultiBalancer)(nil)
	_ Terminator   = (*MultiBalancer)(nil)
	_ Reporter     = (*MultiBalancer)(nil)
	_ fmt.Stringer = (*MultiBalancer)(nil)
)

// NewMultiBalance returns a balancer for g = len(groups) token types on Hypercube(d) or
// ShuffleExchange(d) (Plaxton, section 3): groups[j][v] is the number of tokens of group
// j on processor v, and the loads given to Run must be their sums per processor. It
// balances every group with error at most log p (Lemma 2.3 per group), or with minimum
// error per group with opts.MinError.
//
// Multi-balancing a pair (Definition 3.1) splits every group evenly; the odd tokens of
// the groups with an odd sum go alternately to the two processors, the first to the one
// with fewer tokens in total, so totals that start within one of each other stay so. It
// costs the larger number of tokens either processor sends plus g steps to exchange the
// g counts; a step costs the largest pair cost.
//
// The default order is the recursion of section 3.1: every subcube of dimension l ≥ 2
// chooses the dimension of least multi-discrepancy δ^M_i (Definition 3.2) by an
// all-reduce of g·l signed sums (CubeTimes.Select), the subcubes recurse in parallel,
// and the balancing Steps run bottom-up, as in NewHypercubeBalance: 2d−1 Steps, O(p·g·d)
// work. Plaxton's Theorem 3.1 bounds its time by O((n/p)(log g log p)^{1/2} + g log² p).
// With opts.Ascending, or on the shuffle-exchange, the d Steps multi-balance dimensions
// 0..d−1 in order; on the shuffle-exchange each is followed by an unshuffle that moves,
// around each necklace, only every group's surplus over the necklace minimum
// (section 3.3).
//
// It returns an error wrapping ErrBadParameter for g < 1 or a network that is neither
// Hypercube(d) nor ShuffleExchange(d) for d = log2(order), and one wrapping ErrBadLoads
// for a group of the wrong length, a negative count or a total that overflows int64.
// The group loads are copied.
func NewMultiBalance(net Network, groups []Loads, opts *MultiOptions) (*MultiBalancer, error) {
	shape, err := detectCube("NewMultiBalance", net)
	if err != nil {
		return nil, err
	}
	g := len(groups)
	if g < 1 {
		return nil, badParam("NewMultiBalance needs g ≥ 1 groups, got g = %d", g)
	}
	p := 1 << shape.d
	if g > math.MaxInt/(2*p) {
		return nil, badParam("NewMultiBalance with g = %d groups on %d processors is too large", g, p)
	}
	var total int64
	for j, grp := range groups {
		if len(grp) != p {
			return nil, fmt.Errorf("%w: group %d has %d loads for a network of %d nodes", ErrBadLoads, j, len(grp), p)
		}
		t, err := grp.Validate()
		if err != nil {
			return nil, fmt.Errorf("%w (group %d)", err, j)
		}
		if total > math.MaxInt64-t {
			return nil, fmt.Errorf("%w: the total of all groups overflows int64 at group %d", ErrBadLoads, j)
		}
		total += t
	}
	var o MultiOptions
	if opts != nil {
		o = *opts
	}
	algo := algoRecursive
	if o.Ascending || shape.topo == topoShuffleExchange {
		algo = algoAscend
	}
	b := &MultiBalancer{start: make([]int64, p*g)}
	for j, grp := range groups {
		for v, x := range grp {
			b.start[v*g+j] = x
		}
	}
	name := "NewMultiBalance"
	if algo == algoAscend {
		name = "AscendingMultiBalance"
	}
	b.core.setup(name, shape, g, algo, o.MinError)
	return b, nil
}

// Init validates the network, checks that the loads are the group sums, and restarts
// from the initial group loads (Initializer).
//
// It refuses a Workload and Churn: the loads must stay the sums of the group loads, and
// the schedule is fixed in advance.
func (b *MultiBalancer) Init(s *State) error {
	if b == nil {
		return nilReceiver("MultiBalancer", "Init")
	}
	c := &b.core
	c.ready.reset()
	if err := refuseDynamic(s, c.name, false, false, "the loads must stay the sums of the group loads on a fixed schedule"); err != nil {
		return err
	}
	if err := sameCube(c.name, c.shape, s.Net); err != nil {
		return err
	}
	g := c.w
	for v, x := range s.Loads {
		var t int64
		for _, y := range b.start[v*g : (v+1)*g] {
			t += y
		}
		if t != x {
			return fmt.Errorf("%w: load %d at node %d is not the sum %d of its group loads", ErrBadLoads, x, v, t)
		}
	}
	if b.rows == nil {
		b.rows = make([]int64, len(b.start))
	}
	copy(b.rows, b.start)
	c.reset(s, b.rows)
	return nil
}

// Step runs the next step of the schedule (Balancer). Before Init it returns an error
// wrapping ErrNotInitialized.
func (b *MultiBalancer) Step(s *State) error {
	if b == nil {
		return nilReceiver("MultiBalancer", "Step")
	}
	return b.core.step(s)
}

// Done reports whether the schedule is finished (Terminator).
func (b *MultiBalancer) Done(*State) bool { return b.core.phase == phaseDone }

// MultiBalanceReport is what a MultiBalance run reports (Result.Report).
type MultiBalanceReport struct {
	// Times is the model time split by activity (Plaxton's accounting).
	Times CubeTimes `json:"times"`
	// Groups[j] is token group j's final loads, one per processor.
	Groups []Loads `json:"groups"`
	// MaxGroupDiscrepancy is the largest discrepancy of one group (section 3's
	// multi-discrepancy bound is on it).
	MaxGroupDiscrepancy int64 `json:"max_group_discrepancy"`
}

// String summarises the report: the model time and the largest group discrepancy.
func (r MultiBalanceReport) String() string {
	return fmt.Sprintf("%v, largest group discrepancy %d", r.Times, r.MaxGroupDiscrepancy)
}

// Report returns the run's MultiBalanceReport (Reporter): the times and copies of the
// groups' loads, in O(p·g).
func (b *MultiBalancer) Report(*State) any {
	r := MultiBalanceReport{Times: b.core.times, Groups: make([]Loads, b.core.w)}
	for j := range r.Groups {
		r.Groups[j] = b.group(j)
		r.MaxGroupDiscrepancy = max(r.MaxGroupDiscrepancy, r.Groups[j].Discrepancy())
	}
	return r
}

// String names the algorithm, the network and g.
func (b *MultiBalancer) String() string { return b.core.String() }

// NumGroups returns g.
func (b *MultiBalancer) NumGroups() int { return b.core.w }

// group returns a copy of group j's loads: the current run's (or the last run's), or
// the initial ones before any run; nil if j is not in 0..g−1. It costs O(p).
func (b *MultiBalancer) group(j int) Loads {
	g := b.core.w
	if j < 0 || j >= g {
		return nil
	}
	rows := b.rows
	if rows == nil {
		rows = b.start
	}
	out := make(Loads, b.core.p)
	for v := range out {
		out[v] = rows[v*g+j]
	}
	return out
}
