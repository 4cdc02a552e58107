package experiment

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist/registry"
)

// fixtureFile is a small experiment: two network families, two algorithms that run and
// one that fails (discrepancy-1 needs a tree), three seeds, traces and a metric.
const fixtureFile = `name: fixture
networks:
  - name: ring
    n: [8, 16]
  - name: torus
    sides: [[3, 3], [4, 4]]
loads:
  - name: random-range
    hi: 20
algorithms:
  - randomized-diffusion
  - fgs-deterministic
  - discrepancy-1
stop:
  max_steps: 40
  no_stability: true
seeds: 3
record:
  metrics: [lambda_max]
  trace: true
  sample_every: 5
`

// fixtureDB sweeps fixtureFile into a database in a temporary directory and returns
// its path and the experiment file's.
func fixtureDB(t *testing.T) (db, file string) {
	t.Helper()
	dir := t.TempDir()
	file = filepath.Join(dir, "fixture.yaml")
	require.NoError(t, os.WriteFile(file, []byte(fixtureFile), 0o644))
	db = filepath.Join(dir, "fixture.db")
	var out, errb bytes.Buffer
	code := Main(registry.New(), []string{"sweep", "--progress", "none", "--db", db, file}, &out, &errb)
	require.Equal(t, ExitFailed, code, "the discrepancy-1 runs fail: %s", errb.String())
	return db, file
}

func runMain(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(registry.New(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestReportFormats covers every report format and mode: the per-run export with its
// parameter columns and full-precision numbers, the summary with its statistics and
// status counts grouped by any columns, the traces, and the HTML page.
func TestReportFormats(t *testing.T) {
	db, file := fixtureDB(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		code int
		// check inspects standard output (or the --out file).
		check func(t *testing.T, out string)
	}{
		{"csv runs", []string{"--format", "csv"}, ExitOK, func(t *testing.T, out string) {
			rows := readCSV(t, out)
			head := rows[0]
			for _, c := range []string{"network_name", "network.n", "network.sides", "loads_name", "loads.hi", "algorithm_name",
				"algorithm.spanning_tree", "stop.max_steps", "stop.no_stability", "key", "m.lambda_max", "status", "error"} {
				require.Contains(t, head, c)
			}
			require.Len(t, rows, 1+2*2*3*3)
			col := index(head)
			failed := 0
			for _, r := range rows[1:] {
				if r[col["status"]] == "Failed" {
					failed++
					require.Contains(t, r[col["error"]], "spanning_tree: true")
					for _, c := range []string{"discrepancy", "steps", "moved", "m.lambda_max"} {
						require.Empty(t, r[col[c]], "a failed run has no %s", c)
					}
					continue
				}
				require.Equal(t, "40", r[col["stop.max_steps"]])
				// lambda_max in full precision: it reads back to the stored float64.
				v, err := strconv.ParseFloat(r[col["m.lambda_max"]], 64)
				require.NoError(t, err)
				require.Equal(t, strconv.FormatFloat(v, 'g', -1, 64), r[col["m.lambda_max"]])
				require.Greater(t, len(r[col["m.lambda_max"]]), 8, "more than %%g's 6 digits")
			}
			require.Equal(t, 12, failed)
		}},
		{"jsonl runs", []string{"--format", "jsonl", "--where", "network_name = 'torus'"}, ExitOK, func(t *testing.T, out string) {
			lines := strings.Split(strings.TrimSpace(out), "\n")
			require.Len(t, lines, 2*3*3)
			var obj map[string]any
			require.NoError(t, json.Unmarshal([]byte(lines[0]), &obj))
			require.Equal(t, "torus", obj["network_name"])
			require.Contains(t, []any{"[3,3]", "[4,4]"}, obj["network.sides"])
		}},
		{"markdown runs", []string{"--format", "markdown", "--no-timing"}, ExitOK, func(t *testing.T, out string) {
			require.True(t, strings.HasPrefix(out, "| experiment | network |"))
			require.NotContains(t, out, "wall_seconds")
		}},
		{"text runs", []string{"--where", "seed = 1"}, ExitOK, func(t *testing.T, out string) {
			require.Len(t, strings.Split(strings.TrimSpace(out), "\n"), 1+12)
		}},
		{"summary default groups", []string{"--summary", "--format", "csv"}, ExitOK, func(t *testing.T, out string) {
			rows := readCSV(t, out)
			col := index(rows[0])
			for _, c := range []string{"runs", "status.MaxSteps", "status.Failed", "discrepancy_n", "discrepancy_mean", "discrepancy_sd",
				"discrepancy_ci95_low", "discrepancy_ci95_high", "discrepancy_min", "discrepancy_q1", "discrepancy_median",
				"discrepancy_q3", "discrepancy_max", "steps_mean", "moved_median", "m.lambda_max_mean"} {
				require.Contains(t, col, c)
			}
			require.Len(t, rows, 1+4*3) // 4 networks × 3 algorithms
			for _, r := range rows[1:] {
				require.Equal(t, "3", r[col["runs"]])
				if r[col["algorithm"]] == "discrepancy-1" {
					require.Equal(t, "3", r[col["status.Failed"]])
					require.Equal(t, "0", r[col["discrepancy_n"]])
					require.Empty(t, r[col["discrepancy_mean"]])
					continue
				}
				lo, _ := strconv.ParseFloat(r[col["discrepancy_ci95_low"]], 64)
				mean, _ := strconv.ParseFloat(r[col["discrepancy_mean"]], 64)
				hi, _ := strconv.ParseFloat(r[col["discrepancy_ci95_high"]], 64)
				require.LessOrEqual(t, lo, mean)
				require.LessOrEqual(t, mean, hi)
			}
		}},
		{"summary by two columns", []string{"--summary", "--by", "algorithm,network_name", "--values", "steps", "--format", "jsonl"}, ExitOK, func(t *testing.T, out string) {
			lines := strings.Split(strings.TrimSpace(out), "\n")
			require.Len(t, lines, 3*2)
			var obj map[string]any
			require.NoError(t, json.Unmarshal([]byte(lines[0]), &obj))
			require.EqualValues(t, 6, obj["runs"])
			require.Contains(t, obj, "steps_median")
			require.NotContains(t, obj, "discrepancy_mean")
		}},
		{"summary by unknown column", []string{"--summary", "--by", "colour"}, ExitUsage, nil},
		{"summary of text", []string{"--summary", "--values", "status"}, ExitUsage, nil},
		{"traces csv", []string{"--traces", "--format", "csv", "--where", "seed = 2"}, ExitOK, func(t *testing.T, out string) {
			rows := readCSV(t, out)
			require.Equal(t, traceCols, rows[0])
			keys := map[string]bool{}
			for _, r := range rows[1:] {
				keys[r[0]] = true
				require.Equal(t, "2", r[5])
			}
			require.Len(t, keys, 2*2*2) // 8 successful runs of seed 2
		}},
		{"traces jsonl", []string{"--traces", "--format", "jsonl"}, ExitOK, func(t *testing.T, out string) {
			require.Contains(t, out, `"step":40`)
		}},
		{"html", []string{"--format", "html", "--out", filepath.Join(dir, "r.html")}, ExitOK, func(t *testing.T, _ string) {
			page, err := os.ReadFile(filepath.Join(dir, "r.html"))
			require.NoError(t, err)
			checkHTMLStatic(t, string(page), 3)
			require.Contains(t, string(page), "sample_every: 5", "the experiment file sweep stored")
		}},
		{"html with file", []string{"--format", "html", "--file", file, "--out", filepath.Join(dir, "f.html")}, ExitOK, nil},
		{"html without out", []string{"--format", "html"}, ExitUsage, nil},
		{"unknown format", []string{"--format", "parquet"}, ExitUsage, nil},
		{"by without summary", []string{"--by", "algorithm"}, ExitUsage, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runMain(t, append([]string{"report", "--db", db}, tc.args...)...)
			require.Equal(t, tc.code, code, errs)
			if tc.code != ExitOK {
				require.True(t, strings.HasPrefix(errs, "tokendist: "), errs)
			}
			if tc.check != nil {
				tc.check(t, out)
			}
		})
	}
}

// TestPlotOptions covers every plot option: --by several columns, --facet, each band
// with and without bars, log axes, traces, the three image formats by extension, and
// the refusals (unknown extension, non-numeric or unknown axis, unknown band).
func TestPlotOptions(t *testing.T) {
	db, _ := fixtureDB(t)
	dir := t.TempDir()
	magic := map[string]string{".svg": "<svg", ".png": "\x89PNG", ".pdf": "%PDF-"}
	for _, tc := range []struct {
		name string
		out  string
		args []string
		code int
		msg  string
	}{
		{"default", "a.svg", nil, ExitOK, ""},
		{"by two columns", "b.svg", []string{"--by", "algorithm,network_name"}, ExitOK, ""},
		{"facet", "c.svg", []string{"--facet", "network_name", "--band", "ci"}, ExitOK, ""},
		{"band sd", "d.png", []string{"--band", "sd"}, ExitOK, ""},
		{"bars quartiles", "e.pdf", []string{"--band", "quartiles", "--bars"}, ExitOK, ""},
		{"minmax log", "f.svg", []string{"--band", "minmax", "--logx", "--logy", "--y", "moved"}, ExitOK, ""},
		{"spread", "g.svg", []string{"--spread"}, ExitOK, ""},
		{"metric", "h.svg", []string{"--y", "m.lambda_max", "--by", "network_name"}, ExitOK, ""},
		{"traces", "i.svg", []string{"--traces", "--facet", "network", "--band", "ci"}, ExitOK, ""},
		{"title", "j.svg", []string{"--title", "T", "--where", "seed < 3"}, ExitOK, ""},
		{"non-numeric x", "k.svg", []string{"--x", "status"}, ExitUsage, `column "status" for the x axis is not numeric`},
		{"unknown y", "l.svg", []string{"--y", "colour"}, ExitUsage, `no column "colour"`},
		{"unknown by", "m.svg", []string{"--by", "colour"}, ExitUsage, `no column "colour"`},
		{"unknown band", "n.svg", []string{"--band", "iqr"}, ExitUsage, `band "iqr"`},
		{"unknown extension", "o.gif", nil, ExitUsage, `unknown image format "gif"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.out)
			code, _, errs := runMain(t, append([]string{"plot", "--db", db, "--out", out}, tc.args...)...)
			require.Equal(t, tc.code, code, errs)
			if tc.code != ExitOK {
				require.Contains(t, errs, tc.msg)
				require.NoFileExists(t, out)
				return
			}
			b, err := os.ReadFile(out)
			require.NoError(t, err)
			require.Contains(t, string(b[:min(len(b), 300)]), magic[filepath.Ext(out)])
		})
	}
}

// TestPlotLegendOnePerSeries checks that the legend lists each series once: with
// --by algorithm,network_name and a band, 2 × 2 entries, however many seeds and bands.
func TestPlotLegendOnePerSeries(t *testing.T) {
	db, _ := fixtureDB(t)
	d, err := openExisting(db)
	require.NoError(t, err)
	defer d.Close()
	svg, err := Plot(d, PlotOptions{By: "algorithm,network_name", Band: "minmax"})
	require.NoError(t, err)
	desc := string(svg[bytes.Index(svg, []byte("<desc>")):bytes.Index(svg, []byte("</desc>"))])
	for _, name := range []string{"fgs-deterministic, ring", "fgs-deterministic, torus", "randomized-diffusion, ring", "randomized-diffusion, torus"} {
		require.Equal(t, 1, strings.Count(desc, name), desc)
	}
	require.NotContains(t, desc, "(min)")
}

// TestSummarize checks the statistics against values computed by hand: for 1..5 the
// mean 3, sd √2.5, quartiles 2 and 4 (type 7), and t_{0.975,4} = 2.7764451.
func TestSummarize(t *testing.T) {
	s := Summarize([]float64{5, 1, 4, 2, 3, math.NaN()})
	require.Equal(t, 5, s.Count)
	require.InDelta(t, 3, s.Mean, 1e-15)
	require.InDelta(t, math.Sqrt(2.5), s.SD, 1e-15)
	require.Equal(t, [5]float64{1, 2, 3, 4, 5}, [5]float64{s.Min, s.Q1, s.Median, s.Q3, s.Max})
	h := 2.7764451051977987 * math.Sqrt(2.5) / math.Sqrt(5)
	require.InDelta(t, 3-h, s.CILow, 1e-9)
	require.InDelta(t, 3+h, s.CIHigh, 1e-9)
	q := Summarize([]float64{1, 2, 3, 4})
	require.Equal(t, [3]float64{1.75, 2.5, 3.25}, [3]float64{q.Q1, q.Median, q.Q3})
	one := Summarize([]float64{7})
	require.Equal(t, 0.0, one.SD)
	require.True(t, math.IsNaN(one.CILow))
	require.True(t, math.IsNaN(Summarize(nil).Mean))
}

func readCSV(t *testing.T, s string) [][]string {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(s)).ReadAll()
	require.NoError(t, err)
	return rows
}

func index(cols []string) map[string]int {
	m := map[string]int{}
	for i, c := range cols {
		m[c] = i
	}
	return m
}

// checkHTMLStatic checks that the page is self-contained: at least figures inline
// SVG figures, and nothing that loads from elsewhere (no script, link, image, frame,
// @import or url(), no http(s) reference but the SVG namespaces).
func checkHTMLStatic(t *testing.T, page string, figures int) {
	t.Helper()
	require.GreaterOrEqual(t, strings.Count(page, "<figure"), figures)
	require.Equal(t, strings.Count(page, "<figure"), strings.Count(page, "<svg"))
	lower := strings.ToLower(page)
	for _, bad := range []string{"<script", "<link", "<img", "<iframe", "@import", "url(", " src="} {
		require.NotContains(t, lower, bad)
	}
	rest := strings.NewReplacer(`xmlns="http://www.w3.org/2000/svg"`, "", `xmlns:xlink="http://www.w3.org/1999/xlink"`, "").Replace(lower)
	require.NotContains(t, rest, "http://")
	require.NotContains(t, rest, "https://")
}

// TestSpecColumnsModel: a stored network model becomes model.KEY columns, one per field
// of its delay distribution; a run without one has none.
func TestSpecColumnsModel(t *testing.T) {
	cols := specColumns(`{"network":{"name":"ring","params":{"n":8}},"loads":{"name":"point-mass"},"algorithm":{"name":"threshold-1"},
		"stop":{"max_steps":5},"network_model":{"delay":{"kind":"uniform","min":1,"max":4},"loss":0.1,"patience":3,"crashes":[{"node":1}]}}`)
	want := map[string]any{"model.delay.kind": "uniform", "model.delay.min": int64(1), "model.delay.max": int64(4),
		"model.loss": 0.1, "model.patience": int64(3), "model.crash_rate": int64(0), "model.crashes": `[{"node":1}]`, "stop.max_steps": int64(5), "network.n": int64(8)}
	for k, v := range want {
		if cols[k] != v {
			t.Errorf("%s = %#v; want %#v", k, cols[k], v)
		}
	}
	for k := range specColumns(`{"network":{"name":"ring"},"loads":{"name":"point-mass"},"algorithm":{"name":"threshold-1"}}`) {
		if strings.HasPrefix(k, "model.") {
			t.Errorf("a run without a network model has column %s", k)
		}
	}
}

// TestPlotNumericLabels: a numeric --by or --facet value is named by its column ("n =
// 16"), a text value is shown alone.
func TestPlotNumericLabels(t *testing.T) {
	db, _ := fixtureDB(t)
	d, err := openExisting(db)
	require.NoError(t, err)
	defer d.Close()
	svg, err := Plot(d, PlotOptions{By: "seed", Facet: "network_name"})
	require.NoError(t, err)
	desc := string(svg[bytes.Index(svg, []byte("<desc>")):bytes.Index(svg, []byte("</desc>"))])
	require.Contains(t, desc, "seed = ", desc)
	require.NotContains(t, desc, "network_name = ", desc)
}

// TestExportColumnOrderAndTextLayout: the parameter columns of one kind are in name
// order (loads.hi before loads.lo before loads.seed), and the text format pads every
// column but the last to its widest cell plus two spaces, so that every cell of a
// column starts at the same offset.
func TestExportColumnOrderAndTextLayout(t *testing.T) {
	db, _ := fixtureDB(t)
	d, err := openExisting(db)
	require.NoError(t, err)
	defer d.Close()
	tab, err := ExportTable(d, "")
	require.NoError(t, err)
	var loads []string
	for _, c := range tab.Cols {
		if strings.HasPrefix(c, "loads.") {
			loads = append(loads, c)
		}
	}
	require.GreaterOrEqual(t, len(loads), 2, tab.Cols)
	require.True(t, slices.IsSorted(loads), "loads columns %v", loads)

	small := Table{Cols: []string{"a", "bb", "c"}, Rows: [][]any{{"xxxx", int64(1), "z"}, {"y", int64(22222), "zz"}}}
	var buf bytes.Buffer
	require.NoError(t, small.Write(&buf, "text"))
	want := "a     bb     c\nxxxx  1      z\ny     22222  zz\n"
	require.Equal(t, want, buf.String())
}
