package animate

import (
	"context"
	"math"

	"github.com/tokendist/tokendist/node"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/async"
	"github.com/tokendist/tokendist/internal/errs"
)

// DefaultTimeFrames is the number of frame intervals RecordSimulation aims at when it
// chooses Options.EveryTime from the run's model time.
const DefaultTimeFrames = 100

// ObserveEvery returns the model time between two frames of a simulated run:
// Options.EveryTime, or 1 if it is 0. It makes a Recorder passed to registry.Run
// (RunOptions.Recorder) for a Spec with a network_model observe the simulated run at
// that interval (see async.Observer). O(1).
func (r *Recorder) ObserveEvery() float64 {
	if r == nil || r.m.opts.EveryTime == 0 {
		return 1
	}
	return r.m.opts.EveryTime
}

// Observe receives one snapshot of a simulated run (async.Observer; pass the Recorder
// as async.Options.Observer with ObserveEvery() as async.Options.ObserveEvery) and
// makes it a frame: the persisted loads (a crashed node's included), the crashed
// nodes, the tokens in flight on each link direction and the datagrams lost since the
// previous frame, at the snapshot's model time. A Recorder records one run, either by
// Record or by Observe. More frames than Options.MaxFrames is an error wrapping
// tokendist.ErrTooLarge (which stops the run). It keeps nothing of s. O(n + m) per
// call.
func (r *Recorder) Observe(s *async.Snapshot) error {
	if r == nil || s == nil {
		return errs.BadParam("animate: Observe on a nil Recorder or Snapshot")
	}
	if r.done {
		return errs.BadParam("animate: Observe after Movie")
	}
	if r.started && !r.sim {
		return errs.BadParam("animate: Observe after Record (a Recorder records one run)")
	}
	g := r.m.g
	n := g.Order()
	if len(s.Loads) != n || len(s.Down) != n || len(s.LinkInFlight) != 2*g.Size() || len(s.LinkLost) != 2*g.Size() {
		return errs.BadParam("animate: a snapshot of %d loads and %d link ends for a network of %d nodes and %d links",
			len(s.Loads), len(s.LinkInFlight), n, g.Size())
	}
	m := r.m
	if len(m.frames) >= m.opts.MaxFrames {
		r.over = true
		return errs.TooLargeParam("animate: more than MaxFrames = %d frames (model time %g at EveryTime = %g); take a frame less often with a larger EveryTime (tokendist animate --every T) or raise MaxFrames",
			m.opts.MaxFrames, s.Time, r.ObserveEvery())
	}
	r.started, r.sim, m.sim = true, true, true
	f := Frame{Step: s.Events, Time: s.Time, Loads: append(tokendist.Loads(nil), s.Loads...), Flows: FlowsInFlight}
	f.Discrepancy = f.Loads.Discrepancy()
	for v, d := range s.Down {
		if d {
			f.Down = append(f.Down, v)
		}
	}
	for v := range n {
		for p, w := range g.Neighbors(v) {
			e := g.Offset(v) + p
			sign := int64(1)
			if int(w) < v {
				sign = -1
			}
			if x := s.LinkInFlight[e]; x != 0 {
				f.InFlight = append(f.InFlight, LinkFlow{Link: int(r.endLink[e]), Tokens: sign * x})
			}
			if x := s.LinkLost[e]; x != 0 {
				f.Lost = append(f.Lost, LinkFlow{Link: int(r.endLink[e]), Tokens: sign * x})
			}
		}
	}
	m.frames = append(m.frames, f)
	return nil
}

// RecordSimulation runs the node programs progs on net from loads in the event
// simulator (async.Simulate with sim, which may be nil; its Observer must be nil) and
// returns the movie of the run in model time: a frame at the start, every
// Options.EveryTime time units and at the end, each showing the loads (a crashed node
// grey with a cross), the tokens in flight on each link as arrows (width by count),
// the links that lost datagrams since the previous frame (a mark; the count in the
// caption), the model time and the discrepancy curve against it. With EveryTime 0 the
// interval is a round number (1, 2 or 5 times a power of ten) near a hundredth of the
// run's model time: MaxTime for a run with a Workload (it ends there), else measured by
// a first run without observation (the simulator is deterministic, so both runs are
// one; progs must give fresh programs on each call, as NodePrograms promise, and the
// cost is two runs). Options.Run and Every are not used. It refuses a node count over
// MaxNodes before running, and, when the run's end is known first, an EveryTime whose
// frames would exceed MaxFrames, naming the interval that fits (when the end is not
// known first, the observed run stops at the limit and a run without observation
// measures it for the error). A run error comes back as it is (nil movie). Cost: the runs', plus NewRecorder's, plus O(n + m + datagrams
// in flight) per frame.
func RecordSimulation(ctx context.Context, net tokendist.Network, progs node.Programs, loads tokendist.Loads, sim *async.Options, opts *Options) (*Movie, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	var so async.Options
	if sim != nil {
		so = *sim
	}
	if so.Observer != nil {
		return nil, errs.BadParam("animate: the async.Options have an Observer (RecordSimulation observes the run; use NewRecorder and Recorder.Observe inside your own)")
	}
	r, err := NewRecorder(net, nil, &o)
	if err != nil {
		return nil, err
	}
	every := r.m.opts.EveryTime
	end := math.NaN() // the run's end, when known before it
	if so.Workload != nil {
		end = so.MaxTime
		if end == 0 {
			end = async.DefaultMaxTime
		}
	}
	if every == 0 {
		if math.IsNaN(end) {
			res, err := async.Simulate(ctx, net, progs, loads, &so)
			if err != nil {
				return nil, err
			}
			end = res.Time
		}
		every = RoundInterval(end, DefaultTimeFrames)
		r.m.opts.EveryTime = every
	}
	if err := CheckTimeFrames(end, every, r.m.opts.MaxFrames); err != nil {
		return nil, err
	}
	so.Observer, so.ObserveEvery = r, every
	if _, err := async.Simulate(ctx, net, progs, loads, &so); err != nil {
		if r.over && math.IsNaN(end) {
			// Too many frames: a run without observation tells the interval that fits.
			so.Observer = nil
			if res, err2 := async.Simulate(ctx, net, progs, loads, &so); err2 == nil {
				if err2 = CheckTimeFrames(res.Time, every, r.m.opts.MaxFrames); err2 != nil {
					return nil, err2
				}
			}
		}
		return nil, err
	}
	return r.Movie()
}

// RoundInterval returns the smallest of 1, 2 and 5 times a power of ten that is at
// least end/frames (1 when end/frames is not positive): the frame interval of a
// simulated run of model time end that makes at most frames intervals. O(1).
func RoundInterval(end float64, frames int) float64 {
	x := end / float64(max(frames, 1))
	if !(x > 0) || math.IsInf(x, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, k := range []float64{1, 2, 5} {
		if k*p >= x*(1-1e-12) { // the tolerance keeps 0.3 at 0.3 despite rounding
			return k * p
		}
	}
	return 10 * p
}

// CheckTimeFrames returns an error wrapping tokendist.ErrTooLarge, naming the limit
// and the smallest round interval that fits, if a simulated run ending at model time
// end, observed every `every` time units, makes more than maxFrames frames (the
// start, the periodic ones before the end, and the end); nil if it fits, if end is NaN
// (not known) or if every is not positive (no interval to check). O(1).
func CheckTimeFrames(end, every float64, maxFrames int) error {
	if math.IsNaN(end) || every <= 0 {
		return nil
	}
	// The periodic frames are at k·every < end: ⌈end/every⌉ − 1 of them.
	frames := max(math.Ceil(end/every)+1, 2)
	if frames <= float64(maxFrames) {
		return nil
	}
	fit := RoundInterval(end, max(maxFrames-2, 1)) // a frame to spare for rounding

	return errs.TooLargeParam("animate: model time %s at EveryTime = %g makes %.0f frames, more than MaxFrames = %d; take a frame every %g or more (tokendist animate --every %g)",
		fmtTime(end), every, frames, maxFrames, fit, fit)
}
