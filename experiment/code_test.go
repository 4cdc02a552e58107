package experiment

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tokendist/tokendist/registry"
)

// codeFile is a grid of 4 quick runs.
const codeFile = `name: codes
networks:
  - name: path
    n: [4, 8]
loads:
  - name: point-mass
    tokens: 10
algorithms: [rsw-diffusion]
stop:
  max_steps: 20
seeds: 2
record:
  trace: true
`

// mainRun runs Main in this process and returns its exit status, stdout and stderr.
func mainRun(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(registry.Default(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestCodeLabel: the file's code key and sweep --code are part of every run's key; a
// sweep with another label runs the grid anew with a one-line notice, and report and
// plot keep the labels apart unless --all-code.
func TestCodeLabel(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "codes.yaml")
	require.NoError(t, os.WriteFile(file, []byte(codeFile), 0o644))
	reg := registry.Default()
	plain, err := Parse(file, []byte(codeFile), reg, false)
	require.NoError(t, err)
	labelled, err := Parse(file, []byte(codeFile+"code: data-v2\n"), reg, false)
	require.NoError(t, err)
	require.Equal(t, "data-v2", labelled.Code)
	pr, _ := plain.Specs()
	lr, _ := labelled.Specs()
	require.Len(t, pr, 4)
	require.Len(t, lr, 4)
	for i := range pr {
		require.NotEqual(t, pr[i].Key, lr[i].Key, "the label is not part of the key")
		require.Equal(t, "data-v2", lr[i].Code)
		k, err := RunKeyCode(lr[i].Spec, "data-v2")
		require.NoError(t, err)
		require.Equal(t, k, lr[i].Key)
	}
	// Changing Code re-keys the grid.
	labelled.Code = ""
	again, _ := labelled.Specs()
	require.Equal(t, pr[0].Key, again[0].Key)
	_, err = Parse(file, []byte(codeFile+"code: \"a\\nb\"\n"), reg, false)
	require.ErrorIs(t, err, ErrFile)
	require.Contains(t, err.Error(), "codes.yaml:14: code: code label")
	_, err = Parse(file, []byte(codeFile+"code: [a]\n"), reg, false)
	require.ErrorIs(t, err, ErrFile)

	db := filepath.Join(dir, "codes.db")
	code, _, e := mainRun("sweep", "--progress", "none", "--db", db, file)
	require.Equal(t, ExitOK, code, e)
	require.NotContains(t, e, "other code")
	code, _, e = mainRun("sweep", "--progress", "lines", "--db", db, file)
	require.Equal(t, ExitOK, code, e)
	require.Contains(t, e, "0 runs done (0 failed), 4 skipped")
	code, _, e = mainRun("sweep", "--progress", "none", "--code", "data-v2", "--db", db, file)
	require.Equal(t, ExitOK, code, e)
	plainID, _ := CodeIdentity("")
	require.Contains(t, e, "sweep: the database holds 4 of these runs from other code ("+plainID+"); running them anew for "+plainID+" label=data-v2 (reports keep the codes apart)\n")
	require.Equal(t, 1, strings.Count(e, "\n"), "one line: %q", e)
	// The same label again: nothing to do, no notice.
	code, _, e = mainRun("sweep", "--progress", "lines", "--code", "data-v2", "--db", db, file)
	require.Equal(t, ExitOK, code, e)
	require.Contains(t, e, "0 runs done (0 failed), 4 skipped")
	require.NotContains(t, e, "other code")
	code, _, e = mainRun("sweep", "--code", "a\tb", "--db", db, file)
	require.Equal(t, ExitUsage, code)
	require.Contains(t, e, "tokendist: ")
	require.Contains(t, e, `code label "a\tb"`)

	// Reports: a code column, groups per code; --all-code pools.
	code, out, e := mainRun("report", "--db", db, "--summary", "--format", "csv", "--values", "discrepancy")
	require.Equal(t, ExitOK, code, e)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.True(t, strings.HasPrefix(lines[0], "experiment,network,n,loads,algorithm,code,runs,"), lines[0])
	require.Len(t, lines, 5)
	require.Equal(t, 2, strings.Count(out, plainID+" label=data-v2"))
	code, out, e = mainRun("report", "--db", db, "--summary", "--format", "csv", "--values", "discrepancy", "--all-code")
	require.Equal(t, ExitOK, code, e)
	lines = strings.Split(strings.TrimSpace(out), "\n")
	require.NotContains(t, lines[0], ",code,")
	require.NotContains(t, out, "label=")
	require.Len(t, lines, 3)
	require.True(t, strings.HasPrefix(lines[1], "codes,path(n=4),4,point-mass(tokens=10),rsw-diffusion,4,"), lines[1])
	code, out, _ = mainRun("report", "--db", db, "--where", "code_label = 'data-v2'", "--format", "csv")
	require.Equal(t, ExitOK, code)
	require.Equal(t, 5, len(strings.Split(strings.TrimSpace(out), "\n")))
	require.NotContains(t, out, ",code,", "one code selected: no code column")
	code, out, _ = mainRun("report", "--db", db, "--traces", "--format", "csv")
	require.Equal(t, ExitOK, code)
	require.True(t, strings.HasPrefix(out, "key,experiment,code,network,"), out[:80])

	// Plots: one line per code unless --all-code (or the code is a --by or --facet).
	rdb, err := OpenDBReadOnly(db)
	require.NoError(t, err)
	defer rdb.Close()
	tab, err := ExportTable(rdb, "")
	require.NoError(t, err)
	require.Equal(t, "algorithm,code", plotBy(tab, PlotOptions{}))
	require.Equal(t, "algorithm", plotBy(tab, PlotOptions{AllCode: true}))
	require.Equal(t, "code,algorithm", plotBy(tab, PlotOptions{By: "code,algorithm"}))
	require.Equal(t, "algorithm", plotBy(tab, PlotOptions{Facet: "code"}))
	require.Equal(t, "algorithm", plotBy(tab.Without("code"), PlotOptions{}))
	tr, err := TracesTable(rdb, "")
	require.NoError(t, err)
	require.Equal(t, "algorithm,code", plotBy(tr, PlotOptions{}))
	st, err := SummaryTable(rdb, "")
	require.NoError(t, err)
	require.Equal(t, "code", st.Cols[1])
	require.Len(t, st.Rows, 4)
	rt, err := RunsTable(rdb, "")
	require.NoError(t, err)
	require.Equal(t, "code", rt.Cols[1])
	code, _, e = mainRun("plot", "--db", db, "--out", filepath.Join(dir, "p.svg"), "--all-code")
	require.Equal(t, ExitOK, code, e)
	code, _, e = mainRun("report", "--db", db, "--format", "html", "--out", filepath.Join(dir, "r.html"))
	require.Equal(t, ExitOK, code, e)
	page, err := os.ReadFile(filepath.Join(dir, "r.html"))
	require.NoError(t, err)
	require.Contains(t, string(page), "<th>code</th>")
	code, _, e = mainRun("report", "--db", db, "--format", "html", "--all-code", "--out", filepath.Join(dir, "r2.html"))
	require.Equal(t, ExitOK, code, e)
	page, err = os.ReadFile(filepath.Join(dir, "r2.html"))
	require.NoError(t, err)
	require.NotContains(t, string(page), "<th>code</th>")

	// Sweep reports the runs of other code in its statistics too.
	w, err := OpenDB(filepath.Join(dir, "api.db"))
	require.NoError(t, err)
	defer w.Close()
	stats, err := Sweep(context.Background(), reg, pr[:2], w, SweepOptions{Workers: 1})
	require.NoError(t, err)
	require.Equal(t, 0, stats.OtherCode)
	lf, _ := Parse(file, []byte(codeFile+"code: data-v2\n"), reg, false)
	runs, _ := lf.Specs()
	stats, err = Sweep(context.Background(), reg, runs, w, SweepOptions{Workers: 1})
	require.NoError(t, err)
	require.Equal(t, 2, stats.OtherCode, "2 of the 4 runs are held from other code")
	require.Equal(t, 4, stats.Ran)
	require.Equal(t, []string{plainID}, stats.OtherCodes)
}

// downgrade turns a results database into one as a sweep before code keys left it:
// without the code columns, with other keys.
func downgrade(t *testing.T, path string) {
	t.Helper()
	s, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	defer s.Close()
	for _, c := range addedColumns {
		_, err := s.Exec(`ALTER TABLE runs DROP COLUMN ` + c[0])
		require.NoError(t, err)
	}
	for _, q := range []string{`UPDATE traces SET key = 'old' || key`, `UPDATE runs SET key = 'old' || key`, `PRAGMA wal_checkpoint(TRUNCATE)`} {
		_, err := s.Exec(q)
		require.NoError(t, err)
	}
}

// TestBeforeCodeKeys: a database from before code keys (no code columns) is read as it
// is by report (its runs have the code UnknownCode), migrated in place by a sweep (all
// its rows kept), whose runs of the same specs run anew with the notice naming
// UnknownCode, and the report keeps the old and new runs apart; runs a program from
// before code keys adds later get UnknownCode too; merge gives such a source's runs
// UnknownCode.
func TestBeforeCodeKeys(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "codes.yaml")
	require.NoError(t, os.WriteFile(file, []byte(codeFile), 0o644))
	old := filepath.Join(dir, "old.db")
	code, _, e := mainRun("sweep", "--progress", "none", "--db", old, file)
	require.Equal(t, ExitOK, code, e)
	downgrade(t, old)
	copyOld := filepath.Join(dir, "copy.db")
	data, err := os.ReadFile(old)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(copyOld, data, 0o644))

	r, err := OpenDBReadOnly(old)
	require.NoError(t, err)
	require.True(t, r.noCode)
	tab, err := ExportTable(r, "code = '"+UnknownCode+"'")
	require.NoError(t, err)
	require.Len(t, tab.Rows, 4)
	require.NotContains(t, tab.Cols, "code", "one code: no column")
	_, rows, err := r.Query("")
	require.NoError(t, err)
	for _, row := range rows {
		require.Equal(t, UnknownCode, row[len(runColumns1)])
	}
	tr, err := TracesTable(r, "code_label = ''")
	require.NoError(t, err)
	require.NotEmpty(t, tr.Rows)
	r.Close()

	code, _, e = mainRun("sweep", "--progress", "none", "--db", old, file)
	require.Equal(t, ExitOK, code, e)
	require.Contains(t, e, "sweep: the database holds 4 of these runs from other code ("+UnknownCode+"); running them anew")
	db, err := OpenDBReadOnly(old)
	require.NoError(t, err)
	defer db.Close()
	require.False(t, db.noCode)
	var n, unknown int
	require.NoError(t, db.sql.QueryRow(`SELECT count(*), sum(code = ?) FROM runs`, UnknownCode).Scan(&n, &unknown))
	require.Equal(t, 8, n)
	require.Equal(t, 4, unknown)
	// An old program inserts with the columns it knows: the run gets UnknownCode.
	w, err := sql.Open("sqlite", "file:"+old)
	require.NoError(t, err)
	_, err = w.Exec(`INSERT INTO runs (` + strings.Join(runColumns1, ",") + `) SELECT 'older' || substr(key, 4),` +
		strings.Join(runColumns1[1:], ",") + ` FROM runs WHERE key LIKE 'old%' LIMIT 1`)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.NoError(t, db.sql.QueryRow(`SELECT count(*), sum(code = ?) FROM runs`, UnknownCode).Scan(&n, &unknown))
	require.Equal(t, 9, n)
	require.Equal(t, 5, unknown)
	sum, err := ExportTable(db, "")
	require.NoError(t, err)
	s, err := Summary(sum, nil, []string{"discrepancy"})
	require.NoError(t, err)
	require.Len(t, s.Rows, 4, "old and new runs pooled")

	// Merge: an old source into a new target; the runs keep apart from new ones.
	merged := filepath.Join(dir, "merged.db")
	code, _, e = mainRun("merge", "--into", merged, copyOld, old)
	require.Equal(t, ExitOK, code, e)
	m, err := OpenDBReadOnly(merged)
	require.NoError(t, err)
	defer m.Close()
	require.NoError(t, m.sql.QueryRow(`SELECT count(*), sum(code = ?) FROM runs`, UnknownCode).Scan(&n, &unknown))
	require.Equal(t, 9, n)
	require.Equal(t, 5, unknown)
	// A database with some of the code columns gets the others.
	part := filepath.Join(dir, "part.db")
	require.NoError(t, os.WriteFile(part, data, 0o644))
	p, err := sql.Open("sqlite", "file:"+part)
	require.NoError(t, err)
	_, err = p.Exec(`ALTER TABLE runs ADD COLUMN code ` + addedColumns[0][1])
	require.NoError(t, err)
	require.NoError(t, p.Close())
	pdb, err := OpenDB(part)
	require.NoError(t, err)
	have, err := runsColumns(pdb.sql)
	require.NoError(t, err)
	require.NoError(t, pdb.Close())
	for _, c := range runColumns {
		require.True(t, have[c], "column %s", c)
	}
	// Merging the old source again changes nothing.
	code, _, e = mainRun("merge", "--into", merged, copyOld)
	require.Equal(t, ExitOK, code, e)
	require.Contains(t, e, "merge: 0 runs added")
}
