package tokendist

import (
	"fmt"

	"github.com/tokendist/tokendist/internal/errs"
)

// checkAlloc returns an error wrapping ErrTooLarge if count items of bytesEach bytes
// (overflow-checked) exceed the memory budget, or if count is negative. what names the
// allocation in the error.
func checkAlloc(what string, count, bytesEach int64) error {
	return errs.CheckAlloc(what, count, bytesEach)
}

// tooLarge returns an error wrapping ErrBadParameter and ErrTooLarge naming a size
// that no network of the module can hold.
func tooLarge(format string, args ...any) error { return errs.TooLargeParam(format, args...) }

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
