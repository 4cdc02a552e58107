package tokendist

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// This file holds the Balance operation of Plaxton, "Load balancing on the hypercube and
// shuffle-exchange" (Stanford TR STAN-CS-89-1281), section 2: balancing across a
// dimension (Definition 2.5), dimension order, the recursive algorithm Balance of
// section 2.3, Leighton's algorithm (section 2.1) and Theorem 2.4's minimum-error
// pipeline, on the hypercube and (by shuffle emulation) the shuffle-exchange.
//
// Error. Plaxton (section 2) says tokens are "balanced with error ξ" when the largest
// and the smallest load differ by ξ, that is ξ = Loads.Discrepancy() = max − min. The
// ideal distribution gives every processor ⌊n/p⌋ or ⌈n/p⌉ tokens; it is exactly the
// distribution of error MinimumError(n, p): 0 if p divides n, else 1.
//
// Cost model (section 1 and 2.3). A processor sends and/or receives one word (one token
// or one count) per time step. Balancing a pair with loads a and b (Definition 2.5 on one
// edge) costs PairTime(a, b) = ⌈|a − b|/2⌉ + PairOverhead: one step to exchange the two
// counts, then one step per token that crosses; the smaller side receives the odd token,
// so exactly ⌈|a − b|/2⌉ tokens cross. Balancing across a dimension runs all p/2 pairs
// in parallel and costs the largest PairTime among them. Every Step of these balancers
// advances State.Time by its cost in this model; CubeTimes splits the total by activity.

// PairOverhead is the constant of the model's pair cost |a − b|/2 + O(1): the one time
// step in which the two processors of a pair exchange their token counts.
const PairOverhead = 1

// PairTime returns the model time of balancing one pair of processors holding a and b
// tokens: ⌈|a − b|/2⌉ + PairOverhead (Plaxton, section 2.3). It costs O(1). It is exact
// for any a and b (|a − b| is computed in 64 unsigned bits); the one result above
// MaxInt64, for a and b at opposite ends of the int64 range, is an error wrapping
// ErrOverflow that names a and b.
func PairTime(a, b int64) (int64, error) {
	d := uint64(a) - uint64(b)
	if a < b {
		d = uint64(b) - uint64(a)
	}
	t := d/2 + d&1 + PairOverhead
	if t > math.MaxInt64 {
		return 0, overflow("PairTime(%d, %d): ⌈|a − b|/2⌉ + %d exceeds MaxInt64", a, b, PairOverhead)
	}
	return int64(t), nil
}

// MinimumError returns the smallest error (max − min) any distribution of n tokens on p
// processors can have: 0 if p divides n, else 1 (Plaxton, section 2). For p < 1 or
// n < 0 it returns an error wrapping ErrBadParameter that names the value. It costs O(1).
func MinimumError(n int64, p int) (int64, error) {
	switch {
	case p < 1:
		return 0, badParam("MinimumError: p = %d processors (want ≥ 1)", p)
	case n < 0:
		return 0, badParam("MinimumError: n = %d tokens (want ≥ 0)", n)
	case n%int64(p) == 0:
		return 0, nil
	}
	return 1, nil
}

// cubeTopology is the kind of network a cube balancer runs on.
type cubeTopology uint8

const (
	topoHypercube cubeTopology = iota
	topoShuffleExchange
)

// cubeShape is a validated hypercube or shuffle-exchange of dimension d.
type cubeShape struct {
	d    int
	topo cubeTopology
	net  Network
}

func (c cubeShape) String() string {
	if c.topo == topoShuffleExchange {
		return fmt.Sprintf("ShuffleExchange(%d)", c.d)
	}
	return fmt.Sprintf("Hypercube(%d)", c.d)
}

// reduceTime is the model time of an all-reduce (or prefix sum, or broadcast) of one
// word over the whole network: one step per dimension on the hypercube; on the
// shuffle-exchange each dimension is an exchange step followed by an unshuffle step.
func (c cubeShape) reduceTime() int64 {
	if c.topo == topoShuffleExchange {
		return 2 * int64(c.d)
	}
	return int64(c.d)
}

// log2Order returns d with n = 2^d, or false.
func log2Order(n int) (int, bool) {
	if n < 1 || n&(n-1) != 0 {
		return 0, false
	}
	return bits.TrailingZeros(uint(n)), true
}

// detectCube validates that net is Hypercube(d) or ShuffleExchange(d) for d = log2 of
// its order, in O(n·d). Dimension 1 (one edge) counts as a hypercube.
func detectCube(what string, net Network) (cubeShape, error) {
	if net == nil {
		return cubeShape{}, ErrNilNetwork
	}
	if g, ok := net.(*Graph); ok && g == nil {
		return cubeShape{}, ErrNilNetwork
	}
	n := net.Order()
	d, ok := log2Order(n)
	if !ok || d > 30 {
		return cubeShape{}, badParam("%s needs a hypercube or shuffle-exchange of 2^d nodes (d ≤ 30), got a network of %d nodes", what, n)
	}
	hcErr := checkHypercube(net, d)
	if hcErr == nil {
		return cubeShape{d: d, topo: topoHypercube, net: net}, nil
	}
	if d >= 2 {
		seErr := checkShuffleExchange(net, d)
		if seErr == nil {
			return cubeShape{d: d, topo: topoShuffleExchange, net: net}, nil
		}
		return cubeShape{}, badParam("%s: network of %d nodes is neither Hypercube(%d) (%s) nor ShuffleExchange(%d) (%s)", what, n, d, hcErr, d, seErr)
	}
	return cubeShape{}, badParam("%s: network of %d nodes is not Hypercube(%d) (%s)", what, n, d, hcErr)
}

// checkHypercube reports the first node whose neighbours are not exactly v XOR 2^i.
func checkHypercube(net Network, d int) error {
	n := 1 << d
	for v := 0; v < n; v++ {
		nb := net.Neighbors(v)
		ok := len(nb) == d
		for i := 0; ok && i < len(nb); i++ {
			x := uint(int(nb[i]) ^ v)
			ok = int(nb[i]) < n && x&(x-1) == 0 && x != 0 && (i == 0 || nb[i-1] < nb[i])
		}
		if !ok {
			return fmt.Errorf("node %d has neighbours %v", v, nb)
		}
	}
	return nil
}

// checkShuffleExchange reports the first node whose neighbours are not exactly
// {Exchange(v), Shuffle(v), Unshuffle(v)} without v itself.
func checkShuffleExchange(net Network, d int) error {
	n := 1 << d
	var want [3]int32
	for v := 0; v < n; v++ {
		w := want[:0]
		for _, x := range [3]int{v ^ 1, shuffle(v, d), unshuffle(v, d)} {
			if x != v && !slices.Contains(w, int32(x)) {
				w = append(w, int32(x))
			}
		}
		slices.Sort(w)
		if nb := net.Neighbors(v); !slices.Equal(nb, w) {
			return fmt.Errorf("node %d has neighbours %v, want %v", v, nb, w)
		}
	}
	return nil
}

// sameCube reports whether net is the network shape was validated on, re-validating
// (O(n·d)) unless it is the very same *Graph.
func sameCube(what string, shape cubeShape, net Network) error {
	if g, ok := net.(*Graph); ok && g != nil {
		if h, ok := shape.net.(*Graph); ok && g == h {
			return nil
		}
	}
	got, err := detectCube(what, net)
	if err != nil {
		return err
	}
	if got.d != shape.d || got.topo != shape.topo {
		return badParam("%s was built for %v but runs on %v", what, shape, got)
	}
	return nil
}

// CubeOptions configures NewDimensionOrderBalance and NewHypercubeBalance. The zero value
// balances with error at most log p.
type CubeOptions struct {
	// MinError appends the post-processing of Plaxton's Theorem 2.4: an all-reduce of
	// the smallest load a, then every processor sets a tokens aside and Leighton's
	// algorithm balances the rest (at most log p per processor after the first part).
	// The final error is then MinimumError(n, p).
	MinError bool
}

// CubeTimes splits a cube balancer's model time (State.Time) by activity.
type CubeTimes struct {
	// Select is the time spent choosing dimensions: the all-reduces of the signed
	// subcube sums that give δ_i (NewHypercubeBalance) or δ^M_i (recursive NewMultiBalance).
	Select int64 `json:"select"`
	// Balance is the time spent balancing (or multi-balancing) across dimensions.
	Balance int64 `json:"balance"`
	// Shuffle is the time spent emulating unshuffles on the shuffle-exchange.
	Shuffle int64 `json:"shuffle"`
	// Reduce is the time of the all-reduces of Leighton's phase count and of the
	// minimum that Theorem 2.4 sets aside.
	Reduce int64 `json:"reduce"`
	// Route is the time of Leighton's phases (prefix sum and concentration route).
	Route int64 `json:"route"`
	// Phases counts Leighton phases.
	Phases int64 `json:"phases"`
}

// Total returns the model time of all activities, which equals the run's State.Time.
func (t CubeTimes) Total() int64 { return t.Select + t.Balance + t.Shuffle + t.Reduce + t.Route }

// String lists the activities' times that are not zero.
func (t CubeTimes) String() string {
	s := fmt.Sprintf("model time %d", t.Total())
	for _, a := range []struct {
		name string
		v    int64
	}{{"select", t.Select}, {"balance", t.Balance}, {"shuffle", t.Shuffle}, {"reduce", t.Reduce}, {"route", t.Route}, {"Leighton phases", t.Phases}} {
		if a.v != 0 {
			s += fmt.Sprintf(", %s %d", a.name, a.v)
		}
	}
	return s
}

// CubeBalancer runs one of Plaxton's Balance algorithms through Run; it is built by
// NewDimensionOrderBalance, NewHypercubeBalance or NewLeightonBalance. Its steps and their model
// costs are described there. A CubeBalancer may be reused for several runs, not
// concurrently.
type CubeBalancer struct {
	core cubeCore
}

var (
	_ Balancer     = (*CubeBalancer)(nil)
	_ Initializer  = (*CubeBalancer)(nil)
	_ Terminator   = (*CubeBalancer)(nil)
	_ Reporter     = (*CubeBalancer)(nil)
	_ fmt.Stringer = (*CubeBalancer)(nil)
)

// NewDimensionOrderBalance returns the balancer that balances across dimensions 0, 1, ...,
// d−1 in turn (Plaxton, section 2.3, after Lemma 2.3): one Step per dimension, costing
// the largest PairTime of its p/2 pairs. By Lemma 2.3 the error after dimension i is at
// most i+1, so the final error is at most log p; the model time is at most
// d·(⌈m/2⌉ + PairOverhead) for a largest load m, that is O(m log p).
//
// On ShuffleExchange(d) it balances the exchange edges and then emulates an unshuffle
// (the cyclic right rotation of processor IDs), so that step j balances virtual
// dimension j; after d steps every token count is back at its processor. The unshuffle
// is emulated without moving whole loads: around each necklace (cycle of the rotation) the
// processors all-reduce their minimum load a in L−1 steps (L ≤ d is the necklace length)
// and each sends only its load minus a to its unshuffle neighbour; the step costs the
// largest such surplus plus d−1 (CubeTimes.Shuffle).
//
// With opts.MinError, Theorem 2.4's post-processing follows (see CubeOptions). It
// returns an error wrapping ErrBadParameter if net is neither Hypercube(d) nor
// ShuffleExchange(d) for d = log2(order); validation costs O(p·d).
func NewDimensionOrderBalance(net Network, opts *CubeOptions) (*CubeBalancer, error) {
	return newCubeBalancer("NewDimensionOrderBalance", net, opts, algoAscend)
}

// NewHypercubeBalance returns Plaxton's recursive algorithm Balance (section 2.3) on
// Hypercube(d): choose the dimension i* with the least discrepancy δ_i (Definition 2.6;
// ties go to the lowest dimension), recursively balance the two subcubes across i*, then
// balance across i*. The two subcubes recurse in parallel, so the recursion runs as an
// explicit schedule of 2d−1 Steps: d−1 selection Steps, top-down, in which every subcube
// of dimension l ≥ 2 computes its δ_i by an all-reduce of l signed sums (recursive
// halving and doubling, at most 4l time steps, CubeTimes.Select) and picks i*; then d
// balancing Steps, bottom-up, in which every subcube balances across its i* in parallel.
// By Lemma 2.3 the final error is at most log p. The time is O(m √log p + log² p)
// (section 2.3); HypercubeBalanceTimeBound gives the explicit bound that follows from
// the paper's analysis in this cost model. The simulation costs O(p·d) work in total,
// spread over both cores for large p.
//
// With opts.MinError, Theorem 2.4's post-processing follows (see CubeOptions): the whole
// pipeline balances with minimum error in O(m √log p + log² p) time. It returns an error
// wrapping ErrBadParameter if net is not Hypercube(d) (the recursion chooses a
// dimension per subcube, which the shuffle-exchange cannot emulate).
func NewHypercubeBalance(net Network, opts *CubeOptions) (*CubeBalancer, error) {
	return newCubeBalancer("NewHypercubeBalance", net, opts, algoRecursive)
}

// NewLeightonBalance returns Leighton's minimum-error algorithm (Plaxton, section 2.1) on
// Hypercube(d) or ShuffleExchange(d). Its first Step all-reduces the largest load m (the
// number of phases); each of the next m Steps is one phase: every processor that still
// holds tokens of its original supply designates one, a prefix sum over processor IDs
// ranks the designated tokens (and gives their number k to everyone), and a
// concentration route sends them to the k processors that follow the previous block,
// cyclically from processor 0. The route corrects address bits in ascending order and
// never puts two packets on one processor (see docs/guide/plaxton.md, "Definitions and model"), so a phase costs
// 2·log p time steps on the hypercube (prefix sum, route) and 4·log p on the
// shuffle-exchange (each dimension emulated by an exchange and an unshuffle step): the
// total is exactly (2m + 1)·log p, respectively twice that. The final error is
// MinimumError(n, p). The simulation costs O(p) per phase.
func NewLeightonBalance(net Network) (*CubeBalancer, error) {
	return newCubeBalancer("NewLeightonBalance", net, nil, algoLeighton)
}

func newCubeBalancer(name string, net Network, opts *CubeOptions, algo cubeAlgo) (*CubeBalancer, error) {
	shape, err := detectCube(name, net)
	if err != nil {
		return nil, err
	}
	if algo == algoRecursive && shape.topo != topoHypercube {
		return nil, badParam("%s needs a hypercube, got %v", name, shape)
	}
	var o CubeOptions
	if opts != nil {
		o = *opts
	}
	b := &CubeBalancer{}
	b.core.setup(name, shape, 1, algo, o.MinError)
	return b, nil
}

// Init validates the network and resets the schedule (Initializer).
//
// It refuses a Workload and Churn: the schedule is fixed in advance for the initial
// loads and fixed links (Plaxton's algorithms balance a fixed total).
func (b *CubeBalancer) Init(s *State) error {
	if b == nil {
		return nilReceiver("CubeBalancer", "Init")
	}
	b.core.ready.reset()
	if err := refuseDynamic(s, b.core.name, false, false, "its schedule is fixed in advance for a fixed total and fixed links"); err != nil {
		return err
	}
	if err := sameCube(b.core.name, b.core.shape, s.Net); err != nil {
		return err
	}
	b.core.reset(s, nil)
	return nil
}

// Step runs the next step of the schedule (Balancer). Before Init it returns an error
// wrapping ErrNotInitialized.
func (b *CubeBalancer) Step(s *State) error {
	if b == nil {
		return nilReceiver("CubeBalancer", "Step")
	}
	return b.core.step(s)
}

// Done reports whether the schedule is finished (Terminator).
func (b *CubeBalancer) Done(*State) bool { return b.core.phase == phaseDone }

// Report returns the run's model time split by activity (Reporter), a CubeTimes, in
// O(1).
func (b *CubeBalancer) Report(*State) any { return b.core.times }

// String names the algorithm and the network.
func (b *CubeBalancer) String() string { return b.core.String() }

// cubeAlgo is the algorithm a cubeCore runs before the optional post-processing.
type cubeAlgo uint8

const (
	algoAscend    cubeAlgo = iota // dimension order (with shuffle emulation on the SE)
	algoRecursive                 // least (multi-)discrepancy recursion
	algoLeighton                  // Leighton's algorithm on all tokens
)

// cubePhase is a stage of a cube balancer's schedule.
type cubePhase uint8

const (
	phaseSelect   cubePhase = iota // recursion: choose i* for every subcube of one level
	phaseTree                      // recursion: balance one level bottom-up
	phaseAscend                    // dimension order: one dimension (and one unshuffle on the SE)
	phaseSetAside                  // Theorem 2.4: all-reduce the minimum and set it aside
	phaseCount                     // Leighton: all-reduce the number of phases
	phaseRoute                     // Leighton: one phase
	phaseDone
)

// cubeCore is the schedule and state shared by CubeBalancer (w = 1) and MultiBalancer
// (w = g groups): node-major rows of w token counts per processor, and the totals
// (State.Loads). For w = 1 the rows are State.Loads itself.
type cubeCore struct {
	name     string
	shape    cubeShape
	d, p, w  int
	algo     cubeAlgo
	minError bool
	ready    initGuard // set by reset, checked by step

	eng   cubeEngine
	times CubeTimes

	phase  cubePhase
	level  int   // select: next level top-down; tree: next level bottom-up; ascend: next dimension
	group  int   // the group being post-processed (NewMultiBalance)
	phases int64 // Leighton phases to run for the current group
	done   int64 // Leighton phases run for the current group
	start  int   // Leighton: first processor of the next block
	supply []int64
}

func (c *cubeCore) String() string {
	s := fmt.Sprintf("%s(%v", c.name, c.shape)
	if c.w > 1 {
		s += fmt.Sprintf(", g=%d", c.w)
	}
	if c.minError {
		s += ", min error"
	}
	return s + ")"
}

func (c *cubeCore) setup(name string, shape cubeShape, w int, algo cubeAlgo, minError bool) {
	c.name, c.shape, c.d, c.p, c.w, c.algo, c.minError = name, shape, shape.d, 1<<shape.d, w, algo, minError
}

// reset prepares a run on the rows (len p·w; nil: s.Loads itself) and the totals
// s.Loads; it allocates the buffers on the first run only.
func (c *cubeCore) reset(s *State, rows []int64) {
	c.ready.reset()
	c.eng.prepare(c, s, rows)
	c.times = CubeTimes{}
	c.group, c.start = 0, 0
	if c.supply == nil && (c.minError || c.algo == algoLeighton) {
		c.supply = make([]int64, c.p)
	}
	switch c.algo {
	case algoRecursive:
		c.enter(phaseSelect)
	case algoAscend:
		c.enter(phaseAscend)
	default:
		c.enter(phaseCount)
	}
	c.ready.set(s)
}

// enter starts a phase, skipping phases that have nothing to do.
func (c *cubeCore) enter(ph cubePhase) {
	for {
		c.phase = ph
		switch ph {
		case phaseSelect:
			c.eng.startSelect()
			c.level = 0
			if c.d >= 2 {
				return
			}
			ph = phaseTree
		case phaseTree:
			c.level = c.d - 1
			if c.d >= 1 {
				return
			}
			ph = c.afterBalance()
		case phaseAscend:
			c.level = 0
			if c.d >= 1 {
				return
			}
			ph = c.afterBalance()
		case phaseSetAside, phaseCount:
			if c.p > 1 {
				return
			}
			ph = phaseDone
		case phaseRoute:
			c.done = 0
			if c.done < c.phases {
				return
			}
			ph = c.afterRoute()
		default:
			return
		}
	}
}

func (c *cubeCore) afterBalance() cubePhase {
	if c.minError {
		return phaseSetAside
	}
	return phaseDone
}

func (c *cubeCore) afterRoute() cubePhase {
	if c.minError && c.group+1 < c.w {
		c.group++
		return phaseSetAside
	}
	return phaseDone
}

// step runs one step of the schedule and charges its model time. Before reset (Init) it
// returns an error wrapping ErrNotInitialized.
func (c *cubeCore) step(s *State) error {
	if err := c.ready.check(s, c); err != nil {
		return err
	}
	e := &c.eng
	e.bind(s)
	switch c.phase {
	case phaseSelect:
		t := e.selectLevel(c.level)
		c.charge(s, &c.times.Select, t)
		s.Messages += int64(c.p) * t
		if c.level++; c.level > c.d-2 {
			c.enter(phaseTree)
		}
	case phaseTree:
		t, moved := e.treeLevel(c.level)
		c.charge(s, &c.times.Balance, t)
		s.Moved += moved
		s.Messages += int64(c.p * c.w)
		if c.level--; c.level < 0 {
			c.enter(c.afterBalance())
		}
	case phaseAscend:
		dim := c.level
		if c.shape.topo == topoShuffleExchange {
			dim = 0
		}
		t, moved := e.balanceDim(dim)
		c.charge(s, &c.times.Balance, t)
		s.Moved += moved
		s.Messages += int64(c.p * c.w)
		if c.shape.topo == topoShuffleExchange {
			t, moved, msgs := e.unshuffle()
			c.charge(s, &c.times.Shuffle, t)
			s.Moved += moved
			s.Messages += msgs
		}
		if c.level++; c.level == c.d {
			c.enter(c.afterBalance())
		}
	case phaseSetAside:
		e.setAside(c.group, c.supply)
		c.reduce(s)
		c.enter(phaseCount)
	case phaseCount:
		if !c.minError {
			e.copyColumn(c.group, c.supply)
		}
		c.phases = slices.Max(c.supply)
		c.reduce(s)
		c.enter(phaseRoute)
	case phaseRoute:
		c.start = e.leightonPhase(c.group, c.supply, c.start)
		t := 2 * c.shape.reduceTime()
		c.charge(s, &c.times.Route, t)
		c.times.Phases++
		s.Moved += e.moved
		s.Messages += int64(c.p) * c.shape.reduceTime()
		if c.done++; c.done == c.phases {
			c.enter(c.afterRoute())
		}
	default:
		return fmt.Errorf("tokendist: %s: step after the schedule finished", c.name)
	}
	return nil
}

// reduce charges one all-reduce of one word over the network.
func (c *cubeCore) reduce(s *State) {
	t := c.shape.reduceTime()
	c.charge(s, &c.times.Reduce, t)
	s.Messages += int64(c.p) * t
}

func (c *cubeCore) charge(s *State, bucket *int64, t int64) {
	*bucket += t
	s.Time += t
}
