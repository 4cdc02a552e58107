package experiment

import (
	"fmt"

	"github.com/tokendist/tokendist/internal/errs"
)

// Every error the package returns starts with "tokendist: " exactly once, names the bad
// value (for an experiment file, the file and line first: "tokendist: file.yaml:12:
// key: ..."), and wraps its cause, so that errors.Is finds the sentinel of the module
// (tokendist.ErrBadParameter for a bad registry parameter), ErrFile for a bad experiment
// file, an operating-system error (fs.ErrNotExist for a missing file) or the context's
// error.

// ErrFile marks an error in an experiment file (a FileError): errors.Is(err, ErrFile)
// tells a bad file from a failed run or database.
var ErrFile = fmt.Errorf("%sbad experiment file", errs.Prefix)

// FileError is an error at a place in an experiment file. Its message is
// "tokendist: FILE:LINE: KEY: MSG" (without LINE or KEY when unknown).
type FileError struct {
	// File is the file's path and Line the 1-based line (0: the whole file).
	File string
	Line int
	// Key is the dotted key at fault ("network.n", "stop.max_steps"; empty for none).
	Key string
	// Msg says what is wrong, naming the bad value.
	Msg string
	// Err is the cause, if any: the operating system's error for a file that cannot be
	// read, the registry's for a bad parameter. errors.Is and errors.As see it.
	Err error
}

// Error returns "tokendist: FILE:LINE: KEY: MSG".
func (e *FileError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Key != "" {
		return fmt.Sprintf("%s%s: %s: %s", errs.Prefix, loc, e.Key, e.Msg)
	}
	return fmt.Sprintf("%s%s: %s", errs.Prefix, loc, e.Msg)
}

// Unwrap returns ErrFile and the cause, so that errors.Is(err, ErrFile) holds for every
// FileError and errors.Is(err, fs.ErrNotExist) for a file that does not exist.
func (e *FileError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrFile}
	}
	return []error{ErrFile, e.Err}
}

// wrapf returns nil for a nil err, else "tokendist: <format>: <err's message without its
// own prefix>", wrapping err.
func wrapf(err error, format string, args ...any) error { return errs.Wrapf(err, format, args...) }
