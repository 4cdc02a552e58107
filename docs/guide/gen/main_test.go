package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestPlotsUpToDate regenerates the guide's plots into a temporary directory and checks
// that they equal the committed files (the runs are seeded), so the committed pictures
// are what `go run ./docs/guide/gen` draws.
func TestPlotsUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("draws five plots and six animations")
	}
	dir := t.TempDir()
	if err := run(dir); err != nil {
		t.Fatal(err)
	}
	for _, p := range plots {
		got, err := os.ReadFile(filepath.Join(dir, p.file))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("..", "img", p.file))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from docs/guide/img/%s: run go run ./docs/guide/gen", p.file, p.file)
		}
	}
}
