package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestAnimationsUpToDate draws the guide's animations into a temporary directory and
// checks that they equal the committed files (the runs are seeded and the layouts
// fixed), so the committed GIFs are what `go run ./docs/guide/anim` draws.
func TestAnimationsUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("draws five animations")
	}
	dir := t.TempDir()
	if err := run(dir); err != nil {
		t.Fatal(err)
	}
	for _, m := range movies {
		got, err := os.ReadFile(filepath.Join(dir, m.file))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("..", "img", m.file))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from docs/guide/img/%s: run go run ./docs/guide/anim", m.file, m.file)
		}
	}
}
