package tokendist

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
)

// ErrOverflow reports an integer result (a bound, a closed form, a total or a counter)
// that does not fit in its type. Functions return it, wrapped with the operands, instead
// of a wrapped-around value.
var ErrOverflow = errors.New("tokendist: integer overflow")

// ErrTooLarge reports a call that would allocate more than the memory budget (see the
// package documentation, "Memory"). The error names the size that was refused.
var ErrTooLarge = errors.New("tokendist: allocation exceeds the memory budget")

var memTotal = sync.OnceValue(func() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return math.MaxInt64
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			fields := strings.Fields(rest)
			if len(fields) == 0 {
				break
			}
			kb, err := strconv.ParseInt(fields[0], 10, 64)
			if err != nil || kb <= 0 || kb > math.MaxInt64/1024 {
				break
			}
			return kb * 1024
		}
	}
	return math.MaxInt64
})

// memoryBudget returns the most bytes one call may allocate: the smaller of the
// program's soft memory limit (runtime/debug.SetMemoryLimit, GOMEMLIMIT) and half of
// the machine's memory (MemTotal in /proc/meminfo, read once; unknown means no limit).
func memoryBudget() int64 {
	return min(debug.SetMemoryLimit(-1), memTotal()/2)
}

// checkAlloc returns an error wrapping ErrTooLarge if count items of bytesEach bytes
// (overflow-checked) exceed the memory budget, or if count is negative. what names the
// allocation in the error.
func checkAlloc(what string, count, bytesEach int64) error {
	if count < 0 || bytesEach < 0 {
		return badParam("%s: negative size %d×%d bytes", what, count, bytesEach)
	}
	hi, lo := bits.Mul64(uint64(count), uint64(bytesEach))
	budget := memoryBudget()
	if hi != 0 || lo > uint64(budget) {
		return fmt.Errorf("%w: %s needs %d × %d bytes, budget %d bytes", ErrTooLarge, what, count, bytesEach, budget)
	}
	return nil
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
func overflow(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrOverflow}, args...)...)
}

// quote returns at most the first 48 bytes of b, quoted (≤ 200 bytes of text), for an
// error message.
func quote(b []byte) string {
	const n = 48
	if len(b) <= n {
		return strconv.Quote(string(b))
	}
	return strconv.Quote(string(b[:n])) + fmt.Sprintf("... (%d bytes)", len(b))
}

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
