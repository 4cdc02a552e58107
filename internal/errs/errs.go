// Package errs holds the error values and helpers that every package of the module
// shares, so that one policy holds everywhere: every error starts with "tokendist: ",
// names the bad value, and wraps a sentinel that errors.Is finds. The root package
// re-exports the sentinels (tokendist.ErrBadParameter is errs.BadParameter), so an
// error from the registry, the plot or the experiment package matches the same
// sentinel as one from the core.
package errs

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Prefix starts every error of the module.
const Prefix = "tokendist: "

// The sentinels. The root package documents and re-exports each one.
var (
	NotConnected   = errors.New("tokendist: network is not connected")
	NotTree        = errors.New("tokendist: network is not a tree")
	BadParameter   = errors.New("tokendist: bad parameter")
	NilNetwork     = errors.New("tokendist: nil network")
	NilBalancer    = errors.New("tokendist: nil balancer")
	BadLoads       = errors.New("tokendist: bad loads")
	InvalidColor   = errors.New("tokendist: invalid edge colouring")
	Overflow       = errors.New("tokendist: integer overflow")
	TooLarge       = errors.New("tokendist: allocation exceeds the memory budget")
	NotConverged   = errors.New("tokendist: iteration did not converge")
	Deadlock       = errors.New("tokendist: perfect tree: deadlock")
	Protocol       = errors.New("tokendist: perfect tree: protocol failure")
	BadDag         = errors.New("tokendist: inconsistent growing dag")
	TaskBudget     = errors.New("tokendist: task budget exhausted")
	ConcurrentUse  = errors.New("tokendist: balancer used by two runs at once")
	NotInitialized = errors.New("tokendist: Step before Init")
)

// BadParam returns an error wrapping BadParameter whose message names the value.
func BadParam(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{BadParameter}, args...)...)
}

// Overflowf returns an error wrapping Overflow that names the computation.
func Overflowf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{Overflow}, args...)...)
}

// wrapped is an error with the prefix that wraps another error, so that errors.Is and
// errors.As see through it. Its message does not repeat the prefix of an error that
// already has it.
type wrapped struct {
	msg string
	err error
}

func (e *wrapped) Error() string { return e.msg }
func (e *wrapped) Unwrap() error { return e.err }

// Wrapf returns nil for a nil err, else "tokendist: <format>: <err's message without
// its own prefix>", wrapping err (an OS error stays visible to errors.Is, for example
// fs.ErrNotExist).
func Wrapf(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return &wrapped{
		msg: Prefix + fmt.Sprintf(format, args...) + ": " + strings.TrimPrefix(err.Error(), Prefix),
		err: err,
	}
}

// Quote returns at most the first 48 bytes of b, quoted (≤ 200 bytes of text), for an
// error message.
func Quote(b []byte) string {
	const n = 48
	if len(b) <= n {
		return strconv.Quote(string(b))
	}
	return strconv.Quote(string(b[:n])) + fmt.Sprintf("... (%d bytes)", len(b))
}

// QuoteString is Quote for a string.
func QuoteString(s string) string {
	const n = 48
	if len(s) <= n {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:n]) + fmt.Sprintf("... (%d bytes)", len(s))
}
