package experiment

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// TestDigitsCell rounds floats to significant digits without an exponent in the
// readable range, and leaves integers and text exact.
func TestDigitsCell(t *testing.T) {
	for _, c := range []struct {
		v      any
		digits int
		want   string
	}{
		{12345.678, 4, "12350"},
		{-166.8333, 4, "-166.8"},
		{0.000123456, 4, "0.0001235"},
		{0.0000123456, 4, "1.235e-05"},
		{1.5e20, 4, "1.5e+20"},
		{999999999999999.0, 4, "1e+15"},
		{123456789012345.0, 4, "123500000000000"},
		{2.0 / 3, 4, "0.6667"},
		{2.0 / 3, 1, "0.7"},
		{2.0 / 3, 0, "0.6666666666666666"},
		{2.0 / 3, -1, "0.6666666666666666"},
		{int64(123456789), 4, "123456789"},
		{"a|b", 4, "a|b"},
		{math.NaN(), 4, ""},
		{math.Inf(1), 4, "+Inf"},
		{nil, 4, ""},
	} {
		if got := digitsCell(c.v, c.digits); got != c.want {
			t.Errorf("digitsCell(%v, %d) = %q, want %q", c.v, c.digits, got, c.want)
		}
	}
}

// maxSig returns the most significant digits of any decimal number in s with a
// fractional part (leading zeros not counted).
func maxSig(s string) int {
	most := 0
	for _, m := range regexp.MustCompile(`-?\d+\.\d+`).FindAllString(s, -1) {
		d := strings.TrimLeft(strings.ReplaceAll(strings.TrimPrefix(m, "-"), ".", ""), "0")
		most = max(most, len(d))
	}
	return most
}

// TestReportDigits: --digits rounds text, markdown and HTML (default 4 significant
// digits), never CSV or JSON Lines; the default text summary fits 120 columns, as one
// block per group when the table would not.
func TestReportDigits(t *testing.T) {
	db, _ := fixtureDB(t)
	dir := t.TempDir()
	_, full, _ := runMain(t, "report", "--db", db, "--summary", "--format", "csv")
	require.Greater(t, maxSig(full), 8, "the CSV summary has full precision")
	_, csv3, _ := runMain(t, "report", "--db", db, "--summary", "--format", "csv", "--digits", "3")
	require.Equal(t, full, csv3, "--digits changes CSV")
	_, j1, _ := runMain(t, "report", "--db", db, "--format", "jsonl", "--no-timing")
	_, j2, _ := runMain(t, "report", "--db", db, "--format", "jsonl", "--no-timing", "--digits", "2")
	require.Equal(t, j1, j2, "--digits changes JSON Lines")

	code, md, e := runMain(t, "report", "--db", db, "--summary", "--format", "markdown")
	require.Equal(t, ExitOK, code, e)
	require.Equal(t, 4, maxSig(md), "markdown defaults to 4 significant digits:\n%s", md)
	_, md, _ = runMain(t, "report", "--db", db, "--summary", "--format", "markdown", "--digits", "2")
	require.Equal(t, 2, maxSig(md))
	_, md, _ = runMain(t, "report", "--db", db, "--summary", "--format", "markdown", "--digits", "0")
	require.Greater(t, maxSig(md), 8)

	// The text summary: blocks within 120 columns, numbers to 4 digits.
	code, text, e := runMain(t, "report", "--db", db, "--summary")
	require.Equal(t, ExitOK, code, e)
	require.Equal(t, 4, maxSig(text))
	for _, l := range strings.Split(text, "\n") {
		require.LessOrEqual(t, utf8.RuneCountInString(l), 120, "a line wider than 120 columns: %q", l)
	}
	blocks := strings.Split(strings.TrimSpace(text), "\n\n")
	require.Len(t, blocks, 4*3, "one block per group (4 networks × 3 algorithms)")
	for _, b := range blocks {
		lines := strings.Split(b, "\n")
		require.True(t, strings.HasPrefix(lines[0], "experiment=fixture  network="), lines[0])
		require.Regexp(t, `^runs=3  status\.Failed=\d  status\.MaxSteps=\d$`, lines[1])
		require.Regexp(t, `^ +n +mean +sd +ci95_low +ci95_high +min +q1 +median +q3 +max$`, lines[2])
		var names []string
		for _, l := range lines[3:] {
			names = append(names, strings.Fields(l)[0])
		}
		require.Equal(t, []string{"discrepancy", "steps", "rounds", "moved", "m.lambda_max"}, names)
	}
	// The statistics line up across the blocks: every "mean" header at one column.
	heads := regexp.MustCompile(`(?m)^ +n +mean`).FindAllString(text, -1)
	require.Len(t, heads, 12)
	for _, h := range heads {
		require.Equal(t, heads[0], h)
	}
	// A summary with one value column, which does not fit either: blocks.
	_, text, _ = runMain(t, "report", "--db", db, "--summary", "--by", "algorithm", "--values", "steps")
	require.Len(t, strings.Split(strings.TrimSpace(text), "\n\n"), 3)
	// A table that fits stays one table.
	var sb strings.Builder
	small := Table{Cols: []string{"algorithm", "runs", "status.Done", "x_n", "x_mean", "x_sd", "x_ci95_low", "x_ci95_high", "x_min", "x_q1", "x_median", "x_q3", "x_max"},
		Rows: [][]any{{"a", int64(2), int64(2), int64(2), 1.23456, 0.5, 0.1, 2.2, 1.0, 1.0, 1.5, 2.0, 2.0}}}
	require.NoError(t, writeSummaryText(&sb, small, 3))
	require.Equal(t, "algorithm  runs  status.Done  x_n  x_mean  x_sd  x_ci95_low  x_ci95_high  x_min  x_q1  x_median  x_q3  x_max\n"+
		"a          2     2            2    1.23    0.5   0.1         2.2          1      1     1.5       2     2\n", sb.String())
	// Exactly 120 columns: one table; 121: blocks.
	small.Cols[0] = strings.Repeat("a", 9+120-len(strings.Split(sb.String(), "\n")[0]))
	sb.Reset()
	require.NoError(t, writeSummaryText(&sb, small, 3))
	require.Len(t, strings.Split(sb.String(), "\n")[0], 120)
	require.Equal(t, 2, strings.Count(sb.String(), "\n"), "120 columns: one table")
	small.Cols[0] += "a"
	sb.Reset()
	require.NoError(t, writeSummaryText(&sb, small, 3))
	require.Equal(t, 4, strings.Count(sb.String(), "\n"), "121 columns: a block")
	// Wide: blocks.
	small.Cols[0] = strings.Repeat("a", 60)
	sb.Reset()
	require.NoError(t, writeSummaryText(&sb, small, 3))
	require.Equal(t, strings.Repeat("a", 60)+"=a\nruns=2  status.Done=2\n     n  mean  sd   ci95_low  ci95_high  min  q1  median  q3  max\n"+
		"  x  2  1.23  0.5  0.1       2.2        1    1   1.5     2   2\n", sb.String())
	// No group columns (runs first): still blocks. Group values wider than a line wrap.
	wide := Table{Cols: append([]string{"runs"}, small.Cols[3:]...), Rows: [][]any{append([]any{int64(2)}, small.Rows[0][3:]...)}}
	wide.Cols[1] = "x" + strings.Repeat("y", 120) + "_n"
	sb.Reset()
	require.NoError(t, writeSummaryText(&sb, wide, 3))
	require.True(t, strings.HasPrefix(sb.String(), "runs=2\n"), "%q", sb.String())
	long := Table{Cols: []string{"network", "loads", "algorithm", "runs", "status.Done"},
		Rows: [][]any{{strings.Repeat("n", 50), strings.Repeat("l", 50), strings.Repeat("a", 50), int64(1), int64(1)}}}
	sb.Reset()
	require.NoError(t, writeSummaryText(&sb, long, 3))
	require.Equal(t, "network="+strings.Repeat("n", 50)+"  loads="+strings.Repeat("l", 50)+"\nalgorithm="+strings.Repeat("a", 50)+
		"\nruns=1  status.Done=1\n", strings.SplitAfterN(sb.String(), "\n", 4)[0]+strings.SplitAfterN(sb.String(), "\n", 4)[1]+strings.SplitAfterN(sb.String(), "\n", 4)[2])
	// A wide table without a runs column (not a summary) is printed as it is.
	sb.Reset()
	plain := Table{Cols: []string{strings.Repeat("c", 130)}, Rows: [][]any{{1.23456}}}
	require.NoError(t, writeSummaryText(&sb, plain, 3))
	require.Equal(t, strings.Repeat("c", 130)+"\n1.23\n", sb.String())
	// Per-run text rounds too.
	_, text, _ = runMain(t, "report", "--db", db, "--digits", "3", "--where", "status != 'Failed'")
	require.Equal(t, 3, maxSig(text))

	page := filepath.Join(dir, "r.html")
	code, _, e = runMain(t, "report", "--db", db, "--format", "html", "--digits", "3", "--out", page)
	require.Equal(t, ExitOK, code, e)
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	cells := regexp.MustCompile(`<td[^>]*>([^<]*)</td>`).FindAllStringSubmatch(string(b), -1) // numbers alone, and the summary's "mean [ci] min–max"
	require.NotEmpty(t, cells)
	var all []string
	for _, c := range cells {
		all = append(all, c[1])
	}
	require.Equal(t, 3, maxSig(strings.Join(all, " ")))

	for _, bad := range []string{"-1", "18", "x"} {
		code, _, e := runMain(t, "report", "--db", db, "--digits", bad)
		require.Equal(t, ExitUsage, code, bad)
		require.True(t, strings.HasPrefix(e, "tokendist: "), e)
		require.Contains(t, e, bad)
	}
}
