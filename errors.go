package tokendist

import (
	"fmt"
	"strings"
)

// errPrefix starts every error the package returns.
const errPrefix = "tokendist: "

// wrappedError is an error with the package prefix that wraps another error, so that
// errors.Is and errors.As see through it. Its message does not repeat the prefix of an
// error that already has it.
type wrappedError struct {
	msg string
	err error
}

func (e *wrappedError) Error() string { return e.msg }
func (e *wrappedError) Unwrap() error { return e.err }

// wrapf returns nil for a nil err, else "tokendist: <format>: <err's message without
// its own prefix>", wrapping err.
func wrapf(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return &wrappedError{
		msg: errPrefix + fmt.Sprintf(format, args...) + ": " + strings.TrimPrefix(err.Error(), errPrefix),
		err: err,
	}
}
