package plot_test

import (
	"context"
	"encoding/xml"
	"io"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/plot"
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
	lines := []plot.Line{
		{Name: "alpha", X: x, Y: []float64{8, 4, 2, 1}},
		{Name: "beta", X: x, Y: []float64{5, 5, 3, 3}},
	}
	svg, err := plot.Lines(lines, &plot.Options{Title: "Title here", XLabel: "steps", YLabel: "disc", Points: true})
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
	svg, err = plot.Lines(lines, nil)
	require.NoError(t, err)
	fndCheckSVG(t, svg, `width="453.54pt"`, `height="283.46pt"`)
	svg, err = plot.Lines(lines, &plot.Options{Width: 8, Height: 5})
	require.NoError(t, err)
	fndCheckSVG(t, svg, `width="226.77pt"`, `height="141.73pt"`)

	// Many lines cycle through colours and dashes without error.
	var many []plot.Line
	for i := 0; i < 20; i++ {
		many = append(many, plot.Line{Name: strings.Repeat("l", i+1), X: x, Y: []float64{float64(i), 1, 2, 3}})
	}
	svg, err = plot.Lines(many, &plot.Options{LogX: true})
	require.NoError(t, err)
	fndCheckSVG(t, svg)
}

// TestPlotLinesDegenerate covers inputs that must not panic: no lines, empty lines,
// constant data on a log axis (a discrepancy stuck at 1), only non-positive values on a
// log axis, negative values and zeros on log axes.
func TestPlotLinesDegenerate(t *testing.T) {
	cases := []struct {
		name  string
		lines []plot.Line
		opts  *plot.Options
	}{
		{"no lines", nil, nil},
		{"no lines, log", nil, &plot.Options{LogX: true, LogY: true}},
		{"empty line", []plot.Line{{Name: "e"}}, nil},
		{"single point", []plot.Line{{Name: "p", X: []float64{3}, Y: []float64{7}}}, nil},
		{"single point, log", []plot.Line{{Name: "p", X: []float64{3}, Y: []float64{7}}}, &plot.Options{LogX: true, LogY: true}},
		{"constant, logY", []plot.Line{{Name: "c", X: []float64{0, 1, 2}, Y: []float64{1, 1, 1}}}, &plot.Options{LogY: true}},
		{"constant, logX", []plot.Line{{Name: "c", X: []float64{5, 5}, Y: []float64{1, 2}}}, &plot.Options{LogX: true}},
		{"all zero, logY", []plot.Line{{Name: "z", X: []float64{0, 1, 2}, Y: []float64{0, 0, 0}}}, &plot.Options{LogY: true}},
		{"zeros then one, logY", []plot.Line{{Name: "z", X: []float64{0, 1, 2}, Y: []float64{0, 1, 0}}}, &plot.Options{LogY: true}},
		{"negative on log axes", []plot.Line{{Name: "n", X: []float64{-1, 1, 2}, Y: []float64{4, -3, 0}}}, &plot.Options{LogX: true, LogY: true}},
		{"only zeros, log", []plot.Line{{Name: "z", X: []float64{0, 0}, Y: []float64{0, 0}}}, &plot.Options{LogX: true, LogY: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			svg, err := plot.Lines(tc.lines, tc.opts)
			require.NoError(t, err)
			fndCheckSVG(t, svg)
		})
	}
}

// TestPlotLinesBadInput: NaN, infinite and huge coordinates make gonum/plot's tick code
// loop forever; Lines must return an error naming the value instead, quickly. Each
// call runs under a timeout so a regression fails rather than hangs.
func TestPlotLinesBadInput(t *testing.T) {
	ok := []float64{1, 2, 3}
	cases := []struct {
		name  string
		lines []plot.Line
		opts  *plot.Options
		want  []string // substrings of the error; nil: no error
	}{
		{"short y", []plot.Line{{Name: "ok", X: []float64{1}, Y: []float64{1}}, {Name: "short", X: []float64{1, 2}, Y: []float64{1}}}, nil,
			[]string{`"short"`, "2 x values", "1 y values"}},
		{"NaN x", []plot.Line{{Name: "n", X: []float64{1, math.NaN(), 3}, Y: ok}}, nil, []string{`"n"`, "x[1] = NaN"}},
		{"NaN y, log", []plot.Line{{Name: "n", X: ok, Y: []float64{1, 2, math.NaN()}}}, &plot.Options{LogY: true}, []string{"y[2] = NaN"}},
		{"+Inf y", []plot.Line{{Name: "i", X: ok, Y: []float64{math.Inf(1), 2, 3}}}, nil, []string{"y[0] = +Inf"}},
		{"-Inf x", []plot.Line{{Name: "i", X: []float64{1, 2, math.Inf(-1)}, Y: ok}}, nil, []string{"x[2] = -Inf"}},
		{"max float y", []plot.Line{{Name: "m", X: ok, Y: []float64{-1.7e308, 0, 1.7e308}}}, nil, []string{"y[0] = -1.7e+308"}},
		{"max float x", []plot.Line{{Name: "m", X: []float64{0, 1, math.MaxFloat64}, Y: ok}}, &plot.Options{LogX: true}, []string{"x[2] = 1.797"}},
		{"just over the limit", []plot.Line{{Name: "m", X: ok, Y: []float64{1, 2, 1.0000001e300}}}, nil, []string{"y[2] = 1.0000001e+300"}},
		{"second line", []plot.Line{{Name: "a", X: ok, Y: ok}, {Name: "b", X: ok, Y: []float64{1, math.NaN(), 3}}}, nil, []string{`"b"`, "y[1] = NaN"}},
		{"bad legend place", []plot.Line{{Name: "a", X: ok, Y: ok}}, &plot.Options{Legend: 99}, []string{"Legend = 99"}},
		// At the limit: accepted, and drawn in bounded time.
		{"limit, linear", []plot.Line{{Name: "l", X: []float64{-1e300, 0, 1e300}, Y: []float64{-1e300, 1, 1e300}}}, nil, nil},
		{"limit, log", []plot.Line{{Name: "l", X: []float64{1e-300, 1, 1e300}, Y: []float64{1e300, 1, 1e-300}}}, &plot.Options{LogX: true, LogY: true}, nil},
		{"tiny range", []plot.Line{{Name: "l", X: []float64{1, math.Nextafter(1, 2)}, Y: []float64{1e300, math.Nextafter(1e300, 0)}}}, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			type res struct {
				svg []byte
				err error
			}
			done := make(chan res, 1)
			go func() {
				svg, err := plot.Lines(tc.lines, tc.opts)
				done <- res{svg, err}
			}()
			var r res
			select {
			case r = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("Lines did not return within 20 s")
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
	svg, err := plot.Result(r, &plot.Options{Title: "ring"})
	require.NoError(t, err)
	fndCheckSVG(t, svg, "ring", "neighbour-exchange", "discrepancy", "step")
	svg, err = plot.Traces([]plot.Series{{Name: "a", Trace: r.Trace}, {Name: "b", Trace: r.Trace[:1]}, {Name: "empty"}}, &plot.Options{Title: "two"})
	require.NoError(t, err)
	fndCheckSVG(t, svg, "two")
}

// TestConstantSeriesRange: a line whose values are all equal gets an axis from 0 to
// twice its value, not gonum's [v−1, v+1] (ticks 2999, 3000, 3001 for a constant 3000,
// issue 35); the same for a constant x and for negative values.
func TestConstantSeriesRange(t *testing.T) {
	ticks := func(svg []byte) []string {
		m := regexp.MustCompile(`<desc>(.*)</desc>`).FindSubmatch(svg)
		require.NotNil(t, m)
		return strings.Split(string(m[1]), " | ")
	}
	for _, c := range []struct {
		name      string
		y         float64
		want, not []string
	}{
		{"positive", 3000, []string{"0", "6000"}, []string{"2999", "3001"}},
		{"negative", -40, []string{"-80", "0"}, []string{"-41", "-39"}},
	} {
		svg, err := plot.Lines([]plot.Line{{Name: "flat", X: []float64{1, 2, 3}, Y: []float64{c.y, c.y, c.y}}}, &plot.Options{Legend: plot.LegendHidden})
		require.NoError(t, err)
		d := ticks(svg)
		for _, w := range c.want {
			require.Contains(t, d, w, c.name)
		}
		for _, w := range c.not {
			require.NotContains(t, d, w, c.name)
		}
	}
	svg, err := plot.Lines([]plot.Line{{Name: "one x", X: []float64{7, 7}, Y: []float64{1, 2}}}, &plot.Options{Legend: plot.LegendHidden})
	require.NoError(t, err)
	require.Subset(t, ticks(svg), []string{"0", "12"})
	require.NotContains(t, ticks(svg), "6.5")
}
