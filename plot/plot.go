package plot

import (
	"fmt"
	"math"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/internal/errs"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Line is one named curve for Lines.
type Line struct {
	// Name labels the curve in the legend.
	Name string
	// X and Y are the points' coordinates, of equal length.
	X, Y []float64
	// Lo and Hi, if not nil, have the length of Y and give each point's spread (a
	// standard deviation, a confidence interval, quartiles ...) from Lo[i] to Hi[i],
	// drawn as a shaded band in the line's colour or as error bars (Options.Spread).
	Lo, Hi []float64
	// Group, if not empty, names a family of related lines (the first of two --by
	// columns): the lines of a group share a colour and differ by dash and marker, so
	// that related series look related. Without groups every name has a colour of its
	// own (dashed after the seventh).
	Group string
}

// lineStyle is a line's colour, dash and marker index (plotutil's palettes).
type lineStyle struct{ color, dash, shape int }

// styleTable gives every line name of the lines a style, in order of first appearance,
// so that a name keeps its style in every panel: without groups name k gets colour k,
// dash k/7 and marker k; with groups group g gets colour g and the k-th name of a group
// dash and marker k. It costs O(total lines).
func styleTable(lines ...[]Line) map[string]lineStyle {
	grouped := false
	for _, ls := range lines {
		for _, ln := range ls {
			grouped = grouped || ln.Group != ""
		}
	}
	out := map[string]lineStyle{}
	groups := map[string]int{}  // group → colour
	members := map[string]int{} // group → names so far
	for _, ls := range lines {
		for _, ln := range ls {
			if _, ok := out[ln.Name]; ok {
				continue
			}
			if !grouped {
				k := len(out)
				out[ln.Name] = lineStyle{color: k, dash: k / 7, shape: k}
				continue
			}
			g, ok := groups[ln.Group]
			if !ok {
				g = len(groups)
				groups[ln.Group] = g
			}
			k := members[ln.Group]
			members[ln.Group]++
			out[ln.Name] = lineStyle{color: g, dash: k, shape: k}
		}
	}
	return out
}

// LegendPlace says where Lines puts the legend.
type LegendPlace int

const (
	// LegendAuto, the zero value, keeps the legend off the data: it takes the first
	// corner of the data area (top right, top left, bottom right, bottom left) whose
	// box no line or point crosses. When every corner is crossed it tries, in turn:
	// raising the top of the y axis to free a band as tall as the legend (legend at
	// most 45% of the data height), a strip right of the plot (legend at most 40% of
	// the width), and else a strip below the plot on an image made taller by the
	// legend's height.
	LegendAuto LegendPlace = iota
	// LegendTopRight puts the legend in the top right corner of the data area, whatever
	// it covers; the next three name the other corners.
	LegendTopRight
	// LegendTopLeft puts the legend in the top left corner of the data area.
	LegendTopLeft
	// LegendBottomRight puts the legend in the bottom right corner of the data area.
	LegendBottomRight
	// LegendBottomLeft puts the legend in the bottom left corner of the data area.
	LegendBottomLeft
	// LegendHidden draws no legend.
	LegendHidden
	// LegendOutside puts the legend in a strip right of the plot, off the data
	// whatever they cover (below the plot when it would take more than 60% of the
	// width).
	LegendOutside
)

// Options configures Lines, Trace and Traces; the zero value gives a
// linear 16×10 cm plot with the legend placed automatically.
type Options struct {
	// Title, XLabel and YLabel label the plot. Trace and Traces label empty
	// axis labels "step" and "discrepancy".
	Title, XLabel, YLabel string
	// LogX and LogY use logarithmic axes, labelled 1, 2, 4 … or 10, 100, 1000 …. Zero
	// values are drawn on a row labelled 0 one tick step below the smallest positive
	// tick; negative values are dropped. On a log y axis the y label is drawn after the
	// data (so it comes after the y tick labels in the SVG's <desc>), in a column of its
	// own, which keeps a long label from shrinking the data area.
	LogX, LogY bool
	// Points draws markers as well as lines.
	Points bool
	// Legend places the legend (zero: LegendAuto).
	Legend LegendPlace
	// Width and Height in centimetres (0: 16 × 10).
	Width, Height float64
	// Spread says how lines' Lo and Hi are drawn (zero: SpreadBand).
	Spread SpreadStyle
}

// Plot limits besides maxPlotValue: more than maxPlotLines lines or a side above
// maxPlotSize centimetres are refused.
const (
	maxPlotLines = 1 << 12
	maxPlotSize  = 1 << 14
)

// maxPlotValue bounds the coordinates Lines accepts: gonum/plot's tick code loops
// forever on a range that overflows (±1.7e308) or is not a number.
const maxPlotValue = 1e300

// checkPlotValues returns an error naming the first coordinate of the lines that is NaN,
// infinite or larger in magnitude than maxPlotValue, or a line whose X and Y lengths
// differ.
func checkPlotValues(lines []Line) error {
	for _, ln := range lines {
		if len(ln.X) != len(ln.Y) {
			return errs.BadParam("line %s has %d x values and %d y values", errs.Quote([]byte(ln.Name)), len(ln.X), len(ln.Y))
		}
		if (ln.Lo != nil || ln.Hi != nil) && (len(ln.Lo) != len(ln.Y) || len(ln.Hi) != len(ln.Y)) {
			return errs.BadParam("line %s has %d y values, %d Lo and %d Hi values (want Lo and Hi both nil or of Y's length)",
				errs.Quote([]byte(ln.Name)), len(ln.Y), len(ln.Lo), len(ln.Hi))
		}
		for axis, vs := range [4][]float64{ln.X, ln.Y, ln.Lo, ln.Hi} {
			for k, v := range vs {
				if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > maxPlotValue {
					return errs.BadParam("line %s: %s[%d] = %v cannot be plotted (coordinates must be finite numbers of magnitude at most %g)",
						errs.Quote([]byte(ln.Name)), [4]string{"x", "y", "Lo", "Hi"}[axis], k, v, maxPlotValue)
				}
			}
		}
	}
	return nil
}

// Lines draws the lines as an SVG image (gonum.org/v1/plot), ready for a file or
// a notebook's display.SVG(string(svg)).
//
// Text is drawn as glyph outlines of the Liberation fonts gonum/plot measures its layout
// with, so the image looks the same in every SVG viewer with or without fonts
// installed; the labels are also listed in the SVG's <title> and <desc>. Coordinates
// must be finite with magnitude at most 1e300 (an error names the first that is not);
// more than 4096 lines or a side above 16384 cm is refused too.
// The cost is O(total points) plus the size of the text.
func Lines(lines []Line, opts *Options) (svg []byte, err error) {
	// gonum/plot panics on some extreme inputs (a log axis whose range underflows to
	// 0); the panic is reported as an error, never raised.
	defer func() {
		if p := recover(); p != nil {
			svg, err = nil, errs.BadParam("plot: the plotting library failed on these values: %s", errs.Quote([]byte(fmt.Sprint(p))))
		}
	}()
	var o Options
	if opts != nil {
		o = *opts
	}
	p, leg, c, area, err := layoutPlot(lines, o)
	if err != nil {
		return nil, err
	}
	if leg != nil && leg.strip == nil {
		p.Add(leg)
	}
	p.Draw(area)
	if leg != nil && leg.strip != nil {
		leg.Plot(*leg.strip, p)
	}
	return c.finishSVG(truncText(o.Title))
}

// plotArea returns the part of the canvas gonum/plot may draw in: gonum/plot centres the
// last x tick label on the right end of the axis and the top y tick label on its top,
// where half of each would be cut off by the image's border. The area leaves half the
// widest x label's width on the right and, without a title, half a label's height on
// top, and 2 points of white on every side.
func plotArea(p *gplot.Plot, c *outlineCanvas) draw.Canvas {
	dc := draw.New(c)
	var right, top vg.Length
	if p.X.Min < p.X.Max {
		for _, t := range p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max) {
			if t.Label != "" {
				right = max(right, p.X.Tick.Label.Width(t.Label)/2)
			}
		}
	}
	if p.Title.Text == "" {
		top = p.Y.Tick.Label.Height("0") / 2
	}
	const edge = 2 // points of white around everything
	return draw.Crop(dc, edge, -right-edge, edge, -top-edge)
}

// layoutPlot builds Lines' plot, its legend with the place chosen (nil: no legend),
// the canvas and the area of it to draw the plot in.
func layoutPlot(lines []Line, o Options) (*gplot.Plot, *legend, *outlineCanvas, draw.Canvas, error) {
	if o.Legend < LegendAuto || o.Legend > LegendOutside {
		return nil, nil, nil, draw.Canvas{}, errs.BadParam("Options.Legend = %d is not a LegendPlace", int(o.Legend))
	}
	if err := checkPlotValues(lines); err != nil {
		return nil, nil, nil, draw.Canvas{}, err
	}
	if len(lines) > maxPlotLines {
		return nil, nil, nil, draw.Canvas{}, errs.BadParam("Lines draws at most %d lines, got %d", maxPlotLines, len(lines))
	}
	if !(o.Width >= 0 && o.Width <= maxPlotSize && o.Height >= 0 && o.Height <= maxPlotSize) {
		return nil, nil, nil, draw.Canvas{}, errs.BadParam("Lines size %v × %v outside 0..%v cm", o.Width, o.Height, maxPlotSize)
	}
	points := 0
	for _, ln := range lines {
		points += len(ln.X)
	}
	if err := errs.CheckAlloc("Lines points", int64(points), 1<<10); err != nil { // SVG text per point
		return nil, nil, nil, draw.Canvas{}, err
	}

	p, leg, err := newPlot(lines, o, styleTable(lines))
	if err != nil {
		return nil, nil, nil, draw.Canvas{}, err
	}

	w, h := o.Width, o.Height
	if w <= 0 || h <= 0 {
		w, h = 16, 10
	}
	c := newOutlineCanvas(vg.Length(w)*vg.Centimeter, vg.Length(h)*vg.Centimeter)
	area := leg.ylabel.reserve(plotArea(p, c))
	if len(leg.entries) == 0 || o.Legend == LegendHidden {
		return p, nil, c, area, nil
	}
	area, grow := leg.choose(p, area, o.LogY)
	if grow > 0 {
		c = newOutlineCanvas(vg.Length(w)*vg.Centimeter, vg.Length(h)*vg.Centimeter+grow)
		full := plotArea(p, c)
		area = leg.ylabel.reserve(draw.Crop(full, 0, 0, grow, 0))
		leg.below(p, full, area)
	}
	return p, leg, c, area, nil
}

// newPlot builds the plot of the lines (axes, grid, spreads, lines and markers) and its
// legend's entries, without placing the legend. styles gives each line name's colour,
// dash and marker (styleTable).
func newPlot(lines []Line, o Options, styles map[string]lineStyle) (*gplot.Plot, *legend, error) {
	p := gplot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = truncText(o.Title), truncText(o.XLabel), truncText(o.YLabel)
	p.X.Tick.Marker, p.Y.Tick.Marker = linTicks{}, linTicks{}

	// The log axes' tick plans, from the positive data and whether any value is 0.
	xPlan, xZero := logPlan(lines, o.LogX, func(l Line) []float64 { return l.X })
	yPlan, yZero := logPlan(lines, o.LogY, func(l Line) []float64 { return append(append(append([]float64(nil), l.Y...), l.Lo...), l.Hi...) })
	if o.LogX {
		p.X.Scale, p.X.Tick.Marker = gplot.LogScale{}, xPlan
	}
	if o.LogY {
		p.Y.Scale, p.Y.Tick.Marker = gplot.LogScale{}, yPlan
	}
	p.Add(plotter.NewGrid())
	leg := &legend{place: o.Legend, style: p.Legend.TextStyle, thumb: p.Legend.ThumbnailWidth}
	for _, ln := range lines {
		pts := make(plotter.XYs, 0, len(ln.X))
		for k := range ln.X {
			x, okX := logMap(ln.X[k], o.LogX, xZero)
			y, okY := logMap(ln.Y[k], o.LogY, yZero)
			if !okX || !okY {
				continue
			}
			pts = append(pts, plotter.XY{X: x, Y: y})
		}
		if len(pts) == 0 {
			continue
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, nil, errs.Wrapf(err, "line %s", errs.Quote([]byte(ln.Name)))
		}
		st := styles[ln.Name]
		if err := addSpread(p, ln, o, xZero, yZero, st.color); err != nil {
			return nil, nil, err
		}
		l.Color = plotutil.Color(st.color)
		l.Dashes = plotutil.Dashes(st.dash)
		p.Add(l)
		e := legendEntry{name: truncText(ln.Name), thumbs: []gplot.Thumbnailer{l}}
		if o.Points {
			s, err := plotter.NewScatter(pts)
			if err != nil {
				return nil, nil, errs.Wrapf(err, "line %s", errs.Quote([]byte(ln.Name)))
			}
			s.Color, s.Shape = plotutil.Color(st.color), plotutil.Shape(st.shape)
			p.Add(s)
			e.thumbs = append(e.thumbs, s)
		}
		leg.entries = append(leg.entries, e)
		leg.data = append(leg.data, pts)
	}
	if o.LogX {
		logRange(&p.X)
	} else {
		linRange(&p.X)
	}
	if o.LogY {
		logRange(&p.Y)
	} else {
		linRange(&p.Y)
	}
	leg.ylabel = takeYLabel(p, o.LogY)
	return p, leg, nil
}

// logPlan returns the tick plan of a logarithmic axis over the given coordinates of the
// lines and the position of its 0 row (0: no zero in the data).
func logPlan(lines []Line, on bool, coord func(Line) []float64) (logTicks, float64) {
	if !on {
		return logTicks{}, 0
	}
	lo, hi, zeros := math.Inf(1), math.Inf(-1), false
	for _, l := range lines {
		for _, v := range coord(l) {
			switch {
			case v == 0:
				zeros = true
			case v > 0:
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if lo > hi { // no positive value: the axis is [1, 10], a lone 0 row below it
		lo, hi = 1, 10
	}
	if lo == hi {
		lo, hi = lo/10, hi*10
	}
	t := planLogTicks(lo, hi, zeros)
	return t, t.zero
}

// logMap maps a coordinate to where it is drawn: itself on a linear axis; on a
// logarithmic one itself when positive, the 0 row when 0, and nothing when negative.
func logMap(v float64, log bool, zero float64) (float64, bool) {
	switch {
	case !log || v > 0:
		return v, true
	case v == 0 && zero > 0:
		return zero, true
	}
	return 0, false
}

// logRange gives a logarithmic axis a positive, non-empty range: gonum/plot widens an
// empty or one-value range to [v-1, v+1] (or [-1, 1]), which panics on a log scale.
func logRange(a *gplot.Axis) {
	switch {
	case !(a.Min > 0 && a.Max >= a.Min): // no data
		a.Min, a.Max = 1, 10
	case a.Min == a.Max: // one value: a decade on each side
		a.Min, a.Max = a.Min/10, a.Max*10
	}
}

// linRange gives a linear axis whose data take one value v ≠ 0 the range from 0 to 2v
// (or 2v to 0): gonum/plot widens it to [v−1, v+1], whose ticks (2999, 3000, 3001 for
// a constant 3000) suggest a variation the data do not have.
func linRange(a *gplot.Axis) {
	if a.Min != a.Max || a.Min == 0 || math.IsInf(a.Min, 0) {
		return
	}
	if v := a.Min; v > 0 {
		a.Min, a.Max = 0, 2*v
	} else {
		a.Min, a.Max = 2*v, 0
	}
}

// Series is a named trace for Traces.
type Series struct {
	// Name labels the curve in the legend.
	Name string
	// Trace is the run's trace; the curve is its discrepancy against the step.
	Trace tokendist.Trace
}

// Result draws one run's discrepancy against steps as SVG, with the options of
// Lines (nil: defaults); the line is named after r.Balancer and empty axis labels
// read "step" and "discrepancy". Cost O(len(r.Trace)).
func Result(r tokendist.Result, opts *Options) ([]byte, error) {
	return Traces([]Series{{Name: r.Balancer, Trace: r.Trace}}, opts)
}

// Traces draws the discrepancy of several traces against steps as SVG, one line
// each, for comparing balancers on one network, with the options of Lines (nil:
// defaults); empty axis labels read "step" and "discrepancy". Cost O(total samples).
func Traces(series []Series, opts *Options) ([]byte, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.XLabel == "" {
		o.XLabel = "step"
	}
	if o.YLabel == "" {
		o.YLabel = "discrepancy"
	}
	lines := make([]Line, len(series))
	for i, s := range series {
		x, y := s.Trace.Discrepancies()
		lines[i] = Line{Name: s.Name, X: x, Y: y}
	}
	return Lines(lines, &o)
}
