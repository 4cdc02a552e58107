package plot_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/plot"
)

// The tests in this file rasterise plots with rsvg-convert (Debian: librsvg2-bin; .ci/run
// installs it) and check the pixels: they render each SVG twice, as written and with
// its glyphs (class="tdtext") removed, and take the pixels that differ as the
// text's. Text must not
//   - touch the image's border (a clipped label), nor
//   - land on a pixel the text-free image draws with data or axis ink: a saturated
//     colour (data lines and markers) or a dark one (axes, ticks). The grid's mid grey
//     does not count.
// Before text was drawn as outlines, an SVG viewer without the Liberation fonts drew
// the legend's names over its line samples and clipped tick labels at the border
// (issue 12); both fail these checks.

// renderScale is the zoom given to rsvg-convert: 2 px per point.
const renderScale = "2"

// textPath matches one drawn glyph.
var textPath = regexp.MustCompile(`<use [^>]*class="tdtext" ?/>`)

// rsvgConvert returns the path of rsvg-convert, or skips the test.
func rsvgConvert(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("rsvg-convert")
	if err != nil {
		t.Skip("rsvg-convert not found (Debian package librsvg2-bin); skipping the rendering check")
	}
	return bin
}

// rasterise renders svg with rsvg-convert on a white background.
func rasterise(t *testing.T, bin string, svg []byte) *image.RGBA {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--format=png", "--zoom="+renderScale, "--background-color=white")
	cmd.Stdin = bytes.NewReader(svg)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	require.NoError(t, cmd.Run(), "rsvg-convert: %s", stderr.String())
	img, err := png.Decode(&out)
	require.NoError(t, err)
	switch m := img.(type) {
	case *image.RGBA:
		return m
	case *image.NRGBA: // opaque (white background): the same bytes as RGBA
		return &image.RGBA{Pix: m.Pix, Stride: m.Stride, Rect: m.Rect}
	}
	rgba := image.NewRGBA(image.Rect(0, 0, img.Bounds().Dx(), img.Bounds().Dy()))
	draw.Draw(rgba, rgba.Rect, img, img.Bounds().Min, draw.Src)
	return rgba
}

// textReport is what checkRenderedText found.
type textReport struct {
	textPixels int // pixels that text changes
	onInk      int // text pixels over data or axis ink
	onBorder   int // text pixels on the image's outermost rows and columns
}

func (r textReport) String() string {
	return fmt.Sprintf("%d text pixels, %d on data/axis ink, %d on the border", r.textPixels, r.onInk, r.onBorder)
}

// checkRenderedText renders svg with and without its text and compares the two images.
func checkRenderedText(t *testing.T, bin string, svg []byte) textReport {
	t.Helper()
	full := rasterise(t, bin, svg)
	bare := rasterise(t, bin, textPath.ReplaceAll(svg, nil))
	require.Equal(t, full.Rect, bare.Rect)
	return compare(full, bare)
}

// compare counts the pixels where full (with text) differs from bare (without).
func compare(full, bare *image.RGBA) textReport {
	w, h := full.Rect.Dx(), full.Rect.Dy()
	var r textReport
	for y := 0; y < h; y++ {
		row := y * full.Stride
		if bytes.Equal(full.Pix[row:row+4*w], bare.Pix[row:row+4*w]) {
			continue
		}
		for x := 0; x < w; x++ {
			i := y*full.Stride + x*4
			a, b := full.Pix[i:i+3:i+3], bare.Pix[i:i+3:i+3]
			if abs(int(a[0])-int(b[0])) <= 48 && abs(int(a[1])-int(b[1])) <= 48 && abs(int(a[2])-int(b[2])) <= 48 {
				continue
			}
			r.textPixels++
			// Data or axis ink in the text-free image: a saturated colour or a dark
			// pixel (the grid's mid grey is neither).
			hi, lo := max(b[0], b[1], b[2]), min(b[0], b[1], b[2])
			if hi-lo > 60 || hi < 90 {
				r.onInk++
			}
			if x == 0 || y == 0 || x == w-1 || y == h-1 {
				r.onBorder++
			}
		}
	}
	return r
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// requireCleanText fails when any text pixel is on ink or on the border, or when the
// SVG has no text at all (then the check would be vacuous).
func requireCleanText(t *testing.T, bin string, name string, svg []byte) {
	t.Helper()
	require.True(t, textPath.Match(svg), "%s: no text paths to check", name)
	r := checkRenderedText(t, bin, svg)
	t.Logf("%s: %d bytes, %v", name, len(svg), r)
	require.Positive(t, r.textPixels, "%s: text draws nothing", name)
	require.Zero(t, r.onInk, "%s: text over data or axes (%v)", name, r)
	require.Zero(t, r.onBorder, "%s: text clipped at the border (%v)", name, r)
}

// renderCases are plots of every kind Lines, Trace and Traces make.
func renderCases(t *testing.T) map[string][]byte {
	t.Helper()
	x := []float64{0, 1, 2, 4, 8, 16, 32, 64}
	falling := []plot.Line{
		{Name: "THRESHOLD-1 on Hypercube(6)", X: x, Y: []float64{100, 80, 50, 20, 10, 5, 2, 1}},
		{Name: "dimension exchange", X: x, Y: []float64{90, 40, 30, 10, 4, 2, 1, 0}},
	}
	rising := []plot.Line{
		{Name: "time", X: []float64{1, 2, 3, 4, 5, 6}, Y: []float64{1, 3, 9, 27, 81, 243}},
		{Name: "bound 3^h", X: []float64{1, 2, 3, 4, 5, 6}, Y: []float64{3, 9, 27, 81, 243, 729}},
	}
	// Data everywhere: a sawtooth across the whole area, so no corner is free.
	var saw plot.Line
	saw.Name = "sawtooth covering every corner"
	for i := 0; i <= 40; i++ {
		saw.X = append(saw.X, float64(i))
		saw.Y = append(saw.Y, float64(i%2)*1000)
	}
	g := fndMust(tokendist.Ring(12))
	loads, _ := tokendist.PointMass(12, 600, 0)
	run, err := tokendist.Run(context.Background(), g, loads, fndNeighbourExchange{}, &tokendist.RunOptions{SampleEvery: 1})
	require.NoError(t, err)

	out := map[string][]byte{}
	add := func(name string, svg []byte, err error) {
		require.NoError(t, err, name)
		out[name] = svg
	}
	svg, err := plot.Lines(falling, &plot.Options{Title: "linear, points", XLabel: "step", YLabel: "discrepancy", Points: true})
	add("linear, points", svg, err)
	svg, err = plot.Lines(falling, &plot.Options{Title: "log-log with zeros", XLabel: "step", YLabel: "discrepancy", LogX: true, LogY: true})
	add("log-log with zeros", svg, err)
	svg, err = plot.Lines(rising, &plot.Options{Title: "rising, log y", XLabel: "height", YLabel: "steps", LogY: true, Points: true})
	add("rising, log y", svg, err)
	svg, err = plot.Lines(rising, &plot.Options{Title: "rising, linear, small", Width: 9, Height: 6})
	add("rising, linear, small", svg, err)
	svg, err = plot.Lines([]plot.Line{saw}, &plot.Options{Title: "no free corner", XLabel: "x", YLabel: "y"})
	add("no free corner", svg, err)
	// Nine lines over the whole area: the legend goes right of the plot (short names)
	// or below it on a taller image (long names).
	var short, long []plot.Line
	for k := 0; k < 9; k++ {
		short = append(short, plot.Line{Name: fmt.Sprintf("run %d", k), X: saw.X, Y: saw.Y[k:]})
		short[k].X = short[k].X[:len(short[k].Y)]
		long = append(long, plot.Line{Name: fmt.Sprintf("a rather long legend entry, number %d", k), X: short[k].X, Y: short[k].Y})
	}
	svg, err = plot.Lines(short, &plot.Options{Title: "legend right of the plot", XLabel: "x", YLabel: "y"})
	add("legend right", svg, err)
	svg, err = plot.Lines(long, &plot.Options{Title: "legend below the plot", XLabel: "x", YLabel: "y", Points: true})
	add("legend below", svg, err)
	svg, err = plot.Lines([]plot.Line{{Name: "big", X: []float64{1e-6, 1, 1e9}, Y: []float64{2e7, 5, 1e-5}}}, &plot.Options{Title: "wide log ranges", LogX: true, LogY: true})
	add("wide log ranges", svg, err)
	svg, err = plot.Result(run, nil)
	add("Trace, nil options", svg, err)
	svg, err = plot.Traces([]plot.Series{{Name: "neighbour exchange", Trace: run.Trace}, {Name: "first half", Trace: run.Trace[:len(run.Trace)/2]}},
		&plot.Options{Title: "Traces, log y", LogY: true})
	add("Traces, log y", svg, err)
	band := []plot.Line{
		{Name: "mean ± sd", X: []float64{1, 2, 4, 8, 16}, Y: []float64{3, 5, 6, 9, 12}, Lo: []float64{2, 4, 4, 7, 9}, Hi: []float64{4, 6, 8, 11, 15}},
		{Name: "other", X: []float64{1, 2, 4, 8, 16}, Y: []float64{1, 2, 2, 3, 3}, Lo: []float64{1, 1, 2, 2, 2}, Hi: []float64{1, 3, 2, 4, 4}},
	}
	svg, err = plot.Lines(band, &plot.Options{Title: "bands, legend outside", XLabel: "n", YLabel: "y", LogX: true, Points: true, Legend: plot.LegendOutside})
	add("bands, legend outside", svg, err)
	svg, err = plot.Lines(band, &plot.Options{Title: "error bars", XLabel: "n", YLabel: "y", Spread: plot.SpreadBars, Legend: plot.LegendOutside})
	add("error bars", svg, err)
	svg, err = plot.Facets([]plot.Panel{{Title: "left", Lines: band}, {Title: "right", Lines: band[:1]}, {Title: "third", Lines: band[1:]}},
		&plot.Options{Title: "facets", XLabel: "n", YLabel: "y", LogX: true, Points: true}, "svg")
	add("facets", svg, err)
	return out
}

// TestPlotRendersWithoutFonts renders every kind of plot and checks that no text
// overlaps data or axes or is clipped. It also shows that the check can fail: a legend
// forced into the corner the data pass through must be reported.
//
// The race detector slows the PNG decoding about fivefold and plotting has no
// concurrency, so -race skips it; .ci/run runs it on its own without -race.
func TestPlotRendersWithoutFonts(t *testing.T) {
	if raceEnabled {
		t.Skip("-race: not rasterising (.ci/run runs this test without -race)")
	}
	bin := rsvgConvert(t)
	for name, svg := range renderCases(t) {
		t.Run(name, func(t *testing.T) {
			requireCleanText(t, bin, name, svg)
		})
	}
	t.Run("control: legend forced over data", func(t *testing.T) {
		var lines []plot.Line
		for k := 0; k < 3; k++ {
			l := plot.Line{Name: fmt.Sprintf("line number %d", k)}
			for i := 0; i <= 20; i++ {
				l.X = append(l.X, float64(i))
				l.Y = append(l.Y, float64(100-5*i+k*3))
			}
			lines = append(lines, l)
		}
		svg, err := plot.Lines(lines, &plot.Options{Legend: plot.LegendTopLeft})
		require.NoError(t, err)
		r := checkRenderedText(t, bin, svg)
		t.Logf("forced legend: %v", r)
		require.Greater(t, r.onInk, 20, "the check missed a legend drawn over the data")
	})
}

// TestExamplePlotsRender runs every example under examples/ with -quick and checks
// every SVG it writes as TestPlotRendersWithoutFonts does. It takes about 20 s of CPU
// (it builds and runs the examples), so -short and -race skip it; .ci/run runs it on its
// own without -race.
func TestExamplePlotsRender(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not running the examples")
	}
	if raceEnabled {
		t.Skip("-race: not running the examples (.ci/run runs this test without -race)")
	}
	bin := rsvgConvert(t)
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found; cannot run the examples")
	}
	// The examples live at the module root, one folder above this package.
	mains, err := filepath.Glob(filepath.Join("..", "examples", "*", "main.go"))
	require.NoError(t, err)
	require.NotEmpty(t, mains)
	total := 0
	for _, m := range mains {
		dir := filepath.Dir(m)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			out := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, gobin, "run", "./examples/"+filepath.Base(dir), "-quick", "-out", out)
			cmd.Dir = ".."
			var log bytes.Buffer
			cmd.Stdout, cmd.Stderr = &log, &log
			require.NoError(t, cmd.Run(), "%s", tail(log.String(), 2000))
			svgs, err := filepath.Glob(filepath.Join(out, "*.svg"))
			require.NoError(t, err)
			for _, f := range svgs {
				svg, err := os.ReadFile(f)
				require.NoError(t, err)
				requireCleanText(t, bin, filepath.Base(dir)+"/"+filepath.Base(f), svg)
			}
			total += len(svgs)
		})
	}
	t.Logf("%d example SVGs checked", total)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return strings.TrimSpace(s)
}
