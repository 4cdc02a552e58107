package experiment

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/tokendist/tokendist/internal/errs"
	"gonum.org/v1/gonum/stat/distuv"
)

// resultCols are the per-run columns that hold a run's outcome: a failed run has none,
// and ExportTable leaves them empty (with its metrics) instead of showing zeros.
var resultCols = []string{"discrepancy", "steps", "rounds", "time", "moved", "messages", "negative_steps"}

// ExportTable returns one row per stored run, filtered by the SQL condition where, with
// the columns of RunsTable plus, after "algorithm", one column per parameter the runs'
// configurations name: network_name, loads_name and algorithm_name, then
// "network.PARAM", "loads.PARAM", "algorithm.PARAM", "stop.FIELD" and, for runs with a
// network model, "model.FIELD" ("model.delay.max" for a field of the delay distribution;
// a numeric field the model leaves at zero shows 0)
// (a list, such as a torus's sides, as JSON text; a parameter a run lacks is empty). A failed run keeps its
// status and error and has no numbers in the result and metric columns. Numbers are
// int64 and float64 values; Table.Write prints them in full precision in CSV and JSON
// Lines. When the rows come from more than one code (their code identities differ, see
// CodeIdentity; runs of a database from before code keys have UnknownCode), a column
// "code" after "experiment" says which code each row is from, and Summary and Plot keep
// the codes apart. It costs O(runs × columns).
func ExportTable(db *DB, where string) (Table, error) {
	_, rows, idx, err := db.queryIndexed(where)
	if err != nil {
		return Table{}, err
	}
	reportCols := withCode(reportCols, rows, idx)
	params := make([]map[string]any, len(rows))
	set := map[string]bool{}
	for i, r := range rows {
		params[i] = specColumns(fmt.Sprint(r[idx["config"]]))
		for k := range params[i] {
			set[k] = true
		}
	}
	var pcols []string
	for k := range set {
		pcols = append(pcols, k)
	}
	order := map[string]int{"network_name": 0, "network.": 1, "loads_name": 2, "loads.": 3, "algorithm_name": 4, "algorithm.": 5, "stop.": 6, "model.": 7}
	rank := func(c string) int {
		if i, ok := order[c]; ok {
			return i
		}
		p, _, _ := strings.Cut(c, ".")
		return order[p+"."]
	}
	sort.Slice(pcols, func(i, j int) bool {
		if ri, rj := rank(pcols[i]), rank(pcols[j]); ri != rj {
			return ri < rj
		}
		return pcols[i] < pcols[j]
	})
	rows, params = byModel(rows, params, idx, pcols)
	metrics, mvals := metricColumns(rows, idx["metrics"])
	ai := 0
	for i, c := range reportCols {
		if c == "algorithm" {
			ai = i + 1
		}
	}
	t := Table{Cols: append(append(append([]string(nil), reportCols[:ai]...), pcols...), reportCols[ai:]...)}
	for _, m := range metrics {
		t.Cols = append(t.Cols, "m."+m)
	}
	for ri, r := range rows {
		failed := r[idx["status"]] == "Failed"
		row := make([]any, 0, len(t.Cols))
		for _, c := range reportCols[:ai] {
			row = append(row, r[idx[c]])
		}
		for _, c := range pcols {
			row = append(row, params[ri][c])
		}
		for _, c := range reportCols[ai:] {
			v := r[idx[c]]
			if failed && contains(resultCols, c) {
				v = nil
			}
			row = append(row, v)
		}
		for _, m := range metrics {
			v, ok := mvals[ri][m]
			if ok && !failed {
				row = append(row, v)
			} else {
				row = append(row, nil)
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// byModel returns rows (and their params) with the runs of one experiment, network,
// loads, algorithm and code, which the database query orders by seed and key, ordered
// by the values of their model.* columns (numbers numerically; stable, so seeds stay in
// order within one model), so that a summary's groups of network models come in the
// order of their values, not of their keys' hashes. Without model columns it returns
// them as they are. It costs O(rows log rows × model columns).
func byModel(rows [][]any, params []map[string]any, idx map[string]int, pcols []string) ([][]any, []map[string]any) {
	var mk []string
	for _, c := range pcols {
		if strings.HasPrefix(c, "model.") {
			mk = append(mk, c)
		}
	}
	if len(mk) == 0 {
		return rows, params
	}
	group := make([]int, len(rows))
	seen := map[string]int{}
	for i, r := range rows {
		var b strings.Builder
		for _, c := range []string{"experiment", "network_name", "n", "network", "loads", "algorithm", "code"} {
			fmt.Fprintf(&b, "%v\x00", r[idx[c]])
		}
		g, ok := seen[b.String()]
		if !ok {
			g = len(seen)
			seen[b.String()] = g
		}
		group[i] = g
	}
	perm := make([]int, len(rows))
	for i := range perm {
		perm[i] = i
	}
	sort.SliceStable(perm, func(a, b int) bool {
		i, j := perm[a], perm[b]
		if group[i] != group[j] {
			return group[i] < group[j]
		}
		for _, c := range mk {
			if d := compareValues(params[i][c], params[j][c]); d != 0 {
				return d < 0
			}
		}
		return false
	})
	outR := make([][]any, len(rows))
	outP := make([]map[string]any, len(rows))
	for k, i := range perm {
		outR[k], outP[k] = rows[i], params[i]
	}
	return outR, outP
}

// compareValues orders table values: absent first, then numbers (numerically), then
// any other value by its text.
func compareValues(a, b any) int {
	rank := func(v any) int {
		if v == nil {
			return 0
		}
		if _, ok := number(v); ok {
			return 1
		}
		return 2
	}
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra - rb
	}
	if fa, ok := number(a); ok {
		fb, _ := number(b)
		switch {
		case fa < fb:
			return -1
		case fa > fb:
			return 1
		}
		return 0
	}
	return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
}

// modelZeroKeys are the numeric keys of a network model whose zero value its JSON omits.
var modelZeroKeys = []string{"loss", "duplicate", "reorder", "reorder_delay", "drift", "crash_rate", "patience"}

// specColumns returns the parameter columns of a stored configuration (the JSON of a
// registry.Spec): network_name, network.PARAM, ..., stop.FIELD.
func specColumns(config string) map[string]any {
	var spec struct {
		Network, Loads, Algorithm struct {
			Name   string                     `json:"name"`
			Params map[string]json.RawMessage `json:"params"`
		}
		Stop  map[string]json.RawMessage `json:"stop"`
		Model map[string]json.RawMessage `json:"network_model"`
	}
	out := map[string]any{}
	if json.Unmarshal([]byte(config), &spec) != nil {
		return out
	}
	val := func(raw json.RawMessage) any {
		var v any
		d := json.NewDecoder(strings.NewReader(string(raw)))
		d.UseNumber()
		if d.Decode(&v) != nil {
			return string(raw)
		}
		switch x := v.(type) {
		case json.Number:
			if i, err := x.Int64(); err == nil {
				return i
			}
			f, _ := x.Float64()
			return f
		case string, bool:
			return x
		}
		return string(raw) // a list or an object, as JSON text
	}
	for _, part := range []struct {
		name   string
		label  string
		params map[string]json.RawMessage
	}{{"network", spec.Network.Name, spec.Network.Params}, {"loads", spec.Loads.Name, spec.Loads.Params}, {"algorithm", spec.Algorithm.Name, spec.Algorithm.Params}} {
		out[part.name+"_name"] = part.label
		for k, raw := range part.params {
			out[part.name+"."+k] = val(raw)
		}
	}
	for k, raw := range spec.Stop {
		out["stop."+k] = val(raw)
	}
	if spec.Model != nil { // the keys a model leaves at zero are omitted from its JSON: show the zero
		for _, k := range modelZeroKeys {
			out["model."+k] = int64(0)
		}
	}
	for k, raw := range spec.Model {
		var sub map[string]json.RawMessage
		if json.Unmarshal(raw, &sub) == nil && sub != nil { // a delay distribution: one column per field
			for kk, r := range sub {
				out["model."+k+"."+kk] = val(r)
			}
			continue
		}
		out["model."+k] = val(raw)
	}
	return out
}

// Stats are the summary statistics of a sample.
type Stats struct {
	// Count is the sample size; the other fields are NaN when it is 0.
	Count int
	// Mean and SD are the mean and the sample standard deviation (n − 1; 0 for one
	// value).
	Mean, SD float64
	// Min, Q1, Median, Q3 and Max are the quantiles 0, ¼, ½, ¾ and 1, interpolated
	// linearly between order statistics (Hyndman and Fan's type 7, R's and NumPy's
	// default).
	Min, Q1, Median, Q3, Max float64
	// CILow and CIHigh bound the 95% confidence interval of the mean, Mean ∓
	// t_{0.975, n−1}·SD/√n (Student's t distribution); NaN for fewer than 2 values.
	CILow, CIHigh float64
}

// Summarize returns the Stats of x (NaN values are left out). It costs O(n log n).
func Summarize(x []float64) Stats {
	v := make([]float64, 0, len(x))
	for _, f := range x {
		if !math.IsNaN(f) {
			v = append(v, f)
		}
	}
	nan := math.NaN()
	s := Stats{Count: len(v), Mean: nan, SD: nan, Min: nan, Q1: nan, Median: nan, Q3: nan, Max: nan, CILow: nan, CIHigh: nan}
	if len(v) == 0 {
		return s
	}
	sort.Float64s(v)
	s.Mean, s.SD = meanSD(v)
	s.Min, s.Max = v[0], v[len(v)-1]
	s.Q1, s.Median, s.Q3 = quantile7(v, 0.25), quantile7(v, 0.5), quantile7(v, 0.75)
	if n := len(v); n >= 2 {
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(0.975)
		h := t * s.SD / math.Sqrt(float64(n))
		s.CILow, s.CIHigh = s.Mean-h, s.Mean+h
	}
	return s
}

// quantile7 returns the p-quantile of the sorted v by linear interpolation between
// order statistics (type 7).
func quantile7(v []float64, p float64) float64 {
	h := float64(len(v)-1) * p
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(v) {
		return v[len(v)-1]
	}
	return v[i] + (h-lo)*(v[i+1]-v[i])
}

// statNames are the summary columns per value column, as COLUMN_STAT.
var statNames = []string{"n", "mean", "sd", "ci95_low", "ci95_high", "min", "q1", "median", "q3", "max"}

func (s Stats) values() []any {
	out := []any{int64(s.Count)}
	for _, f := range []float64{s.Mean, s.SD, s.CILow, s.CIHigh, s.Min, s.Q1, s.Median, s.Q3, s.Max} {
		if math.IsNaN(f) {
			out = append(out, nil)
		} else {
			out = append(out, f)
		}
	}
	return out
}

// DefaultSummaryBy are the columns Summary groups by when given none.
var DefaultSummaryBy = []string{"experiment", "network", "n", "loads", "algorithm"}

// Summary groups the rows of t (usually ExportTable's) by the columns by (nil:
// DefaultSummaryBy), in order of first appearance, and gives per group the number of
// runs, one column "status.S" per status S present in t with the count of runs of that
// status, and for each column of values (nil: discrepancy, steps, rounds, moved and every
// metric column m.NAME) the Stats of its numbers over the group's runs as COLUMN_n,
// COLUMN_mean, COLUMN_sd, COLUMN_ci95_low, COLUMN_ci95_high, COLUMN_min, COLUMN_q1,
// COLUMN_median, COLUMN_q3 and COLUMN_max. Empty cells (failed runs, absent metrics)
// are left out of the statistics, so COLUMN_n counts the numbers used. A column of by
// or values that t lacks, or a values column holding text, is an error naming it and
// the columns there are. When t has a column "code" (ExportTable's, for runs of more than
// one code) and by does not name it, it is added to the end of by, so that runs of
// different code are never pooled into one group; to pool them, drop the column first
// (t.Without("code"), report --all-code). It costs O(rows × columns + rows log rows).
func Summary(t Table, by, values []string) (Table, error) {
	col := map[string]int{}
	for i, c := range t.Cols {
		col[c] = i
	}
	need := func(c, what string) (int, error) {
		i, ok := col[c]
		if !ok {
			return 0, errs.BadParam("summary: no column %q to %s (columns: %s)", c, what, strings.Join(t.Cols, ", "))
		}
		return i, nil
	}
	if len(by) == 0 {
		by = DefaultSummaryBy
	}
	if _, ok := col["code"]; ok && !contains(by, "code") {
		by = append(append([]string(nil), by...), "code")
	}
	if len(values) == 0 {
		values = []string{"discrepancy", "steps", "rounds", "moved"}
		for _, c := range t.Cols {
			if strings.HasPrefix(c, "m.") {
				values = append(values, c)
			}
		}
	}
	bi := make([]int, len(by))
	for k, c := range by {
		i, err := need(c, "group by")
		if err != nil {
			return Table{}, err
		}
		bi[k] = i
	}
	vi := make([]int, len(values))
	for k, c := range values {
		i, err := need(c, "summarise")
		if err != nil {
			return Table{}, err
		}
		vi[k] = i
		for _, r := range t.Rows {
			if _, ok := number(r[i]); !ok && r[i] != nil {
				return Table{}, errs.BadParam("summary: column %q is not numeric (it holds %s)", c, errs.Quote([]byte(cell(r[i]))))
			}
		}
	}
	si, hasStatus := col["status"]
	var statuses []string
	type group struct {
		key    []any
		runs   int
		status map[string]int
		vals   [][]float64
	}
	var order []string
	groups := map[string]*group{}
	for _, r := range t.Rows {
		key := make([]any, len(bi))
		for k, i := range bi {
			key[k] = r[i]
		}
		ks, _ := json.Marshal(key)
		g := groups[string(ks)]
		if g == nil {
			g = &group{key: key, status: map[string]int{}, vals: make([][]float64, len(vi))}
			groups[string(ks)] = g
			order = append(order, string(ks))
		}
		g.runs++
		if hasStatus {
			st := cell(r[si])
			if !contains(statuses, st) {
				statuses = append(statuses, st)
			}
			g.status[st]++
		}
		for k, i := range vi {
			if f, ok := number(r[i]); ok {
				g.vals[k] = append(g.vals[k], f)
			}
		}
	}
	sort.Strings(statuses)
	out := Table{Cols: append(append([]string(nil), by...), "runs")}
	for _, s := range statuses {
		out.Cols = append(out.Cols, "status."+s)
	}
	for _, v := range values {
		for _, s := range statNames {
			out.Cols = append(out.Cols, v+"_"+s)
		}
	}
	for _, ks := range order {
		g := groups[ks]
		row := append(append([]any(nil), g.key...), int64(g.runs))
		for _, s := range statuses {
			row = append(row, int64(g.status[s]))
		}
		for k := range vi {
			row = append(row, Summarize(g.vals[k]).values()...)
		}
		out.Rows = append(out.Rows, row)
	}
	return out, nil
}

// number returns v as a float64 if it is a number.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case float64:
		return x, !math.IsNaN(x)
	}
	return 0, false
}

// fullCell formats v for CSV and machine-read output: floats in full precision
// (strconv 'g' with precision -1, the shortest text that reads back to the same
// float64), integers exactly.
func fullCell(v any) string { return formatCell(v, -1) }

// traceCols are the columns of TracesTable.
var traceCols = []string{"key", "experiment", "network", "loads", "algorithm", "seed", "step", "round", "time", "discrepancy", "max_load", "min_load",
	"potential", "moved", "messages", "negative"}

// TracesTable returns the stored trace samples (sweeps with record.trace: true) of the
// runs matching the SQL condition where on the runs table, one row per sample, with
// the run's key, experiment, network, loads, algorithm and seed (and, as ExportTable,
// a column "code" after "experiment" when the runs come from more than one code),
// ordered as the runs and by step. The potential is text (it may exceed float64's exact
// range); the other numbers are int64. It costs O(samples).
func TracesTable(db *DB, where string) (Table, error) {
	// A sample's round is its step in the run's rounds: Rounds/Steps is 1/RoundSteps,
	// constant over a run (NULL where the run has no rounds: stored before them).
	q := `SELECT t.key, r.experiment, r.network, r.loads, r.algorithm, r.seed, t.step,
		CASE WHEN r.rounds IS NULL THEN NULL WHEN r.steps = 0 THEN 0.0 ELSE t.step * r.rounds / r.steps END,
		t.time, t.discrepancy, t.max_load, t.min_load,
		t.potential, t.moved, t.messages, t.negative, r.code FROM traces t JOIN ` + db.runsTable() + ` r ON r.key = t.key`
	if where != "" {
		q += ` WHERE t.key IN (SELECT key FROM ` + db.runsTable() + ` WHERE ` + where + `)`
	}
	q += ` ORDER BY r.experiment, r.network_name, r.n, r.network, r.loads, r.algorithm, r.code, r.seed, t.key, t.step`
	rows, err := db.sql.Query(q)
	if err != nil {
		return Table{}, wrapf(err, "database %s: traces", db.path)
	}
	defer rows.Close()
	var all [][]any
	n := len(traceCols) + 1
	for rows.Next() {
		vals := make([]any, n)
		ptrs := make([]any, n)
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return Table{}, wrapf(err, "database %s: traces", db.path)
		}
		all = append(all, vals)
	}
	if err := rows.Err(); err != nil {
		return Table{}, wrapf(err, "database %s: traces", db.path)
	}
	idx := map[string]int{"code": n - 1}
	t := Table{Cols: withCode(traceCols, all, idx)}
	multi := len(t.Cols) > len(traceCols)
	for _, v := range all {
		if !multi {
			t.Rows = append(t.Rows, v[:n-1])
			continue
		}
		row := make([]any, 0, n)
		row = append(row, v[:2]...) // key, experiment
		row = append(row, v[n-1])   // code
		t.Rows = append(t.Rows, append(row, v[2:n-1]...))
	}
	return t, nil
}
