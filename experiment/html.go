package experiment

import (
	"database/sql"
	"errors"
	"fmt"
	"html"
	"math"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/tokendist/tokendist/plot"
)

// HTMLOptions configures HTMLReport.
type HTMLOptions struct {
	// Where filters the runs (SQL condition on the runs table).
	Where string
	// File is an experiment file to show; empty: the file sweep stored in the database
	// (none for databases from older versions or merges).
	File string
	// By are the columns the summary table groups by (nil: DefaultSummaryBy).
	By []string
	// AllCode pools the runs of different code in the summary and the plots (by
	// default they are kept apart: a code column and one line per code).
	AllCode bool
	// Digits is the number of significant digits of the numbers in the summary table
	// (0: DefaultDigits; negative: full precision).
	Digits int
}

// HTMLReport returns one self-contained HTML page on the runs of db: the experiment
// file, the summary table (Summary of ExportTable) and the standard plots of each
// experiment as inline SVG — the final discrepancy and the steps against n, one line per
// algorithm with the 95% confidence interval of the mean as a band, one panel per
// network family, and the stored traces when there are. The page loads nothing (no
// scripts, style sheets, fonts or images from elsewhere): its CSS is inline and the
// plots draw text as glyph outlines. Errors are those of ExportTable, Summary and
// plotting, and an unreadable File. It costs O(runs × columns) plus the plots.
func HTMLReport(db *DB, o HTMLOptions) ([]byte, error) {
	runs, err := ExportTable(db, o.Where)
	if err != nil {
		return nil, err
	}
	if o.AllCode {
		runs = runs.Without("code")
	}
	files := map[string]string{}
	if o.File != "" {
		b, err := os.ReadFile(o.File)
		if err != nil {
			return nil, wrapf(err, "report --file")
		}
		files[o.File] = string(b)
	} else if files, err = db.experimentFiles(); err != nil {
		return nil, err
	}
	sum, err := Summary(runs, o.By, nil)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	exps := distinct(runs, "experiment")
	title := "tokendist report: " + strings.Join(exps, ", ")
	fmt.Fprintf(&b, "<title>%s</title>\n", html.EscapeString(title))
	b.WriteString(`<style>
body { font-family: sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; }
pre { background: #f6f6f6; padding: 1em; overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.8em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: right; white-space: nowrap; }
th { background: #eee; } td.text { text-align: left; }
td.value { white-space: normal; min-width: 9em; }
.scroll { overflow-x: auto; max-width: 100%; }
figure { margin: 1.5em 0; } figure svg { max-width: 100%; height: auto; }
figcaption { font-size: 0.9em; color: #555; }
</style>
</head>
<body>
`)
	fmt.Fprintf(&b, "<h1>%s</h1>\n<p>%d runs from %s; tokendist %s.</p>\n", html.EscapeString(title), len(runs.Rows),
		html.EscapeString(db.path), html.EscapeString(Version()))
	if len(files) > 0 {
		b.WriteString("<h2>Experiment file</h2>\n")
		for _, name := range sortedKeys(files) {
			fmt.Fprintf(&b, "<p>%s</p>\n<pre>%s</pre>\n", html.EscapeString(name), html.EscapeString(files[name]))
		}
	}
	b.WriteString("<h2>Summary</h2>\n<div class=\"scroll\">\n")
	digits := o.Digits
	if digits == 0 {
		digits = DefaultDigits
	}
	compact := compactSummary(sum, digits)
	if len(exps) == 1 { // the title names it
		compact = compact.Without("experiment")
	}
	writeHTMLTable(&b, compact, digits)
	b.WriteString("<p class=\"note\">Each value: mean [95% confidence interval of the mean], then min–max over the runs. " +
		"Every statistic in full precision: <code>tokendist report --summary --format csv</code>.</p>\n")
	b.WriteString("</div>\n")
	fig := 0
	figure := func(svg []byte, caption string) {
		fig++
		fmt.Fprintf(&b, "<figure id=\"figure-%d\">\n%s\n<figcaption>Figure %d. %s</figcaption>\n</figure>\n", fig, inlineSVG(svg, fig), fig, html.EscapeString(caption))
	}
	for _, exp := range exps {
		where := "experiment = '" + strings.ReplaceAll(exp, "'", "''") + "'"
		if o.Where != "" {
			where = "(" + o.Where + ") AND " + where
		}
		t, err := ExportTable(db, where)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "<h2>Plots: %s</h2>\n", html.EscapeString(exp))
		ns := columnRange(t, "n")
		for _, y := range []string{"discrepancy", "steps"} {
			po := PlotOptions{X: "n", Y: y, By: "algorithm", Facet: "network_name", Band: "ci", AllCode: o.AllCode}
			po.LogX = ns[1] >= 16*ns[0] && ns[0] > 0
			yr := columnRange(t, y)
			po.LogY = yr[1] >= 100*max(yr[0], 1)
			po.Title = exp + ": " + y
			svg, err := plotTable(t, po)
			if err != nil {
				continue // no numbers (every run failed): nothing to draw
			}
			figure(svg, fmt.Sprintf("%s: final %s against n, mean over seeds with its 95%% confidence interval, per algorithm; one panel per network family.", exp, y))
		}
		tr, err := TracesTable(db, where)
		if err != nil {
			return nil, err
		}
		if len(tr.Rows) > 0 {
			axis := traceAxis(tr)
			svg, err := plotTable(tr, PlotOptions{X: axis, Y: "discrepancy", By: "algorithm", Facet: "network", Band: "ci", Traces: true, AllCode: o.AllCode,
				Options: plot.Options{Title: exp + ": traces"}})
			if err == nil {
				figure(svg, fmt.Sprintf("%s: discrepancy against %s (stored traces), mean over seeds with its 95%% confidence interval; one panel per network.", exp, axis))
			}
		}
	}
	b.WriteString("</body>\n</html>\n")
	return []byte(b.String()), nil
}

// svgIDs match the ids gonum/plot's SVG defines and references (the glyph outlines).
var (
	svgID   = regexp.MustCompile(`id="([A-Za-z][A-Za-z0-9_-]*)"`)
	svgHref = regexp.MustCompile(`href="#([A-Za-z][A-Za-z0-9_-]*)"`)
)

// inlineSVG returns svg ready to sit in an HTML page: without the XML declaration and
// comments before <svg>, and with its ids prefixed by the figure number so that the
// figures' glyph definitions do not collide.
func inlineSVG(svg []byte, fig int) string {
	s := string(svg)
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	p := fmt.Sprintf("f%d-", fig)
	s = svgID.ReplaceAllString(s, `id="`+p+`$1"`)
	s = svgHref.ReplaceAllString(s, `href="#`+p+`$1"`)
	return s
}

// writeHTMLTable writes t as an HTML table, numbers to digits significant digits (≤ 0:
// full precision).
func writeHTMLTable(b *strings.Builder, t Table, digits int) {
	b.WriteString("<table>\n<thead><tr>")
	for _, c := range t.Cols {
		fmt.Fprintf(b, "<th>%s</th>", html.EscapeString(c))
	}
	b.WriteString("</tr></thead>\n<tbody>\n")
	for _, r := range t.Rows {
		b.WriteString("<tr>")
		for _, v := range r {
			class := ""
			if s, isText := v.(string); isText && strings.Contains(s, "–") && strings.ContainsAny(s, "0123456789") {
				class = ` class="text value"` // a compact summary's "mean [ci] min–max": may wrap
			} else if _, ok := number(v); !ok {
				class = ` class="text"`
			}
			fmt.Fprintf(b, "<td%s>%s</td>", class, html.EscapeString(digitsCell(v, digits)))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody>\n</table>\n")
}

// compactSummary returns the summary as the page shows it, narrow enough for the page:
// the group and count columns as they are, and one text cell per described value,
// "mean [ci95_low, ci95_high] min–max", its numbers rounded to digits significant digits
// (0: full precision). A value without numbers in a group shows "–". It costs
// O(rows × columns).
func compactSummary(sum Table, digits int) Table {
	idx := map[string]int{}
	for i, c := range sum.Cols {
		idx[c] = i
	}
	var keep []int      // group and count columns
	var values []string // described values, in order
	for i, c := range sum.Cols {
		if v, ok := strings.CutSuffix(c, "_mean"); ok {
			values = append(values, v)
			continue
		}
		described := false
		for _, suf := range statNames {
			if base, ok := strings.CutSuffix(c, "_"+suf); ok {
				if _, has := idx[base+"_mean"]; has {
					described = true
				}
			}
		}
		if !described {
			keep = append(keep, i)
		}
	}
	out := Table{}
	for _, i := range keep {
		out.Cols = append(out.Cols, sum.Cols[i])
	}
	out.Cols = append(out.Cols, values...)
	for _, r := range sum.Rows {
		row := make([]any, 0, len(out.Cols))
		for _, i := range keep {
			row = append(row, r[i])
		}
		for _, v := range values {
			mean, ok := number(r[idx[v+"_mean"]])
			if !ok || math.IsNaN(mean) {
				row = append(row, "–")
				continue
			}
			c := func(s string) string { return digitsCell(r[idx[v+"_"+s]], digits) }
			cellText := digitsCell(mean, digits)
			if lo, ok := number(r[idx[v+"_ci95_low"]]); ok && !math.IsNaN(lo) {
				cellText += " [" + c("ci95_low") + ", " + c("ci95_high") + "]"
			}
			row = append(row, cellText+" "+c("min")+"–"+c("max"))
		}
		out.Rows = append(out.Rows, row)
	}
	return out
}

// distinct returns the distinct values of column c in order of first appearance.
func distinct(t Table, c string) []string {
	var out []string
	for i, name := range t.Cols {
		if name != c {
			continue
		}
		for _, r := range t.Rows {
			if s := cell(r[i]); !contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// columnRange returns the least and largest number of column c (0, 0 if none).
func columnRange(t Table, c string) [2]float64 {
	out := [2]float64{}
	first := true
	for i, name := range t.Cols {
		if name != c {
			continue
		}
		for _, r := range t.Rows {
			if f, ok := number(r[i]); ok {
				if first {
					out, first = [2]float64{f, f}, false
				}
				out[0], out[1] = min(out[0], f), max(out[1], f)
			}
		}
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// experimentFileKey is the meta key under which sweep stores an experiment's file.
const experimentFileKey = "file:"

// storeExperimentFile records the text of the experiment file path as the file of
// experiment exp, for the HTML report (replacing an earlier one).
func (db *DB) storeExperimentFile(exp, path string) error {
	text, err := os.ReadFile(path)
	if err != nil {
		return wrapf(err, "database %s: store the experiment file", db.path)
	}
	_, err = db.sql.Exec(`INSERT OR REPLACE INTO meta (k, v) VALUES (?, ?)`, experimentFileKey+exp, string(text))
	return wrapf(err, "database %s: store the experiment file", db.path)
}

// experimentFiles returns the stored experiment files by experiment name.
func (db *DB) experimentFiles() (map[string]string, error) {
	rows, err := db.sql.Query(`SELECT k, v FROM meta WHERE k LIKE 'file:%'`)
	if errors.Is(err, sql.ErrNoRows) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, wrapf(err, "database %s: experiment files", db.path)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, wrapf(err, "database %s: experiment files", db.path)
		}
		out[strings.TrimPrefix(k, experimentFileKey)] = v
	}
	return out, wrapf(rows.Err(), "database %s: experiment files", db.path)
}
