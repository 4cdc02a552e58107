package files

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tokendist/tokendist/internal/errs"
)

// TestOpen: regular files within the limit are read whole; devices, FIFOs, directories,
// missing, too long and too large files are refused before anything is read, with a
// prefixed error that wraps the right sentinel; a FIFO is never waited on.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	require.NoError(t, os.WriteFile(small, []byte("0 1\n"), 0o644))
	exact := filepath.Join(dir, "exact")
	require.NoError(t, os.WriteFile(exact, []byte("12345678"), 0o644))
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	cases := []struct {
		name, path string
		limit      int64
		want       error // nil: read successfully
		data       string
	}{
		{"regular", small, 100, nil, "0 1\n"},
		{"exactly at the limit", exact, 8, nil, "12345678"},
		{"over the limit", exact, 7, errs.ErrTooLarge, ""},
		{"dev-zero", "/dev/zero", 1 << 30, ErrNotRegular, ""},
		{"dev-null", "/dev/null", 1 << 30, ErrNotRegular, ""},
		{"fifo", fifo, 1 << 30, ErrNotRegular, ""},
		{"directory", dir, 1 << 30, ErrNotRegular, ""},
		{"missing", filepath.Join(dir, "none"), 100, fs.ErrNotExist, ""},
		{"long path", strings.Repeat("/x", 5000), 100, errs.ErrBadParameter, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			data, err := ReadFile(c.path, "test file", c.limit)
			require.Less(t, time.Since(start), 5*time.Second)
			if c.want == nil {
				require.NoError(t, err)
				require.Equal(t, c.data, string(data))
				return
			}
			require.ErrorIs(t, err, c.want)
			require.True(t, strings.HasPrefix(err.Error(), "tokendist: "), err.Error())
			require.Equal(t, 1, strings.Count(err.Error(), "tokendist: "), err.Error())
			require.Less(t, len(err.Error()), 400, "the error echoes the path")
			if !errors.Is(err, errs.ErrTooLarge) {
				require.ErrorIs(t, err, errs.ErrBadParameter)
			}
		})
	}
}

// TestGrowsPastLimit: a file that grows after it was opened stops at the limit.
func TestGrowsPastLimit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "grow")
	require.NoError(t, os.WriteFile(p, []byte("abcd"), 0o644))
	f, err := Open(p, "growing file", 6)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, os.WriteFile(p, []byte("abcdefghij"), 0o644))
	_, err = io.ReadAll(f)
	require.ErrorIs(t, err, errs.ErrTooLarge)
}

func TestName(t *testing.T) {
	require.Equal(t, "/a/b", Name("/a/b"))
	long := strings.Repeat("p", 1<<20)
	require.Less(t, len(Name(long)), 100)
	require.Contains(t, Name(long), "(1048576 bytes)")
}
