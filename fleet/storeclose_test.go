package fleet

import (
	"os"
	"path/filepath"
	"testing"
)

// openFDs counts the process's open file descriptors (Linux); -1 elsewhere.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

// TestBoltStoreCloseReleases: Close releases every file the store opened (the
// database and its mirror), and a second Close is a no-op returning nil.
func TestBoltStoreCloseReleases(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node.db")
	n0 := openFDs(t)
	if n0 < 0 {
		t.Skip("no /proc/self/fd")
	}
	s, err := OpenBoltStore(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save([]byte("state")); err != nil {
		t.Fatal(err)
	}
	if n := openFDs(t); n < n0+2 {
		t.Fatalf("%d descriptors open with the store, %d before: want the database and its mirror open", n, n0)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("a second Close: %v; want nil", err)
	}
	if n := openFDs(t); n != n0 {
		t.Errorf("%d descriptors open after Close, %d before the store was opened", n, n0)
	}
}
