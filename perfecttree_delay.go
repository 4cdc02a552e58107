package tokendist

import (
	"fmt"
	"math/rand/v2"
)

// Delays decides how long each message of the simulated perfect-tree runtime
// (PerfectTree) takes to cross its link: it is the adversary of the asynchronous model of
// Margara, Pistocchi and Vassura (section 1). Links stay FIFO whatever the policy, since
// a sender is busy until its message arrives (single-port model). Delay is called once
// per message, in the order the messages are sent, and should cost O(1) and not
// allocate; implementations may keep state, and Reset starts a run, so one policy value
// must not serve two runs at the same time.
type Delays interface {
	// Reset prepares the policy for a run on n nodes with the run's seed.
	Reset(n int, seed uint64)
	// Delay returns the transit time (≥ 1; smaller values count as 1; above MaxDelay
	// the run fails with ErrBadParameter) of the run's
	// message number seq (from 0), sent at time now from node from to its neighbour to.
	Delay(now int64, from, to int, seq int64) int64
}

// MaxDelay is the longest transit time a Delays may give a message (one Step is one
// time unit, so a run costs at least its longest delay in steps); a longer delay fails
// the run with ErrBadParameter.
const MaxDelay = 1 << 24

// NewUnitDelays returns the synchronous policy: every message takes one time unit. It is
// the default, and the one under which the paper's time bounds (section 5) are stated.
// It never fails; it returns an error for the same signature as its siblings. It costs
// O(1).
func NewUnitDelays() (Delays, error) { return ptUnitDelays{}, nil }

type ptUnitDelays struct{}

func (ptUnitDelays) Reset(int, uint64)                  {}
func (ptUnitDelays) Delay(int64, int, int, int64) int64 { return 1 }
func (ptUnitDelays) String() string                     { return "unit" }

// NewRandomDelays returns a policy drawing every delay uniformly from 1..max with a
// generator seeded from the run's seed, so runs are reproducible. It fails unless
// max ≥ 1.
func NewRandomDelays(max int64) (Delays, error) {
	if max < 1 || max > MaxDelay {
		return nil, badParam("NewRandomDelays needs 1 ≤ max ≤ MaxDelay, got %d", max)
	}
	return &ptRandomDelays{max: max}, nil
}

type ptRandomDelays struct {
	max int64
	r   *rand.Rand
}

func (d *ptRandomDelays) Reset(_ int, seed uint64) {
	d.r = rand.New(rand.NewPCG(seed, 0x64656c6179))
}
func (d *ptRandomDelays) Delay(int64, int, int, int64) int64 { return 1 + d.r.Int64N(d.max) }
func (d *ptRandomDelays) String() string                     { return fmt.Sprintf("random(1..%d)", d.max) }

// NewSerialDelays returns the adversary that always delivers the most recent message last:
// each message arrives one unit after every message already in flight, so the network
// carries one message at a time and no two events are simultaneous. It never fails; it
// returns an error for the same signature as its siblings. It costs O(1).
func NewSerialDelays() (Delays, error) { return &ptSerialDelays{}, nil }

type ptSerialDelays struct{ last int64 }

func (d *ptSerialDelays) Reset(int, uint64) { d.last = 0 }
func (d *ptSerialDelays) Delay(now int64, _, _ int, _ int64) int64 {
	d.last = max(d.last, now) + 1
	return d.last - now
}
func (d *ptSerialDelays) String() string { return "serial (most recent last)" }

// NewReverseDelays returns the adversary that delivers newer messages first: within each
// block of window consecutive messages, message seq takes window − seq mod window units,
// so later sends overtake earlier ones on other links. It fails unless window ≥ 1.
func NewReverseDelays(window int64) (Delays, error) {
	if window < 1 || window > MaxDelay {
		return nil, badParam("NewReverseDelays needs 1 ≤ window ≤ MaxDelay, got %d", window)
	}
	return ptReverseDelays{w: window}, nil
}

type ptReverseDelays struct{ w int64 }

func (ptReverseDelays) Reset(int, uint64) {}
func (d ptReverseDelays) Delay(_ int64, _, _ int, seq int64) int64 {
	return d.w - seq%d.w
}
func (d ptReverseDelays) String() string { return fmt.Sprintf("reverse(window %d)", d.w) }

// NewSlowLinkDelays returns the adversary with fixed, skewed link speeds: each directed link
// takes either 1 or slow units, half of them slow, chosen by hashing the link with the
// run's seed. Whole subtrees then lag behind their neighbours, which is what makes the
// phases of different nodes overlap. It fails unless slow ≥ 1.
func NewSlowLinkDelays(slow int64) (Delays, error) {
	if slow < 1 || slow > MaxDelay {
		return nil, badParam("NewSlowLinkDelays needs 1 ≤ slow ≤ MaxDelay, got %d", slow)
	}
	return &ptSlowLinkDelays{slow: slow}, nil
}

type ptSlowLinkDelays struct {
	slow int64
	seed uint64
}

func (d *ptSlowLinkDelays) Reset(_ int, seed uint64) { d.seed = seed }
func (d *ptSlowLinkDelays) Delay(_ int64, from, to int, _ int64) int64 {
	if ptMix(d.seed^ptMix(uint64(from)<<32|uint64(uint32(to))))&1 == 0 {
		return 1
	}
	return d.slow
}
func (d *ptSlowLinkDelays) String() string { return fmt.Sprintf("slow links (%d)", d.slow) }

// ptMix is SplitMix64's finaliser.
func ptMix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
