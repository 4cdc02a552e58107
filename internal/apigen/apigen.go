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
	"path/filepath"
	"slices"
	"strings"
)

// Surface returns the sorted lines of the exported API of the non-test Go files in dir.
func Surface(dir string) ([]string, error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var lines []string
	pkgName := ""
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		if pkgName == "" {
			pkgName = f.Name.Name
		}
		p := &lister{fset: fset, pkg: "pkg " + f.Name.Name + ", "}
		for _, d := range f.Decls {
			p.decl(d)
		}
		lines = append(lines, p.lines...)
	}
	slices.Sort(lines)
	return slices.Compact(lines), nil
}

type lister struct {
	fset  *token.FileSet
	pkg   string
	lines []string
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
