package plot

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	gplot "gonum.org/v1/plot"
)

func labels(ticks []gplot.Tick) []string {
	var out []string
	for _, t := range ticks {
		if t.Label != "" {
			out = append(out, t.Label)
		}
	}
	return out
}

func TestPlotFormatTick(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {1, "1"}, {10, "10"}, {64, "64"}, {1000, "1000"}, {1e6, "1000000"},
		{0.5, "0.5"}, {0.25, "0.25"}, {0.125, "0.125"}, {1e-4, "0.0001"},
		{0.1 + 0.2, "0.3"}, {-2.5, "-2.5"}, {1e7, "1e7"}, {2.5e-8, "2.5e-8"}, {-3e12, "-3e12"},
	} {
		require.Equal(t, tc.want, formatTick(tc.v), "%v", tc.v)
	}
}

// TestPlotLogTicks: logarithmic axes get powers of 2 or 10 written plainly, a 0 row
// when the data hold zeros, and never an exponent like "1e+01".
func TestPlotLogTicks(t *testing.T) {
	cases := []struct {
		name   string
		lo, hi float64
		zeros  bool
		want   []string
	}{
		{"1..64: powers of 2", 1, 64, false, []string{"1", "2", "4", "8", "16", "32", "64"}},
		{"3..100: powers of 2 inside", 3, 100, false, []string{"4", "8", "16", "32", "64"}},
		{"0.25..8", 0.25, 8, false, []string{"0.25", "0.5", "1", "2", "4", "8"}},
		{"10..1000: decades", 10, 1000, false, []string{"10", "100", "1000"}},
		{"1..100: decades", 1, 100, false, []string{"1", "10", "100"}},
		{"30..2000: two decades and 2, 5", 30, 2000, false, []string{"50", "100", "200", "500", "1000", "2000"}},
		{"1..10000: decades", 1, 1e4, false, []string{"1", "10", "100", "1000", "10000"}},
		{"1..64 with zeros", 1, 64, true, []string{"0", "1", "2", "4", "8", "16", "32", "64"}},
		{"10..1e4 with zeros", 10, 1e4, true, []string{"0", "10", "100", "1000", "10000"}},
		{"1e-3..0.1: decades", 1e-3, 0.1, false, []string{"0.001", "0.01", "0.1"}},
		{"100..150: narrow", 100, 150, false, []string{"100", "125", "150"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plan := planLogTicks(tc.lo, tc.hi, tc.zeros)
			min := tc.lo
			if tc.zeros {
				require.Positive(t, plan.zero)
				require.Less(t, plan.zero, tc.lo)
				min = plan.zero
			}
			got := labels(plan.Ticks(min, tc.hi))
			require.Equal(t, tc.want, got)
		})
	}
	// Property: over random ranges, labels are plain, inside the range, and there are
	// at least two of them.
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		lo := math.Pow(10, rng.Float64()*40-20)
		hi := lo * math.Pow(10, rng.Float64()*30+0.05)
		zeros := rng.IntN(2) == 0
		plan := planLogTicks(lo, hi, zeros)
		min := lo
		if zeros {
			min = plan.zero
		}
		ticks := plan.Ticks(min, hi)
		ls := labels(ticks)
		require.GreaterOrEqual(t, len(ls), 2, "[%g, %g]", lo, hi)
		require.LessOrEqual(t, len(ls), 12, "[%g, %g]: %v", lo, hi, ls)
		for _, tk := range ticks {
			require.False(t, strings.Contains(tk.Label, "+"), "[%g, %g]: %q", lo, hi, tk.Label)
			require.True(t, tk.Value >= min*(1-1e-9) && tk.Value <= hi*(1+1e-9), "[%g, %g]: tick %g", lo, hi, tk.Value)
		}
	}
}

// TestPlotLinTicks: a linear axis that reaches 0 has a labelled 0 tick.
func TestPlotLinTicks(t *testing.T) {
	for _, r := range [][2]float64{{0, 37}, {0, 1}, {-3, 17}, {-1000, 0}, {0, 1e9}, {-0.3, 0.7}} {
		ls := labels(linTicks{}.Ticks(r[0], r[1]))
		require.Contains(t, ls, "0", "%v: %v", r, ls)
		for _, l := range ls {
			require.NotContains(t, l, "e+", "%v", r)
		}
	}
	require.NotContains(t, labels(linTicks{}.Ticks(5, 37)), "0")
}

// TestPlotLegendPlacement: with LegendAuto the legend box covers no data, for data in
// every corner but one, data everywhere (then the legend moves out of the data area
// or the axis grows a free band), and on log axes; explicit places are kept.
func TestPlotLegendPlacement(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	mk := func(ys ...float64) Line { return Line{Name: "a line with a long name", X: xs, Y: ys} }
	falling := mk(100, 60, 30, 15, 8, 4, 2, 1)
	rising := mk(1, 2, 4, 8, 15, 30, 60, 100)
	valley := mk(100, 50, 10, 1, 1, 10, 50, 100)
	hill := mk(1, 50, 90, 100, 100, 90, 50, 1)
	zigzag := mk(0, 100, 0, 100, 0, 100, 0, 100)
	var many, wide []Line
	for i := 0; i < 9; i++ {
		many = append(many, Line{Name: "entry " + strings.Repeat("x", i), X: xs, Y: []float64{0, 100, 0, 100, 0, 100, 0, float64(i)}})
		wide = append(wide, Line{Name: "a rather long legend entry number " + strings.Repeat("x", i), X: xs, Y: []float64{0, 100, 0, 100, 0, 100, 0, float64(i)}})
	}
	cases := []struct {
		name  string
		lines []Line
		o     Options
		want  LegendPlace // 0: any place that covers nothing
		how   string      // "corner", "band" (y axis raised), "right" or "grown"
	}{
		{"falling", []Line{falling}, Options{}, LegendTopRight, "corner"},
		{"rising", []Line{rising}, Options{}, LegendTopLeft, "corner"},
		{"valley", []Line{valley}, Options{}, LegendTopRight, "band"},
		{"valley, short name", []Line{{Name: "v", X: xs, Y: valley.Y}}, Options{}, LegendBottomRight, "corner"},
		{"hill", []Line{hill}, Options{Points: true}, 0, ""},
		{"zigzag", []Line{zigzag}, Options{}, 0, "band"},
		{"zigzag, log y", []Line{mk(1, 100, 1, 100, 1, 100, 1, 100)}, Options{LogY: true}, 0, "band"},
		{"nine zigzags", many, Options{}, 0, "right"},
		{"nine wide zigzags", wide, Options{}, 0, "grown"},
		{"nine wide zigzags, tall image", wide, Options{Width: 16, Height: 30}, LegendTopRight, "band"},
		{"rising, log-log", []Line{rising}, Options{LogX: true, LogY: true}, LegendTopLeft, "corner"},
		{"explicit bottom left", []Line{falling}, Options{Legend: LegendBottomLeft}, LegendBottomLeft, ""},
		{"explicit top right over data", []Line{rising}, Options{Legend: LegendTopRight}, LegendTopRight, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			yMax := 0.0
			for _, l := range tc.lines {
				for _, y := range l.Y {
					yMax = math.Max(yMax, y)
				}
			}
			p, leg, c, area, err := layoutPlot(tc.lines, tc.o)
			require.NoError(t, err)
			require.NotNil(t, leg)
			_, h := c.Size()
			wantH := tc.o.Height
			if wantH == 0 {
				wantH = 10
			}
			how := "corner"
			switch {
			case float64(h) > wantH*28.3465+0.01:
				how = "grown"
			case leg.strip != nil:
				how = "right"
			case p.Y.Max > yMax:
				how = "band"
			}
			t.Logf("place %d, %s", leg.place, how)
			if tc.how != "" {
				require.Equal(t, tc.how, how)
			}
			if tc.want != 0 {
				require.Equal(t, tc.want, leg.place)
			}
			if tc.o.Legend != LegendAuto {
				return
			}
			if leg.strip != nil {
				// Outside the data area: the strip must not overlap it.
				dc := p.DataCanvas(area)
				s := *leg.strip
				box := leg.box(s, leg.place)
				overlapX := box.Min.X < dc.Max.X && dc.Min.X < box.Max.X
				overlapY := box.Min.Y < dc.Max.Y && dc.Min.Y < box.Max.Y
				require.False(t, overlapX && overlapY, "legend box %v overlaps the data area %v", box, dc.Rectangle)
				return
			}
			dc := p.DataCanvas(area)
			require.Zero(t, leg.cover(p, dc, leg.box(dc, leg.place)), "legend at %d covers data", leg.place)
		})
	}
}

func TestPlotClipLength(t *testing.T) {
	for _, tc := range []struct {
		ax, ay, bx, by, want float64
	}{
		{-1, 0.5, 2, 0.5, 1}, // horizontal through
		{0.5, -1, 0.5, 2, 1}, // vertical through
		{2, 2, 3, 3, 0},      // outside
		{0.2, 0.2, 0.4, 0.4, math.Hypot(0.2, 0.2)},
		{-1, -1, 2, 2, math.Sqrt2}, // diagonal
		{0.5, 0.5, 0.5, 0.5, 0},    // a point
	} {
		require.InDelta(t, tc.want, clipLength(tc.ax, tc.ay, tc.bx, tc.by, 0, 0, 1, 1), 1e-12, "%v", tc)
	}
}

// TestTruncText: long, control-laden and invalid texts are cut to maxTextRunes runes
// and cleaned; short clean ones are unchanged.
func TestTruncText(t *testing.T) {
	long := strings.Repeat("é", 3*maxTextRunes)
	cases := []struct{ in, want string }{
		{"", ""},
		{"plain title", "plain title"},
		{strings.Repeat("a", maxTextRunes), strings.Repeat("a", maxTextRunes)},
		{strings.Repeat("a", maxTextRunes+1), strings.Repeat("a", maxTextRunes-1) + "…"},
		{long, strings.Repeat("é", maxTextRunes-1) + "…"},
		{"a\nb\x00c", "a b c"},
		{"bad\xffutf8", "bad utf8"},
	}
	for _, c := range cases {
		got := truncText(c.in)
		require.Equal(t, c.want, got, "truncText(%.40q)", c.in)
		require.LessOrEqual(t, utf8.RuneCountInString(got), maxTextRunes)
	}
}

// TestHugeTitleFast: a 1 MiB title and legend name render promptly into a small SVG.
func TestHugeTitleFast(t *testing.T) {
	huge := strings.Repeat("x", 1<<20)
	start := time.Now()
	svg, err := Lines([]Line{{Name: huge, X: []float64{0, 1}, Y: []float64{1, 2}}}, &Options{Title: huge, XLabel: huge, YLabel: huge})
	require.NoError(t, err)
	require.Less(t, time.Since(start), 20*time.Second)
	require.Less(t, len(svg), 1<<20, "the SVG holds the cut texts, not the 1 MiB ones")
}

// TestStyleTable: without groups each name has its own colour (dashed after the
// seventh) and keeps it across panels; with groups (two --by columns) a group shares a
// colour and its members differ by dash and marker (issue 35: with two --by columns
// every series had an unrelated colour).
func TestStyleTable(t *testing.T) {
	var plain []Line
	for k := range 9 {
		plain = append(plain, Line{Name: fmt.Sprint("s", k)})
	}
	st := styleTable(plain, []Line{{Name: "s3"}, {Name: "new"}})
	for k := range 9 {
		require.Equal(t, lineStyle{color: k, dash: k / 7, shape: k}, st[fmt.Sprint("s", k)])
	}
	require.Equal(t, 9, st["new"].color)

	grouped := []Line{{Name: "rsw, ring", Group: "rsw"}, {Name: "rsw, torus", Group: "rsw"}, {Name: "fgs, ring", Group: "fgs"}, {Name: "fgs, torus", Group: "fgs"}}
	st = styleTable(grouped[2:], grouped) // a second panel in another order
	require.Equal(t, lineStyle{color: 0, dash: 0, shape: 0}, st["fgs, ring"])
	require.Equal(t, lineStyle{color: 0, dash: 1, shape: 1}, st["fgs, torus"])
	require.Equal(t, lineStyle{color: 1, dash: 0, shape: 0}, st["rsw, ring"])
	require.Equal(t, lineStyle{color: 1, dash: 1, shape: 1}, st["rsw, torus"])
}

// TestLinRange: one value v ≠ 0 becomes [0, 2v] (or [2v, 0]), never an inverted range;
// zero, a real range and an axis without data are left alone.
func TestLinRange(t *testing.T) {
	for _, c := range []struct{ min, max, wantMin, wantMax float64 }{
		{3000, 3000, 0, 6000}, {-40, -40, -80, 0}, {0.5, 0.5, 0, 1},
		{0, 0, 0, 0}, {1, 2, 1, 2}, {math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)},
	} {
		a := gplot.Axis{Min: c.min, Max: c.max}
		linRange(&a)
		require.Equal(t, [2]float64{c.wantMin, c.wantMax}, [2]float64{a.Min, a.Max}, "%v..%v", c.min, c.max)
	}
}
