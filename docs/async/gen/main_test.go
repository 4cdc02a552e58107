package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestGenerateQuick sweeps the quick variants of the three files (into a temporary
// database) and checks the tables' shape: one row per fault (and patience) of the
// files' network_model blocks, every run counted once.
func TestGenerateQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("sweeps the quick variants of three experiment files")
	}
	tables, err := generate(filepath.Join("..", "..", "..", "experiments"), "", true)
	if err != nil {
		t.Fatal(err)
	}
	// 9 faults (none, 4 delays, 2 losses, 2 crash rates); the first two files × 2 patiences.
	for name, rows := range map[string]int{"threshold1": 18, "diffusion": 18, "perfect-tree": 9} {
		lines := strings.Split(strings.TrimSpace(tables[name]), "\n")
		if len(lines) != rows+2 {
			t.Errorf("%s: %d lines, want %d rows and a header:\n%s", name, len(lines), rows, tables[name])
		}
	}
	// Two seeds of one network per cell in the quick variants.
	if !strings.Contains(tables["threshold1"], "| 4 | delay on [1, 16] | 2 |") ||
		!strings.Contains(tables["perfect-tree"], "| loss 20 % | 2 | 2 |") {
		t.Errorf("cells:\n%s\n%s", tables["threshold1"], tables["perfect-tree"])
	}
	doc := "a\n<!-- gen:threshold1 begin -->\nSTALE\n<!-- gen:threshold1 end -->\nb\n" +
		"<!-- gen:diffusion begin -->\n<!-- gen:diffusion end -->\n<!-- gen:perfect-tree begin -->\nx\n<!-- gen:perfect-tree end -->\n"
	out, err := replace([]byte(doc), tables)
	if err != nil {
		t.Fatal(err)
	}
	again, err := replace(out, tables)
	if err != nil || string(again) != string(out) || strings.Contains(string(out), "STALE") ||
		!strings.HasPrefix(string(out), "a\n<!-- gen:threshold1 begin -->\n| patience |") {
		t.Errorf("replace: %v\n%s", err, out)
	}
	if _, err := replace([]byte("no markers"), tables); err == nil {
		t.Error("a document without markers is accepted")
	}
}
