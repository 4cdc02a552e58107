package plot

import (
	"bytes"
	"fmt"
	"image/color"
	"path/filepath"
	"strings"

	"github.com/tokendist/tokendist/internal/errs"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
)

// SpreadStyle says how Lines draws the spread (Line.Lo to Line.Hi) of a line.
type SpreadStyle int

const (
	// SpreadBand, the zero value, shades the band between Lo and Hi in the line's
	// colour, a fifth as opaque.
	SpreadBand SpreadStyle = iota
	// SpreadBars draws an error bar from Lo to Hi at every point.
	SpreadBars
)

// addSpread adds line ln's spread (if it has one) to p, below the line, in colour ci.
func addSpread(p *gplot.Plot, ln Line, o Options, xZero, yZero float64, ci int) error {
	if ln.Lo == nil {
		return nil
	}
	if o.Spread != SpreadBand && o.Spread != SpreadBars {
		return errs.BadParam("Options.Spread = %d is not a SpreadStyle", int(o.Spread))
	}
	type pt struct{ x, lo, y, hi float64 }
	var pts []pt
	for k := range ln.X {
		x, okX := logMap(ln.X[k], o.LogX, xZero)
		y, okY := logMap(ln.Y[k], o.LogY, yZero)
		lo, okL := logMap(min(ln.Lo[k], ln.Hi[k]), o.LogY, yZero)
		hi, okH := logMap(max(ln.Lo[k], ln.Hi[k]), o.LogY, yZero)
		if okX && okY && okL && okH {
			pts = append(pts, pt{x, lo, y, hi})
		}
	}
	if len(pts) == 0 {
		return nil
	}
	col := plotutil.Color(ci)
	if o.Spread == SpreadBars {
		xys := make(plotter.XYs, len(pts))
		errsY := make(plotter.YErrors, len(pts))
		for i, q := range pts {
			xys[i] = plotter.XY{X: q.x, Y: q.y}
			errsY[i].Low, errsY[i].High = q.y-q.lo, q.hi-q.y
		}
		bars, err := plotter.NewYErrorBars(struct {
			plotter.XYs
			plotter.YErrors
		}{xys, errsY})
		if err != nil {
			return fmt.Errorf("tokendist: line %q: %w", ln.Name, err)
		}
		bars.Color = col
		p.Add(bars)
		return nil
	}
	ring := make(plotter.XYs, 0, 2*len(pts))
	for _, q := range pts {
		ring = append(ring, plotter.XY{X: q.x, Y: q.hi})
	}
	for i := len(pts) - 1; i >= 0; i-- {
		ring = append(ring, plotter.XY{X: pts[i].x, Y: pts[i].lo})
	}
	poly, err := plotter.NewPolygon(ring)
	if err != nil {
		return fmt.Errorf("tokendist: line %q: %w", ln.Name, err)
	}
	r, g, b, _ := col.RGBA()
	poly.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 51}
	poly.LineStyle.Width = 0
	p.Add(poly)
	return nil
}

// Formats are the image formats LinesAs and Facets write, named as file extensions.
var Formats = []string{"svg", "png", "pdf"}

// FormatOf returns the image format a file name's extension selects: "svg", "png" or
// "pdf" (case-insensitive), or an error naming the extension and the formats. It costs
// O(len(name)).
func FormatOf(name string) (string, error) {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(name), "."))
	for _, f := range Formats {
		if ext == f {
			return f, nil
		}
	}
	return "", errs.BadParam("plot file %s: unknown image format %q (the extension selects it: .svg, .png or .pdf)", errs.Quote([]byte(name)), ext)
}

// target is a canvas for one of the Formats and the function that encodes it.
type target struct {
	vg.CanvasSizer
	finish func(title string) ([]byte, error)
}

// newTarget returns a w × h canvas of the format (one of Formats): SVG with text as
// outlines (see Lines), PNG at 192 dots per inch, or PDF with the fonts embedded.
func newTarget(format string, w, h vg.Length) (target, error) {
	switch format {
	case "svg", "":
		c := newOutlineCanvas(w, h)
		return target{c, c.finishSVG}, nil
	case "png":
		c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(192), vgimg.UseBackgroundColor(color.White))
		return target{c, func(string) ([]byte, error) {
			var b bytes.Buffer
			if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&b); err != nil {
				return nil, fmt.Errorf("tokendist: plot: png: %w", err)
			}
			return b.Bytes(), nil
		}}, nil
	case "pdf":
		c := vgpdf.New(w, h)
		c.EmbedFonts(true)
		return target{pdfCanvas{c}, func(string) ([]byte, error) {
			var b bytes.Buffer
			if _, err := c.WriteTo(&b); err != nil {
				return nil, fmt.Errorf("tokendist: plot: pdf: %w", err)
			}
			return b.Bytes(), nil
		}}, nil
	}
	return target{}, errs.BadParam("image format %q (allowed: %s)", format, strings.Join(Formats, ", "))
}

// pdfCanvas passes gonum's PDF canvas straight (not premultiplied) colours. vgpdf reads
// Color.RGBA's premultiplied components as the colour and then sets the alpha as well,
// so a translucent colour came out darkened by its own opacity: a band at a fifth of
// the line's opacity was about five times too dark, where PNG and SVG were right.
type pdfCanvas struct{ *vgpdf.Canvas }

// SetColor sets clr, un-premultiplied, as the colour vgpdf writes with clr's alpha.
func (c pdfCanvas) SetColor(clr color.Color) {
	if clr == nil {
		clr = color.Black
	}
	c.Canvas.SetColor(straightColor(color.NRGBAModel.Convert(clr).(color.NRGBA)))
}

// straightColor is an NRGBA whose RGBA method returns the straight components (scaled
// to 16 bits) with the alpha: what vgpdf's colour conversion expects, and only for it.
type straightColor color.NRGBA

// RGBA returns the straight components and the alpha, each in 0..0xffff.
func (s straightColor) RGBA() (r, g, b, a uint32) {
	return uint32(s.R) * 0x101, uint32(s.G) * 0x101, uint32(s.B) * 0x101, uint32(s.A) * 0x101
}

// LinesAs draws the lines as Lines does, in the image format (one of Formats: "svg"
// gives Lines' output, "png" a 192 dpi PNG on white, "pdf" a PDF with its fonts
// embedded). An unknown format is an error. The cost is that of Lines plus the
// encoding (for PNG, O(width × height) pixels).
func LinesAs(lines []Line, opts *Options, format string) ([]byte, error) {
	if format == "svg" {
		return Lines(lines, opts)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if _, err := newTarget(format, 1, 1); err != nil {
		return nil, err
	}
	p, leg, c, area, err := layoutPlot(lines, o)
	if err != nil {
		return nil, err
	}
	w, h := c.Size()
	t, err := newTarget(format, w, h)
	if err != nil {
		return nil, err
	}
	area.Canvas = t
	if leg != nil && leg.strip == nil {
		p.Add(leg)
	}
	p.Draw(area)
	if leg != nil && leg.strip != nil {
		strip := *leg.strip
		strip.Canvas = t
		leg.Plot(strip, p)
	}
	return t.finish(o.Title)
}

// Panel is one small plot of Facets: a title and its lines.
type Panel struct {
	Title string
	Lines []Line
}

// maxPanels bounds the panels of Facets.
const maxPanels = 256

// Facets draws small multiples: one plot per panel, in a grid of ⌈√k⌉ columns, with
// shared options (axes labels, log axes, spread style; Options.Width and Height size one
// panel, default 9 × 7 cm) and one legend for all panels in a strip on the right, one
// entry per line name, a name keeping its colour in every panel. Options.Title heads
// the image. The format is one of Formats. Errors are those of Lines, more than 256
// panels, and an unknown format. The cost is O(total points) plus the encoding.
func Facets(panels []Panel, opts *Options, format string) ([]byte, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if len(panels) == 0 || len(panels) > maxPanels {
		return nil, errs.BadParam("Facets draws 1..%d panels, got %d", maxPanels, len(panels))
	}
	if !(o.Width >= 0 && o.Width <= maxPlotSize && o.Height >= 0 && o.Height <= maxPlotSize) {
		return nil, errs.BadParam("Facets panel size %v × %v outside 0..%v cm", o.Width, o.Height, maxPlotSize)
	}
	pw, ph := o.Width, o.Height
	if pw <= 0 || ph <= 0 {
		pw, ph = 9, 7
	}
	total := 0
	all := make([][]Line, len(panels))
	for i, pn := range panels {
		if err := checkPlotValues(pn.Lines); err != nil {
			return nil, err
		}
		total += len(pn.Lines)
		all[i] = pn.Lines
	}
	styles := styleTable(all...)
	if total > maxPlotLines {
		return nil, errs.BadParam("Facets draws at most %d lines, got %d", maxPlotLines, total)
	}
	cols := 1
	for cols*cols < len(panels) {
		cols++
	}
	rows := (len(panels) + cols - 1) / cols
	plots := make([]*gplot.Plot, len(panels))
	ylabels := make([]*yLabel, len(panels))
	shared := &legend{place: LegendTopLeft}
	seen := map[string]bool{}
	for i, pn := range panels {
		po := o
		po.Title = pn.Title
		p, leg, err := newPlot(pn.Lines, po, styles)
		if err != nil {
			return nil, err
		}
		p.Title.TextStyle.Font.Size = p.X.Label.TextStyle.Font.Size
		plots[i], ylabels[i] = p, leg.ylabel
		shared.style, shared.thumb = leg.style, leg.thumb
		for _, e := range leg.entries {
			if !seen[e.name] {
				seen[e.name] = true
				shared.entries = append(shared.entries, e)
			}
		}
	}
	lw, _ := shared.size()
	if len(shared.entries) == 0 || o.Legend == LegendHidden {
		lw = 0
	}
	titleH := vg.Length(0)
	if o.Title != "" {
		// The title's own height (its font, descenders included) and a gap, so that it
		// never touches the panels' titles below it.
		titleH = plots[0].Title.TextStyle.Height(truncText(o.Title)) + 8
	}
	w := vg.Length(pw*float64(cols))*vg.Centimeter + lw + 2*legendInset
	h := vg.Length(ph*float64(rows))*vg.Centimeter + titleH
	t, err := newTarget(format, w, h)
	if err != nil {
		return nil, err
	}
	dc := draw.New(t)
	if o.Title != "" {
		sty := plots[0].Title.TextStyle
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		dc.FillText(sty, vg.Point{X: (w - lw) / 2, Y: h - 4}, o.Title)
	}
	grid := draw.Crop(dc, 0, -(lw + 2*legendInset), 0, -titleH)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: 4, PadY: 4, PadTop: 2, PadBottom: 2, PadLeft: 2, PadRight: 2}
	for i, p := range plots {
		p.Draw(ylabels[i].reserve(tiles.At(grid, i%cols, i/cols)))
	}
	if lw > 0 {
		strip := dc
		strip.Min.X = grid.Max.X
		strip.Max.Y -= titleH
		shared.Plot(strip, nil)
	}
	return t.finish(o.Title)
}
