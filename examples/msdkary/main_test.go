package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestQuickTable runs the -quick table (every T_{h,k}, 2 ≤ k ≤ 64, with at most 2^16
// nodes): the proved bounds hold, the large-k law holds on every tree with k ≥ 2h − 5,
// and the files are written and read back.
func TestQuickTable(t *testing.T) {
	out := t.TempDir()
	cfg := config{maxK: 64, maxNodes: 1 << 16, out: out, quick: true, workers: 1}
	var buf bytes.Buffer
	require.NoError(t, run(cfg, &buf))
	require.Contains(t, buf.String(), "fail on 0 of them")
	rows, err := readCSV(filepath.Join(out, "msdkary.csv"))
	require.NoError(t, err)
	require.Len(t, rows, 203)
	got := map[[2]int]int{}
	for _, r := range rows {
		got[[2]int{r.K, r.H}] = r.MSD
		if r.K >= 2*r.H-5 {
			require.Equal(t, largeK(r.K, r.H), r.MSD, "T_{%d,%d}", r.H, r.K)
		}
	}
	require.Equal(t, 4, got[[2]int{2, 7}], "T_{7,2}")
	require.Equal(t, 64, got[[2]int{64, 2}], "T_{2,64}")
	for _, f := range []string{"msdkary.svg", "msdkary-ratio.svg"} {
		b, err := os.ReadFile(filepath.Join(out, f))
		require.NoError(t, err)
		require.True(t, strings.Contains(string(b), "<svg"), f)
	}
	// -from reproduces the report from the CSV.
	var again bytes.Buffer
	require.NoError(t, run(config{from: filepath.Join(out, "msdkary.csv"), out: t.TempDir(), quick: true}, &again))
	tail := func(s string) string { return s[strings.LastIndex(s, "\n203 trees"):] }
	require.Equal(t, tail(buf.String()), tail(again.String()))
}

// TestBounds: the counting lower bound and Lemma 17 on hand-checked values.
func TestBounds(t *testing.T) {
	// T_{1,k} is the star K_{1,k}: n = k + 1, B_1(R) = 2R + 1 ≥ k + 1 ⇔ R ≥ k/2.
	require.Equal(t, 2, msdLower(4, 1))
	require.Equal(t, 3, msdLower(5, 1))
	// B_2(R) = 2R² + 2R + 1 against n = 1 + k + k² = 7 for k = 2: R = 2 gives 13 ≥ 7, R = 1 gives 5.
	require.Equal(t, 2, msdLower(2, 2))
	require.Equal(t, 0, msdUpper(3, 0))
	require.Equal(t, 5, msdUpper(2, 4))
	err := run(config{maxK: 1, maxNodes: 10, out: t.TempDir()}, &bytes.Buffer{})
	require.ErrorContains(t, err, "maxk")
}
