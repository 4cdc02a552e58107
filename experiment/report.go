package experiment

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tokendist/tokendist/internal/errs"
)

// Table is a rectangular report.
type Table struct {
	Cols []string
	Rows [][]any
}

// reportCols are the per-run columns of a report (config is left to JSON Lines).
var reportCols = []string{"experiment", "network", "n", "loads", "algorithm", "seed", "status", "error", "discrepancy", "initial_discrepancy",
	"steps", "rounds", "time", "moved", "messages", "negative_steps", "wall_seconds", "key"}

// withCode returns cols with "code" after "experiment" when rows hold more than one
// code identity, else cols.
func withCode(cols []string, rows [][]any, idx map[string]int) []string {
	if !multiCode(rows, idx) {
		return cols
	}
	out := make([]string, 0, len(cols)+1)
	for _, c := range cols {
		out = append(out, c)
		if c == "experiment" {
			out = append(out, "code")
		}
	}
	return out
}

// multiCode reports whether rows hold more than one code identity.
func multiCode(rows [][]any, idx map[string]int) bool {
	ci, ok := idx["code"]
	if !ok {
		return false
	}
	for _, r := range rows {
		if fmt.Sprint(r[ci]) != fmt.Sprint(rows[0][ci]) {
			return true
		}
	}
	return false
}

// RunsTable returns one row per stored run (with metrics as extra columns "m.NAME"),
// filtered by the SQL condition where, with a column "code" after "experiment" when the
// runs come from more than one code (as ExportTable).
func RunsTable(db *DB, where string) (Table, error) {
	_, rows, idx, err := db.queryIndexed(where)
	if err != nil {
		return Table{}, err
	}
	reportCols := withCode(reportCols, rows, idx)
	metrics, mvals := metricColumns(rows, idx["metrics"])
	t := Table{Cols: append(append([]string(nil), reportCols...), metrics...)}
	for ri, r := range rows {
		row := make([]any, 0, len(t.Cols))
		for _, c := range reportCols {
			row = append(row, r[idx[c]])
		}
		for _, m := range metrics {
			if v, ok := mvals[ri][m]; ok {
				row = append(row, v)
			} else {
				row = append(row, nil)
			}
		}
		t.Rows = append(t.Rows, row)
	}
	for i := range metrics {
		t.Cols[len(reportCols)+i] = "m." + metrics[i]
	}
	return t, nil
}

func metricColumns(rows [][]any, mi int) ([]string, []map[string]float64) {
	set := map[string]bool{}
	vals := make([]map[string]float64, len(rows))
	for i, r := range rows {
		s, _ := r[mi].(string)
		m := map[string]float64{}
		json.Unmarshal([]byte(s), &m)
		vals[i] = m
		for k := range m {
			set[k] = true
		}
	}
	var names []string
	for k := range set {
		names = append(names, k)
	}
	sort.Strings(names)
	return names, vals
}

// SummaryTable groups the stored runs by experiment, network, loads and algorithm (and
// code, with a column "code" after "experiment", when the runs come from more than one
// code) and gives, over the seeds, the count, the mean, standard deviation, minimum and maximum
// of the final discrepancy, the mean steps and moved tokens, and the mean of every
// metric.
func SummaryTable(db *DB, where string) (Table, error) {
	_, rows, idx, err := db.queryIndexed(where)
	if err != nil {
		return Table{}, err
	}
	metrics, mvals := metricColumns(rows, idx["metrics"])
	type group struct {
		key            []any
		disc, steps, m []float64
		failed         int
		met            map[string][]float64
	}
	var order []string
	groups := map[string]*group{}
	keyCols := withCode([]string{"experiment", "network", "n", "loads", "algorithm"}, rows, idx)
	for ri, r := range rows {
		key := make([]any, len(keyCols))
		for i, c := range keyCols {
			key[i] = r[idx[c]]
		}
		ks := fmt.Sprint(key...)
		g := groups[ks]
		if g == nil {
			g = &group{key: key, met: map[string][]float64{}}
			groups[ks] = g
			order = append(order, ks)
		}
		if r[idx["status"]] == "Failed" {
			g.failed++
			continue
		}
		g.disc = append(g.disc, toF(r[idx["discrepancy"]]))
		g.steps = append(g.steps, toF(r[idx["steps"]]))
		g.m = append(g.m, toF(r[idx["moved"]]))
		for k, v := range mvals[ri] {
			g.met[k] = append(g.met[k], v)
		}
	}
	t := Table{Cols: append(keyCols, "runs", "failed", "disc_mean", "disc_sd", "disc_min", "disc_max", "steps_mean", "moved_mean")}
	for _, m := range metrics {
		t.Cols = append(t.Cols, "m."+m)
	}
	for _, ks := range order {
		g := groups[ks]
		mean, sd := meanSD(g.disc)
		row := append(append([]any(nil), g.key...), len(g.disc), g.failed, mean, sd, minF(g.disc), maxF(g.disc), mean1(g.steps), mean1(g.m))
		for _, m := range metrics {
			if v, ok := g.met[m]; ok {
				row = append(row, mean1(v))
			} else {
				row = append(row, nil)
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

func toF(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	case string:
		f, _ := strconv.ParseFloat(x, 64)
		return f
	}
	return math.NaN()
}

func meanSD(x []float64) (float64, float64) {
	if len(x) == 0 {
		return math.NaN(), math.NaN()
	}
	m := mean1(x)
	if len(x) == 1 {
		return m, 0
	}
	var s float64
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return m, math.Sqrt(s / float64(len(x)-1))
}

func mean1(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

func minF(x []float64) any {
	if len(x) == 0 {
		return nil
	}
	m := x[0]
	for _, v := range x {
		m = math.Min(m, v)
	}
	return m
}

func maxF(x []float64) any {
	if len(x) == 0 {
		return nil
	}
	m := x[0]
	for _, v := range x {
		m = math.Max(m, v)
	}
	return m
}

func cell(v any) string { return formatCell(v, 6) }

// formatCell formats a table value: nil and NaN as empty, floats with strconv's 'g' at
// precision prec (-1: the shortest text that reads back to the same float64), other
// values as fmt.Sprint does (integers exactly).
func formatCell(v any, prec int) string {
	switch x := v.(type) {
	case nil:
		return ""
	case float64:
		if math.IsNaN(x) {
			return ""
		}
		return strconv.FormatFloat(x, 'g', prec, 64)
	case []byte:
		return string(x)
	}
	return fmt.Sprint(v)
}

// Without returns t without the column named col.
func (t Table) Without(col string) Table {
	k := -1
	for i, c := range t.Cols {
		if c == col {
			k = i
		}
	}
	if k < 0 {
		return t
	}
	out := Table{Cols: append(append([]string(nil), t.Cols[:k]...), t.Cols[k+1:]...)}
	for _, r := range t.Rows {
		out.Rows = append(out.Rows, append(append([]any(nil), r[:k]...), r[k+1:]...))
	}
	return out
}

// Write writes t in format text (aligned columns, numbers to 6 significant digits),
// csv or markdown (numbers in full precision: strconv 'g' with precision -1), or jsonl
// (one JSON object per row; numbers in full precision, NaN as null).
func (t Table) Write(w io.Writer, format string) error {
	return t.write(w, format, cell, fullCell)
}

// WriteDigits writes t as Write does, but with the numbers of text and markdown rounded
// to digits significant digits (digits ≤ 0: full precision), written without an
// exponent between 1e-4 and 1e15 (12345.678 to 4 digits is 12350); csv and jsonl keep
// full precision. Integers are always exact. It costs O(rows × columns).
func (t Table) WriteDigits(w io.Writer, format string, digits int) error {
	c := func(v any) string { return digitsCell(v, digits) }
	return t.write(w, format, c, c)
}

// DefaultDigits is the number of significant digits report prints in text, Markdown and
// HTML unless --digits says otherwise.
const DefaultDigits = 4

// digitsCell formats v as WriteDigits describes.
func digitsCell(v any, digits int) string {
	x, ok := v.(float64)
	if !ok || digits <= 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return formatCell(v, -1)
	}
	r := strconv.FormatFloat(x, 'g', digits, 64)
	if !strings.ContainsRune(r, 'e') {
		return r
	}
	if f, _ := strconv.ParseFloat(r, 64); math.Abs(f) >= 1e-4 && math.Abs(f) < 1e15 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return r
}

// write writes t in format with text cells formatted by textCell and markdown cells by
// mdCell.
func (t Table) write(w io.Writer, format string, textCell, mdCell func(any) string) error {
	switch format {
	case "csv":
		cw := csv.NewWriter(w)
		cw.Write(t.Cols)
		for _, r := range t.Rows {
			rec := make([]string, len(r))
			for i, v := range r {
				rec[i] = fullCell(v)
			}
			cw.Write(rec)
		}
		cw.Flush()
		return wrapf(cw.Error(), "report: csv")
	case "jsonl":
		enc := json.NewEncoder(w)
		for _, r := range t.Rows {
			obj := make(map[string]any, len(r))
			for i, v := range r {
				if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
					v = nil
				}
				obj[t.Cols[i]] = v
			}
			if err := enc.Encode(obj); err != nil {
				return wrapf(err, "report: jsonl")
			}
		}
		return nil
	case "markdown":
		fmt.Fprintf(w, "| %s |\n", strings.Join(t.Cols, " | "))
		fmt.Fprintf(w, "|%s\n", strings.Repeat("---|", len(t.Cols)))
		for _, r := range t.Rows {
			s := make([]string, len(r))
			for i, v := range r {
				s[i] = strings.ReplaceAll(mdCell(v), "|", `\|`)
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(s, " | "))
		}
		return nil
	case "text", "":
		cells := make([][]string, 0, len(t.Rows)+1)
		cells = append(cells, t.Cols)
		for _, r := range t.Rows {
			row := make([]string, len(r))
			for i, v := range r {
				row[i] = textCell(v)
			}
			cells = append(cells, row)
		}
		writeAligned(w, cells, "")
		return nil
	}
	return errs.BadParam("unknown format %q (allowed: text, csv, markdown, jsonl)", format)
}

// writeAligned writes rows of cells as aligned columns two spaces apart, each line
// after indent.
func writeAligned(w io.Writer, rows [][]string, indent string) {
	var width []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, s := range rows {
		var b strings.Builder
		b.WriteString(indent)
		for i, c := range s {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(c)
			if i < len(s)-1 {
				b.WriteString(strings.Repeat(" ", width[i]-utf8.RuneCountInString(c)))
			}
		}
		fmt.Fprintln(w, b.String())
	}
}

// maxTextWidth is the width the text summary keeps within.
const maxTextWidth = 120

// writeSummaryText writes a Summary table as text with numbers to digits significant
// digits: as one table when it fits in maxTextWidth columns, else one block per group —
// a line of the group's columns and a line of its counts (runs, status.S), as
// COLUMN=VALUE wrapped at maxTextWidth, then one line per described column with its
// statistics, aligned across the blocks.
func writeSummaryText(w io.Writer, t Table, digits int) error {
	var flat strings.Builder
	if err := t.WriteDigits(&flat, "text", digits); err != nil {
		return err
	}
	fits := true
	for _, l := range strings.Split(flat.String(), "\n") {
		fits = fits && utf8.RuneCountInString(l) <= maxTextWidth
	}
	ri := slices.Index(t.Cols, "runs")
	first := ri + 1
	for first < len(t.Cols) && strings.HasPrefix(t.Cols[first], "status.") {
		first++
	}
	if fits || ri < 0 || (len(t.Cols)-first)%len(statNames) != 0 {
		_, err := io.WriteString(w, flat.String())
		return err
	}
	cell := func(v any) string { return digitsCell(v, digits) }
	stats := [][]string{append([]string{""}, statNames...)}
	type block struct {
		head [2][]string // the group's columns; its counts
		from int         // its first row of stats
	}
	var blocks []block
	for _, r := range t.Rows {
		var head [2][]string
		for i := 0; i < first; i++ {
			part := 0
			if i >= ri {
				part = 1
			}
			head[part] = append(head[part], t.Cols[i]+"="+cell(r[i]))
		}
		blocks = append(blocks, block{head: head, from: len(stats)})
		for c := first; c < len(t.Cols); c += len(statNames) {
			line := []string{strings.TrimSuffix(t.Cols[c], "_"+statNames[0])}
			for k := range statNames {
				line = append(line, cell(r[c+k]))
			}
			stats = append(stats, line)
		}
	}
	// Align the statistics across all blocks: render them once, then cut.
	var all strings.Builder
	writeAligned(&all, stats, "  ")
	lines := strings.Split(strings.TrimSuffix(all.String(), "\n"), "\n")
	per := (len(t.Cols) - first) / len(statNames)
	for bi, b := range blocks {
		if bi > 0 {
			fmt.Fprintln(w)
		}
		for _, part := range b.head {
			if len(part) == 0 {
				continue // no group columns
			}
			line := ""
			for _, h := range part {
				switch {
				case line == "":
					line = h
				case utf8.RuneCountInString(line)+2+utf8.RuneCountInString(h) > maxTextWidth:
					fmt.Fprintln(w, line)
					line = h
				default:
					line += "  " + h
				}
			}
			fmt.Fprintln(w, line)
		}
		fmt.Fprintln(w, strings.TrimRight(lines[0], " "))
		for _, l := range lines[b.from : b.from+per] {
			fmt.Fprintln(w, l)
		}
	}
	return nil
}

// queryIndexed is DB.Query with the position of every column by name.
func (db *DB) queryIndexed(where string) (cols []string, rows [][]any, idx map[string]int, err error) {
	cols, rows, err = db.Query(where)
	if err != nil {
		return nil, nil, nil, err
	}
	idx = make(map[string]int, len(cols))
	for i, c := range cols {
		idx[c] = i
	}
	return cols, rows, idx, nil
}
