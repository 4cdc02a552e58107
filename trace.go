package tokendist

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"
)

// Trace is the sequence of samples a run recorded.
type Trace []Sample

// traceHeader names the CSV columns, in Sample's field order.
var traceHeader = []string{"step", "time", "discrepancy", "max", "min", "potential", "moved", "messages", "negative"}

// dynamicHeader names the extra columns of a dynamic run's trace.
var dynamicHeader = []string{"arrived", "completed", "down"}

// WriteCSV writes the trace as CSV with a header row; the potential is exact decimal. A
// trace of a dynamic run (a sample with arrivals, completions or links down) has three
// more columns: arrived, completed, down. It costs O(len(t)).
func (t Trace) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	dynamic := false
	for _, s := range t {
		dynamic = dynamic || s.Arrived != 0 || s.Completed != 0 || s.Down != 0
	}
	header := traceHeader
	if dynamic {
		header = append(append([]string(nil), traceHeader...), dynamicHeader...)
	}
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
