package tokendist

import (
	"fmt"
	"math"

	"github.com/tokendist/tokendist/internal/errs"
)

// checkAlloc returns an error wrapping ErrTooLarge if count items of bytesEach bytes
// (overflow-checked) exceed the memory budget, or if count is negative. what names the
// allocation in the error.
func checkAlloc(what string, count, bytesEach int64) error {
	return errs.CheckAlloc(what, count, bytesEach)
}

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

// quote returns at most the first 48 bytes of b, quoted (≤ 200 bytes of text), for an
// error message.
func quote(b []byte) string { return errs.Quote(b) }

// makeLoads returns a zero load vector of n nodes, or an error if n is negative or the
// vector exceeds the memory budget. what names the caller.
func makeLoads(what string, n int) (Loads, error) {
	if n < 0 {
		return nil, badParam("%s: negative order %d", what, n)
	}
	if err := checkAlloc(fmt.Sprintf("%s: loads of %d nodes", what, n), int64(n), 8); err != nil {
		return nil, err
	}
	return make(Loads, n), nil
}

// ceilDiv returns ⌈n/m⌉ for n ≥ 0 and m ≥ 1 without overflow.
func ceilDiv(n, m int64) int64 {
	q := n / m
	if n%m != 0 {
		q++
	}
	return q
}
