package tokendist_test

import (
	"context"
	"encoding/xml"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
)

// fndCheckSVG checks that b is a well-formed SVG document containing every word.
func fndCheckSVG(t *testing.T, b []byte, words ...string) {
	t.Helper()
	require.Contains(t, string(b), "<svg")
	dec := xml.NewDecoder(strings.NewReader(string(b)))
	for {
		_, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "SVG is not well-formed XML")
	}
	for _, w := range words {
		require.Contains(t, string(b), w)
	}
}

func TestPlotLines(t *testing.T) {
	x := []float64{1, 2, 3, 4}
	lines := []tokendist.Line{
		{Name: "alpha", X: x, Y: []float64{8, 4, 2, 1}},
		{Name: "beta", X: x, Y: []float64{5, 5, 3, 3}},
	}
	svg, err := tokendist.PlotLines(lines, &tokendist.PlotOptions{Title: "Title here", XLabel: "steps", YLabel: "disc", Points: true})
	require.NoError(t, err)
	fndCheckSVG(t, svg, "alpha", "beta", "Title here", "steps", "disc")

	// Zero options: 16 × 10 cm; explicit size is honoured.
	svg, err = tokendist.PlotLines(lines, nil)
	require.NoError(t, err)
	fndCheckSVG(t, svg, `width="453.54pt"`, `height="283.46pt"`)
	svg, err = tokendist.PlotLines(lines, &tokendist.PlotOptions{Width: 8, Height: 5})
	require.NoError(t, err)
	fndCheckSVG(t, svg, `width="226.77pt"`, `height="141.73pt"`)

	// Many lines cycle through colours and dashes without error.
	var many []tokendist.Line
	for i := 0; i < 20; i++ {
		many = append(many, tokendist.Line{Name: strings.Repeat("l", i+1), X: x, Y: []float64{float64(i), 1, 2, 3}})
	}
	svg, err = tokendist.PlotLines(many, &tokendist.PlotOptions{LogX: true})
	require.NoError(t, err)
	fndCheckSVG(t, svg)
}

// TestPlotLinesDegenerate covers inputs that must not panic: no lines, empty lines,
// constant data on a log axis (a discrepancy stuck at 1), only non-positive values on a
// log axis, NaN and infinite values.
func TestPlotLinesDegenerate(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	cases := []struct {
		name  string
		lines []tokendist.Line
		opts  *tokendist.PlotOptions
	}{
		{"no lines", nil, nil},
		{"no lines, log", nil, &tokendist.PlotOptions{LogX: true, LogY: true}},
		{"empty line", []tokendist.Line{{Name: "e"}}, nil},
		{"single point", []tokendist.Line{{Name: "p", X: []float64{3}, Y: []float64{7}}}, nil},
		{"single point, log", []tokendist.Line{{Name: "p", X: []float64{3}, Y: []float64{7}}}, &tokendist.PlotOptions{LogX: true, LogY: true}},
		{"constant, logY", []tokendist.Line{{Name: "c", X: []float64{0, 1, 2}, Y: []float64{1, 1, 1}}}, &tokendist.PlotOptions{LogY: true}},
		{"constant, logX", []tokendist.Line{{Name: "c", X: []float64{5, 5}, Y: []float64{1, 2}}}, &tokendist.PlotOptions{LogX: true}},
		{"all zero, logY", []tokendist.Line{{Name: "z", X: []float64{0, 1, 2}, Y: []float64{0, 0, 0}}}, &tokendist.PlotOptions{LogY: true}},
		{"zeros then one, logY", []tokendist.Line{{Name: "z", X: []float64{0, 1, 2}, Y: []float64{0, 1, 0}}}, &tokendist.PlotOptions{LogY: true}},
		{"NaN and Inf", []tokendist.Line{{Name: "n", X: []float64{1, 2, inf, 4, nan, 6}, Y: []float64{1, nan, 3, inf, 5, -inf}}}, nil},
		{"only NaN", []tokendist.Line{{Name: "n", X: []float64{nan}, Y: []float64{nan}}}, &tokendist.PlotOptions{LogY: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			svg, err := tokendist.PlotLines(tc.lines, tc.opts)
			require.NoError(t, err)
			fndCheckSVG(t, svg)
		})
	}
}

func TestPlotLinesBadInput(t *testing.T) {
	_, err := tokendist.PlotLines([]tokendist.Line{{Name: "ok", X: []float64{1}, Y: []float64{1}}, {Name: "short", X: []float64{1, 2}, Y: []float64{1}}}, nil)
	fndCheckErr(t, err, tokendist.ErrBadParameter, `"short"`, "2 x values", "1 y values")
}

func TestPlotTraces(t *testing.T) {
	g := fndMust(tokendist.Ring(12))
	loads, _ := tokendist.PointMass(12, 60, 0)
	r, err := tokendist.Run(context.Background(), g, loads, fndNeighbourExchange{}, &tokendist.RunOptions{SampleEvery: 1})
	require.NoError(t, err)
	svg, err := tokendist.PlotTrace("ring", r)
	require.NoError(t, err)
	fndCheckSVG(t, svg, "ring", "neighbour-exchange", "discrepancy", "step")
	svg, err = tokendist.PlotTraces("two", []tokendist.Series{{Name: "a", Trace: r.Trace}, {Name: "b", Trace: r.Trace[:1]}, {Name: "empty"}})
	require.NoError(t, err)
	fndCheckSVG(t, svg, "two")
}
