package async

import (
	"fmt"
	"math"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/internal/errs"
)

// Observer watches a run in model time (Options.Observer): the simulator calls Observe
// with a Snapshot at the start, every Options.ObserveEvery time units and at the end.
//
// Contract: Observe is called on the goroutine that called Simulate, between two
// events, and must not change the run's inputs (the programs, the loads); the run it
// observes is the run without an observer, event for event (the snapshots only read
// the simulator's state). The *Snapshot and its slices belong to the simulator and are
// overwritten by the next snapshot: Observe must not keep them past its return (copy
// what it keeps). An error from Observe stops the run with StatusFailed and that error,
// wrapped; a panic in Observe is recovered and fails the run the same way, naming the
// model time.
//
// A tokendist.Recorder passed to registry.Run (RunOptions.Recorder) for a Spec that has
// a network_model is used as the Observer of the simulated run when it implements
// Observer; if it also has a method ObserveEvery() float64, that is the interval (else
// 1 time unit).
type Observer interface {
	Observe(s *Snapshot) error
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(s *Snapshot) error

// Observe calls f.
func (f ObserverFunc) Observe(s *Snapshot) error { return f(s) }

// Snapshot is the state of a simulated run at one model time, as an Observer sees it.
// The slices are indexed by node, or by directed link: the edge end (u, w) of the
// network as tokendist.AsGraph(net) numbers it (Graph.EdgeIndex(u, w), also
// Graph.Offset(u) + p for w, u's p-th neighbour). At every snapshot,
//
//	Σ Loads + InFlight = Initial + Arrived − Completed.
type Snapshot struct {
	// Time is the model time: 0 at the start (after every node's Start, before the
	// first event), k·ObserveEvery for the k-th periodic snapshot (the state after
	// every event at or before that time), and Result.Time in the final one.
	Time float64
	// Events is the number of events handled so far.
	Events int64
	// Final is true in the last snapshot of a run, taken when the run ends without an
	// error (StatusDone or StatusMaxSteps); a failed or canceled run has none.
	Final bool
	// Loads are the persisted loads, one per node: a down node's is its storage's.
	Loads tokendist.Loads
	// Down reports, per node, whether it is crashed (down) at Time.
	Down []bool
	// LinkInFlight holds, per directed link (u, w), the tokens in the data datagrams
	// that u has logged for w and w has not yet delivered: on their way, lost and due
	// for retransmission, or dropped by w while it was down.
	LinkInFlight []int64
	// InFlight is the sum of LinkInFlight; Undelivered the number of those datagrams.
	InFlight, Undelivered int64
	// LinkLost holds, per directed link (u, w), the datagrams (data and acks, from u
	// to w) lost since the previous snapshot: by the network, or dropped by w while it
	// was down.
	LinkLost []int64
	// Lost is the sum of LinkLost; the Lost of every snapshot of a run add up to
	// Result.Lost.
	Lost int64
	// Initial is the sum of the initial loads; Arrived and Completed are the tokens
	// the workload added and removed so far.
	Initial, Arrived, Completed int64
	// Crashes and Restarts count the node crashes and restarts so far.
	Crashes, Restarts int64
}

// observeStart sets up observation for Options.Observer (none: nextObs is +Inf, so
// the event loop's one comparison never fires). O(n + m) with an observer.
func (s *sim) observeStart() {
	s.nextObs = math.Inf(1)
	if s.opts.Observer == nil {
		return
	}
	if s.opts.ObserveEvery == 0 {
		s.opts.ObserveEvery = 1
	}
	s.obsK = 1
	s.nextObs = s.opts.ObserveEvery
	n := len(s.nodes)
	s.linkLost = make([]int64, s.off[n])
	s.snap = Snapshot{Loads: make(tokendist.Loads, n), Down: make([]bool, n),
		LinkInFlight: make([]int64, s.off[n]), LinkLost: s.linkLost, Initial: s.initial}
}

// observeBefore takes the periodic snapshots due before time t (none without an
// observer). The context is checked before each, so that a fine ObserveEvery over a
// long quiet stretch can be canceled.
func (s *sim) observeBefore(t float64) error {
	for s.nextObs < t {
		if err := s.ctx.Err(); err != nil {
			s.res.Status = tokendist.StatusCanceled
			return errs.Wrapf(err, "async: simulation canceled at time %g", s.nextObs)
		}
		if err := s.observe(s.nextObs, false); err != nil {
			return err
		}
		s.obsK++
		s.nextObs = float64(s.obsK) * s.opts.ObserveEvery
	}
	return nil
}

// observe fills the snapshot at time t and calls the observer, recovering a panic.
// O(n + m + datagrams in flight).
func (s *sim) observe(t float64, final bool) (err error) {
	sp := &s.snap
	sp.Time, sp.Events, sp.Final = t, s.res.Events, final
	for v := range s.nodes {
		sn := &s.nodes[v]
		sp.Loads[v] = sn.load
		sp.Down[v] = sn.down
		nb := s.g.Neighbors(v)
		for p := range nb {
			e := s.off[v] + p
			l := sn.nd.Sequence(p)
			peer := s.nodes[nb[p]].nd.Sequence(int(s.rev[e]))
			var tok int64
			for seq := max(l.Acked, peer.Delivered) + 1; seq < l.Next; seq++ {
				m, _ := sn.nd.Logged(p, seq)
				tok += m.Tokens
			}
			sp.LinkInFlight[e] = tok
		}
	}
	sp.InFlight, sp.Undelivered = s.inFlight, s.undelivered
	sp.Lost = s.res.Lost - s.lostMark
	s.lostMark = s.res.Lost
	sp.Arrived, sp.Completed = s.res.Arrived, s.res.Completed
	sp.Crashes, sp.Restarts = s.res.Crashes, s.res.Restarts
	defer func() {
		clear(s.linkLost)
		if r := recover(); r != nil {
			err = fmt.Errorf("%sasync: Options.Observer panicked at time %g: %v", errs.Prefix, t, r)
		}
	}()
	return errs.Wrapf(s.opts.Observer.Observe(sp), "async: Options.Observer at time %g", t)
}

// lose counts a datagram lost on the directed link of edge end e.
func (s *sim) lose(e int) {
	s.res.Lost++
	if s.linkLost != nil {
		s.linkLost[e]++
	}
}
