package experiment

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/tokendist/tokendist/internal/errs"
	"github.com/tokendist/tokendist/plot"
)

// PlotOptions configures Plot.
type PlotOptions struct {
	// X and Y name numeric columns of ExportTable (for example n and discrepancy, or a
	// metric as m.NAME; defaults n and discrepancy), or with Traces of TracesTable
	// (defaults step and discrepancy). By names the columns whose values become lines,
	// comma-separated (default algorithm): "algorithm,network_name" draws one line per
	// algorithm and network family.
	X, Y, By string
	// Spread adds the minimum and maximum over the seeds, as Band "minmax" does. (It
	// hides the embedded plot.Options.Spread, the band's drawing style, which Plot sets
	// from Bars.)
	Spread bool
	// Where filters the runs (SQL).
	Where string
	plot.Options
	// Facet names columns (comma-separated) whose values become small multiples, one
	// panel each (empty: one plot).
	Facet string
	// Band is the spread drawn around each line: "" (none), "sd" (mean ± standard
	// deviation), "ci" (95% confidence interval of the mean, Student's t), "quartiles"
	// (first to third quartile, the line then being the median) or "minmax". Bars draws
	// it as error bars instead of a shaded band.
	Band string
	Bars bool
	// Format is the image format, one of plot.Formats (empty: svg).
	Format string
	// Traces plots the stored trace samples (record.trace: true) instead of the runs.
	Traces bool
	// AllCode pools the runs of different code (see CodeIdentity) into one line; by
	// default, when the runs come from more than one code, the code is added to the By
	// columns (one line per code, named in the legend) unless By or Facet names it.
	AllCode bool
}

// Bands are the values of PlotOptions.Band.
var Bands = []string{"", "sd", "ci", "quartiles", "minmax"}

// Plot draws Y against X from the stored runs (or, with Traces, their trace samples),
// one line per value of the By columns, at the mean over the seeds (the median with
// Band "quartiles") with the Band around it, in one plot or one panel per value of the
// Facet columns (plot.Facets), with the legend outside the data and one entry per line.
// Failed runs are left out. A column that does not exist or does not hold numbers
// (such as status) as X or Y is an error naming it and the numeric columns; so is an
// unknown Band or Format.
func Plot(db *DB, o PlotOptions) ([]byte, error) {
	var t Table
	var err error
	if o.Traces {
		t, err = TracesTable(db, o.Where)
		o.X, o.Y = or(o.X, traceAxis(t)), or(o.Y, "discrepancy")
	} else {
		t, err = ExportTable(db, o.Where)
		o.X, o.Y = or(o.X, "n"), or(o.Y, "discrepancy")
	}
	if err != nil {
		return nil, err
	}
	return plotTable(t, o)
}

// traceAxis returns the default x axis of a traces plot: "round", the unit algorithms
// compare by (a dimension-exchange step is one colour's matching, a diffusion step a
// whole round; docs/design.md, "Steps and rounds"), when every sample has one, else
// "step" (runs stored before rounds).
func traceAxis(t Table) string {
	ri := -1
	for i, c := range t.Cols {
		if c == "round" {
			ri = i
		}
	}
	if ri < 0 {
		return "step"
	}
	for _, r := range t.Rows {
		if _, ok := number(r[ri]); !ok {
			return "step"
		}
	}
	return "round"
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// plotTable draws t as Plot describes.
func plotTable(t Table, o PlotOptions) ([]byte, error) {
	if !contains(Bands, o.Band) {
		return nil, errs.BadParam("plot: band %q (allowed: sd, ci, quartiles, minmax)", o.Band)
	}
	if o.Spread && o.Band == "" {
		o.Band = "minmax"
	}
	format := or(o.Format, "svg")
	if !contains(plot.Formats, format) {
		return nil, errs.BadParam("plot: image format %s (allowed: %s)", errs.Quote([]byte(format)), strings.Join(plot.Formats, ", "))
	}
	col := map[string]int{}
	for i, c := range t.Cols {
		col[c] = i
	}
	numeric := numericColumns(t)
	axis := func(name, what string) (int, error) {
		i, ok := col[name]
		if !ok {
			return 0, errs.BadParam("plot: no column %q for %s (numeric columns: %s)", name, what, strings.Join(numeric, ", "))
		}
		if !contains(numeric, name) {
			return 0, errs.BadParam("plot: column %q for %s is not numeric (numeric columns: %s)", name, what, strings.Join(numeric, ", "))
		}
		return i, nil
	}
	for _, a := range [2][2]string{{o.X, "the x axis"}, {o.Y, "the y axis"}} {
		if _, ok := col[a[0]]; !ok {
			return nil, errs.BadParam("plot: no column %q for %s (numeric columns: %s)", a[0], a[1], strings.Join(numeric, ", "))
		}
	}
	xi, err := axis(o.X, "the x axis")
	if err != nil {
		return nil, err
	}
	yi, err := axis(o.Y, "the y axis")
	if err != nil {
		return nil, err
	}
	cols := func(list, what string) ([]int, error) {
		var out []int
		for _, c := range splitList(list) {
			i, ok := col[c]
			if !ok {
				return nil, errs.BadParam("plot: no column %q for %s (columns: %s)", c, what, strings.Join(t.Cols, ", "))
			}
			out = append(out, i)
		}
		return out, nil
	}
	bi, err := cols(plotBy(t, o), "--by")
	if err != nil {
		return nil, err
	}
	fi, err := cols(o.Facet, "--facet")
	if err != nil {
		return nil, err
	}
	si, hasStatus := col["status"]
	// A line's or panel's label: its values, a number named by its column ("n = 16",
	// where a bare 16 would not say what it counts).
	label := func(r []any, idx []int) string {
		s := make([]string, len(idx))
		for k, i := range idx {
			s[k] = cell(r[i])
			if _, ok := number(r[i]); ok {
				s[k] = t.Cols[i] + " = " + s[k]
			}
		}
		return strings.Join(s, ", ")
	}
	type series map[float64][]float64
	data := map[string]map[string]series{} // panel → line → x → ys
	group := map[string]string{}           // line → its group: the first --by column's value, with two or more
	var panels []string
	for _, r := range t.Rows {
		if hasStatus && r[si] == "Failed" {
			continue
		}
		x, okX := number(r[xi])
		y, okY := number(r[yi])
		if !okX || !okY {
			continue
		}
		pn, ln := label(r, fi), label(r, bi)
		if len(bi) > 1 {
			group[ln] = label(r, bi[:1])
		}
		if data[pn] == nil {
			data[pn] = map[string]series{}
			panels = append(panels, pn)
		}
		if data[pn][ln] == nil {
			data[pn][ln] = series{}
		}
		data[pn][ln][x] = append(data[pn][ln][x], y)
	}
	if len(panels) == 0 {
		return nil, errs.BadParam("plot: no runs with numbers in %s and %s", o.X, o.Y)
	}
	sortNatural(panels) // n = 256 before n = 1024
	var out []plot.Panel
	for _, pn := range panels {
		var names []string
		for ln := range data[pn] {
			names = append(names, ln)
		}
		sortNatural(names)
		var lines []plot.Line
		for _, ln := range names {
			l := spreadLine(ln, data[pn][ln], o.Band)
			l.Group = group[ln]
			lines = append(lines, l)
		}
		out = append(out, plot.Panel{Title: pn, Lines: lines})
	}
	po := figureOptions(o)
	if po.Legend == plot.LegendAuto {
		po.Legend = plot.LegendOutside
	}
	if o.Bars {
		po.Spread = plot.SpreadBars
	}
	if o.Facet != "" {
		return plot.Facets(out, &po, format)
	}
	return plot.LinesAs(out[0].Lines, &po, format)
}

// figureOptions returns the image options of a plot of o: axis labels from the columns,
// the y label naming the statistic and the band (in every layout: a reader of a panel
// must know what the band is), and markers only where each point is a configuration
// (a trace's samples are drawn as a curve).
func figureOptions(o PlotOptions) plot.Options {
	po := o.Options
	if po.XLabel == "" {
		po.XLabel = o.X
	}
	if po.YLabel == "" {
		what := "mean"
		if o.Band == "quartiles" {
			what = "median"
		}
		po.YLabel = o.Y + " (" + what + " over seeds"
		if o.Facet != "" { // small panels: the short label, which still names the band
			po.YLabel = o.Y + " (" + what
		}
		if o.Band != "" {
			po.YLabel += ", " + map[string]string{"sd": "± sd", "ci": "95% CI", "quartiles": "quartiles", "minmax": "min to max"}[o.Band]
		}
		po.YLabel += ")"
	}
	// Markers where each point is a configuration; a trace's samples are a curve.
	po.Points = !o.Traces
	return po
}

// spreadLine returns the line through the mean (median for quartiles) of each x's
// values, with the band's Lo and Hi (none for band "").
func spreadLine(name string, s map[float64][]float64, band string) plot.Line {
	var xs []float64
	for x := range s {
		xs = append(xs, x)
	}
	sort.Float64s(xs)
	ln := plot.Line{Name: name}
	for _, x := range xs {
		st := Summarize(s[x])
		y, lo, hi := st.Mean, st.Mean, st.Mean
		switch band {
		case "sd":
			lo, hi = st.Mean-st.SD, st.Mean+st.SD
		case "ci":
			if st.Count >= 2 {
				lo, hi = st.CILow, st.CIHigh
			}
		case "quartiles":
			y, lo, hi = st.Median, st.Q1, st.Q3
		case "minmax":
			lo, hi = st.Min, st.Max
		}
		ln.X, ln.Y = append(ln.X, x), append(ln.Y, y)
		if band != "" {
			ln.Lo, ln.Hi = append(ln.Lo, lo), append(ln.Hi, hi)
		}
	}
	return ln
}

// numericColumns returns the columns of t whose cells are all numbers or empty.
func numericColumns(t Table) []string {
	var out []string
	for i, c := range t.Cols {
		other := false
		for _, r := range t.Rows {
			if _, ok := number(r[i]); !ok && r[i] != nil {
				other = true
				break
			}
		}
		if !other {
			out = append(out, c)
		}
	}
	return out
}

const plotManual = `Usage: tokendist plot [flags] --db FILE --out FILE.svg|.png|.pdf

Draws a plot from a results database: the column --y against the column --x, one line
per value of the --by columns, at the mean over the seeds, with a shaded --band (or
--bars) of the standard deviation, the 95% confidence interval of the mean, the
quartiles (the line is then the median) or the minimum and maximum; one panel per value
of the --facet columns. The legend sits outside the data, one entry per line. Columns
are those of tokendist report (n, seed, discrepancy, steps, time, moved, messages,
wall_seconds, initial_discrepancy, network.PARAM ..., m.NAME for a metric); x and y must
be numeric. With --traces it plots the stored trace samples (x step, y discrepancy by
default). The extension of --out selects SVG, PNG or PDF. Runs of different code are
never pooled into one line: when the runs come from more than one code, the code joins
the --by columns (one line per code) unless --all-code pools them.

  tokendist plot --db results.db --x n --y discrepancy --by algorithm --facet network_name --band ci --logx --out disc.pdf
`

func (c *command) plot(args []string) int {
	fs := c.flags("plot", plotManual)
	dbPath := fs.String("db", "", "results database")
	out := fs.String("out", "", "output file: .svg, .png or .pdf")
	o := PlotOptions{}
	fs.StringVar(&o.X, "x", "", "x column (default n; with --traces round, or step for runs stored before rounds)")
	fs.StringVar(&o.Y, "y", "", "y column (default discrepancy)")
	fs.StringVar(&o.By, "by", "algorithm", "one line per value of these columns (comma-separated)")
	fs.StringVar(&o.Facet, "facet", "", "one panel per value of these columns (comma-separated)")
	fs.StringVar(&o.Band, "band", "", "spread around the mean: sd, ci, quartiles or minmax")
	fs.BoolVar(&o.Bars, "bars", false, "draw the band as error bars")
	fs.BoolVar(&o.Spread, "spread", false, "same as --band minmax")
	fs.BoolVar(&o.Traces, "traces", false, "plot the stored trace samples")
	fs.StringVar(&o.Where, "where", "", "SQL condition on the runs")
	fs.StringVar(&o.Title, "title", "", "plot title")
	fs.BoolVar(&o.LogX, "logx", false, "logarithmic x axis")
	fs.BoolVar(&o.LogY, "logy", false, "logarithmic y axis")
	fs.BoolVar(&o.AllCode, "all-code", false, "pool the runs of different code into one line (default: one line per code)")
	pos, code, ok := c.parse(fs, args)
	if !ok {
		return code
	}
	if *dbPath == "" || *out == "" || len(pos) > 0 {
		fmt.Fprintln(c.stderr, "tokendist: plot needs --db FILE and --out FILE.svg (or .png, .pdf)")
		return ExitUsage
	}
	format, err := plot.FormatOf(*out)
	if err != nil {
		return c.fail(ExitUsage, err)
	}
	o.Format = format
	db, err := openExisting(*dbPath)
	if err != nil {
		return c.fail(ExitUsage, err)
	}
	defer db.Close()
	img, err := Plot(db, o)
	if err != nil {
		return c.fail(ExitUsage, err)
	}
	if err := os.WriteFile(*out, img, 0o644); err != nil {
		return c.fail(ExitFailed, err)
	}
	return ExitOK
}

// plotBy returns the columns whose values become lines: o.By (default algorithm), with
// the code added when t has a column "code" (runs of more than one code) that neither
// By nor Facet names, unless o.AllCode.
func plotBy(t Table, o PlotOptions) string {
	by := or(o.By, "algorithm")
	if contains(t.Cols, "code") && !o.AllCode && !contains(splitList(by), "code") && !contains(splitList(o.Facet), "code") {
		by += ",code"
	}
	return by
}

// tracesImage draws the discrepancy of each series against the step, as plot.Traces
// does, in the image format (one of plot.Formats).
func tracesImage(series []plot.Series, title, format string) ([]byte, error) {
	lines := make([]plot.Line, len(series))
	for i, s := range series {
		x, y := s.Trace.Discrepancies()
		lines[i] = plot.Line{Name: s.Name, X: x, Y: y}
	}
	return plot.LinesAs(lines, &plot.Options{Title: title, XLabel: "step", YLabel: "discrepancy"}, format)
}
