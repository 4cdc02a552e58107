package experiment

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tokendist/tokendist/internal/errs"
	"github.com/tokendist/tokendist/internal/files"
)

// ErrCorrupt marks a results database that SQLite reports damaged (PRAGMA quick_check
// fails, or the file is not an SQLite database at all).
var ErrCorrupt = fmt.Errorf("%sdatabase is damaged", errs.Prefix)

// ErrNotResults marks an SQLite file that is not a tokendist results database: it has
// tables, but not the runs of this program. The experiment layer never writes into it.
// It also matches tokendist.ErrBadParameter.
var ErrNotResults = fmt.Errorf("%w: not a tokendist results database", errs.ErrBadParameter)

// dbURI returns the SQLite URI of the database file at path: the absolute path with every
// character that a URI gives a meaning ('%', '?', '#') percent-escaped, so that a path
// is always opened as the file it names, never read as a URI with parameters; query is
// appended after '?'.
func dbURI(path, query string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", errs.Wrapf(err, "database %s", files.Name(path))
	}
	var b strings.Builder
	b.WriteString("file:")
	for i := 0; i < len(abs); i++ {
		switch c := abs[i]; c {
		case '%', '?', '#':
			fmt.Fprintf(&b, "%%%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	if query != "" {
		b.WriteByte('?')
		b.WriteString(query)
	}
	return b.String(), nil
}

// checkPath refuses a database path that exists and is not a regular file (a directory,
// a device, a FIFO), or is longer than PATH_MAX. It reports whether the file exists
// with a non-zero size.
func checkPath(path string) (bool, error) {
	if len(path) > 4096 {
		return false, errs.BadParam("database path %s is longer than 4096 bytes", files.Name(path))
	}
	if path == "" {
		return false, errs.BadParam("empty database path")
	}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, errs.Wrapf(err, "database")
	}
	if !fi.Mode().IsRegular() {
		return false, fmt.Errorf("%w: database %s is not a regular file (mode %v)", errs.ErrBadParameter, files.Name(path), fi.Mode().Type())
	}
	return fi.Size() > 0, nil
}

// checkDatabase checks an open SQLite connection before anything is written: the file
// is an SQLite database that PRAGMA quick_check finds intact, and it is empty or holds
// a tokendist results database of this schema. It returns the tables present.
func checkDatabase(s *sql.DB, path string) (map[string]bool, error) {
	name := files.Name(path)
	rows, err := s.Query(`PRAGMA quick_check(20)`)
	if err != nil {
		return nil, corrupt(name, err)
	}
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			rows.Close()
			return nil, corrupt(name, err)
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return nil, corrupt(name, err)
	}
	rows.Close()
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w: %s: PRAGMA quick_check: %s", ErrCorrupt, name, errs.Quote([]byte(strings.Join(problems, "; "))))
	}
	tables := map[string]bool{}
	trs, err := s.Query(`SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		return nil, corrupt(name, err)
	}
	for trs.Next() {
		var t string
		if err := trs.Scan(&t); err != nil {
			trs.Close()
			return nil, corrupt(name, err)
		}
		tables[t] = true
	}
	trs.Close()
	if err := trs.Err(); err != nil {
		return nil, corrupt(name, err)
	}
	if len(tables) == 0 {
		return tables, nil
	}
	if !tables["meta"] {
		var ts []string
		for t := range tables {
			ts = append(ts, t)
		}
		sort.Strings(ts)
		if len(ts) > 8 {
			ts = append(ts[:8], "...")
		}
		return nil, fmt.Errorf("%w: %s has the tables %s and no runs of tokendist; choose another --db", ErrNotResults, name, errs.Quote([]byte(strings.Join(ts, ", "))))
	}
	var v string
	switch err := s.QueryRow(`SELECT v FROM meta WHERE k = 'schema'`).Scan(&v); {
	case errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("%w: %s has a meta table without a schema version", ErrNotResults, name)
	case err != nil:
		return nil, corrupt(name, err)
	case v != fmt.Sprint(SchemaVersion):
		return nil, errs.BadParam("database %s has schema %s, this program writes %d", name, errs.Quote([]byte(v)), SchemaVersion)
	}
	return tables, nil
}

// corrupt wraps an SQLite error met while checking a database: damage ("malformed",
// "not a database") wraps ErrCorrupt, anything else (a locked file) is reported as is.
func corrupt(name string, err error) error {
	msg := err.Error()
	if strings.Contains(msg, "malformed") || strings.Contains(msg, "not a database") || strings.Contains(msg, "SQLITE_CORRUPT") || strings.Contains(msg, "SQLITE_NOTADB") {
		return fmt.Errorf("%w: %s: %w", ErrCorrupt, name, err)
	}
	return errs.Wrapf(err, "database %s", name)
}

// OpenDBReadOnly opens the results database at path for reading only: it is never
// written (no schema is created, no journal mode is set), so a database on a read-only
// file system or without write permission can be reported and plotted. It fails if the
// file does not exist, is not a regular file, is damaged (PRAGMA quick_check) or is not
// a tokendist results database. Insert, Merge and Sweep fail on it.
func OpenDBReadOnly(path string) (*DB, error) {
	exists, err := checkPath(path)
	if err != nil {
		return nil, err
	}
	if !exists {
		if _, err := os.Stat(path); err != nil {
			return nil, errs.Wrapf(err, "database")
		}
		return nil, fmt.Errorf("%w: %s is empty", ErrNotResults, files.Name(path))
	}
	open := func(query string) (*DB, error) {
		dsn, err := dbURI(path, query)
		if err != nil {
			return nil, err
		}
		s, err := sql.Open("sqlite", dsn)
		if err != nil {
			return nil, errs.Wrapf(err, "database %s", files.Name(path))
		}
		s.SetMaxOpenConns(1)
		tables, err := checkDatabase(s, path)
		if err == nil && len(tables) == 0 {
			err = fmt.Errorf("%w: %s has no tables", ErrNotResults, files.Name(path))
		}
		codeCols := false
		if err == nil && tables["runs"] {
			var have map[string]bool
			if have, err = runsColumns(s); err != nil {
				err = corrupt(files.Name(path), err)
			}
			codeCols = have["code"]
		}
		if err != nil {
			s.Close()
			return nil, err
		}
		return &DB{sql: s, path: path, readonly: true, tables: tables, noCode: !codeCols}, nil
	}
	db, err := open("mode=ro&_pragma=busy_timeout(10000)")
	if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrNotResults) && !errors.Is(err, errs.ErrBadParameter) {
		// A WAL database in a directory this process cannot write: SQLite cannot
		// create the shared-memory file. Without a -wal file nothing is pending, and
		// the file can be read as immutable.
		if _, werr := os.Stat(path + "-wal"); errors.Is(werr, fs.ErrNotExist) {
			if db2, err2 := open("mode=ro&immutable=1"); err2 == nil {
				return db2, nil
			}
		}
	}
	return db, err
}

// queryer is a *sql.DB or *sql.Tx.
type queryer interface {
	Query(query string, args ...any) (*sql.Rows, error)
}

// runsColumns returns the columns of the runs table.
func runsColumns(q queryer) (map[string]bool, error) {
	have := map[string]bool{}
	rows, err := q.Query(`SELECT name FROM pragma_table_info('runs')`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		have[c] = true
	}
	return have, rows.Err()
}

// shortPathErr returns err with the path of an *fs.PathError shortened for a message
// (files.Name), keeping the cause for errors.Is.
func shortPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: files.Name(pe.Path), Err: pe.Err}
	}
	return err
}
