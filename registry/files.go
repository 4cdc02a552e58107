package registry

import (
	"github.com/tokendist/tokendist/internal/files"
)

// Bytes allocated per byte of input by the readers of network and trace files, which
// bound the size of a file they accept (files.Limit): the edge list keeps about two
// ints per edge of at least four bytes of text; gonum's DOT parser builds an AST of
// about a kilobyte per short statement; a graph6 byte holds up to six edges of about 40
// bytes each while they are collected and built; XML decoding copies every name and
// attribute and keeps two strings per edge.
const (
	edgeListFactor = 8
	dotFactor      = 1024
	graph6Factor   = 256
	graphMLFactor  = 32
	traceFactor    = 8
	maxFileBytes   = 1 << 34 // 16 GiB, whatever the budget
)

// openFile opens a network or trace file named by a parameter: only a regular file (a
// device such as /dev/zero, a FIFO or a directory is refused before anything is read)
// of at most the memory budget divided by factor bytes, the bytes its reader allocates
// per byte of input. Reads past the limit (a file that grows) fail with an error
// wrapping tokendist.ErrTooLarge. what names the file in errors ("edge list", "DOT
// file"). Every reader of a file named in an experiment opens it here.
func openFile(path, what string, factor int64) (*files.File, error) {
	return files.Open(path, what, files.Limit(factor, maxFileBytes))
}

// readFile reads a whole file under openFile's policy.
func readFile(path, what string, factor int64) ([]byte, error) {
	return files.ReadFile(path, what, files.Limit(factor, maxFileBytes))
}
