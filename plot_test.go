package tokendist_test

import (
	"context"
	"encoding/xml"
	"io"
	"math"
	"strings"
	"testing"
	"time"

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
	// Text is drawn as outlines: no <text>, no font named, every glyph a <use> of a
	// defined outline, the words in <title> and <desc>.
	require.NotContains(t, string(svg), "<text")
	require.NotContains(t, string(svg), "font-family")
	require.NotContains(t, string(svg), "#010203", "a text glyph was not turned into a <use>")
	require.Contains(t, string(svg), "<title>Title here</title>")
	require.Regexp(t, `<desc>Title here \| steps \| .* \| disc \| .* \| alpha \| beta</desc>`, string(svg))
	require.Regexp(t, `<use xlink:href="#g[0-9]+" x="[-0-9.e]+" class="tdtext"/>`, string(svg))

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
// log axis, negative values and zeros on log axes.
func TestPlotLinesDegenerate(t *testing.T) {
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
		{"negative on log axes", []tokendist.Line{{Name: "n", X: []float64{-1, 1, 2}, Y: []float64{4, -3, 0}}}, &tokendist.PlotOptions{LogX: true, LogY: true}},
		{"only zeros, log", []tokendist.Line{{Name: "z", X: []float64{0, 0}, Y: []float64{0, 0}}}, &tokendist.PlotOptions{LogX: true, LogY: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			svg, err := tokendist.PlotLines(tc.lines, tc.opts)
			require.NoError(t, err)
			fndCheckSVG(t, svg)
		})
	}
}

// TestPlotLinesBadInput: NaN, infinite and huge coordinates make gonum/plot's tick code
// loop forever; PlotLines must return an error naming the value instead, quickly. Each
// call runs under a timeout so a regression fails rather than hangs.
func TestPlotLinesBadInput(t *testing.T) {
	ok := []float64{1, 2, 3}
	cases := []struct {
		name  string
		lines []tokendist.Line
		opts  *tokendist.PlotOptions
		want  []string // substrings of the error; nil: no error
	}{
		{"short y", []tokendist.Line{{Name: "ok", X: []float64{1}, Y: []float64{1}}, {Name: "short", X: []float64{1, 2}, Y: []float64{1}}}, nil,
			[]string{`"short"`, "2 x values", "1 y values"}},
		{"NaN x", []tokendist.Line{{Name: "n", X: []float64{1, math.NaN(), 3}, Y: ok}}, nil, []string{`"n"`, "x[1] = NaN"}},
		{"NaN y, log", []tokendist.Line{{Name: "n", X: ok, Y: []float64{1, 2, math.NaN()}}}, &tokendist.PlotOptions{LogY: true}, []string{"y[2] = NaN"}},
		{"+Inf y", []tokendist.Line{{Name: "i", X: ok, Y: []float64{math.Inf(1), 2, 3}}}, nil, []string{"y[0] = +Inf"}},
		{"-Inf x", []tokendist.Line{{Name: "i", X: []float64{1, 2, math.Inf(-1)}, Y: ok}}, nil, []string{"x[2] = -Inf"}},
		{"max float y", []tokendist.Line{{Name: "m", X: ok, Y: []float64{-1.7e308, 0, 1.7e308}}}, nil, []string{"y[0] = -1.7e+308"}},
		{"max float x", []tokendist.Line{{Name: "m", X: []float64{0, 1, math.MaxFloat64}, Y: ok}}, &tokendist.PlotOptions{LogX: true}, []string{"x[2] = 1.797"}},
		{"just over the limit", []tokendist.Line{{Name: "m", X: ok, Y: []float64{1, 2, 1.0000001e300}}}, nil, []string{"y[2] = 1.0000001e+300"}},
		{"second line", []tokendist.Line{{Name: "a", X: ok, Y: ok}, {Name: "b", X: ok, Y: []float64{1, math.NaN(), 3}}}, nil, []string{`"b"`, "y[1] = NaN"}},
		{"bad legend place", []tokendist.Line{{Name: "a", X: ok, Y: ok}}, &tokendist.PlotOptions{Legend: 99}, []string{"Legend = 99"}},
		// At the limit: accepted, and drawn in bounded time.
		{"limit, linear", []tokendist.Line{{Name: "l", X: []float64{-1e300, 0, 1e300}, Y: []float64{-1e300, 1, 1e300}}}, nil, nil},
		{"limit, log", []tokendist.Line{{Name: "l", X: []float64{1e-300, 1, 1e300}, Y: []float64{1e300, 1, 1e-300}}}, &tokendist.PlotOptions{LogX: true, LogY: true}, nil},
		{"tiny range", []tokendist.Line{{Name: "l", X: []float64{1, math.Nextafter(1, 2)}, Y: []float64{1e300, math.Nextafter(1e300, 0)}}}, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			type res struct {
				svg []byte
				err error
			}
			done := make(chan res, 1)
			go func() {
				svg, err := tokendist.PlotLines(tc.lines, tc.opts)
				done <- res{svg, err}
			}()
			var r res
			select {
			case r = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("PlotLines did not return within 20 s")
			}
			if tc.want == nil {
				require.NoError(t, r.err)
				fndCheckSVG(t, r.svg)
				return
			}
			fndCheckErr(t, r.err, tokendist.ErrBadParameter, tc.want...)
		})
	}
}

func TestPlotTraces(t *testing.T) {
	g := fndMust(tokendist.Ring(12))
	loads, _ := tokendist.PointMass(12, 60, 0)
	r, err := tokendist.Run(context.Background(), g, loads, fndNeighbourExchange{}, &tokendist.RunOptions{SampleEvery: 1})
	require.NoError(t, err)
	svg, err := tokendist.PlotTrace(r, &tokendist.PlotOptions{Title: "ring"})
	require.NoError(t, err)
	fndCheckSVG(t, svg, "ring", "neighbour-exchange", "discrepancy", "step")
	svg, err = tokendist.PlotTraces([]tokendist.Series{{Name: "a", Trace: r.Trace}, {Name: "b", Trace: r.Trace[:1]}, {Name: "empty"}}, &tokendist.PlotOptions{Title: "two"})
	require.NoError(t, err)
	fndCheckSVG(t, svg, "two")
}
