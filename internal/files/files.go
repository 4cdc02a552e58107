// Package files opens the files the module reads by name (experiment files, network
// files, trace files, databases' sources) under one policy: only regular files (a
// device such as /dev/zero, a FIFO, a socket or a directory is refused before it is
// read, and a FIFO is never waited on), and never more than a size limit (a file larger
// than the limit, or one that grows past it while it is read, is refused with an error
// wrapping errs.ErrTooLarge). Every error starts with "tokendist: " and names the file.
package files

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/tokendist/tokendist/internal/errs"
)

// ErrNotRegular marks a path that is not a regular file (the error also wraps
// errs.ErrBadParameter).
var ErrNotRegular = errors.New("not a regular file")

// kind names the type of a non-regular file for an error message.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// File is an open regular file whose reads stop with an error at the limit.
type File struct {
	f     *os.File
	what  string
	path  string
	limit int64
	read  int64
	// Size is the file's size when it was opened.
	Size int64
}

// Read reads from the file; reading past the limit returns an error wrapping
// errs.ErrTooLarge.
func (f *File) Read(p []byte) (int, error) {
	if f.read >= f.limit {
		// Probe one byte: a file exactly at the limit ends cleanly.
		var b [1]byte
		n, err := f.f.Read(b[:])
		if n > 0 {
			return 0, f.tooLarge()
		}
		return 0, err
	}
	if int64(len(p)) > f.limit-f.read {
		p = p[:f.limit-f.read]
	}
	n, err := f.f.Read(p)
	f.read += int64(n)
	return n, err
}

func (f *File) tooLarge() error {
	return fmt.Errorf("%w: %s %s is larger than %d bytes", errs.ErrTooLarge, f.what, f.path, f.limit)
}

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// Open opens path for reading if it is a regular file of at most limit bytes. what
// names the file in errors ("edge list", "experiment file"). An error wraps
// errs.ErrTooLarge for a file over the limit, else errs.ErrBadParameter and the
// operating system's error (fs.ErrNotExist for a missing file).
func Open(path, what string, limit int64) (*File, error) {
	name := Name(path)
	if len(path) > maxPath {
		return nil, errs.BadParam("%s path %s is longer than %d bytes", what, name, maxPath)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, osErr(err, what, name)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s %s is %s: %w", errs.ErrBadParameter, what, name, kind(fi.Mode()), ErrNotRegular)
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%w: %s %s has %d bytes, more than the limit %d", errs.ErrTooLarge, what, name, fi.Size(), limit)
	}
	// O_NONBLOCK: if the path was replaced by a FIFO since the Stat, the open does not
	// wait for a writer; the Stat below refuses it.
	fh, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, osErr(err, what, name)
	}
	fi2, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, errs.Wrapf(err, "%s %s", what, name)
	}
	if !fi2.Mode().IsRegular() {
		fh.Close()
		return nil, fmt.Errorf("%w: %s %s is %s: %w", errs.ErrBadParameter, what, name, kind(fi2.Mode()), ErrNotRegular)
	}
	return &File{f: fh, what: what, path: name, limit: limit, Size: fi2.Size()}, nil
}

// ReadFile returns the contents of path if it is a regular file of at most limit bytes.
func ReadFile(path, what string, limit int64) ([]byte, error) {
	f, err := Open(path, what, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, errs.Wrapf(err, "%s %s", what, Name(path))
	}
	return data, nil
}

// Limit returns the size limit of a file whose reader allocates about factor bytes per
// byte of input: the memory budget divided by factor, at most max.
func Limit(factor, max int64) int64 {
	if factor < 1 {
		factor = 1
	}
	return min(errs.MemoryBudget()/factor, max)
}

// maxPath bounds the length of a path (Linux's PATH_MAX).
const maxPath = 4096

// Name returns path for an error message: as it is when short, else quoted and cut to
// 48 bytes (errs.Quote).
func Name(path string) string {
	if len(path) <= 200 {
		return path
	}
	return errs.Quote([]byte(path))
}

// osErr wraps an operating-system error of a file with a short name instead of the
// error's own copy of the path.
func osErr(err error, what, name string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = &fs.PathError{Op: pe.Op, Path: name, Err: pe.Err}
	}
	return fmt.Errorf("%w: %s: %w", errs.ErrBadParameter, what, err)
}
