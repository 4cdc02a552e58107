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
	// A name added after the freeze is unreleased: -w may remove it from next.txt.
	writeFile(t, filepath.Join(dir, "q.go"), "package p\n\nfunc Renamed() {}\n")
	if err := Update(dir, true, new(strings.Builder)); err != nil {
		t.Fatalf("removal from next.txt: %v", err)
	}
	if next, _, _ = ReadGolden(filepath.Join(dir, NextFile)); len(next) != 1 || next[0] != "pkg p, func Renamed()" {
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

// TestSurfacePromoted checks that methods and fields promoted from embedded types of the
// same package are listed on the embedding type, with Go's method-set rules, and that a
// declared name shadows a promoted one.
func TestSurfacePromoted(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "p.go"), `package p

type engine struct{ Rate int; inner }
func (e *engine) Step() error { return nil }
func (e engine) Name() string { return "" }
func (e *engine) hidden() {}
type inner struct{ Depth int }
func (inner) Deep() int { return 0 }
type A struct{ engine }
func (a *A) Name() string { return "a" }
type B struct{ *engine }
type c struct{ engine }
`)
	got, err := Surface(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"pkg p, method (*A) Name() string",
		"pkg p, method (*A) Step() error",
		"pkg p, method (A) Deep() int",
		"pkg p, method (B) Deep() int",
		"pkg p, method (B) Name() string",
		"pkg p, method (B) Step() error",
		"pkg p, type A struct",
		"pkg p, type A struct, Depth int",
		"pkg p, type A struct, Rate int",
		"pkg p, type B struct",
		"pkg p, type B struct, Depth int",
		"pkg p, type B struct, Rate int",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("surface:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestModuleSurface checks that every public package of a module is listed under its
// path, and that internal, cmd, examples and package main are not.
func TestModuleSurface(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/lib\n")
	writeFile(t, filepath.Join(dir, "lib.go"), "package lib\nfunc Root() {}\n")
	writeFile(t, filepath.Join(dir, "sub", "sub.go"), "package sub\nfunc Sub() {}\n")
	writeFile(t, filepath.Join(dir, "internal", "x", "x.go"), "package x\nfunc X() {}\n")
	writeFile(t, filepath.Join(dir, "cmd", "c", "main.go"), "package main\nfunc Main() {}\n")
	writeFile(t, filepath.Join(dir, "tool", "main.go"), "package main\nfunc Tool() {}\n")
	got, err := ModuleSurface(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"pkg lib, func Root()", "pkg lib/sub, func Sub()"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("module surface:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
