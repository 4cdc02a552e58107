package apigen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

const src = `package p

const Max = 1 << 3
type Mode int
const (
	ModeA Mode = iota
	ModeB
)
type T struct {
	A, B int
	c    int
}
type I interface{ M(x int) (int, error) }
func New(a, b int, s ...string) (*T, error) { return nil, nil }
func (t *T) Get() int { return 0 }
func (t *T) hidden() {}
func helper() {}
`

func TestSurfaceLines(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "p.go"), src)
	got, err := Surface(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"pkg p, const Max = 1 << 3",
		"pkg p, const ModeA Mode",
		"pkg p, const ModeB Mode",
		"pkg p, func New(int, int, ...string) (*T, error)",
		"pkg p, method (*T) Get() int",
		"pkg p, type I interface",
		"pkg p, type I interface, M(int) (int, error)",
		"pkg p, type Mode int",
		"pkg p, type T struct",
		"pkg p, type T struct, A int",
		"pkg p, type T struct, B int",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("surface:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestDiffAndUpdate(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "p.go"), src)
	if err := Update(dir, false, new(strings.Builder)); err == nil {
		t.Fatal("no golden file: want a difference")
	}
	if err := Update(dir, true, new(strings.Builder)); err != nil {
		t.Fatal(err)
	}
	if removed, added, err := Diff(dir); err != nil || len(removed)+len(added) != 0 {
		t.Fatalf("after -w: removed %v added %v err %v", removed, added, err)
	}
	// A changed signature is a removal plus an addition.
	writeFile(t, filepath.Join(dir, "p.go"), strings.Replace(src, "func New(a, b int,", "func New(a int, b int64,", 1))
	removed, added, err := Diff(dir)
	if err != nil || len(removed) != 1 || len(added) != 1 {
		t.Fatalf("changed signature: removed %v added %v err %v", removed, added, err)
	}
	// After the freeze, -w records additions in next.txt and refuses removals.
	writeFile(t, filepath.Join(dir, "p.go"), src)
	b, _ := os.ReadFile(filepath.Join(dir, V1File))
	writeFile(t, filepath.Join(dir, V1File), FrozenMark+"\n"+string(b))
	writeFile(t, filepath.Join(dir, "q.go"), "package p\n\nfunc Extra() {}\n")
	if err := Update(dir, true, new(strings.Builder)); err != nil {
		t.Fatal(err)
	}
	next, _, _ := ReadGolden(filepath.Join(dir, NextFile))
	if len(next) != 1 || next[0] != "pkg p, func Extra()" {
		t.Fatalf("next.txt = %v", next)
	}
	if err := os.Remove(filepath.Join(dir, "q.go")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "p.go"), strings.Replace(src, "func helper() {}", "", 1)+"\n")
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(strings.Replace(src, "func (t *T) Get() int { return 0 }", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Update(dir, true, new(strings.Builder)); err == nil {
		t.Fatal("removal from a frozen v1: want an error")
	}
}
