package tokendist

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"unsafe"
)

// Trace is the sequence of samples a run recorded.
type Trace []Sample

// traceHeader names the CSV columns, in Sample's field order.
var traceHeader = []string{"step", "time", "discrepancy", "max", "min", "potential", "moved", "messages", "negative"}

// roundColumn names the last column, Sample.Round (traces written before it have none).
const roundColumn = "round"

// dynamicHeader names the extra columns of a dynamic run's trace.
var dynamicHeader = []string{"arrived", "completed", "down"}

// WriteCSV writes the trace as CSV with a header row; the potential is exact decimal. A
// trace of a dynamic run (a sample with arrivals, completions or links down) has three
// more columns: arrived, completed, down. The last column is round (Sample.Round, a
// decimal number). It costs O(len(t)).
func (t Trace) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	dynamic := false
	for _, s := range t {
		dynamic = dynamic || s.Arrived != 0 || s.Completed != 0 || s.Down != 0
	}
	header := append([]string(nil), traceHeader...)
	if dynamic {
		header = append(header, dynamicHeader...)
	}
	header = append(header, roundColumn)
	if err := cw.Write(header); err != nil {
		return wrapf(err, "WriteCSV")
	}
	i := strconv.FormatInt
	for _, s := range t {
		row := []string{i(s.Step, 10), i(s.Time, 10), i(s.Discrepancy, 10), i(s.Max, 10), i(s.Min, 10),
			s.Potential.String(), i(s.Moved, 10), i(s.Messages, 10), strconv.Itoa(s.Negative)}
		if dynamic {
			row = append(row, i(s.Arrived, 10), i(s.Completed, 10), strconv.Itoa(s.Down))
		}
		row = append(row, strconv.FormatFloat(s.Round, 'g', -1, 64))
		if err := cw.Write(row); err != nil {
			return wrapf(err, "WriteCSV")
		}
	}
	cw.Flush()
	return wrapf(cw.Error(), "WriteCSV")
}

// WriteJSON writes the trace as a JSON array of samples. It costs O(len(t)).
func (t Trace) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return wrapf(enc.Encode(t), "WriteJSON")
}

// ReadTraceCSV reads a trace written by WriteCSV: a header row naming the columns
// step, time, discrepancy, max, min, potential, moved, messages, negative (in that
// order), followed by arrived, completed, down for a dynamic run's trace and by round
// (absent in traces written before it existed; Round is then 0), and one row
// per sample, every field a decimal integer (the potential an unsigned 128-bit one). It returns an error naming the line and the bad field (quoted
// up to a short prefix) on malformed input. O(size of the input).
func ReadTraceCSV(r io.Reader) (Trace, error) {
	if r == nil {
		return nil, badParam("ReadTraceCSV of a nil reader")
	}
	cr := csv.NewReader(&recordLimitReader{r: r})
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return nil, wrapf(err, "trace CSV header")
	}
	hasRound := len(head) > 0 && head[len(head)-1] == roundColumn
	if hasRound {
		head = head[:len(head)-1]
	}
	want := traceHeader
	if len(head) == len(traceHeader)+len(dynamicHeader) {
		want = append(append([]string(nil), traceHeader...), dynamicHeader...)
	}
	if len(head) != len(want) {
		return nil, fmt.Errorf("tokendist: trace CSV header has %d columns, want %d or %d", len(head), len(traceHeader), len(traceHeader)+len(dynamicHeader))
	}
	for i, name := range want {
		if head[i] != name {
			return nil, fmt.Errorf("tokendist: trace CSV header: column %d is %s, want %q", i+1, quote([]byte(head[i])), name)
		}
	}
	var t Trace
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return t, nil
		}
		if err != nil {
			return nil, wrapf(err, "trace CSV")
		}
		var s Sample
		ints := []*int64{&s.Step, &s.Time, &s.Discrepancy, &s.Max, &s.Min, nil, &s.Moved, &s.Messages}
		var down int64
		if len(want) > len(traceHeader) {
			ints = append(ints, nil, &s.Arrived, &s.Completed, &down)
		}
		for i, p := range ints {
			if p == nil {
				continue
			}
			v, err := strconv.ParseInt(rec[i], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("tokendist: trace CSV line %d, column %s: %s is not an int64", line, want[i], quote([]byte(rec[i])))
			}
			*p = v
		}
		if err := s.Potential.UnmarshalText([]byte(rec[5])); err != nil {
			return nil, fmt.Errorf("tokendist: trace CSV line %d, column potential: %s is not an unsigned 128-bit decimal", line, quote([]byte(rec[5])))
		}
		neg, err := strconv.ParseInt(rec[8], 10, 0)
		if err != nil {
			return nil, fmt.Errorf("tokendist: trace CSV line %d, column negative: %s is not an int", line, quote([]byte(rec[8])))
		}
		s.Negative = int(neg)
		if down < math.MinInt || down > math.MaxInt {
			return nil, fmt.Errorf("tokendist: trace CSV line %d, column down: %d is not an int", line, down)
		}
		s.Down = int(down)
		if hasRound {
			v, err := strconv.ParseFloat(rec[len(want)], 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return nil, fmt.Errorf("tokendist: trace CSV line %d, column round: %s is not a finite number ≥ 0", line, quote([]byte(rec[len(want)])))
			}
			s.Round = v
		}
		if len(t) == cap(t) {
			if err := checkAlloc(fmt.Sprintf("trace CSV line %d: the trace", line), int64(3*len(t)+16), int64(unsafe.Sizeof(s))); err != nil {
				return nil, err
			}
		}
		t = append(t, s)
	}
}

// Discrepancies returns the step and discrepancy columns as float64, ready for plotting.
// It costs O(len(t)).
func (t Trace) Discrepancies() (steps, disc []float64) {
	steps = make([]float64, len(t))
	disc = make([]float64, len(t))
	for k, s := range t {
		steps[k], disc[k] = float64(s.Step), float64(s.Discrepancy)
	}
	return steps, disc
}

// Sample is a snapshot of a run's metrics.
type Sample struct {
	// Step is the number of steps completed and Time the model time (State.Steps and
	// State.Time).
	Step int64 `json:"step"`
	Time int64 `json:"time"`
	// Round is Step / State.RoundSteps (Result.Rounds), fractional inside a round.
	Round float64 `json:"round"`
	// Discrepancy is Max − Min, the largest minus the smallest load.
	Discrepancy int64 `json:"discrepancy"`
	Max         int64 `json:"max"`
	Min         int64 `json:"min"`
	// Potential is Σ load², exact (Loads.Potential).
	Potential Uint128 `json:"potential"`
	// Moved and Messages are the counters State.Moved and State.Messages.
	Moved    int64 `json:"moved"`
	Messages int64 `json:"messages"`
	// Negative is the number of nodes with a negative load (only the FGS comparators).
	Negative int `json:"negative"`
	// Arrived and Completed are the workload's counts so far (0 without a workload).
	Arrived   int64 `json:"arrived,omitempty"`
	Completed int64 `json:"completed,omitempty"`
	// Down is the number of links down at the sample (0 without churn).
	Down int `json:"down,omitempty"`
}

// UnmarshalJSON decodes a trace written by json.Marshal or Trace.WriteJSON. A value of
// the wrong type (a string where a step count belongs) fails with an error that starts
// with "tokendist: " and names the field; the input is never echoed whole. Syntax
// errors are found by encoding/json before this method runs and come from it as they
// are. It costs O(size of the input).
func (t *Trace) UnmarshalJSON(data []byte) error {
	type plain Trace // no methods: the default decoding
	return jsonErr("trace", json.Unmarshal(data, (*plain)(t)))
}
