package experiment

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/internal/errs"
	"github.com/tokendist/tokendist/internal/files"
	"github.com/tokendist/tokendist/registry"
	_ "modernc.org/sqlite" // the pure-Go SQLite driver
)

// modulePath is the path of the tokendist module, looked up in the build information.
const modulePath = "github.com/tokendist/tokendist"

// Version returns the version of the tokendist code in this program, read once from the
// program's build information (runtime/debug.ReadBuildInfo), never edited by hand. It is
// recorded with every run (the runs table's version column) and mixed into the run's key,
// so that a change of version runs the grid again instead of mixing results of different
// code.
//
// When tokendist is the main module (the tokendist command, go run, go test) the version
// is the main module's version, followed by " rev " and vcs.revision and by " modified"
// when vcs.modified is true, where the build recorded them: "v1.2.0",
// "v1.2.1-0.20260101000000-abcdef123456+dirty rev abcdef1234567890... modified", or
// "(devel)" for a build without version control information (go test, -buildvcs=false as
// in .ci/run). When another module imports tokendist, it is the version of the tokendist
// dependency ("v1.2.0"; "v1.2.0 => ../tokendist" under a replace directive). Without
// build information it is "(unknown)". The string is only compared for equality (no
// semantic-version parsing), so "(devel)" and the other forms are all valid.
func Version() string { return buildVersion() }

var buildVersion = sync.OnceValue(func() string { return versionOf(debug.ReadBuildInfo()) })

// versionOf returns the version Version describes, from build information bi (ok false:
// none).
func versionOf(bi *debug.BuildInfo, ok bool) string {
	if !ok || bi == nil {
		return "(unknown)"
	}
	if bi.Main.Path != modulePath {
		for _, d := range bi.Deps {
			if d == nil || d.Path != modulePath {
				continue
			}
			v := orDevel(d.Version)
			if r := d.Replace; r != nil {
				rv := r.Path
				if r.Version != "" {
					rv += " " + r.Version
				}
				v += " => " + rv
			}
			return v
		}
	}
	v := orDevel(bi.Main.Version)
	rev, _, modified := vcsSettings(bi)
	if rev != "" {
		v += " rev " + rev
	}
	if modified == "true" {
		v += " modified"
	}
	return v
}

func orDevel(v string) string {
	if v == "" {
		return "(devel)"
	}
	return v
}

// SchemaVersion is the results-database layout version. The code columns of the runs
// table (code, code_main, code_revision, code_modified, code_sha256, code_label) are
// an addition within it: OpenDB adds them to a database that lacks them (its runs, and
// the runs a program from before code keys adds later, get the code UnknownCode), and
// OpenDBReadOnly reads such a database as it is.
const SchemaVersion = 1

// RunKey returns the key of a canonical spec: the SHA-256 (hex, 32 digits) of the code
// identity of this program (CodeIdentity without a label, with the full VCS revision and
// executable digest), the spec's JSON and the contents of any file the network or a
// workload reads. It is RunKeyCode(s, "").
func RunKey(s registry.Spec) (string, error) { return RunKeyCode(s, "") }

// RunKeyCode is RunKey with the user's code label (File.Code, sweep --code): runs of
// different labels have different keys. It fails as CodeIdentity does, or when a file
// the spec names cannot be read. It costs O(spec + files) after the first call.
func RunKeyCode(s registry.Spec, label string) (string, error) {
	c, err := codeFor(label)
	if err != nil {
		return "", wrapf(err, "run key")
	}
	return runKey(c.identity(false), s)
}

func runKey(code string, s registry.Spec) (string, error) {
	return (&keyer{code: code}).key(s)
}

// keyer computes run keys, keeping the contents of the small files the specs read so
// that a grid of many runs over one network file reads it once.
type keyer struct {
	code   string // the full code identity
	files  map[string][]byte
	cached int64
}

// newKeyer returns a keyer for the code of this program with label.
func newKeyer(label string) (*keyer, error) {
	c, err := codeFor(label)
	if err != nil {
		return nil, wrapf(err, "run key")
	}
	return &keyer{code: c.identity(false), files: map[string][]byte{}}, nil
}

// maxKeyCache bounds the file contents a keyer keeps (and an eighth of the memory
// budget, whichever is smaller).
const maxKeyCache = 64 << 20

func (k *keyer) key(s registry.Spec) (string, error) {
	js, err := json.Marshal(s)
	if err != nil {
		return "", wrapf(err, "run key")
	}
	h := sha256.New()
	fmt.Fprintf(h, "tokendist code %s\n", k.code)
	h.Write(js)
	files := []struct{ what, name string }{}
	if f, ok := s.Network.Params["file"].(string); ok {
		files = append(files, struct{ what, name string }{"network", f})
	}
	for _, w := range s.Workload {
		if f, ok := w.Params["file"].(string); ok {
			files = append(files, struct{ what, name string }{"workload", f})
		}
	}
	for _, f := range files {
		if data, ok := k.files[f.name]; ok {
			h.Write(data)
			continue
		}
		if err := k.hashFile(h, f.name); err != nil {
			return "", wrapf(err, "run key: %s file %s", f.what, fileName(f.name))
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}

// hashFile writes the contents of the file to w, keeping them when there is room.
func (k *keyer) hashFile(w io.Writer, name string) error {
	fh, err := files.Open(name, "file", files.Limit(1, 1<<40))
	if err != nil {
		return err
	}
	defer fh.Close()
	if k.files != nil && k.cached+fh.Size <= min(maxKeyCache, errs.MemoryBudget()/8) {
		data, err := io.ReadAll(fh)
		if err != nil {
			return err
		}
		k.files[name] = data
		k.cached += int64(len(data))
		_, err = w.Write(data)
		return err
	}
	_, err = io.Copy(w, fh)
	return err
}

const schema = `
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
	key TEXT PRIMARY KEY,
	experiment TEXT NOT NULL,
	version TEXT NOT NULL,
	config TEXT NOT NULL,
	network TEXT NOT NULL,
	network_name TEXT NOT NULL,
	loads TEXT NOT NULL,
	algorithm TEXT NOT NULL,
	algorithm_name TEXT NOT NULL,
	seed INTEGER NOT NULL,
	n INTEGER NOT NULL,
	edges INTEGER NOT NULL,
	total INTEGER NOT NULL,
	initial_discrepancy INTEGER NOT NULL,
	max_steps INTEGER NOT NULL,
	status TEXT NOT NULL,
	error TEXT NOT NULL,
	balancer TEXT NOT NULL,
	discrepancy INTEGER NOT NULL,
	max_load INTEGER NOT NULL,
	min_load INTEGER NOT NULL,
	steps INTEGER NOT NULL,
	time INTEGER NOT NULL,
	moved INTEGER NOT NULL,
	messages INTEGER NOT NULL,
	negative_steps INTEGER NOT NULL,
	most_negative INTEGER NOT NULL,
	metrics TEXT NOT NULL,
	wall_seconds REAL NOT NULL,
	finished_at TEXT NOT NULL,
	code TEXT NOT NULL DEFAULT 'unknown (before code keys)',
	code_main TEXT NOT NULL DEFAULT '',
	code_revision TEXT NOT NULL DEFAULT '',
	code_modified INTEGER NOT NULL DEFAULT 0,
	code_sha256 TEXT NOT NULL DEFAULT '',
	code_label TEXT NOT NULL DEFAULT '',
	rounds REAL DEFAULT NULL
);
CREATE TABLE IF NOT EXISTS traces (
	key TEXT NOT NULL,
	step INTEGER NOT NULL,
	time INTEGER NOT NULL,
	discrepancy INTEGER NOT NULL,
	max_load INTEGER NOT NULL,
	min_load INTEGER NOT NULL,
	potential TEXT NOT NULL,
	moved INTEGER NOT NULL,
	messages INTEGER NOT NULL,
	negative INTEGER NOT NULL,
	PRIMARY KEY (key, step)
);
CREATE TABLE IF NOT EXISTS nonfinite (
	key TEXT NOT NULL,
	metric TEXT NOT NULL,
	value TEXT NOT NULL,
	PRIMARY KEY (key, metric)
);
`

// runColumns1 are the columns of runs before code keys, in table order.
var runColumns1 = []string{"key", "experiment", "version", "config", "network", "network_name", "loads", "algorithm", "algorithm_name",
	"seed", "n", "edges", "total", "initial_discrepancy", "max_steps", "status", "error", "balancer", "discrepancy", "max_load", "min_load",
	"steps", "time", "moved", "messages", "negative_steps", "most_negative", "metrics", "wall_seconds", "finished_at"}

// addedColumns are the columns added to runs in place since schema 1, with their
// definitions (the defaults are the values of the runs from before them): the code
// keys', then rounds (Result.Rounds; NULL, unknown, for older runs).
var addedColumns = [][2]string{
	{"code", "TEXT NOT NULL DEFAULT 'unknown (before code keys)'"},
	{"code_main", "TEXT NOT NULL DEFAULT ''"},
	{"code_revision", "TEXT NOT NULL DEFAULT ''"},
	{"code_modified", "INTEGER NOT NULL DEFAULT 0"},
	{"code_sha256", "TEXT NOT NULL DEFAULT ''"},
	{"code_label", "TEXT NOT NULL DEFAULT ''"},
	{"rounds", "REAL DEFAULT NULL"},
}

// runColumns are the columns of runs, in table order.
var runColumns = func() []string {
	out := append([]string(nil), runColumns1...)
	for _, c := range addedColumns {
		out = append(out, c[0])
	}
	return out
}()

// runsTable returns the runs table as a query reads it: "runs", or for a database
// without the code columns (read-only, from before code keys) a subquery that gives
// them their defaults, so that conditions on them (--where "code = ...") work on both.
func (db *DB) runsTable() string {
	if !db.noCode {
		return "runs"
	}
	out := "(SELECT " + strings.Join(runColumns1, ",")
	for _, c := range addedColumns {
		def := strings.TrimSpace(c[1][strings.Index(c[1], "DEFAULT")+len("DEFAULT"):])
		out += ", " + def + " AS " + c[0]
	}
	return out + " FROM runs)"
}

// DB is a results database.
type DB struct {
	sql      *sql.DB
	path     string
	readonly bool
	tables   map[string]bool // the tables present when it was opened
	noCode   bool            // the runs table lacks the code columns (read-only, from before code keys)
}

// OpenDB opens (creating if needed) the SQLite results database at path, in WAL mode.
// The path is opened as a file name, never read as an SQLite URI ('?', '#' and '%' are
// parts of the name). Before anything is written it checks that an existing file is a
// regular file, that SQLite finds it intact (PRAGMA quick_check; a damaged file fails
// with an error wrapping ErrCorrupt) and that it is empty or a tokendist results
// database of this schema (another program's SQLite file fails with an error wrapping
// ErrNotResults and is left untouched). The check reads the whole file once.
func OpenDB(path string) (*DB, error) {
	exists, err := checkPath(path)
	if err != nil {
		return nil, err
	}
	name := files.Name(path)
	if exists {
		dsn, err := dbURI(path, "mode=ro&_pragma=busy_timeout(10000)")
		if err != nil {
			return nil, err
		}
		s, err := sql.Open("sqlite", dsn)
		if err != nil {
			return nil, wrapf(err, "database %s", name)
		}
		_, err = checkDatabase(s, path)
		s.Close()
		if err != nil {
			return nil, err
		}
	}
	dsn, err := dbURI(path, "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	s, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, wrapf(err, "database %s", name)
	}
	s.SetMaxOpenConns(1)
	if _, err := s.Exec(schema); err != nil {
		s.Close()
		return nil, wrapf(err, "database %s", name)
	}
	var v string
	err = s.QueryRow(`SELECT v FROM meta WHERE k = 'schema'`).Scan(&v)
	switch {
	case err == sql.ErrNoRows:
		if _, err := s.Exec(`INSERT INTO meta (k, v) VALUES ('schema', ?)`, fmt.Sprint(SchemaVersion)); err != nil {
			s.Close()
			return nil, wrapf(err, "database %s", name)
		}
	case err != nil:
		s.Close()
		return nil, wrapf(err, "database %s", name)
	case v != fmt.Sprint(SchemaVersion):
		s.Close()
		return nil, errs.BadParam("database %s has schema %s, this program writes %d", name, errs.Quote([]byte(v)), SchemaVersion)
	}
	if err := addCodeColumns(s); err != nil {
		s.Close()
		return nil, wrapf(err, "database %s: add the code columns", name)
	}
	return &DB{sql: s, path: path, tables: map[string]bool{"meta": true, "runs": true, "traces": true, "nonfinite": true}}, nil
}

// addCodeColumns adds the code columns a database from before code keys lacks, in one
// transaction (all or nothing); its runs get the code UnknownCode, so that they are
// never taken for runs of the code that sweeps next. A database that has them is left
// as it is.
func addCodeColumns(s *sql.DB) error {
	have, err := runsColumns(s)
	if err != nil {
		return err
	}
	missing := false
	for _, c := range addedColumns {
		missing = missing || !have[c[0]]
	}
	if !missing {
		return nil
	}
	tx, err := s.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if have, err = runsColumns(tx); err != nil {
		return err
	}
	for _, c := range addedColumns {
		if have[c[0]] {
			continue
		}
		if _, err := tx.Exec(`ALTER TABLE runs ADD COLUMN ` + c[0] + ` ` + c[1]); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// Close closes the database.
func (db *DB) Close() error { return db.sql.Close() }

// Done returns the keys of the runs stored.
func (db *DB) Done() (map[string]bool, error) {
	out, err := db.done()
	return out, wrapf(err, "database %s", db.path)
}

func (db *DB) done() (map[string]bool, error) {
	rows, err := db.sql.Query(`SELECT key FROM runs`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		out[k] = true
	}
	return out, rows.Err()
}

// deleteFailed deletes the runs stored as failed and their traces, in one transaction.
func (db *DB) deleteFailed() error {
	tx, err := db.sql.BeginTx(context.Background(), nil)
	if err != nil {
		return wrapf(err, "database %s", db.path)
	}
	defer tx.Rollback()
	for _, q := range []string{
		`DELETE FROM traces WHERE key IN (SELECT key FROM runs WHERE status = 'Failed')`,
		`DELETE FROM nonfinite WHERE key IN (SELECT key FROM runs WHERE status = 'Failed')`,
		`DELETE FROM runs WHERE status = 'Failed'`,
	} {
		if _, err := tx.Exec(q); err != nil {
			return wrapf(err, "database %s: delete the failed runs", db.path)
		}
	}
	return wrapf(tx.Commit(), "database %s: delete the failed runs", db.path)
}

// Record is one finished run, as stored.
type Record struct {
	Run        Run
	Experiment string
	Out        registry.Result
	Err        error
	Wall       time.Duration
}

// Insert stores the records in one transaction (all or none; a key already present is
// left as it is). A metric that is NaN or ±Inf is left out of the run's metrics JSON
// (a report shows it as empty, never as a number) and recorded in the table nonfinite
// (key, metric, value "NaN", "+Inf" or "-Inf"): the run is stored all the same.
func (db *DB) Insert(recs []Record) error {
	return wrapf(db.insert(recs), "database %s", db.path)
}

func (db *DB) insert(recs []Record) error {
	if db.readonly {
		return errs.BadParam("opened read-only")
	}
	ctx := context.Background()
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	ph := strings.TrimSuffix(strings.Repeat("?,", len(runColumns)), ",")
	st, err := tx.Prepare(`INSERT OR IGNORE INTO runs (` + strings.Join(runColumns, ",") + `) VALUES (` + ph + `)`)
	if err != nil {
		return err
	}
	defer st.Close()
	var tr, nf *sql.Stmt
	for _, r := range recs {
		cfg, err := json.Marshal(r.Run.Spec)
		if err != nil {
			return err
		}
		finite, nonfinite := splitMetrics(r.Out.Metrics)
		met := []byte("{}")
		if len(finite) > 0 {
			if met, err = json.Marshal(finite); err != nil {
				return err
			}
		}
		res := r.Out.Result
		errText := ""
		if r.Err != nil {
			errText = r.Err.Error()
		}
		status := res.Status.String()
		if r.Err != nil && res.Status != tokendist.StatusFailed {
			status = tokendist.StatusFailed.String()
		}
		code, err := codeFor(r.Run.Code)
		if err != nil {
			return err
		}
		res2, err := st.Exec(r.Run.Key, r.Experiment, Version(), string(cfg), r.Run.Network, r.Run.Spec.Network.Name, r.Run.Loads, r.Run.Algorithm,
			r.Run.Spec.Algorithm.Name, int64(r.Run.Spec.Seed), r.Out.N, r.Out.Edges, r.Out.Total, r.Out.InitialDiscrepancy, r.Out.MaxSteps,
			status, errText, res.Balancer, res.Loads.Discrepancy(), res.Loads.Max(), res.Loads.Min(), res.Steps, res.Time, res.Moved, res.Messages,
			res.NegativeSteps, res.MostNegative, string(met), r.Wall.Seconds(), time.Now().UTC().Format(time.RFC3339Nano),
			code.identity(true), code.mainPath+"@"+code.mainVersion, code.revision, code.modified, code.digest, code.label, res.Rounds)
		if err != nil {
			return err
		}
		n, _ := res2.RowsAffected()
		if n == 0 {
			continue
		}
		for _, m := range nonfinite {
			if nf == nil {
				if nf, err = tx.Prepare(`INSERT OR IGNORE INTO nonfinite (key, metric, value) VALUES (?,?,?)`); err != nil {
					return err
				}
				defer nf.Close()
			}
			if _, err := nf.Exec(r.Run.Key, m[0], m[1]); err != nil {
				return err
			}
		}
		if !r.Run.Trace {
			continue
		}
		if tr == nil {
			if tr, err = tx.Prepare(`INSERT OR IGNORE INTO traces (key, step, time, discrepancy, max_load, min_load, potential, moved, messages, negative) VALUES (?,?,?,?,?,?,?,?,?,?)`); err != nil {
				return err
			}
			defer tr.Close()
		}
		for _, smp := range res.Trace {
			if _, err := tr.Exec(r.Run.Key, smp.Step, smp.Time, smp.Discrepancy, smp.Max, smp.Min, smp.Potential.String(), smp.Moved, smp.Messages, smp.Negative); err != nil {
				return err
			}
		}
	}
	return tx.Commit()
}

// Merge copies every run (and trace) of the databases at srcs that db lacks, in one
// transaction per source; it is MergeWith(srcs, ConflictFail).
func (db *DB) Merge(srcs []string) (int64, error) { return db.MergeWith(srcs, ConflictFail) }

// splitMetrics returns the finite metrics and the names and values ("NaN", "+Inf",
// "-Inf") of the others, sorted by name.
func splitMetrics(m map[string]float64) (map[string]float64, [][2]string) {
	var bad [][2]string
	finite := make(map[string]float64, len(m))
	for k, v := range m {
		switch {
		case math.IsNaN(v):
			bad = append(bad, [2]string{k, "NaN"})
		case math.IsInf(v, 1):
			bad = append(bad, [2]string{k, "+Inf"})
		case math.IsInf(v, -1):
			bad = append(bad, [2]string{k, "-Inf"})
		default:
			finite[k] = v
		}
	}
	sort.Slice(bad, func(i, j int) bool { return bad[i][0] < bad[j][0] })
	return finite, bad
}

// NonFinite returns the metrics of run key that were NaN or ±Inf (stored as absent from
// the metrics, with this flag), by name: "NaN", "+Inf" or "-Inf".
func (db *DB) NonFinite(key string) (map[string]string, error) {
	out := map[string]string{}
	if !db.tables["nonfinite"] {
		return out, nil
	}
	rows, err := db.sql.Query(`SELECT metric, value FROM nonfinite WHERE key = ?`, key)
	if err != nil {
		return nil, wrapf(err, "database %s: nonfinite", fileName(db.path))
	}
	defer rows.Close()
	for rows.Next() {
		var m, v string
		if err := rows.Scan(&m, &v); err != nil {
			return nil, wrapf(err, "database %s: nonfinite", fileName(db.path))
		}
		out[m] = v
	}
	return out, wrapf(rows.Err(), "database %s: nonfinite", fileName(db.path))
}

// Row is one stored run as strings and numbers, for reports.
type Row struct {
	Cols []string
	Vals []any
}

// Query returns rows of runs matching the optional SQL condition where (for example
// "status = 'Done'"), ordered by experiment, network, loads, algorithm, seed.
func (db *DB) Query(where string) ([]string, [][]any, error) {
	q := `SELECT ` + strings.Join(runColumns, ",") + ` FROM ` + db.runsTable()
	if where != "" {
		q += ` WHERE ` + where
	}
	q += ` ORDER BY experiment, network_name, n, network, loads, algorithm, code, seed, key`
	rows, err := db.sql.Query(q)
	if err != nil {
		return nil, nil, wrapf(err, "database %s: query", db.path)
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(runColumns))
		ptrs := make([]any, len(runColumns))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, nil, wrapf(err, "database %s: query", db.path)
		}
		out = append(out, vals)
	}
	return runColumns, out, wrapf(rows.Err(), "database %s: query", db.path)
}

// Traces returns the stored samples of run key, in step order.
func (db *DB) Traces(key string) (tokendist.Trace, error) {
	out, err := db.traces(key)
	return out, wrapf(err, "database %s: traces of %s", db.path, key)
}

func (db *DB) traces(key string) (tokendist.Trace, error) {
	rows, err := db.sql.Query(`SELECT step, time, discrepancy, max_load, min_load, moved, messages, negative FROM traces WHERE key = ? ORDER BY step`, key)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out tokendist.Trace
	for rows.Next() {
		var s tokendist.Sample
		if err := rows.Scan(&s.Step, &s.Time, &s.Discrepancy, &s.Max, &s.Min, &s.Moved, &s.Messages, &s.Negative); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// Dump returns every run as comparable text lines (without the wall time and finish
// time, which differ between equal runs), sorted: two databases with equal dumps hold
// the same runs with the same results.
func (db *DB) Dump() ([]string, error) {
	out, err := db.dump()
	return out, wrapf(err, "database %s: dump", db.path)
}

func (db *DB) dump() ([]string, error) {
	cols, rows, err := db.Query("")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range rows {
		var b strings.Builder
		for i, c := range cols {
			if c == "wall_seconds" || c == "finished_at" {
				continue
			}
			fmt.Fprintf(&b, "%s=%v;", c, r[i])
		}
		out = append(out, b.String())
	}
	trs, err := db.sql.Query(`SELECT key, step, time, discrepancy, max_load, min_load, potential, moved, messages, negative FROM traces ORDER BY key, step`)
	if err != nil {
		return nil, err
	}
	defer trs.Close()
	for trs.Next() {
		v := make([]any, 10)
		p := make([]any, 10)
		for i := range v {
			p[i] = &v[i]
		}
		if err := trs.Scan(p...); err != nil {
			return nil, err
		}
		out = append(out, fmt.Sprint(v...))
	}
	if err := trs.Err(); err != nil {
		return nil, err
	}
	if db.tables["nonfinite"] {
		nf, err := db.sql.Query(`SELECT key, metric, value FROM nonfinite`)
		if err != nil {
			return nil, err
		}
		defer nf.Close()
		for nf.Next() {
			var k, m, v string
			if err := nf.Scan(&k, &m, &v); err != nil {
				return nil, err
			}
			out = append(out, "nonfinite "+k+" "+m+" "+v)
		}
		if err := nf.Err(); err != nil {
			return nil, err
		}
	}
	sort.Strings(out)
	return out, nil
}

// fileName is a path for an error message (quoted and cut when long).
func fileName(path string) string { return files.Name(path) }

// vcsSettings returns the VCS revision, commit time and modified flag ("true" or "")
// that the go command recorded in bi.
func vcsSettings(bi *debug.BuildInfo) (rev, when, modified string) {
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	return rev, when, modified
}
