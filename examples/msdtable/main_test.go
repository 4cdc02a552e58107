package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
)

// The cheap part of the table: every complete k-ary tree (k ≤ 16) with at most 2^20
// nodes and the binary trees up to h = 20. The conjecture fails there exactly five
// times, always below its range; the first counterexample is T_{6,7} (137,257 nodes):
// MSD = 17 < ⌊(7-1)·6/2⌋ = 18, the smallest among all complete k-ary trees. The bounds of
// Lemma 17 and Theorem 16 always hold.
func TestCheapTable(t *testing.T) {
	cfg := config{maxBinary: 20, maxNodes: 1 << 20, maxK: 16, maxPath: 16}
	cases, err := plan(cfg)
	require.NoError(t, err)
	rows, err := compute(cases, cfg, newProgress(io.Discard, 1))
	require.NoError(t, err)
	var fails []string
	for _, r := range rows {
		if !r.Holds {
			fails = append(fails, fmt.Sprintf("T_{%d,%d}: MSD %d, lo %d", r.H, r.K, r.MSD, r.Lo))
		}
		require.LessOrEqual(t, r.MSD, r.Lemma17, "Lemma 17 on T_{%d,%d}", r.H, r.K)
		require.LessOrEqual(t, r.MSD, r.Theorem, "Theorem 16 on T_{%d,%d}", r.H, r.K)
		if r.K == 1 {
			require.Equal(t, 1, r.MSD)
		}
	}
	require.Equal(t, []string{
		"T_{8,5}: MSD 15, lo 16",
		"T_{6,7}: MSD 17, lo 18",
		"T_{7,7}: MSD 20, lo 21",
		"T_{6,8}: MSD 20, lo 21",
		"T_{6,9}: MSD 23, lo 24",
	}, fails)
}

// The counterexample holds on the built tree, with a plain queue BFS over Z_n as the
// independent check of the bitset search.
func TestConjectureCounterexampleT67(t *testing.T) {
	g, err := tokendist.KaryTree(tokendist.KaryShape{Height: 6, Arity: 7})
	require.NoError(t, err)
	require.Equal(t, 137_257, g.Order())
	sg1, err := tokendist.StableGaps(g)
	require.NoError(t, err)
	n := g.Order()
	dist := make([]int, n)
	for i := range dist {
		dist[i] = -1
	}
	dist[0] = 0
	q, far := []int{0}, 0
	for h := 0; h < len(q); h++ {
		for _, p := range sg1 {
			if y := (q[h] + p) % n; dist[y] < 0 {
				dist[y] = dist[q[h]] + 1
				far = max(far, dist[y])
				q = append(q, y)
			}
		}
	}
	require.Len(t, q, n)
	require.Equal(t, 17, far)
	m, err := tokendist.MSD(g)
	require.NoError(t, err)
	require.Equal(t, 17, m)
	require.Less(t, m, (7-1)*6/2)
}

func TestQuickRun(t *testing.T) {
	dir := t.TempDir()
	cfg := config{maxBinary: 8, maxNodes: 2000, maxK: 5, maxPath: 4, checkN: 1000, baseline: []int{5}, randomN: 100, seed: 1, quick: true, out: dir, interval: 1}
	var out, errb bytes.Buffer
	require.NoError(t, run(cfg, &out, &errb))
	s := out.String()
	require.Contains(t, s, "PARTIAL TABLE")
	require.Contains(t, s, "holds for every tree of the table")
	require.Contains(t, errb.String(), "searches finished")
	for _, f := range []string{"msdtable.csv", "msd-vs-height.svg", "msd-excess.svg"} {
		fi, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err)
		require.Positive(t, fi.Size())
	}
	csv, err := os.ReadFile(filepath.Join(dir, "msdtable.csv"))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(csv), "k,h,n,sg1_size,msd"))
}
