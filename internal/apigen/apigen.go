// Package apigen lists the exported API of a Go package, one line per exported name with
// its signature, in the spirit of the Go project's api/go1.txt. It reads the source
// syntactically (go/parser), so it needs no type checking and runs in milliseconds.
//
// Each line reads "pkg NAME, KIND ...": func, method, type (with one line per exported
// struct field and interface method), const and var. Parameter names are left out, so
// renaming a parameter does not change the surface; types are printed as written.
package apigen

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Surface returns the sorted lines of the exported API of the non-test Go files in dir,
// each starting "pkg NAME, " where NAME is the package's name. Methods and fields that
// a struct type promotes from an embedded type of the same package (exported or not)
// are listed as the struct's own: they are part of its API.
func Surface(dir string) ([]string, error) {
	return surface(dir, "")
}

// surface is Surface with the label that starts each line ("pkg LABEL, "); an empty
// label means the package's name.
func surface(dir, label string) ([]string, error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, nil
	}
	if files[0].Name.Name == "main" {
		return nil, nil // a command has no importable API
	}
	if label == "" {
		label = files[0].Name.Name
	}
	p := &lister{fset: fset, pkg: "pkg " + label + ", "}
	for _, f := range files {
		for _, d := range f.Decls {
			p.decl(d)
		}
	}
	p.promoted(files)
	lines := p.lines
	slices.Sort(lines)
	return slices.Compact(lines), nil
}

// ModuleSurface returns the API of every public package of the module rooted at root:
// each folder below it (root included) with non-test Go files, except package main,
// internal/, examples/, cmd/, docs/, testdata/ and hidden folders. Each line starts with
// the package's import path relative to the module's parent ("pkg tokendist, ",
// "pkg tokendist/plot, "), so that one golden file covers the module.
func ModuleSurface(root string) ([]string, error) {
	base := moduleName(root)
	var all []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		name := d.Name()
		if rel != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
			slices.Contains([]string{"internal", "examples", "cmd", "docs", "testdata", "api", "bench", "scripts", "experiments"}, name)) {
			return filepath.SkipDir
		}
		label := base
		if rel != "." {
			label = strings.TrimPrefix(base+"/"+filepath.ToSlash(rel), "/")
		}
		lines, err := surface(path, label)
		if err != nil {
			return err
		}
		all = append(all, lines...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(all)
	return all, nil
}

// moduleName returns the last element of the module path in root/go.mod, or "" when
// there is no go.mod (the root package is then labelled by its package name).
func moduleName(root string) string {
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
				return path.Base(strings.Trim(strings.TrimSpace(rest), `"`))
			}
		}
	}
	return ""
}

type lister struct {
	fset  *token.FileSet
	pkg   string
	lines []string
}

// method is one method declaration: its receiver is a pointer or not, and its signature.
type method struct {
	name string
	ptr  bool
	sig  string
}

// promoted adds the methods and fields that each exported struct type promotes from the
// types it embeds that are declared in the same package (Go spec, "Selectors"): a
// value-receiver method of an embedded T is in the method set of the struct, a
// pointer-receiver one in that of a pointer to it (or of the struct itself when T is
// embedded as *T). A name the struct declares, or promotes from a shallower depth,
// shadows a deeper one.
func (p *lister) promoted(files []*ast.File) {
	methods := map[string][]method{}
	structs := map[string]*ast.StructType{}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil || !d.Name.IsExported() {
					continue
				}
				recv := p.expr(d.Recv.List[0].Type)
				recv = strings.SplitN(recv, "[", 2)[0]
				base := strings.TrimPrefix(recv, "*")
				methods[base] = append(methods[base], method{d.Name.Name, strings.HasPrefix(recv, "*"), p.sig(d.Type)})
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					if ts, ok := sp.(*ast.TypeSpec); ok {
						if st, ok := ts.Type.(*ast.StructType); ok {
							structs[ts.Name.Name] = st
						}
					}
				}
			}
		}
	}
	for name, st := range structs {
		if !ast.IsExported(name) {
			continue
		}
		seen := map[string]bool{}
		for _, m := range methods[name] {
			seen[m.name] = true
		}
		for _, f := range st.Fields.List {
			for _, n := range f.Names {
				seen[n.Name] = true
			}
		}
		type level struct {
			typ string
			ptr bool // reached through a pointer embedding
		}
		cur := embedded(p, st, false)
		visited := map[string]bool{name: true}
		for len(cur) > 0 {
			var next []level
			found := map[string]bool{}
			for _, e := range cur {
				if visited[e.typ] {
					continue
				}
				visited[e.typ] = true
				for _, m := range methods[e.typ] {
					if seen[m.name] {
						continue
					}
					found[m.name] = true
					recv := name
					if m.ptr && !e.ptr {
						recv = "*" + name
					}
					p.add("method (%s) %s%s", recv, m.name, m.sig)
				}
				inner, ok := structs[e.typ]
				if !ok {
					continue
				}
				for _, f := range inner.Fields.List {
					for _, n := range f.Names {
						if n.IsExported() && !seen[n.Name] {
							found[n.Name] = true
							p.add("type %s struct, %s %s", name, n.Name, p.expr(f.Type))
						}
					}
				}
				for _, x := range embedded(p, inner, e.ptr) {
					next = append(next, level(x))
				}
			}
			for k := range found {
				seen[k] = true
			}
			cur = nil
			for _, x := range next {
				cur = append(cur, x)
			}
		}
	}
}

// embedded lists the local types that st embeds (no package qualifier), and whether
// each is reached through a pointer.
func embedded(p *lister, st *ast.StructType, viaPtr bool) []struct {
	typ string
	ptr bool
} {
	var out []struct {
		typ string
		ptr bool
	}
	for _, f := range st.Fields.List {
		if len(f.Names) != 0 {
			continue
		}
		t := p.expr(f.Type)
		ptr := strings.HasPrefix(t, "*")
		t = strings.TrimPrefix(t, "*")
		if strings.Contains(t, ".") {
			continue // another package's type: its own API lists it
		}
		out = append(out, struct {
			typ string
			ptr bool
		}{t, ptr || viaPtr})
	}
	return out
}

func (p *lister) add(format string, args ...any) {
	p.lines = append(p.lines, p.pkg+fmt.Sprintf(format, args...))
}

func (p *lister) expr(e ast.Expr) string {
	var b bytes.Buffer
	_ = printer.Fprint(&b, p.fset, e)
	return strings.Join(strings.Fields(b.String()), " ")
}

// fields prints a parameter or result list without names.
func (p *lister) fields(fl *ast.FieldList) string {
	if fl == nil {
		return ""
	}
	var parts []string
	for _, f := range fl.List {
		t := p.expr(f.Type)
		n := max(len(f.Names), 1)
		for range n {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, ", ")
}

func (p *lister) sig(ft *ast.FuncType) string {
	s := "(" + p.fields(ft.Params) + ")"
	res := p.fields(ft.Results)
	switch {
	case res == "":
	case ft.Results.NumFields() == 1 && !strings.Contains(res, ","):
		s += " " + res
	default:
		s += " (" + res + ")"
	}
	return s
}

func (p *lister) decl(d ast.Decl) {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if !d.Name.IsExported() {
			return
		}
		if d.Recv == nil {
			p.add("func %s%s", d.Name.Name, p.sig(d.Type))
			return
		}
		recv := p.expr(d.Recv.List[0].Type)
		if !ast.IsExported(strings.TrimPrefix(recv, "*")) {
			return
		}
		p.add("method (%s) %s%s", recv, d.Name.Name, p.sig(d.Type))
	case *ast.GenDecl:
		var last string // the type an implicit const repeats
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				p.typ(s)
			case *ast.ValueSpec:
				kind := strings.ToLower(d.Tok.String())
				t := ""
				if s.Type != nil {
					t = " " + p.expr(s.Type)
					last = t
				} else if d.Tok == token.CONST && len(s.Values) == 0 {
					t = last
				} else {
					last = ""
				}
				for i, n := range s.Names {
					if !n.IsExported() {
						continue
					}
					v := ""
					if d.Tok == token.CONST && s.Type == nil && i < len(s.Values) {
						v = " = " + p.expr(s.Values[i]) // an untyped constant's value is API
					}
					p.add("%s %s%s%s", kind, n.Name, t, v)
				}
			}
		}
	}
}

func (p *lister) typ(s *ast.TypeSpec) {
	if !s.Name.IsExported() {
		return
	}
	name := s.Name.Name
	switch t := s.Type.(type) {
	case *ast.StructType:
		p.add("type %s struct", name)
		for _, f := range t.Fields.List {
			if len(f.Names) == 0 { // embedded
				if ast.IsExported(strings.TrimPrefix(p.expr(f.Type), "*")) {
					p.add("type %s struct, embedded %s", name, p.expr(f.Type))
				}
				continue
			}
			for _, n := range f.Names {
				if n.IsExported() {
					p.add("type %s struct, %s %s", name, n.Name, p.expr(f.Type))
				}
			}
		}
	case *ast.InterfaceType:
		p.add("type %s interface", name)
		for _, m := range t.Methods.List {
			if len(m.Names) == 0 {
				p.add("type %s interface, embedded %s", name, p.expr(m.Type))
				continue
			}
			for _, n := range m.Names {
				if ft, ok := m.Type.(*ast.FuncType); ok && n.IsExported() {
					p.add("type %s interface, %s%s", name, n.Name, p.sig(ft))
				}
			}
		}
	default:
		alias := ""
		if s.Assign.IsValid() {
			alias = "= "
		}
		p.add("type %s %s%s", name, alias, p.expr(s.Type))
	}
}
