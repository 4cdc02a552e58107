package tokendist_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goBlock matches a fenced Go block in Markdown.
var goBlock = regexp.MustCompile("(?s)```go\n(.*?)```")

// TestDocSnippetsCompile builds every Go program shown in the README and the guides, so
// that a reader's copy-and-paste compiles: every ```go block of README.md must be a whole
// program (package main); in docs/ the blocks that are whole programs are built.
func TestDocSnippetsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds programs with the go command")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	files, _ := filepath.Glob("docs/*/*.md")
	more, _ := filepath.Glob("docs/*.md")
	files = append(append([]string{"README.md"}, more...), files...)
	dir, err := os.MkdirTemp(".", ".snippets-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var pkgs []string
	where := map[string]string{}
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range goBlock.FindAllSubmatch(text, -1) {
			code := string(m[1])
			whole := strings.HasPrefix(strings.TrimSpace(code), "package main")
			if !whole {
				if f == "README.md" {
					t.Errorf("%s: Go block %d is not a whole program (package main):\n%s", f, i+1, code)
				}
				continue
			}
			name := fmt.Sprintf("s%d", len(pkgs))
			if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name, "main.go"), []byte(code), 0o644); err != nil {
				t.Fatal(err)
			}
			pkg := "./" + filepath.ToSlash(filepath.Join(dir, name))
			pkgs = append(pkgs, pkg)
			where[pkg] = fmt.Sprintf("%s block %d", f, i+1)
		}
	}
	if len(pkgs) == 0 {
		t.Fatal("README.md shows no Go program")
	}
	for _, pkg := range pkgs {
		cmd := exec.Command(goTool, "vet", pkg)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s does not build or vet: %v\n%s", where[pkg], err, out)
		}
	}
}
