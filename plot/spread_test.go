package plot_test

import (
	"bytes"
	"image/png"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist/plot"
)

func spreadLines() []plot.Line {
	return []plot.Line{
		{Name: "a", X: []float64{1, 2, 4, 8}, Y: []float64{1, 3, 5, 9}, Lo: []float64{0.5, 2, 4, 7}, Hi: []float64{2, 4, 6, 12}},
		{Name: "b", X: []float64{1, 2, 4, 8}, Y: []float64{2, 2, 3, 4}, Lo: []float64{2, 1, 3, 3}, Hi: []float64{2, 3, 3, 5}},
	}
}

// TestPlotFormats checks that each format gives its kind of file, for Lines and Facets,
// with bands, error bars, log axes and the legend outside.
func TestPlotFormats(t *testing.T) {
	magic := map[string][]byte{"svg": []byte("<svg"), "png": []byte("\x89PNG\r\n\x1a\n"), "pdf": []byte("%PDF-")}
	for _, format := range plot.Formats {
		for _, o := range []plot.Options{
			{Title: "band", XLabel: "n", YLabel: "y"},
			{Spread: plot.SpreadBars, LogX: true, LogY: true, Legend: plot.LegendOutside},
		} {
			b, err := plot.LinesAs(spreadLines(), &o, format)
			require.NoError(t, err)
			require.True(t, bytes.Contains(b[:min(len(b), 400)], magic[format]), "%s %+v", format, o)
			b, err = plot.Facets([]plot.Panel{{Title: "p1", Lines: spreadLines()}, {Title: "p2", Lines: spreadLines()[:1]}, {Title: "p3"}}, &o, format)
			require.NoError(t, err)
			require.True(t, bytes.Contains(b[:min(len(b), 400)], magic[format]), "facets %s", format)
		}
	}
	_, err := plot.LinesAs(spreadLines(), nil, "gif")
	require.ErrorContains(t, err, `"gif"`)
	_, err = plot.Facets(nil, nil, "svg")
	require.Error(t, err)
}

// TestSpreadDrawn checks that a band adds a translucent polygon and bars add segments:
// the SVG with a spread differs from the one without, and a band uses the fill opacity.
func TestSpreadDrawn(t *testing.T) {
	plain := spreadLines()
	for i := range plain {
		plain[i].Lo, plain[i].Hi = nil, nil
	}
	a, err := plot.Lines(plain, nil)
	require.NoError(t, err)
	band, err := plot.Lines(spreadLines(), nil)
	require.NoError(t, err)
	bars, err := plot.Lines(spreadLines(), &plot.Options{Spread: plot.SpreadBars})
	require.NoError(t, err)
	require.NotContains(t, string(a), "fill-opacity:0.2")
	require.Contains(t, string(band), "fill-opacity:0.2")
	require.NotContains(t, string(bars), "fill-opacity:0.2")
	require.Greater(t, strings.Count(string(bars), "<path"), strings.Count(string(a), "<path"))

	bad := spreadLines()
	bad[0].Hi = bad[0].Hi[:2]
	_, err = plot.Lines(bad, nil)
	require.ErrorContains(t, err, "Hi")
}

// TestFacetsLegendOnePerName checks that Facets lists each line name once.
func TestFacetsLegendOnePerName(t *testing.T) {
	b, err := plot.Facets([]plot.Panel{{Title: "left", Lines: spreadLines()}, {Title: "right", Lines: spreadLines()}}, nil, "svg")
	require.NoError(t, err)
	desc := string(b[strings.Index(string(b), "<desc>"):strings.Index(string(b), "</desc>")])
	require.Equal(t, 1, strings.Count(desc, "| a |")+strings.Count(desc, "| a<"), desc)
	require.Contains(t, desc, "left")
	require.Contains(t, desc, "right")
}

// TestLogYLabelKeepsDataArea checks that a long y label on a logarithmic y axis does not
// shrink the data area: gonum/plot pads for the label as if centred at the arithmetic
// middle of the range, near the top on a log scale, which left a blank band above the
// data. The topmost drawn row right of the label must not depend on the label's length.
func TestLogYLabelKeepsDataArea(t *testing.T) {
	lines := []plot.Line{{Name: "b", X: []float64{256, 1024, 4096, 16384}, Y: []float64{1002, 4870, 23032, 106458}}}
	top := func(label string, logY bool) int {
		b, err := plot.LinesAs(lines, &plot.Options{LogY: logY, YLabel: label, Legend: plot.LegendHidden}, "png")
		require.NoError(t, err)
		img, err := png.Decode(bytes.NewReader(b))
		require.NoError(t, err)
		r := img.Bounds()
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X + r.Dx()/5; x < r.Max.X; x++ {
				if c, _, _, _ := img.At(x, y).RGBA(); c < 0x8000 {
					return y
				}
			}
		}
		return -1
	}
	long := "steps (mean over seeds, 95% confidence interval)"
	for _, logY := range []bool{true, false} {
		short := top("s", logY)
		require.Positive(t, short)
		require.InDelta(t, short, top(long, logY), 1, "log y %v", logY)
	}
}
