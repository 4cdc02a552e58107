package fleet

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokendist/tokendist"
)

func TestBoltStoreRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node.db")
	s, err := OpenBoltStore(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Load(); err != nil || got != nil {
		t.Fatalf("Load of a new store = %q, %v; want nil, nil", got, err)
	}
	states := [][]byte{{}, []byte("a"), bytes.Repeat([]byte{7}, 1<<16), []byte("last")}
	for _, st := range states {
		if err := s.Save(st); err != nil {
			t.Fatal(err)
		}
		got, err := s.Load()
		if err != nil || !bytes.Equal(got, st) || got == nil {
			t.Fatalf("Load after Save(%d bytes) = %d bytes, %v", len(st), len(got), err)
		}
	}
	got, _ := s.Load()
	got[0] = 'X' // Load returns a copy
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = OpenBoltStore(path, nil) // the state survives a reopen
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := s.Load(); err != nil || string(got) != "last" {
		t.Fatalf("Load after reopen = %q, %v; want \"last\"", got, err)
	}
}

func TestBoltStoreBadInput(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, bytes.Repeat([]byte("not bbolt "), 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		opts *BoltOptions
		want string
	}{
		{"", nil, "store path is empty"},
		{filepath.Join(dir, "missing", "x.db"), nil, "does not exist"},
		{filepath.Join(dir, "x.db"), &BoltOptions{Timeout: -1}, "negative"},
		{garbage, nil, garbage},
	} {
		s, err := OpenBoltStore(tc.path, tc.opts)
		if err == nil {
			s.Close()
			t.Errorf("OpenBoltStore(%q) succeeded", tc.path)
			continue
		}
		if !strings.HasPrefix(err.Error(), "tokendist: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("OpenBoltStore(%q) error %q; want the prefix and %q", tc.path, err, tc.want)
		}
	}
	s, err := OpenBoltStore(filepath.Join(dir, "ok.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(nil); !errors.Is(err, tokendist.ErrBadParameter) {
		t.Errorf("Save(nil) = %v; want ErrBadParameter", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(); err == nil || !strings.HasPrefix(err.Error(), "tokendist: ") {
		t.Errorf("Load after Close = %v; want a tokendist error", err)
	}
}

// TestBoltStoreLocked: a second process (here a second open) waits for the lock at most
// its Timeout and names the file.
func TestBoltStoreLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node.db")
	s, err := OpenBoltStore(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s2, err := OpenBoltStore(path, &BoltOptions{Timeout: 50e6})
	if err == nil {
		s2.Close()
		t.Fatal("a second open of a locked store succeeded")
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name the file", err)
	}
}
