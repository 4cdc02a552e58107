package tokendist

import (
	"math"

	"github.com/tokendist/tokendist/internal/errs"
)

// mul64 returns a·b, or ok = false if it overflows int64.
func mul64(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	c := a * b
	if c/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		return 0, false
	}
	return c, true
}

// overflow returns an error wrapping ErrOverflow that names the computation.
func overflow(format string, args ...any) error { return errs.Overflowf(format, args...) }

// ceilDiv returns ⌈n/m⌉ for n ≥ 0 and m ≥ 1 without overflow.
func ceilDiv(n, m int64) int64 {
	q := n / m
	if n%m != 0 {
		q++
	}
	return q
}
