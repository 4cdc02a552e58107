package plot_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist/plot"
)

// bandShade returns the most frequent colour of img that is neither white nor grey:
// on bandLines' plot, where the band covers most of the data area, the band's shade.
func bandShade(t *testing.T, img image.Image) color.NRGBA {
	t.Helper()
	counts := map[color.NRGBA]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			if c.R == c.G && c.G == c.B { // white, the grid's greys, black ink
				continue
			}
			counts[c]++
		}
	}
	var best color.NRGBA
	for c, n := range counts {
		if n > counts[best] {
			best = c
		}
	}
	require.NotZero(t, counts[best], "no coloured pixel")
	return best
}

// bandLines is one line in the middle of a wide band.
func bandLines() []plot.Line {
	var l plot.Line
	l.Name = "mean ± sd"
	for x := range 11 {
		l.X = append(l.X, float64(x))
		l.Y = append(l.Y, 5)
		l.Lo = append(l.Lo, 1)
		l.Hi = append(l.Hi, 9)
	}
	return []plot.Line{l}
}

// runTool runs a rasteriser with a time limit and returns its standard output.
func runTool(t *testing.T, name string, stdin []byte, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	require.NoError(t, cmd.Run(), "%s: %s", name, stderr.String())
	return out.Bytes()
}

// TestBandShadeSameInEveryFormat: a spread band has the same shade in PNG (the PNG
// backend), PDF (through pdftoppm) and SVG (through rsvg-convert), and that shade is the
// line's colour at a fifth of its opacity over white. gonum's PDF backend read a
// colour's premultiplied components as the straight colour and applied the opacity
// again: the band came out about five times too dark (issue 35).
func TestBandShadeSameInEveryFormat(t *testing.T) {
	for _, tool := range []string{"pdftoppm", "rsvg-convert"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found (Debian packages poppler-utils, librsvg2-bin; .ci/run installs them)", tool)
		}
	}
	opts := &plot.Options{Legend: plot.LegendHidden}
	shades := map[string]color.NRGBA{}

	pngBytes, err := plot.LinesAs(bandLines(), opts, "png")
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(pngBytes))
	require.NoError(t, err)
	shades["png"] = bandShade(t, img)

	pdfBytes, err := plot.LinesAs(bandLines(), opts, "pdf")
	require.NoError(t, err)
	dir := t.TempDir()
	pdfPath := filepath.Join(dir, "band.pdf")
	require.NoError(t, os.WriteFile(pdfPath, pdfBytes, 0o644))
	runTool(t, "pdftoppm", nil, "-png", "-r", "96", "-singlefile", pdfPath, filepath.Join(dir, "band"))
	raster, err := os.ReadFile(filepath.Join(dir, "band.png"))
	require.NoError(t, err)
	img, err = png.Decode(bytes.NewReader(raster))
	require.NoError(t, err)
	shades["pdf"] = bandShade(t, img)

	svgBytes, err := plot.LinesAs(bandLines(), opts, "svg")
	require.NoError(t, err)
	img, err = png.Decode(bytes.NewReader(runTool(t, "rsvg-convert", svgBytes, "--format=png", "--background-color=white")))
	require.NoError(t, err)
	shades["svg"] = bandShade(t, img)

	// The line's colour (gonum's plotutil.Color(0)) at opacity 51/255 over white.
	line := color.NRGBA{R: 0xf1, G: 0x5a, B: 0x60, A: 0xff}
	blend := func(c uint8) uint8 { return uint8((int(c)*51 + 255*(255-51) + 127) / 255) }
	want := color.NRGBA{R: blend(line.R), G: blend(line.G), B: blend(line.B), A: 0xff}
	for format, got := range shades {
		for i, pair := range [][2]uint8{{got.R, want.R}, {got.G, want.G}, {got.B, want.B}} {
			d := int(pair[0]) - int(pair[1])
			require.LessOrEqualf(t, max(d, -d), 3, "%s band shade %v, want %v (channel %d)", format, got, want, i)
		}
	}
	t.Logf("band shades: %v (want %v)", shades, want)
}
