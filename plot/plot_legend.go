package plot

import (
	"math"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// legend is Lines' legend, drawn as the last plotter in a corner of the data area:
// one row per line, its sample (line and marker) on the left and its name on the right.
type legend struct {
	entries []legendEntry
	data    []plotter.XYs // the drawn points of each line, for choosing the corner
	place   LegendPlace
	style   text.Style
	thumb   vg.Length    // width of a line sample
	strip   *draw.Canvas // where to draw the legend outside the plot (nil: inside)
	ylabel  *yLabel      // the y label drawn by the plot's own plotter (log y axes)
}

type legendEntry struct {
	name   string
	thumbs []gplot.Thumbnailer
}

const (
	legendInset = 2 * vg.Millimeter // between the data area's border and the box
	legendPad   = vg.Length(3)      // inside the box, in points
	legendGap   = vg.Length(2)      // between rows, in points
)

// size returns the legend box's width and height.
func (l *legend) size() (w, h vg.Length) {
	var tw vg.Length
	for _, e := range l.entries {
		tw = max(tw, l.style.Width(e.name))
	}
	n := vg.Length(len(l.entries))
	w = 2*legendPad + l.thumb + l.style.Width(" ") + tw
	h = 2*legendPad + n*l.rowHeight() + (n-1)*legendGap
	return w, h
}

func (l *legend) rowHeight() vg.Length { return l.style.Height("Xg") }

// box returns the legend's rectangle in the data canvas c for a corner place.
func (l *legend) box(c draw.Canvas, place LegendPlace) vg.Rectangle {
	w, h := l.size()
	var r vg.Rectangle
	switch place {
	case LegendTopLeft, LegendBottomLeft:
		r.Min.X = c.Min.X + legendInset
	default:
		r.Min.X = c.Max.X - legendInset - w
	}
	switch place {
	case LegendBottomRight, LegendBottomLeft:
		r.Min.Y = c.Min.Y + legendInset
	default:
		r.Min.Y = c.Max.Y - legendInset - h
	}
	r.Max = vg.Point{X: r.Min.X + w, Y: r.Min.Y + h}
	return r
}

// cover measures how much of the data the rectangle r of the data canvas c covers: the
// length in points of the lines inside r (grown by 2 points for line width and
// markers) plus 1 for each data point inside.
func (l *legend) cover(p *gplot.Plot, c draw.Canvas, r vg.Rectangle) float64 {
	const grow = 2
	x0, y0 := float64(r.Min.X)-grow, float64(r.Min.Y)-grow
	x1, y1 := float64(r.Max.X)+grow, float64(r.Max.Y)+grow
	var s float64
	for _, pts := range l.data {
		var px, py float64
		for i, pt := range pts {
			x := float64(c.X(p.X.Norm(pt.X)))
			y := float64(c.Y(p.Y.Norm(pt.Y)))
			if x >= x0 && x <= x1 && y >= y0 && y <= y1 {
				s++
			}
			if i > 0 {
				s += clipLength(px, py, x, y, x0, y0, x1, y1)
			}
			px, py = x, y
		}
	}
	return s
}

// clipLength returns the length of the segment (ax,ay)-(bx,by) inside the rectangle
// [x0,x1]×[y0,y1] (Liang–Barsky).
func clipLength(ax, ay, bx, by, x0, y0, x1, y1 float64) float64 {
	dx, dy := bx-ax, by-ay
	t0, t1 := 0.0, 1.0
	for _, pq := range [4][2]float64{{-dx, ax - x0}, {dx, x1 - ax}, {-dy, ay - y0}, {dy, y1 - ay}} {
		p, q := pq[0], pq[1]
		if p == 0 {
			if q < 0 {
				return 0
			}
			continue
		}
		t := q / p
		if p < 0 {
			t0 = math.Max(t0, t)
		} else {
			t1 = math.Min(t1, t)
		}
		if t0 > t1 {
			return 0
		}
	}
	return (t1 - t0) * math.Hypot(dx, dy)
}

// choose sets the place to draw the legend in and returns the area left for the plot,
// and how much taller the image must grow for the legend to fit below it (0: none).
// An explicit place is kept. For LegendAuto it takes the corner of the data area
// covering the least data (cover). When every corner covers some, it tries in turn:
//   - raising the top of the y axis (p.Y.Max) so that a band as tall as the legend is
//     free of data, if the legend is at most 45% of the data area's height;
//   - a strip to the right of the plot, if the legend is at most 40% of the width;
//   - a strip below the plot on an image grown by the legend's height.
func (l *legend) choose(p *gplot.Plot, area draw.Canvas, logY bool) (draw.Canvas, vg.Length) {
	if l.place == LegendOutside {
		w, h := l.size()
		if w+legendInset <= 0.6*(area.Max.X-area.Min.X) {
			return l.right(p, area, w), 0
		}
		return area, h + legendInset
	}
	if l.place != LegendAuto {
		return area, 0
	}
	best := func() (LegendPlace, float64) {
		c := p.DataCanvas(area)
		place, least := LegendTopRight, math.Inf(1)
		for _, pl := range []LegendPlace{LegendTopRight, LegendTopLeft, LegendBottomRight, LegendBottomLeft} {
			if s := l.cover(p, c, l.box(c, pl)); s < least {
				place, least = pl, s
			}
		}
		return place, least
	}
	place, least := best()
	l.place = place
	if least == 0 {
		return area, 0
	}
	w, h := l.size()
	yMax := p.Y.Max
	for try := 0; try < 3 && least > 0; try++ {
		c := p.DataCanvas(area)
		height := c.Max.Y - c.Min.Y
		band := h + 2*legendInset + 2
		if band > 0.45*height {
			break
		}
		// Raise Max so the data end at height-band: the fraction f of the new range.
		f := float64((height - band) / height)
		if logY {
			p.Y.Max = p.Y.Min * math.Pow(p.Y.Max/p.Y.Min, 1/f)
		} else {
			p.Y.Max = p.Y.Min + (p.Y.Max-p.Y.Min)/f
		}
		place, least = best()
		l.place = place
	}
	if least == 0 {
		return area, 0
	}
	p.Y.Max = yMax
	if w+legendInset <= 0.4*(area.Max.X-area.Min.X) {
		return l.right(p, area, w), 0
	}
	return area, h + legendInset
}

// right puts the legend (of width w) in a strip right of the plot and returns the area
// left for the plot.
func (l *legend) right(p *gplot.Plot, area draw.Canvas, w vg.Length) draw.Canvas {
	plotArea := draw.Crop(area, 0, -(w + legendInset), 0, 0)
	dc := p.DataCanvas(plotArea)
	strip := area
	strip.Min.X = plotArea.Max.X
	strip.Min.Y, strip.Max.Y = dc.Min.Y, dc.Max.Y+legendInset
	l.strip, l.place = &strip, LegendTopLeft
	return plotArea
}

// below puts the legend under the plot drawn in plotArea, the top of area, centred on
// the data area.
func (l *legend) below(p *gplot.Plot, area, plotArea draw.Canvas) {
	w, _ := l.size()
	strip := area
	strip.Max.Y = plotArea.Min.Y
	dc := p.DataCanvas(plotArea)
	mid := (dc.Min.X + dc.Max.X) / 2
	strip.Min.X, strip.Max.X = mid-w/2-legendInset, mid+w/2+legendInset
	strip.Min.Y -= legendInset
	l.strip, l.place = &strip, LegendBottomLeft
}

// Plot implements gplot.Plotter: it draws the legend box's rows in the data canvas c.
func (l *legend) Plot(c draw.Canvas, _ *gplot.Plot) {
	r := l.box(c, l.place)
	sty := l.style
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YCenter
	rh := l.rowHeight()
	y := r.Max.Y - legendPad - rh/2 // centre of the first row
	for _, e := range l.entries {
		icon := &draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: r.Min.X + legendPad, Y: y - rh/2},
			Max: vg.Point{X: r.Min.X + legendPad + l.thumb, Y: y + rh/2},
		}}
		for _, t := range e.thumbs {
			t.Thumbnail(icon)
		}
		c.FillText(sty, vg.Point{X: icon.Max.X + l.style.Width(" "), Y: y}, e.name)
		y -= rh + legendGap
	}
}
