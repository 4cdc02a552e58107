package experiment

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNaturalOrder: panels, legend entries and groups sort as numbers where they hold
// numbers (sort.Strings put "n = 1024" before "n = 256", issue 35).
func TestNaturalOrder(t *testing.T) {
	want := []string{
		"algorithm = rsw, n = 16", "algorithm = rsw, n = 256", "algorithm = rsw, n = 1024",
		"n = 4, p = 0.25", "n = 4, p = 0.5", "n = 4, p = 2",
		"n = 16", "n = 256", "n = 1024", "n = 4096",
		"ring(8)", "ring(64)", "ring(512)",
		"threshold-1", "threshold-2",
		"x = -3", "x = -1e-06", "x = 0", "x = 1.5e+03",
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		got := slices.Clone(want)
		r.Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
		sortNatural(got)
		require.Equal(t, want, got)
	}
	// A total order: distinct labels that compare equal fall back on bytes.
	require.True(t, naturalLess("n = 1", "n = 1.0"))
	require.False(t, naturalLess("n = 1.0", "n = 1"))
	require.False(t, naturalLess("a", "a"))
}
