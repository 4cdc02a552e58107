package errs

import (
	"errors"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// meminfoTotal reads MemTotal from /proc/meminfo independently of memTotal (in bytes;
// ok false where there is no such file, as outside Linux).
func meminfoTotal(t *testing.T) (int64, bool) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			require.NoError(t, err)
			return kb * 1024, true
		}
	}
	t.Fatal("no MemTotal in /proc/meminfo")
	return 0, false
}

// TestMemoryBudget: the budget is the smaller of the soft memory limit and half of
// MemTotal, so lowering the limit below half the memory lowers the budget to it exactly.
func TestMemoryBudget(t *testing.T) {
	total, ok := meminfoTotal(t)
	if !ok {
		t.Skip("no /proc/meminfo")
	}
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	require.Equal(t, min(old, total/2), MemoryBudget())
	debug.SetMemoryLimit(math.MaxInt64)
	require.Equal(t, total/2, MemoryBudget(), "half of MemTotal %d", total)
	debug.SetMemoryLimit(total / 4)
	require.Equal(t, total/4, MemoryBudget())
	debug.SetMemoryLimit(total/2 + 1)
	require.Equal(t, total/2, MemoryBudget())
}

// TestCheckAlloc: an allocation of exactly the budget passes, one byte more does not
// (ErrTooLarge, naming the sizes and the budget), a product that overflows 64 bits does
// not, and a negative size is a bad parameter.
func TestCheckAlloc(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	const budget = 1 << 30
	debug.SetMemoryLimit(budget)
	require.Equal(t, int64(budget), MemoryBudget())
	for _, tc := range []struct {
		count, each int64
		want        error
	}{
		{budget / 8, 8, nil}, {budget, 1, nil}, {1, budget, nil}, {0, math.MaxInt64, nil}, {math.MaxInt64, 0, nil},
		{budget/8 + 1, 8, ErrTooLarge}, {budget + 1, 1, ErrTooLarge}, {3, budget / 2, ErrTooLarge},
		{1 << 32, 1 << 32, ErrTooLarge}, {math.MaxInt64, math.MaxInt64, ErrTooLarge}, {1 << 62, 4, ErrTooLarge},
		{-1, 8, ErrBadParameter}, {8, -1, ErrBadParameter}, {math.MinInt64, -1, ErrBadParameter},
	} {
		err := CheckAlloc("test buffer", tc.count, tc.each)
		if tc.want == nil {
			require.NoError(t, err, "%d × %d", tc.count, tc.each)
			continue
		}
		require.True(t, errors.Is(err, tc.want), "%d × %d: %v", tc.count, tc.each, err)
		require.True(t, strings.HasPrefix(err.Error(), Prefix), "%v", err)
		require.Contains(t, err.Error(), "test buffer")
		if tc.want == ErrTooLarge {
			require.Contains(t, err.Error(), strconv.FormatInt(tc.count, 10)+" × "+strconv.FormatInt(tc.each, 10)+" bytes, budget 1073741824 bytes")
		}
	}
}

// TestParseMemTotal: the MemTotal line in bytes; no limit (MaxInt64) for a text without
// one, an empty, non-numeric, zero, negative or overflowing value.
func TestParseMemTotal(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int64
	}{
		{"MemTotal:       16384 kB\nMemFree: 1 kB\n", 16384 * 1024},
		{"MemFree: 5 kB\nMemTotal: 1 kB\n", 1024},
		{"MemTotal: 1\n", 1024},
		{"MemFree: 5 kB\n", math.MaxInt64},
		{"", math.MaxInt64},
		{"MemTotal:\n", math.MaxInt64},
		{"MemTotal: many kB\n", math.MaxInt64},
		{"MemTotal: 0 kB\n", math.MaxInt64},
		{"MemTotal: -5 kB\n", math.MaxInt64},
		{"MemTotal: " + strconv.FormatInt(math.MaxInt64/1024, 10) + " kB\n", math.MaxInt64 / 1024 * 1024},
		{"MemTotal: " + strconv.FormatInt(math.MaxInt64/1024+1, 10) + " kB\n", math.MaxInt64},
		{"MemTotal: 99999999999999999999 kB\n", math.MaxInt64},
		{"XMemTotal: 7 kB\nMemTotal: 3 kB\n", 3 * 1024},
	} {
		require.Equal(t, tc.want, parseMemTotal(strings.NewReader(tc.text)), "%q", tc.text)
	}
}
