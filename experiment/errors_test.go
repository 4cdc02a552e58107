package experiment

import (
	"database/sql"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/registry"
)

// TestErrorsPrefixed: a table of bad inputs to every exported function that can fail;
// each error starts with "tokendist: " exactly once and matches its sentinel.
func TestErrorsPrefixed(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.yaml")
	good := "networks:\n  - name: path\n    n: 8\nloads:\n  - name: point-mass\n    tokens: 10\nalgorithms: [threshold-1]\n"
	badType := strings.Replace(good, "n: 8", "n: eight", 1)
	badFile := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(badFile, []byte(badType), 0o644); err != nil {
		t.Fatal(err)
	}
	wrongSchema := filepath.Join(dir, "schema.db")
	{
		s, err := sql.Open("sqlite", "file:"+wrongSchema)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Exec(`CREATE TABLE meta (k TEXT PRIMARY KEY, v TEXT NOT NULL); INSERT INTO meta VALUES ('schema', '99')`)
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	db, err := OpenDB(filepath.Join(dir, "ok.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	second := func(_ any, err error) error { return err }
	third := func(_, _ any, err error) error { return err }
	specFile := registry.Spec{Network: registry.Choice{Name: "edge-list", Params: registry.Params{"file": filepath.Join(dir, "edges.txt")}}}
	_, parseErr := Parse("exp.yaml", []byte(badType), registry.New(), false)
	cases := []struct {
		name string
		err  error
		want []error
		has  string
	}{
		{"ReadFile missing", second(ReadFile(missing, registry.New(), false)), []error{ErrFile, fs.ErrNotExist}, missing + ": stat: "},
		{"ReadFile bad parameter", second(ReadFile(badFile, registry.New(), false)), []error{ErrFile, tokendist.ErrBadParameter}, badFile + ":3: networks[0].n: "},
		{"Parse bad parameter", parseErr, []error{ErrFile, tokendist.ErrBadParameter}, "exp.yaml:3: "},
		{"Parse bad YAML", second(Parse("exp.yaml", []byte("a: [b\n"), registry.New(), false)), []error{ErrFile}, "exp.yaml: not valid YAML"},
		{"ParseShard", second(ParseShard("3/2")), []error{tokendist.ErrBadParameter}, `"3/2"`},
		{"ShardFromEnv not an integer", third(ShardFromEnv(env("SLURM_ARRAY_TASK_ID", "x"), 0)), []error{tokendist.ErrBadParameter}, `"x"`},
		{"ShardFromEnv no count", third(ShardFromEnv(env("JOB_COMPLETION_INDEX", "2"), 0)), []error{tokendist.ErrBadParameter}, "=2"},
		{"OpenDB wrong schema", second(OpenDB(wrongSchema)), []error{tokendist.ErrBadParameter}, `"99"`},
		{"OpenDB in a missing directory", second(OpenDB(filepath.Join(dir, "no", "such", "x.db"))), nil, "no/such"},
		{"openExisting missing", second(openExisting(filepath.Join(dir, "none.db"))), []error{fs.ErrNotExist}, "none.db"},
		{"Merge missing source", second(db.Merge([]string{filepath.Join(dir, "src.db")})), []error{fs.ErrNotExist}, "src.db"},
		{"Query bad condition", third(db.Query("nope =")), nil, "query"},
		{"Table.Write format", Table{}.Write(io.Discard, "xml"), []error{tokendist.ErrBadParameter}, `"xml"`},
		{"Plot column", second(Plot(db, PlotOptions{X: "n", Y: "nope"})), []error{tokendist.ErrBadParameter}, `"nope"`},
		{"RunKey missing file", second(RunKey(specFile)), []error{fs.ErrNotExist}, "edges.txt"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.err == nil {
				t.Fatal("no error")
			}
			msg := c.err.Error()
			if !strings.HasPrefix(msg, "tokendist: ") || strings.Count(msg, "tokendist: ") != 1 {
				t.Errorf("message %q: want the prefix %q first and exactly once", msg, "tokendist: ")
			}
			if !strings.Contains(msg, c.has) {
				t.Errorf("message %q does not name %q", msg, c.has)
			}
			for _, w := range c.want {
				if !errors.Is(c.err, w) {
					t.Errorf("%q: errors.Is(err, %v) is false", msg, w)
				}
			}
		})
	}
}

// TestReadFileNotExist: a missing experiment file is both ErrFile and fs.ErrNotExist,
// and its message names the file once.
func TestReadFileNotExist(t *testing.T) {
	p := filepath.Join(t.TempDir(), "gone.yaml")
	_, err := ReadFile(p, registry.New(), false)
	if !errors.Is(err, fs.ErrNotExist) || !errors.Is(err, ErrFile) {
		t.Fatalf("ReadFile(%s): %v; want fs.ErrNotExist and ErrFile", p, err)
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != p {
		t.Errorf("errors.As(*fs.PathError): %v", err)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "tokendist: "+p+": ") || strings.Count(msg, p) != 1 {
		t.Errorf("message %q: want it to start with the file and name it once", msg)
	}
}
