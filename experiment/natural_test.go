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

// TestNaturalCompareCases pins each rule of naturalCompare and naturalTokens: numbers by
// value, a number before text, text by bytes, a shorter label first, a '-' after a word
// byte (a letter at either end of its range, a digit, '_', ')') a hyphen and otherwise
// a sign, an out-of-range number kept as text.
func TestNaturalCompareCases(t *testing.T) {
	sign := func(c int) int { return max(-1, min(1, c)) }
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"n = 2", "n = 10", -1}, {"n = 10", "n = 2", 1}, {"n = 2", "n = 2", 0},
		{"n = .5", "n = 0.25", 1}, {"n = 1e3", "n = 999", 1}, {"n = +3", "n = 2", 1},
		{"7", "a", -1}, {"a", "7", 1}, {"a", "b", -1}, {"b", "a", 1},
		{"ring", "ring(n=8)", -1}, {"ring(n=8)", "ring", 1},
		{"x = -2", "x = -1", -1}, {"(-2)", "(-1)", -1}, {"-2", "-1", -1},
		// After a word byte '-' is a hyphen: "a-2" is text "a-" and 2, so a-2 < a-10.
		{"a-2", "a-10", -1}, {"z-2", "z-10", -1}, {"A-2", "A-10", -1}, {"Z-2", "Z-10", -1},
		{"_-2", "_-10", -1}, {")-2", ")-10", -1}, {"0-2", "0-10", -1}, {"9-2", "9-10", -1},
		{"x+2", "x+10", -1},
		// Not after a word byte: a sign, so -10 < -2.
		{"=-2", "=-10", 1}, {" -2", " -10", 1}, {"/-2", "/-10", 1}, {"@-2", "@-10", 1},
		{"[-2", "[-10", 1}, {"`-2", "`-10", 1}, {"{-2", "{-10", 1}, {":-2", ":-10", 1},
		// 1e999 overflows float64: kept as text, after any number.
		{"v = 1e999", "v = 5", 1},
		// A number after an out-of-range one is still a number: 5 < 10.
		{"1e999 x 5", "1e999 x 10", -1},
	} {
		require.Equal(t, c.want, sign(naturalCompare(c.a, c.b)), "%q vs %q", c.a, c.b)
	}
	require.Equal(t, []naturalToken{{s: "n = "}, {v: 16, num: true}, {s: ", k"}}, naturalTokens("n = 16, k"))
	require.Equal(t, []naturalToken{{s: "threshold-"}, {v: 2, num: true}}, naturalTokens("threshold-2"))
	require.Equal(t, []naturalToken{{v: -2, num: true}}, naturalTokens("-2"))
	require.Nil(t, naturalTokens(""))
}
