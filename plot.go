package tokendist

import (
	"bytes"
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Line is one named curve for PlotLines.
type Line struct {
	Name string
	X, Y []float64
}

// PlotOptions configures PlotLines; the zero value gives a linear 16×10 cm plot.
type PlotOptions struct {
	// Title, XLabel and YLabel label the plot.
	Title, XLabel, YLabel string
	// LogX and LogY use logarithmic axes (non-positive values are dropped).
	LogX, LogY bool
	// Points draws markers as well as lines.
	Points bool
	// LegendLeft and LegendBottom move the legend from the top right corner, for curves
	// that rise to the right.
	LegendLeft, LegendBottom bool
	// Width and Height in centimetres (0: 16 × 10).
	Width, Height float64
}

// Plot limits: values beyond ±maxPlotValue (the tick code needs a finite range), more
// than maxPlotLines lines, or a side above maxPlotSize points are refused.
const (
	maxPlotValue = 1e300
	maxPlotLines = 1 << 12
	maxPlotSize  = 1 << 14
)

// PlotLines draws the lines as an SVG image (gonum.org/v1/plot), ready for a file or
// a notebook's display.SVG(string(svg)). It refuses finite values beyond ±1e300 (NaN and
// ±Inf are dropped), more than 4096 lines and sides above 16384 cm.
func PlotLines(lines []Line, opts *PlotOptions) ([]byte, error) {
	var o PlotOptions
	if opts != nil {
		o = *opts
	}
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = o.Title, o.XLabel, o.YLabel
	if o.LogX {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{}
	}
	if o.LogY {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{}
	}
	p.Add(plotter.NewGrid())
	if len(lines) > maxPlotLines {
		return nil, badParam("PlotLines draws at most %d lines, got %d", maxPlotLines, len(lines))
	}
	if !(o.Width >= 0 && o.Width <= maxPlotSize && o.Height >= 0 && o.Height <= maxPlotSize) {
		return nil, badParam("PlotLines size %v × %v outside 0..%v points", o.Width, o.Height, maxPlotSize)
	}
	points := 0
	for _, ln := range lines {
		points += len(ln.X)
	}
	if err := checkAlloc("PlotLines points", int64(points), 1<<10); err != nil { // SVG text per point
		return nil, err
	}
	// gonum/plot's tick placement loops without end on ranges that overflow float64;
	// every drawn value must be within ±maxPlotValue.
	for _, ln := range lines {
		for k := range min(len(ln.X), len(ln.Y)) {
			x, y := ln.X[k], ln.Y[k]
			if math.Abs(x) > maxPlotValue && !math.IsInf(x, 0) || math.Abs(y) > maxPlotValue && !math.IsInf(y, 0) {
				return nil, badParam("line %s point %d (%g, %g) is beyond ±%g", quote([]byte(ln.Name)), k, x, y, maxPlotValue)
			}
		}
	}
	for i, ln := range lines {
		if len(ln.X) != len(ln.Y) {
			return nil, badParam("line %s has %d x values and %d y values", quote([]byte(ln.Name)), len(ln.X), len(ln.Y))
		}
		pts := make(plotter.XYs, 0, len(ln.X))
		for k := range ln.X {
			x, y := ln.X[k], ln.Y[k]
			if (o.LogX && x <= 0) || (o.LogY && y <= 0) || math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
				continue
			}
			pts = append(pts, plotter.XY{X: x, Y: y})
		}
		if len(pts) == 0 {
			continue
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, fmt.Errorf("tokendist: line %q: %w", ln.Name, err)
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i / 7)
		p.Add(l)
		p.Legend.Add(ln.Name, l)
		if o.Points {
			s, _ := plotter.NewScatter(pts)
			s.Color, s.Shape = plotutil.Color(i), plotutil.Shape(i)
			p.Add(s)
		}
	}
	p.Legend.Top = !o.LegendBottom
	p.Legend.Left = o.LegendLeft
	// Keep the legend off the title and the border: SVG viewers often substitute a wider
	// font than the one gonum/plot measured the labels with.
	p.Legend.YOffs = -4 * vg.Millimeter
	if o.LegendBottom {
		p.Legend.YOffs = 4 * vg.Millimeter
	}
	p.Legend.XOffs = -8 * vg.Millimeter
	if o.LegendLeft {
		p.Legend.XOffs = 12 * vg.Millimeter
	}
	if o.LogX {
		logRange(&p.X)
	}
	if o.LogY {
		logRange(&p.Y)
	}
	w, h := o.Width, o.Height
	if w <= 0 || h <= 0 {
		w, h = 16, 10
	}
	wt, err := p.WriterTo(vg.Length(w)*vg.Centimeter, vg.Length(h)*vg.Centimeter, "svg")
	if err != nil {
		return nil, fmt.Errorf("tokendist: plot: %w", err)
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("tokendist: plot: %w", err)
	}
	return buf.Bytes(), nil
}

// logRange gives a logarithmic axis a positive, non-empty range: gonum/plot widens an
// empty or one-value range to [v-1, v+1] (or [-1, 1]), which panics on a log scale.
func logRange(a *plot.Axis) {
	switch {
	case !(a.Min > 0 && a.Max >= a.Min): // no data
		a.Min, a.Max = 1, 10
	case a.Min == a.Max: // one value: a decade on each side
		a.Min, a.Max = a.Min/10, a.Max*10
	}
}

// Series is a named trace for PlotTraces.
type Series struct {
	Name  string
	Trace Trace
}

// PlotTrace draws one run's discrepancy against steps as SVG.
func PlotTrace(title string, r Result) ([]byte, error) {
	return PlotTraces(title, []Series{{Name: r.Balancer, Trace: r.Trace}})
}

// PlotTraces draws the discrepancy of several traces against steps as SVG, one line
// each, for comparing balancers on one network.
func PlotTraces(title string, series []Series) ([]byte, error) {
	lines := make([]Line, len(series))
	for i, s := range series {
		x, y := s.Trace.Discrepancies()
		lines[i] = Line{Name: s.Name, X: x, Y: y}
	}
	return PlotLines(lines, &PlotOptions{Title: title, XLabel: "step", YLabel: "discrepancy"})
}
