package fleet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBoltStoreMirrorWriteFails: a Save whose mirror write fails returns an error
// naming the mirror (the state is in the database, but the mirror, which detects a
// rolled-back store, no longer follows it).
func TestBoltStoreMirrorWriteFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node.db")
	s, err := OpenBoltStore(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Save([]byte("one")); err != nil {
		t.Fatal(err)
	}
	ro, err := os.Open(path + SeqSuffix) // read-only: WriteAt fails
	if err != nil {
		t.Fatal(err)
	}
	_ = s.mir.Close()
	s.mir = ro
	err = s.Save([]byte("two"))
	if err == nil || !strings.HasPrefix(err.Error(), "tokendist: ") || !strings.Contains(err.Error(), "mirror") {
		t.Errorf("Save with a failing mirror write: %v; want an error naming the mirror", err)
	}
}
