package experiment

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist/registry"
)

// TestFigureOptions: the y label names the statistic and the band in every layout
// (a faceted plot dropped the band), and markers are drawn for runs but not for the
// samples of traces (issue 35).
func TestFigureOptions(t *testing.T) {
	for _, c := range []struct {
		o      PlotOptions
		ylabel string
		points bool
	}{
		{PlotOptions{X: "n", Y: "discrepancy"}, "discrepancy (mean over seeds)", true},
		{PlotOptions{X: "n", Y: "discrepancy", Band: "ci"}, "discrepancy (mean over seeds, 95% CI)", true},
		{PlotOptions{X: "n", Y: "moved", Band: "quartiles", Facet: "network"}, "moved (median, quartiles)", true},
		{PlotOptions{X: "n", Y: "moved", Band: "sd", Facet: "network"}, "moved (mean, ± sd)", true},
		{PlotOptions{X: "step", Y: "discrepancy", Traces: true, Band: "minmax"}, "discrepancy (mean over seeds, min to max)", false},
	} {
		po := figureOptions(c.o)
		require.Equal(t, c.ylabel, po.YLabel, "%+v", c.o)
		require.Equal(t, c.o.X, po.XLabel)
		require.Equal(t, c.points, po.Points, "%+v", c.o)
	}
}

// TestPlotPanelsNaturalOrder: the panels of a faceted plot and its legend entries come
// in natural order (n = 16 before n = 128, seed = 2 before seed = 10), where text order
// put 128 before 16.
func TestPlotPanelsNaturalOrder(t *testing.T) {
	d := sweepText(t, `name: order
networks:
  - name: ring
    n: [128, 16, 8]
loads:
  - name: random-range
    hi: 9
algorithms: [randomized-diffusion]
stop:
  max_steps: 3
seeds: 11
`)
	svg, err := Plot(d, PlotOptions{X: "seed", By: "seed", Facet: "n"})
	require.NoError(t, err)
	desc := string(svg[bytes.Index(svg, []byte("<desc>"))+len("<desc>") : bytes.Index(svg, []byte("</desc>"))])
	for _, prefix := range []string{"n = ", "seed = "} {
		var labels []string
		for _, f := range strings.Split(desc, " | ") {
			if strings.HasPrefix(f, prefix) && !slices.Contains(labels, f) {
				labels = append(labels, f)
			}
		}
		require.GreaterOrEqual(t, len(labels), 3, desc)
		require.True(t, slices.IsSortedFunc(labels, naturalCompare), "%v", labels)
	}
}

// TestPlotTwoByColumnsGrouped: with --by algorithm,network_name the lines of one
// algorithm share a colour and differ by dash: 2 algorithms × 2 networks draw in 2
// data colours, where every series had a colour of its own (issue 35).
func TestPlotTwoByColumnsGrouped(t *testing.T) {
	db, _ := fixtureDB(t)
	d, err := openExisting(db)
	require.NoError(t, err)
	defer d.Close()
	colours := func(by string) int {
		svg, err := Plot(d, PlotOptions{By: by, Where: "algorithm != 'discrepancy-1'"})
		require.NoError(t, err)
		seen := map[string]bool{}
		for _, m := range regexp.MustCompile(`stroke:(#[0-9A-Fa-f]{6})`).FindAllStringSubmatch(string(svg), -1) {
			c := strings.ToLower(m[1])
			if c[1:3] != c[3:5] || c[3:5] != c[5:7] { // not black, white or a grey
				seen[c] = true
			}
		}
		return len(seen)
	}
	require.Equal(t, 2, colours("algorithm,network_name"))
	require.Equal(t, 4, colours("network"), "one colour per network without groups")
}

// TestHTMLTracesWithoutMarkers: the HTML page's traces figure draws the samples as
// curves; its run figures keep their markers (issue 35: a marker on every sample).
func TestHTMLTracesWithoutMarkers(t *testing.T) {
	db, _ := fixtureDB(t)
	d, err := openExisting(db)
	require.NoError(t, err)
	defer d.Close()
	page, err := HTMLReport(d, HTMLOptions{})
	require.NoError(t, err)
	figures := strings.Split(string(page), "<figure ")[1:]
	require.GreaterOrEqual(t, len(figures), 3)
	marker := regexp.MustCompile(`stroke:#(F15A60|7AC36A);stroke-width`) // plotutil's first colours, as glyph outlines
	for _, f := range figures {
		traces := strings.Contains(f, "stored traces")
		require.Equal(t, !traces, marker.MatchString(f), "markers in %.80q", f[strings.Index(f, "<figcaption>"):])
	}
}

// TestRoundsStored: runs store Result.Rounds (steps/χ for dimension exchange, steps for
// a diffusion), traces give each sample its round, and a traces plot's default x axis
// is the round, the unit algorithms compare by (issue 35).
func TestRoundsStored(t *testing.T) {
	d := sweepText(t, `name: rounds
networks:
  - name: kary-tree
    height: 3
loads:
  - name: random-range
    hi: 30
algorithms: [threshold-1, randomized-diffusion]
stop:
  max_steps: 12
  no_stability: true
seeds: 2
record:
  trace: true
  sample_every: 3
`)
	runs, err := ExportTable(d, "")
	require.NoError(t, err)
	col := index(runs.Cols)
	for _, r := range runs.Rows {
		steps, rounds := r[col["steps"]].(int64), r[col["rounds"]].(float64)
		want := float64(steps) // a diffusion step is a round
		if r[col["algorithm"]] == "threshold-1" {
			want = float64(steps) / 3 // a binary tree has χ = 3 colours, a step is one colour's matching
		}
		require.Equal(t, int64(12), steps)
		require.Equal(t, want, rounds, "%v", r)
	}
	traces, err := TracesTable(d, "")
	require.NoError(t, err)
	tc := index(traces.Cols)
	require.Contains(t, tc, "round")
	for _, r := range traces.Rows {
		step, round := r[tc["step"]].(int64), r[tc["round"]].(float64)
		want := float64(step)
		if r[tc["algorithm"]] == "threshold-1" {
			want = float64(step) / 3
		}
		require.InDelta(t, want, round, 1e-12, "%v", r)
	}
	require.Equal(t, "round", traceAxis(traces))
	svg, err := Plot(d, PlotOptions{Traces: true})
	require.NoError(t, err)
	require.Contains(t, string(svg), "<desc>round |", "the x label is the round")
}

// sweepText sweeps the experiment file text into a database in a temporary directory
// and returns it opened read-only (closed when the test ends).
func sweepText(t *testing.T, text string) *DB {
	t.Helper()
	dir := t.TempDir()
	file, db := filepath.Join(dir, "exp.yaml"), filepath.Join(dir, "exp.db")
	require.NoError(t, os.WriteFile(file, []byte(text), 0o644))
	var out, errb bytes.Buffer
	require.Equal(t, ExitOK, Main(registry.New(), []string{"sweep", "--progress", "none", "--db", db, file}, &out, &errb), errb.String())
	d, err := openExisting(db)
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	return d
}

// TestCompactSummary: the HTML page's summary keeps the group and count columns and
// shows each described value in one cell, "mean [95% CI] min–max", so that the table
// fits the page (ten statistics per value ran off it, issue 35).
func TestCompactSummary(t *testing.T) {
	db, _ := fixtureDB(t)
	d, err := openExisting(db)
	require.NoError(t, err)
	defer d.Close()
	runs, err := ExportTable(d, "")
	require.NoError(t, err)
	sum, err := Summary(runs, nil, nil)
	require.NoError(t, err)
	c := compactSummary(sum, 3)
	require.Equal(t, []string{"experiment", "network", "n", "loads", "algorithm", "runs"}, c.Cols[:6])
	require.Subset(t, c.Cols, []string{"discrepancy", "steps", "rounds", "moved", "m.lambda_max"})
	for _, col := range c.Cols {
		require.False(t, strings.HasSuffix(col, "_sd") || strings.HasSuffix(col, "_q1"), col)
	}
	cell := regexp.MustCompile(`^(–|-?[0-9.e+]+( \[-?[0-9.e+-]+, -?[0-9.e+-]+\])? -?[0-9.e+-]+–-?[0-9.e+-]+)$`)
	idx := index(c.Cols)
	filled := 0
	for _, r := range c.Rows {
		for _, v := range []string{"discrepancy", "steps", "rounds", "moved"} {
			s := r[idx[v]].(string)
			require.Regexp(t, cell, s, v)
			if s != "–" {
				filled++
			}
		}
	}
	require.Positive(t, filled)
	require.Less(t, len(c.Cols), len(sum.Cols)/3, "the compact table has far fewer columns")
}
