package tokendist

import (
	"fmt"
	"math"
	"slices"
)

// SteadyOptions asks Run for steady-state metrics (RunOptions.Steady): after WarmUp
// steps, Run measures the discrepancy, the maximum load and the total after every
// Every-th step and reports them in Result.Steady. The zero value measures every step
// from the start. A measured step costs an O(n) scan; the measurements are kept (24
// bytes each, allocated when the run starts for (MaxSteps − WarmUp)/Every of them, which
// must be at most MaxSteadySamples and fit the memory budget, else Run refuses with
// ErrBadParameter or ErrTooLarge).
type SteadyOptions struct {
	// WarmUp is the number of steps before measuring starts; negative is an error.
	WarmUp int64 `json:"warm_up"`
	// Every is the measuring interval in steps; 0 means 1, negative is an error.
	Every int64 `json:"every"`
}

// MaxSteadySamples is the most measurements one run may keep (3 int64 each).
const MaxSteadySamples = 1 << 22

// InstabilityFraction is the growth threshold of the instability test of SteadyStats.
const InstabilityFraction = 0.05

// SteadyStats are the steady-state metrics of a run (Result.Steady).
//
// The instability test: split the k ≥ 4 measurements into a first and a last half
// (⌊k/2⌋ each), let A and B be the mean totals of the two halves and Δ the distance in
// steps between the halves' mean steps, so Growth = (B − A)/Δ estimates the tokens that
// pile up per step. Unstable is set when ArrivalRate > 0 and Growth >
// InstabilityFraction·ArrivalRate: more than 5 % of the arrivals accumulate, that is the
// load grows linearly and without bound at the measured rate. It cannot tell a transient
// longer than the measured window from instability, and sublinear growth stays below
// it; lengthen the warm-up and the window to sharpen it.
type SteadyStats struct {
	// From is the first measured step and Samples the number of measurements.
	From    int64 `json:"from"`
	Samples int64 `json:"samples"`
	// MeanDiscrepancy and P95Discrepancy are the time-average and the 95th percentile
	// (nearest rank) of the discrepancy over the measurements.
	MeanDiscrepancy float64 `json:"mean_discrepancy"`
	P95Discrepancy  int64   `json:"p95_discrepancy"`
	// MeanMax and P95Max are the time-average and the 95th percentile (nearest rank) of
	// the maximum load over the measurements.
	MeanMax float64 `json:"mean_max"`
	P95Max  int64   `json:"p95_max"`
	// MeanTotal is the average total load over the measurements.
	MeanTotal float64 `json:"mean_total"`
	// ArrivalRate is the arrivals per step after the warm-up; MovedPerArrival the tokens
	// moved after the warm-up per token arrived then (0 without arrivals).
	ArrivalRate     float64 `json:"arrival_rate"`
	MovedPerArrival float64 `json:"moved_per_arrival"`
	// Growth and Unstable are the instability test's estimate and verdict.
	Growth   float64 `json:"growth"`
	Unstable bool    `json:"unstable"`
}

// String summarises the metrics in one line.
func (st SteadyStats) String() string {
	u := ""
	if st.Unstable {
		u = ", UNSTABLE"
	}
	return fmt.Sprintf("steady from step %d (%d samples): discrepancy mean %.2f p95 %d, max mean %.2f p95 %d, moved/arrival %.3f, growth %.3g/step%s",
		st.From, st.Samples, st.MeanDiscrepancy, st.P95Discrepancy, st.MeanMax, st.P95Max, st.MovedPerArrival, st.Growth, u)
}

// steadySampleBytes is the memory of one measurement: three int64 values.
const steadySampleBytes = 24

// steadyMeter collects the measurements of a run; it does not allocate per step.
type steadyMeter struct {
	warm, every            int64
	based                  bool
	baseStep               int64
	baseMoved, baseArrived int64
	lastStep               int64
	lastMoved, lastArrived int64
	disc, max, total       []int64
}

func newSteadyMeter(o SteadyOptions, maxSteps int64) (*steadyMeter, error) {
	if o.WarmUp < 0 || o.Every < 0 {
		return nil, badParam("SteadyOptions WarmUp %d, Every %d: negative", o.WarmUp, o.Every)
	}
	every := max(o.Every, 1)
	k := max(0, maxSteps-o.WarmUp) / every
	if k > MaxSteadySamples {
		return nil, badParam("SteadyOptions: %d measurements (MaxSteps %d, WarmUp %d, Every %d) exceed %d; raise Every", k, maxSteps, o.WarmUp, every, MaxSteadySamples)
	}
	if err := checkAlloc(fmt.Sprintf("SteadyOptions: %d measurements", k), k, steadySampleBytes); err != nil {
		return nil, err
	}
	m := &steadyMeter{warm: o.WarmUp, every: every}
	m.disc, m.max, m.total = make([]int64, 0, k), make([]int64, 0, k), make([]int64, 0, k)
	return m, nil
}

// observe is called after every step (and once before the first).
func (m *steadyMeter) observe(s *State) {
	if s.Steps == m.warm {
		m.based, m.baseStep, m.baseMoved, m.baseArrived = true, s.Steps, s.Moved, s.Arrived
	}
	if !m.based || s.Steps <= m.warm || (s.Steps-m.warm)%m.every != 0 || len(m.disc) == cap(m.disc) {
		return
	}
	mx, mn := s.Loads.extremes()
	m.disc = append(m.disc, mx-mn)
	m.max = append(m.max, mx)
	m.total = append(m.total, s.Loads.Total())
	m.lastStep, m.lastMoved, m.lastArrived = s.Steps, s.Moved, s.Arrived
}

func (m *steadyMeter) stats() *SteadyStats {
	k := len(m.disc)
	st := &SteadyStats{Samples: int64(k)}
	if k == 0 {
		return st
	}
	st.From = m.warm + m.every
	st.MeanDiscrepancy, st.MeanMax, st.MeanTotal = mean(m.disc), mean(m.max), mean(m.total)
	if span := m.lastStep - m.baseStep; span > 0 {
		st.ArrivalRate = float64(m.lastArrived-m.baseArrived) / float64(span)
	}
	if a := m.lastArrived - m.baseArrived; a > 0 {
		st.MovedPerArrival = float64(m.lastMoved-m.baseMoved) / float64(a)
	}
	if h := k / 2; h >= 2 {
		A, B := mean(m.total[:h]), mean(m.total[k-h:])
		delta := float64((k - h) * int(m.every)) // the halves' mean steps are k−h measurements apart
		st.Growth = (B - A) / delta
		st.Unstable = st.ArrivalRate > 0 && st.Growth > InstabilityFraction*st.ArrivalRate
	}
	st.P95Discrepancy, st.P95Max = percentile95(m.disc), percentile95(m.max)
	return st
}

func mean(xs []int64) float64 {
	var s float64
	for _, x := range xs {
		s += float64(x)
	}
	return s / float64(len(xs))
}

// percentile95 returns the nearest-rank 95th percentile, sorting xs in place.
func percentile95(xs []int64) int64 {
	slices.Sort(xs)
	i := int(math.Ceil(0.95*float64(len(xs)))) - 1
	return xs[max(i, 0)]
}

// initDynamics validates and sets up the workload, churn and steady-state options of
// a run, before the balancer's Init (so that balancers can refuse them).
func (r *runner) initDynamics() error {
	s := &r.s
	s.Workload = r.opts.Workload
	if c := r.opts.Churn; c != nil {
		g, err := AsGraph(s.Net)
		if err != nil {
			return err
		}
		s.Live = make([]bool, len(g.adj))
		for e := range s.Live {
			s.Live[e] = true
		}
		if err := c.Init(s); err != nil {
			return wrapf(err, "churn %v", c)
		}
	}
	return nil
}

// initSteady sets up the steady-state meter, once the step budget is known.
func (r *runner) initSteady() error {
	if r.opts.Steady == nil {
		return nil
	}
	m, err := newSteadyMeter(*r.opts.Steady, r.opts.MaxSteps)
	if err != nil {
		return err
	}
	r.steady = m
	m.observe(&r.s)
	return nil
}

// applyChurn updates the live links before a step.
func (r *runner) applyChurn() error {
	live := r.s.Live
	down, err := r.opts.Churn.Apply(&r.s)
	if err != nil {
		return wrapf(err, "churn failed before step %d", r.s.Steps)
	}
	// A user Churn must keep State.Live (same slice, same length) and report a count
	// of links down between 0 and the links of the network.
	if len(r.s.Live) != len(live) || (len(live) > 0 && &r.s.Live[0] != &live[0]) {
		n := len(r.s.Live)
		r.s.Live = live
		return badParam("churn %T replaced State.Live (%d flags, want the %d of the run) before step %d", r.opts.Churn, n, len(live), r.s.Steps)
	}
	if links := len(live) / 2; down < 0 || down > links {
		return badParam("churn %T reported %d links down of %d before step %d", r.opts.Churn, down, links, r.s.Steps)
	}
	r.down = down
	return nil
}

// applyWorkload applies the workload after a step and accounts for it.
func (r *runner) applyWorkload() error {
	s := &r.s
	w := r.opts.Workload
	// Near the top of int64 (a total of 2^62 or more) a step's arrivals can overflow a
	// node's load: the loads are saved first and restored if the workload fails, so that
	// the partial Result never holds a wrapped load. Below it, the built-in workloads
	// cannot overflow (each adds at most 2^62 per step).
	var saved Loads
	if r.total+s.Arrived-s.Completed >= 1<<62 {
		r.saved = append(r.saved[:0], s.Loads...)
		saved = r.saved
	}
	restore := func() {
		if saved != nil {
			copy(s.Loads, saved)
		}
	}
	in, out, err := w.Apply(s)
	if err != nil {
		restore()
		return wrapf(err, "workload %s failed after step %d", workloadName(w), s.Steps)
	}
	if in < 0 || out < 0 {
		restore()
		return fmt.Errorf("tokendist: workload %s reported %d arrivals and %d completions after step %d", workloadName(w), in, out, s.Steps)
	}
	if in > math.MaxInt64-s.Arrived || r.total+s.Arrived-s.Completed > math.MaxInt64-in {
		restore()
		return fmt.Errorf("%w: workload %s overflows the total after step %d", ErrBadLoads, workloadName(w), s.Steps)
	}
	s.Arrived += in
	s.Completed += out
	return nil
}
