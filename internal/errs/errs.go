// Package errs holds the error values and helpers that every package of the module
// shares, so that one policy holds everywhere: every error starts with "tokendist: ",
// names the bad value, and wraps a sentinel that errors.Is finds. The root package
// re-exports the sentinels (tokendist.ErrBadParameter is errs.ErrBadParameter), so an
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
	ErrNotConnected    = errors.New("tokendist: network is not connected")
	ErrNotTree         = errors.New("tokendist: network is not a tree")
	ErrBadParameter    = errors.New("tokendist: bad parameter")
	ErrNilNetwork      = errors.New("tokendist: nil network")
	ErrNilBalancer     = errors.New("tokendist: nil balancer")
	ErrBadLoads        = errors.New("tokendist: bad loads")
	ErrInvalidColoring = errors.New("tokendist: invalid edge colouring")
	ErrOverflow        = errors.New("tokendist: integer overflow")
	ErrTooLarge        = errors.New("tokendist: allocation exceeds the memory budget")
	ErrNotConverged    = errors.New("tokendist: iteration did not converge")
	ErrDeadlock        = errors.New("tokendist: perfect tree: deadlock")
	ErrProtocol        = errors.New("tokendist: perfect tree: protocol failure")
	ErrBadDag          = errors.New("tokendist: inconsistent growing dag")
	ErrTaskBudget      = errors.New("tokendist: task budget exhausted")
	ErrConcurrentUse   = errors.New("tokendist: balancer used by two runs at once")
	ErrNotInitialized  = errors.New("tokendist: Step before Init")
)

// BadParam returns an error wrapping ErrBadParameter whose message names the value.
func BadParam(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadParameter}, args...)...)
}

// TooLargeParam returns an error wrapping both ErrBadParameter and ErrTooLarge whose
// message names the value: a size no network or buffer of the module can hold (a
// hypercube of dimension 40), refused before anything is allocated, so that
// errors.Is(err, ErrTooLarge) finds it as it finds the memory budget's refusals.
func TooLargeParam(format string, args ...any) error {
	return &sizeError{msg: ErrBadParameter.Error() + ": " + fmt.Sprintf(format, args...)}
}

// sizeError is TooLargeParam's error.
type sizeError struct{ msg string }

func (e *sizeError) Error() string   { return e.msg }
func (e *sizeError) Unwrap() []error { return []error{ErrBadParameter, ErrTooLarge} }

// Overflowf returns an error wrapping ErrOverflow that names the computation.
func Overflowf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrOverflow}, args...)...)
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
