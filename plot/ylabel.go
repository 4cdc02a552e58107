package plot

import (
	"math"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// yLabel draws the y axis label of a logarithmic y axis itself. gonum/plot (v0.17.0)
// draws the label at the middle of the axis but pads the data area for a label box
// centred at the arithmetic mean of the axis range, which on a log scale lies near the
// top: a long label then pushed the data area down, leaving a blank band above it. This
// plotter draws the label where gonum/plot would, in a column reserve keeps left of the
// plot, and has no glyph box.
type yLabel struct {
	text string
	sty  text.Style
	pad  vg.Length
	x    vg.Length // left of the label's column, set by reserve
}

// takeYLabel moves p's y label to a yLabel plotter added to p, on a log y axis with a
// label; it returns nil (and leaves p alone) otherwise.
func takeYLabel(p *gplot.Plot, logY bool) *yLabel {
	if !logY || p.Y.Label.Text == "" {
		return nil
	}
	l := &yLabel{text: p.Y.Label.Text, sty: p.Y.Label.TextStyle, pad: p.Y.Label.Padding}
	p.Y.Label.Text = ""
	p.Add(l)
	return l
}

// width is the column the label takes: its height, descent and padding, as gonum/plot
// reserves.
func (l *yLabel) width() vg.Length {
	return l.sty.Height(l.text) + l.sty.FontExtents().Descent + l.pad
}

// reserve places the label's column at the left of area and returns the rest (area
// itself for a nil label).
func (l *yLabel) reserve(area draw.Canvas) draw.Canvas {
	if l == nil {
		return area
	}
	l.x = area.Min.X
	return draw.Crop(area, l.width(), 0, 0, 0)
}

// Plot implements gplot.Plotter: the label rotated a quarter turn, centred on the data
// area's height.
func (l *yLabel) Plot(c draw.Canvas, _ *gplot.Plot) {
	sty := l.sty
	sty.Rotation += math.Pi / 2
	x := l.x + l.sty.Height(l.text) - l.sty.FontExtents().Descent
	c.FillText(sty, vg.Point{X: x, Y: c.Center().Y}, l.text)
}
