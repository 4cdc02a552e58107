package tokendist_test

import (
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDocComments parses the package and fails on any exported name — constant,
// variable, function, type, method, struct field or interface method — without a doc
// comment. A grouped declaration's comment documents its names, and a field or constant
// in a run of consecutive lines is documented by the run's comment when that names it.
func TestDocComments(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.ParseComments)
	require.NoError(t, err)
	pkg := pkgs["tokendist"]
	require.NotNil(t, pkg, "package tokendist not found")
	dp := doc.New(pkg, "github.com/tokendist/tokendist", doc.PreserveAST)
	var missing []string
	miss := func(pos token.Pos, what string) {
		p := fset.Position(pos)
		missing = append(missing, p.Filename+": "+what)
	}
	values := func(vs []*doc.Value, kind string) {
		for _, v := range vs {
			if strings.TrimSpace(v.Doc) != "" {
				continue
			}
			// As for fields: a spec is documented by its own comment or by the comment of
			// its group (consecutive lines) when that comment names it.
			group, prevLine := "", -10
			for _, spec := range v.Decl.Specs {
				vs := spec.(*ast.ValueSpec)
				line := fset.Position(vs.Pos()).Line
				if vs.Doc != nil {
					line = fset.Position(vs.Doc.Pos()).Line
				}
				if line > prevLine+1 {
					group = ""
				}
				prevLine = fset.Position(vs.End()).Line
				if vs.Doc != nil {
					group = vs.Doc.Text()
				}
				if vs.Doc != nil || vs.Comment != nil {
					continue
				}
				for _, n := range vs.Names {
					if n.IsExported() && !mentions(group, n.Name) {
						miss(n.Pos(), kind+" "+n.Name)
					}
				}
			}
		}
	}
	funcs := func(fs []*doc.Func, recv string) {
		for _, f := range fs {
			if ast.IsExported(f.Name) && strings.TrimSpace(f.Doc) == "" {
				miss(f.Decl.Pos(), "func "+recv+f.Name)
			}
		}
	}
	// fields checks the fields of a struct or the methods of an interface. A name is
	// documented by its own comment, or by the comment of the group it belongs to
	// (consecutive lines without a blank line) when that comment names it; an interface
	// method also by the type's comment when that names it.
	fields := func(typ, typDoc string, list *ast.FieldList, kind string) {
		if list == nil {
			return
		}
		group := ""
		prevLine := -10
		for _, f := range list.List {
			line := fset.Position(f.Pos()).Line
			if f.Doc != nil {
				line = fset.Position(f.Doc.Pos()).Line
			}
			if line > prevLine+1 {
				group = ""
			}
			prevLine = fset.Position(f.End()).Line
			if f.Doc != nil {
				group = f.Doc.Text()
			}
			if f.Doc != nil || f.Comment != nil {
				continue
			}
			names := f.Names
			if len(names) == 0 { // embedded
				if id, ok := f.Type.(*ast.Ident); ok {
					names = []*ast.Ident{id}
				}
			}
			for _, n := range names {
				if !n.IsExported() || mentions(group, n.Name) || kind == "method" && mentions(typDoc, n.Name) {
					continue
				}
				miss(n.Pos(), kind+" "+typ+"."+n.Name)
			}
		}
	}
	values(dp.Consts, "const")
	values(dp.Vars, "var")
	funcs(dp.Funcs, "")
	for _, typ := range dp.Types {
		if strings.TrimSpace(typ.Doc) == "" {
			miss(typ.Decl.Pos(), "type "+typ.Name)
		}
		values(typ.Consts, "const")
		values(typ.Vars, "var")
		funcs(typ.Funcs, "")
		funcs(typ.Methods, typ.Name+".")
		for _, spec := range typ.Decl.Specs {
			ts := spec.(*ast.TypeSpec)
			switch tt := ts.Type.(type) {
			case *ast.StructType:
				fields(ts.Name.Name, typ.Doc, tt.Fields, "field")
			case *ast.InterfaceType:
				fields(ts.Name.Name, typ.Doc, tt.Methods, "method")
			}
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Error("no doc comment: " + m)
	}
}

// mentions reports whether text contains name as a whole word.
func mentions(text, name string) bool {
	for i := 0; ; {
		k := strings.Index(text[i:], name)
		if k < 0 {
			return false
		}
		k += i
		end := k + len(name)
		before := k == 0 || !isWordByte(text[k-1])
		after := end == len(text) || !isWordByte(text[end])
		if before && after {
			return true
		}
		i = k + 1
	}
}

func isWordByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// goBlock matches a fenced Go block in Markdown.
var goBlock = regexp.MustCompile("(?s)```go\n(.*?)```")

// TestDocSnippetsCompile builds every Go program shown in the README and the guides, so
// that a reader's copy-and-paste compiles: every ```go block of README.md must be a whole
// program (package main); in docs/ the blocks that are whole programs are built.
func TestDocSnippetsCompile(t *testing.T) {
	t.Parallel()
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
	// The programs are built in a module of their own under t.TempDir() (go test must
	// not write into the work tree), which requires this module through a replace
	// directive and starts from its go.sum.
	root, err := os.Getwd()
	require.NoError(t, err)
	dir := t.TempDir()
	sum, err := os.ReadFile("go.sum")
	require.NoError(t, err)
	gomod := "module snippets\n\ngo 1.24.0\n\nrequire github.com/tokendist/tokendist v0.0.0\n\nreplace github.com/tokendist/tokendist => " + strconv.Quote(root) + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644))
	var pkgs []string
	where := map[string]string{}
	for _, f := range files {
		text, err := os.ReadFile(f)
		require.NoError(t, err)
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
			require.NoError(t, os.MkdirAll(filepath.Join(dir, name), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, name, "main.go"), []byte(code), 0o644))
			pkg := "./" + name
			pkgs = append(pkgs, pkg)
			where[pkg] = fmt.Sprintf("%s block %d", f, i+1)
		}
	}
	require.NotEmpty(t, pkgs, "README.md shows no Go program")
	for _, pkg := range pkgs {
		cmd := exec.Command(goTool, "vet", pkg)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s does not build or vet: %v\n%s", where[pkg], err, out)
		}
	}
}

// TestCoreImports holds the root package to what doc.go promises: it imports only the
// standard library, gonum's graph and mat packages (with what they need), the
// module's internal packages and package node (the node-program contract).
// Plotting, fonts, images, YAML and SQLite live in the
// packages beside it.
func TestCoreImports(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the dependencies")
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").Output()
	require.NoError(t, err)
	deps := strings.Fields(string(out))
	require.Greater(t, len(deps), 10)
	for _, d := range deps {
		first := strings.SplitN(d, "/", 2)[0]
		switch {
		case !strings.Contains(first, "."): // the standard library
		case strings.HasPrefix(d, "github.com/tokendist/tokendist"):
			require.Equal(t, "github.com/tokendist/tokendist", d[:len("github.com/tokendist/tokendist")])
			rest := strings.TrimPrefix(d, "github.com/tokendist/tokendist")
			// node is the node-program contract, standard library only (checked below
			// too: its dependencies are in this list).
			require.True(t, rest == "" || rest == "/node" || strings.HasPrefix(rest, "/internal/"), "the root imports %s", d)
		case strings.HasPrefix(d, "gonum.org/v1/gonum/"):
		default:
			t.Errorf("the root package depends on %s", d)
		}
		for _, banned := range []string{"gonum.org/v1/plot", "golang.org/x/image", "fonts", "sqlite", "yaml"} {
			require.NotContains(t, d, banned, "the root package depends on %s", d)
		}
	}
}

// TestCoreBinarySize builds the smallest user program (testdata/onebalancer: one
// balancer on a ring) and checks that it stays under 5 MB: the core pulls in no fonts or
// plotting (it was 10.5 MB when it did).
func TestCoreBinarySize(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: not building a program")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out := filepath.Join(t.TempDir(), "onebalancer")
	cmd := exec.Command(gobin, "build", "-o", out, "./testdata/onebalancer")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", msg)
	st, err := os.Stat(out)
	require.NoError(t, err)
	t.Logf("onebalancer: %d bytes", st.Size())
	require.LessOrEqual(t, st.Size(), int64(5<<20), "a one-balancer program is %d bytes", st.Size())
}
