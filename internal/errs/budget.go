package errs

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
)

var memTotal = sync.OnceValue(func() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return math.MaxInt64
	}
	defer f.Close()
	return parseMemTotal(f)
})

// parseMemTotal returns the MemTotal line of a /proc/meminfo text in bytes, or
// math.MaxInt64 (no limit) when there is none or it is malformed, not positive or too
// large to count in bytes.
func parseMemTotal(r io.Reader) int64 {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return math.MaxInt64
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || kb <= 0 || kb > math.MaxInt64/1024 {
			return math.MaxInt64
		}
		return kb * 1024
	}
	return math.MaxInt64
}

// MemoryBudget returns the most bytes one call may allocate: the smaller of the
// program's soft memory limit (runtime/debug.SetMemoryLimit, GOMEMLIMIT) and half of
// the machine's memory (MemTotal in /proc/meminfo, read once; unknown means no limit).
func MemoryBudget() int64 {
	return min(debug.SetMemoryLimit(-1), memTotal()/2)
}

// CheckAlloc returns an error wrapping ErrTooLarge if count items of bytesEach bytes
// (overflow-checked) exceed the memory budget, or wrapping ErrBadParameter if count is
// negative. what names the allocation in the error.
func CheckAlloc(what string, count, bytesEach int64) error {
	if count < 0 || bytesEach < 0 {
		return BadParam("%s: negative size %d×%d bytes", what, count, bytesEach)
	}
	hi, lo := bits.Mul64(uint64(count), uint64(bytesEach))
	budget := MemoryBudget()
	if hi != 0 || lo > uint64(budget) {
		return fmt.Errorf("%w: %s needs %d × %d bytes, budget %d bytes", ErrTooLarge, what, count, bytesEach, budget)
	}
	return nil
}
