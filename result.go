package tokendist

import (
	"encoding/json"
	"fmt"
)

// Status says why a run stopped.
type Status int

// The reasons a run stops.
const (
	// StatusNotStarted is the zero Status.
	StatusNotStarted Status = iota
	// StatusDone: the balancer's own termination rule (Terminator) fired.
	StatusDone
	// StatusTarget: the discrepancy reached RunOptions.TargetDiscrepancy.
	StatusTarget
	// StatusStable: the loads were equal at two snapshots one period apart.
	StatusStable
	// StatusMaxSteps: the step budget ran out.
	StatusMaxSteps
	// StatusCanceled: the context was cancelled or its deadline passed.
	StatusCanceled
	// StatusFailed: a Step, a Recorder or an invariant check failed; see the error.
	StatusFailed
)

var statusNames = [...]string{"NotStarted", "Done", "Target", "Stable", "MaxSteps", "Canceled", "Failed"}

// String names the status.
func (s Status) String() string {
	if s < 0 || int(s) >= len(statusNames) {
		return fmt.Sprintf("Status(%d)", int(s))
	}
	return statusNames[s]
}

// MarshalText encodes the status by name.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText decodes a status name written by MarshalText, so a Result saved as
// JSON decodes back into a Result.
func (s *Status) UnmarshalText(b []byte) error {
	for i, name := range statusNames {
		if string(b) == name {
			*s = Status(i)
			return nil
		}
	}
	return fmt.Errorf("tokendist: unknown status %s", quote(b))
}

// Result is the outcome of Run.
type Result struct {
	// Balancer names the algorithm.
	Balancer string `json:"balancer"`
	// Status says why the run stopped.
	Status Status `json:"status"`
	// Loads are the final loads (a copy; the caller's input is never changed).
	Loads Loads `json:"loads"`
	// Steps, Time, Moved and Messages are the final counters.
	Steps    int64 `json:"steps"`
	Time     int64 `json:"time"`
	Moved    int64 `json:"moved"`
	Messages int64 `json:"messages"`
	// Rounds is Steps / State.RoundSteps, the steps counted in the algorithm's rounds
	// (every node has had its chance once: χ dimension-exchange steps, one diffusion
	// step), the unit to compare algorithms by; it is fractional when a run stops
	// inside a round.
	Rounds float64 `json:"rounds"`
	// Trace holds the samples taken, the first before any step and the last at the end.
	Trace Trace `json:"trace"`
	// NegativeSteps counts steps after which some load was negative, and MostNegative is
	// the lowest load seen; both stay 0 for balancers that keep NonNegative.
	NegativeSteps int64 `json:"negative_steps"`
	MostNegative  int64 `json:"most_negative"`
	// Report holds the balancer's own figures (Reporter), a value of the type its doc
	// comment names, or nil for a balancer without a report. Decoded from JSON into a
	// Result, it is a map[string]any: decode into the report's own type to keep it typed.
	Report any `json:"report,omitempty"`
	// Initial is the initial total; Arrived and Completed are the tokens the workload
	// added and removed, so the final total is Initial + Arrived − Completed.
	Initial   int64 `json:"initial"`
	Arrived   int64 `json:"arrived,omitempty"`
	Completed int64 `json:"completed,omitempty"`
	// Steady holds the steady-state metrics when RunOptions.Steady is set.
	Steady *SteadyStats `json:"steady,omitempty"`
}

// Discrepancy returns the final discrepancy. It costs O(n).
func (r Result) Discrepancy() int64 { return r.Loads.Discrepancy() }

// String returns a one-line summary: the balancer, the status, the steps, the time,
// discrepancy, moves and messages, the workload's counts, and the Report when it is a
// fmt.Stringer. It costs O(n).
func (r Result) String() string {
	s := fmt.Sprintf("%s: %s after %d steps (time %d), discrepancy %d, moved %d, messages %d",
		r.Balancer, r.Status, r.Steps, r.Time, r.Loads.Discrepancy(), r.Moved, r.Messages)
	if r.Arrived > 0 || r.Completed > 0 {
		s += fmt.Sprintf(", arrived %d, completed %d", r.Arrived, r.Completed)
	}
	if r.NegativeSteps > 0 {
		s += fmt.Sprintf(", negative after %d steps (lowest %d)", r.NegativeSteps, r.MostNegative)
	}
	if rep, ok := r.Report.(fmt.Stringer); ok {
		s += "; " + rep.String()
	}
	return s
}

// InvariantError reports a balancer that broke an invariant it declared. Run checks the
// invariants at every sample (every RunOptions.SampleEvery steps) and at the end of the
// run, so the break happened in one of the steps LastChecked+1 .. Step.
type InvariantError struct {
	// Balancer names the balancer.
	Balancer string
	// Step is the number of steps completed when the break was detected.
	Step int64
	// LastChecked is the step count at the previous check, where the invariants held
	// (0: the validated initial loads). The break happened after it.
	LastChecked int64
	// CheckEvery is the checking interval in steps (RunOptions.SampleEvery), or 0 when
	// Run checked only at the end of the run.
	CheckEvery int64
	// Invariant is the invariant broken.
	Invariant Invariant
	// Detail names the offending value (the total, or the node and its load).
	Detail string
}

// Error describes the violation and the steps in which it happened.
func (e *InvariantError) Error() string {
	where := fmt.Sprintf("in step %d", e.Step)
	if e.Step > e.LastChecked+1 {
		where = fmt.Sprintf("in one of steps %d..%d", e.LastChecked+1, e.Step)
	}
	every := "only at the end of the run (set RunOptions.SampleEvery to check more often)"
	switch {
	case e.CheckEvery == 1:
		every = "after every step"
	case e.CheckEvery > 1:
		every = fmt.Sprintf("every %d steps", e.CheckEvery)
	}
	return fmt.Sprintf("tokendist: balancer %s broke %s %s, detected after step %d (invariants checked %s): %s",
		e.Balancer, e.Invariant, where, e.Step, every, e.Detail)
}

// UnmarshalJSON decodes a Result written by json.Marshal, with the errors of
// Trace.UnmarshalJSON. It costs O(size of the input).
func (r *Result) UnmarshalJSON(data []byte) error {
	type plain Result
	return jsonErr("Result", json.Unmarshal(data, (*plain)(r)))
}
