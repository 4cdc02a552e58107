package plot_test

import (
	"fmt"
	"math"
	"regexp"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/plot"
)

// ExamplePlotLines draws a discrepancy that halves each step down to 0 on log-log axes.
// The SVG draws its text as glyph outlines (no font needed to view it) and lists the
// labels in its <desc>: the title, the axis labels, the ticks — powers of 2 written
// plainly, and a 0 row for the zeros in the data — and the legend.
func ExampleLines() {
	lines := []plot.Line{{
		Name: "discrepancy",
		X:    []float64{1, 2, 4, 8, 16, 32, 64},
		Y:    []float64{32, 16, 8, 4, 2, 1, 0},
	}}
	svg, err := plot.Lines(lines, &plot.Options{
		Title: "halving", XLabel: "step", YLabel: "tokens", LogX: true, LogY: true,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s\n", regexp.MustCompile(`<desc>(.*)</desc>`).FindSubmatch(svg)[1])
	fmt.Println(len(regexp.MustCompile(`<text`).FindAll(svg, -1)), "<text> elements")

	// A NaN (or an infinite or huge value) is an error naming it, not a hang.
	lines[0].Y[3] = math.NaN()
	_, err = plot.Lines(lines, nil)
	fmt.Println(err)
	// Output:
	// halving | step | 1 | 2 | 4 | 8 | 16 | 32 | 64 | 0 | 1 | 2 | 4 | 8 | 16 | 32 | tokens | discrepancy
	// 0 <text> elements
	// tokendist: bad parameter: line "discrepancy": y[3] = NaN cannot be plotted (coordinates must be finite numbers of magnitude at most 1e+300)
}

// ExamplePlotTraces compares two traces on a logarithmic discrepancy axis; Trace
// and Traces take the same options as Lines and label empty axes "step" and
// "discrepancy". The falling curves leave the top right corner free, so the automatic
// legend goes there.
func ExampleTraces() {
	var fast, slow tokendist.Trace
	for s := int64(0); s <= 8; s++ {
		fast = append(fast, tokendist.Sample{Step: s, Discrepancy: max(int64(256)>>(2*s), 1)})
		slow = append(slow, tokendist.Sample{Step: s, Discrepancy: int64(256) >> s})
	}
	svg, err := plot.Traces([]plot.Series{{Name: "fast", Trace: fast}, {Name: "slow", Trace: slow}},
		&plot.Options{Title: "two traces", LogY: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s\n", regexp.MustCompile(`<desc>(.*)</desc>`).FindSubmatch(svg)[1])
	// Output:
	// two traces | step | 0 | 4 | 8 | 1 | 10 | 100 | discrepancy | fast | slow
}
