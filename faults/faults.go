// Package faults describes how the links and nodes of a network misbehave in a
// simulation: delay distributions, loss, duplication, reordering, crashes and clocks
// (Model). The event simulator of package async runs node programs under a Model, and
// an experiment file's network_model block is one (registry.NetworkModel). The package
// holds descriptions only, no simulator, so that a program that merely reads a
// registry.Spec (a fleet node) links none.
//
// Every constructor and method is O(1) except Model.Validate (O(len(Crashes) +
// len(TickInterval))); errors start with "tokendist: ", name the field and the value,
// and wrap tokendist.ErrBadParameter.
package faults

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/tokendist/tokendist/internal/errs"
)

// DelayKind names a delay distribution.
type DelayKind uint8

// The delay distributions.
const (
	// DelayConstant: always Min (0 means 1).
	DelayConstant DelayKind = iota
	// DelayUniform: uniform on [Min, Max].
	DelayUniform
	// DelayExponential: Min plus an exponential variable of mean Mean (0 means 1).
	DelayExponential
	// DelayPareto: Min·U^(−1/Alpha) for U uniform on (0, 1], a heavy tail (Min 0
	// means 1, Alpha 0 means 1.5: finite mean, infinite variance).
	DelayPareto
)

var delayNames = [...]string{"constant", "uniform", "exponential", "pareto"}

// String names the kind as experiment files spell it.
func (k DelayKind) String() string {
	if int(k) < len(delayNames) {
		return delayNames[k]
	}
	return fmt.Sprintf("DelayKind(%d)", uint8(k))
}

// MarshalText encodes the kind by name.
func (k DelayKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText decodes a name MarshalText wrote; it returns an error wrapping
// ErrBadParameter, naming the known kinds, for any other.
func (k *DelayKind) UnmarshalText(b []byte) error {
	i, err := nameIndex(delayNames[:], b, "delay kind")
	*k = DelayKind(i)
	return err
}

func nameIndex(names []string, b []byte, what string) (int, error) {
	for i, name := range names {
		if string(b) == name {
			return i, nil
		}
	}
	return 0, errs.BadParam("unknown %s %s (known: %s)", what, errs.Quote(b), strings.Join(names, ", "))
}

// Delay is a distribution of times (a link's delay, a node's down time). The zero value
// is the constant 1.
type Delay struct {
	Kind  DelayKind `json:"kind,omitzero"`
	Min   float64   `json:"min,omitempty"`
	Max   float64   `json:"max,omitempty"`
	Mean  float64   `json:"mean,omitempty"`
	Alpha float64   `json:"alpha,omitempty"`
}

// Constant returns the constant delay d (d > 0). O(1), like the other constructors.
func Constant(d float64) Delay { return Delay{Kind: DelayConstant, Min: d} }

// Uniform returns the delay uniform on [lo, hi].
func Uniform(lo, hi float64) Delay { return Delay{Kind: DelayUniform, Min: lo, Max: hi} }

// Exponential returns min plus an exponential variable of the given mean.
func Exponential(min, mean float64) Delay {
	return Delay{Kind: DelayExponential, Min: min, Mean: mean}
}

// Pareto returns the Pareto delay of scale min and shape alpha.
func Pareto(min, alpha float64) Delay { return Delay{Kind: DelayPareto, Min: min, Alpha: alpha} }

// String describes the distribution.
func (d Delay) String() string {
	d = d.normal()
	switch d.Kind {
	case DelayConstant:
		return fmt.Sprintf("constant(%g)", d.Min)
	case DelayUniform:
		return fmt.Sprintf("uniform(%g, %g)", d.Min, d.Max)
	case DelayExponential:
		return fmt.Sprintf("exponential(min %g, mean %g)", d.Min, d.Mean)
	case DelayPareto:
		return fmt.Sprintf("pareto(min %g, alpha %g)", d.Min, d.Alpha)
	}
	return d.Kind.String()
}

// normal fills the defaults of the zero fields.
func (d Delay) normal() Delay {
	switch d.Kind {
	case DelayConstant:
		if d.Min == 0 {
			d.Min = 1
		}
	case DelayExponential:
		if d.Mean == 0 {
			d.Mean = 1
		}
	case DelayPareto:
		if d.Min == 0 {
			d.Min = 1
		}
		if d.Alpha == 0 {
			d.Alpha = 1.5
		}
	}
	return d
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// MinInterval is the shortest time interval a Model accepts, in its time unit (a unit
// delay is one tick): a positive tick interval (after Drift), a delay's scale (a
// constant's value, a uniform's Max, an exponential's Min + Mean, a Pareto's Min), a
// ReorderDelay and 1/CrashRate must be at least MinInterval, and so must the period
// options of the simulator (package async: WorkloadEvery, ObserveEvery). A timer of the
// simulator then fires at most MaxTime/MinInterval times, and simulated time advances
// at every firing while MaxTime < 2^52·MinInterval; shorter intervals (1e-300) would
// make a run that never reaches MaxTime.
const MinInterval = 1e-6

// below reports whether x is a positive time interval shorter than MinInterval.
func below(x float64) bool { return x > 0 && x < MinInterval }

func (d Delay) check(what string) error {
	for _, x := range []float64{d.Min, d.Max, d.Mean, d.Alpha} {
		if !finite(x) || x < 0 {
			return errs.BadParam("%s %v has a negative or non-finite parameter", what, d)
		}
	}
	switch d.Kind {
	case DelayConstant, DelayExponential, DelayPareto:
	case DelayUniform:
		if d.Max < d.Min || d.Max == 0 {
			return errs.BadParam("%s %v: want 0 ≤ Min ≤ Max, Max > 0", what, d)
		}
	default:
		return errs.BadParam("%s: unknown delay kind %d", what, d.Kind)
	}
	if x := d.scale(); x < MinInterval {
		return errs.BadParam("%s %v: its scale %v is below MinInterval %v", what, d, x, MinInterval)
	}
	return nil
}

// scale is the delay's typical length, which MinInterval bounds from below: a
// constant's value, a uniform's Max, an exponential's Min + Mean, a Pareto's Min (the
// zero fields taking their defaults).
func (d Delay) scale() float64 {
	d = d.normal()
	switch d.Kind {
	case DelayUniform:
		return d.Max
	case DelayExponential:
		return d.Min + d.Mean
	}
	return d.Min
}

// Validate returns an error wrapping ErrBadParameter, naming the value, for a
// distribution Sample cannot draw from: a negative or non-finite parameter, an empty
// uniform range or an unknown kind, and for a scale below MinInterval (a constant's
// value, a uniform's Max, an exponential's Min + Mean, a Pareto's Min). O(1).
func (d Delay) Validate() error { return d.check("delay") }

// Sample draws one value from d (which Validate accepts) with r; the zero fields take
// their defaults. A constant delay draws nothing from r. O(1).
func (d Delay) Sample(r *rand.Rand) float64 {
	d = d.normal()
	switch d.Kind {
	case DelayUniform:
		return d.Min + (d.Max-d.Min)*r.Float64()
	case DelayExponential:
		return d.Min + d.Mean*r.ExpFloat64()
	case DelayPareto:
		return d.Min * math.Pow(1-r.Float64(), -1/d.Alpha)
	}
	return d.Min
}

// CrashPoint says where in a node's event handling a crash strikes.
type CrashPoint uint8

// The crash points.
const (
	// CrashIdle: between two events, at the crash's time.
	CrashIdle CrashPoint = iota
	// CrashBeforePersist: during the node's first event at or after the crash's time
	// that changes its state, after the event was handled (a datagram received, a
	// program called) and before the new state is persisted: the event is lost.
	CrashBeforePersist
	// CrashBeforeSend: during that event, after the new state is persisted and before
	// any datagram of it is sent.
	CrashBeforeSend
)

var crashNames = [...]string{"idle", "before-persist", "before-send"}

// String names the point as experiment files spell it.
func (p CrashPoint) String() string {
	if int(p) < len(crashNames) {
		return crashNames[p]
	}
	return fmt.Sprintf("CrashPoint(%d)", uint8(p))
}

// MarshalText encodes the point by name.
func (p CrashPoint) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText decodes a name MarshalText wrote; it returns an error wrapping
// ErrBadParameter, naming the known points, for any other.
func (p *CrashPoint) UnmarshalText(b []byte) error {
	i, err := nameIndex(crashNames[:], b, "crash point")
	*p = CrashPoint(i)
	return err
}

// Crash is one scheduled crash: node Node crashes at time At (at Point) and restarts,
// from its last persisted state, DownFor time units later. A down node drops every
// datagram that reaches it and does not tick.
type Crash struct {
	Node    int        `json:"node"`
	At      float64    `json:"at"`
	DownFor float64    `json:"down_for"`
	Point   CrashPoint `json:"point,omitzero"`
}

// Model describes how the links and nodes of a network behave: delays, loss,
// duplication, reordering, crashes and clocks (the network itself, the graph, is given
// apart). The zero value is the synchronous, fault-free model: unit delays, no loss,
// duplication, reordering or crash, every node ticking once per time unit. Its JSON
// keys are those of an experiment file's network_model block.
type Model struct {
	// Delay is the delay of every datagram (the zero value: constant 1).
	Delay Delay `json:"delay,omitzero"`
	// LinkDelay, when not nil, gives the delay distribution of the directed link from
	// node u to node v instead of Delay. It is called once per directed link when the
	// run starts (O(m) extra memory).
	LinkDelay func(u, v int) Delay `json:"-"`
	// Loss, Duplicate and Reorder are the probabilities that a datagram is lost, sent
	// twice (the copy with its own delay) or held back by an extra delay uniform on
	// [0, ReorderDelay] so that later ones overtake it. Otherwise a directed link keeps
	// the order of its datagrams, as one network path does: a datagram whose delay
	// would let it overtake an earlier one arrives with it instead (delays spread
	// without reordering; Reorder adds reordering).
	Loss      float64 `json:"loss,omitempty"`
	Duplicate float64 `json:"duplicate,omitempty"`
	Reorder   float64 `json:"reorder,omitempty"`
	// ReorderDelay is the largest extra delay of a reordered datagram (0 means 4).
	ReorderDelay float64 `json:"reorder_delay,omitempty"`
	// TickInterval, when not nil, is each node's tick interval (its speed; 0 means 1).
	TickInterval []float64 `json:"tick_interval,omitempty"`
	// Drift multiplies node v's tick interval by 1 + u_v, u_v uniform on
	// [−Drift, Drift] and fixed per node and seed (0 ≤ Drift < 1).
	Drift float64 `json:"drift,omitempty"`
	// Crashes are scheduled crashes.
	Crashes []Crash `json:"crashes,omitempty"`
	// CrashRate is the rate at which each node crashes (per time unit, exponential
	// inter-crash times), at a point drawn uniformly from the three crash points; it
	// restarts after a time drawn from DownTime (the zero value: constant 1).
	CrashRate float64 `json:"crash_rate,omitempty"`
	DownTime  Delay   `json:"down_time,omitzero"`
}

// Validate returns an error wrapping ErrBadParameter, naming the field and value, for a
// model that a simulator refuses on a network of n nodes (among them a time interval
// below MinInterval: see there); n < 0 skips the checks that need
// the order (crash nodes, TickInterval's length). O(len(Crashes) + len(TickInterval)).
func (m *Model) Validate(n int) error {
	if err := m.Delay.check("Delay"); err != nil {
		return err
	}
	for _, x := range []struct {
		name string
		v    float64
	}{{"Loss", m.Loss}, {"Duplicate", m.Duplicate}, {"Reorder", m.Reorder}} {
		if !finite(x.v) || x.v < 0 || x.v > 1 {
			return errs.BadParam("%s probability %v outside [0, 1]", x.name, x.v)
		}
	}
	if m.Loss == 1 {
		return errs.BadParam("Loss probability 1 loses every datagram")
	}
	if !finite(m.ReorderDelay) || m.ReorderDelay < 0 || below(m.ReorderDelay) {
		return errs.BadParam("ReorderDelay %v (want 0 or at least MinInterval %v)", m.ReorderDelay, MinInterval)
	}
	if m.TickInterval != nil && n >= 0 && len(m.TickInterval) != n {
		return errs.BadParam("TickInterval has %d entries for %d nodes", len(m.TickInterval), n)
	}
	if !finite(m.Drift) || m.Drift < 0 || m.Drift >= 1 {
		return errs.BadParam("Drift %v outside [0, 1)", m.Drift)
	}
	if below(1 - m.Drift) {
		return errs.BadParam("Drift %v: the shortest tick interval 1·(1 − Drift) is below MinInterval %v", m.Drift, MinInterval)
	}
	for v, x := range m.TickInterval {
		if !finite(x) || x < 0 {
			return errs.BadParam("TickInterval[%d] = %v", v, x)
		}
		if below(x * (1 - m.Drift)) {
			return errs.BadParam("TickInterval[%d] = %v: with Drift %v the tick interval %v is below MinInterval %v", v, x, m.Drift, x*(1-m.Drift), MinInterval)
		}
	}
	for i, c := range m.Crashes {
		if c.Node < 0 || (n >= 0 && c.Node >= n) {
			return errs.BadParam("Crashes[%d]: node %d outside 0..%d", i, c.Node, n-1)
		}
		if !finite(c.At) || c.At < 0 || !finite(c.DownFor) || c.DownFor < 0 {
			return errs.BadParam("Crashes[%d]: At %v, DownFor %v", i, c.At, c.DownFor)
		}
		if c.Point > CrashBeforeSend {
			return errs.BadParam("Crashes[%d]: unknown crash point %d", i, c.Point)
		}
	}
	if !finite(m.CrashRate) || m.CrashRate < 0 || m.CrashRate > 1/MinInterval {
		return errs.BadParam("CrashRate %v (want 0 ≤ CrashRate ≤ 1/MinInterval = %v)", m.CrashRate, 1/MinInterval)
	}
	return m.DownTime.check("DownTime")
}
