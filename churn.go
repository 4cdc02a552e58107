package tokendist

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"unsafe"

	"github.com/tokendist/tokendist/internal/rng"
)

// Churn is a schedule of links failing and recovering during a run. Attach one with
// RunOptions.Churn. Run then keeps State.Live, one flag per edge end of the network's
// CSR arrays (Graph.EdgeIndex), all true before the first step, and calls Apply before
// every step so that the step sees the links that are up at that step. The colouring of
// the dimension-exchange schemes stays that of the full graph: at a step, the active
// links of the step's colour that are down are skipped; the diffusion and matching
// schemes use only the live links (see each balancer's doc comment; balancers that
// cannot honour churn refuse it in Init).
//
// Rules: Init is called once per run, before the balancer's Init. Apply sets
// s.Live[e] for both ends e of a link to the same value, depends only on (s.Seed,
// s.Steps) and the schedule, does not allocate, and returns the number of links that
// are down after it. The built-in schedules are NewRandomLinkChurn and NewScheduledLinkChurn.
type Churn interface {
	Init(s *State) error
	Apply(s *State) (down int, err error)
}

// streamChurn is the random stream of NewRandomLinkChurn.
const streamChurn = -3

// LinkEvent is one entry of a churn schedule: after step Step − 1 (so for step Step and
// later, until another event), the link (U, V) is up or down. Steps count from 0.
type LinkEvent struct {
	// Step is the first step that sees the new state of the link.
	Step int64
	// U and V are the link's ends (an edge of the network, either order).
	U, V int
	// Up is true for a recovery, false for a failure.
	Up bool
}

// LinkChurn is a churn schedule, random (NewRandomLinkChurn) or listed (NewScheduledLinkChurn).
// Apply costs O(1 + events of the step) for a list and O(1 + (p+q)·m) expected for
// random churn on m links (the affected links are found by geometric skips); it does
// not allocate.
type LinkChurn struct {
	fail, recover float64
	events        []LinkEvent
	next          int
	// per link: the lower end and the upper end in the CSR arrays.
	lowEnd, highEnd []int32
	down            int
	g               *Graph
	pcg             rand.PCG
	r               *rand.Rand
}

// NewRandomLinkChurn returns random churn: before every step, each link that is down comes
// back up with probability recover, then each link that is up fails with probability
// fail, independently. The stationary fraction of links down is fail/(fail + recover
// − fail·recover) when both are positive. Both must be in [0, 1].
func NewRandomLinkChurn(fail, recover float64) (*LinkChurn, error) {
	if !(fail >= 0 && fail <= 1) || !(recover >= 0 && recover <= 1) {
		return nil, badParam("churn rates fail %v, recover %v: need both in [0, 1]", fail, recover)
	}
	return &LinkChurn{fail: fail, recover: recover}, nil
}

// NewScheduledLinkChurn returns a listed churn schedule; events may come in any order and
// are applied by step (ties in the given order). Steps must be ≥ 0; Init checks that
// every (U, V) is a link of the network.
func NewScheduledLinkChurn(events []LinkEvent) (*LinkChurn, error) {
	if err := checkAlloc(fmt.Sprintf("churn schedule of %d events", len(events)), int64(len(events)), int64(unsafe.Sizeof(LinkEvent{}))); err != nil {
		return nil, err
	}
	ev := append([]LinkEvent(nil), events...)
	for i, e := range ev {
		if e.Step < 0 || e.U < 0 || e.V < 0 {
			return nil, badParam("churn event %d (step %d, link (%d, %d)) has a negative field", i, e.Step, e.U, e.V)
		}
	}
	sort.SliceStable(ev, func(i, j int) bool { return ev[i].Step < ev[j].Step })
	return &LinkChurn{events: ev}, nil
}

// String names the schedule.
func (c *LinkChurn) String() string {
	if c.events != nil {
		return fmt.Sprintf("ChurnSchedule(%d events)", len(c.events))
	}
	return fmt.Sprintf("RandomChurn(fail %g, recover %g)", c.fail, c.recover)
}

// Init indexes the network's links and checks the listed events, in O(n + m).
func (c *LinkChurn) Init(s *State) error {
	g, err := AsGraph(s.Net)
	if err != nil {
		return err
	}
	if c.g != g {
		c.g = g
		c.lowEnd, c.highEnd = c.lowEnd[:0], c.highEnd[:0]
		for u := 0; u < g.Order(); u++ {
			for e := g.off[u]; e < g.off[u+1]; e++ {
				if v := int(g.adj[e]); v > u {
					c.lowEnd = append(c.lowEnd, int32(e))
					c.highEnd = append(c.highEnd, int32(g.EdgeIndex(v, u)))
				}
			}
		}
	}
	for i, e := range c.events {
		if e.U >= g.Order() || e.V >= g.Order() || !g.HasEdge(e.U, e.V) {
			return badParam("churn event %d names (%d, %d), not a link of %v", i, e.U, e.V, g)
		}
	}
	if c.r == nil {
		c.r = rand.New(&c.pcg)
	}
	c.next, c.down = 0, 0
	return nil
}

// Apply updates s.Live for step s.Steps.
func (c *LinkChurn) Apply(s *State) (int, error) {
	live := s.Live
	if c.events != nil {
		for ; c.next < len(c.events) && c.events[c.next].Step <= s.Steps; c.next++ {
			e := c.events[c.next]
			a, b := c.g.EdgeIndex(e.U, e.V), c.g.EdgeIndex(e.V, e.U)
			if live[a] != e.Up {
				if e.Up {
					c.down--
				} else {
					c.down++
				}
			}
			live[a], live[b] = e.Up, e.Up
		}
		return c.down, nil
	}
	m := len(c.lowEnd)
	if m == 0 || (c.fail == 0 && (c.recover == 0 || c.down == 0)) {
		return c.down, nil
	}
	rng.Reseed(&c.pcg, s.Seed, s.Steps, streamChurn)
	// Recoveries first, among the links down before this step: they are marked in a
	// first pass, failures in a second that may pick a just-recovered link.
	if c.down > 0 && c.recover > 0 {
		for k := geomSkip(c.r, c.recover, -1); k < m; k = geomSkip(c.r, c.recover, k) {
			if lo := c.lowEnd[k]; !live[lo] {
				live[lo], live[c.highEnd[k]] = true, true
				c.down--
			}
		}
	}
	if c.fail > 0 {
		for k := geomSkip(c.r, c.fail, -1); k < m; k = geomSkip(c.r, c.fail, k) {
			if lo := c.lowEnd[k]; live[lo] {
				live[lo], live[c.highEnd[k]] = false, false
				c.down++
			}
		}
	}
	return c.down, nil
}

// geomSkip returns the next index after k selected by independent Bernoulli(p) trials.
func geomSkip(r *rand.Rand, p float64, k int) int {
	if p >= 1 {
		return k + 1
	}
	u := 1 - r.Float64()
	g := math.Floor(math.Log(u) / math.Log1p(-p))
	if g >= float64(math.MaxInt32) {
		return math.MaxInt
	}
	return k + 1 + int(g)
}

// liveMatching copies the pairs of a matching whose link is up into buf and returns it.
// It costs O(|pairs| log Δ).
func liveMatching(g *Graph, live []bool, pairs, buf []int32) []int32 {
	buf = buf[:0]
	for i := 0; i+1 < len(pairs); i += 2 {
		if live[g.EdgeIndex(int(pairs[i]), int(pairs[i+1]))] {
			buf = append(buf, pairs[i], pairs[i+1])
		}
	}
	return buf
}

// refuseDynamic returns an error if the run has a workload (and workload is false) or
// churn (and churn is false): for balancers whose algorithm assumes a fixed total or
// fixed links.
func refuseDynamic(s *State, name string, workload, churn bool, why string) error {
	if !workload && s.Workload != nil {
		return badParam("%s does not accept a workload: %s", name, why)
	}
	if !churn && s.Live != nil {
		return badParam("%s does not accept link churn: %s", name, why)
	}
	return nil
}
