package experiment

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/tokendist/tokendist/internal/errs"
	"github.com/tokendist/tokendist/internal/files"
)

// Conflict policies of DB.MergeWith: what happens when a source holds a run whose key
// the target has with different results (any column but the wall and finish times,
// and, between two failed runs, the error text).
const (
	// ConflictFail refuses the source: nothing of it is merged (the default).
	ConflictFail = "fail"
	// ConflictKeep keeps the target's row (the first one merged wins).
	ConflictKeep = "keep"
	// ConflictReplace replaces the target's row, its traces and flags by the source's.
	ConflictReplace = "replace"
)

// resultColumns are the columns (of cols) two rows of one key must agree on.
func resultColumns(cols []string) []string {
	var out []string
	for _, c := range cols {
		switch c {
		case "key", "wall_seconds", "finished_at", "error":
			continue
		}
		out = append(out, c)
	}
	return out
}

// conflictWhere is the condition, on s (a source row) and m (the target row of the same
// key), that they disagree on the columns cols.
func conflictWhere(cols []string) string {
	var eq []string
	for _, c := range resultColumns(cols) {
		eq = append(eq, "s."+c+" IS m."+c)
	}
	eq = append(eq, "(s.status = 'Failed' OR s.error IS m.error)")
	return "NOT (" + strings.Join(eq, " AND ") + ")"
}

// MergeWith copies every run (with its traces and non-finite flags) of the databases
// at srcs that db lacks, one transaction per source. Each source is opened read-only
// (OpenDBReadOnly: never written, checked with PRAGMA quick_check, refused if it is not
// a results database) and every source is checked before anything is merged. A source
// that is db itself (the same file under any name) is refused. Merging a database twice
// changes nothing. A run present in both with different results is a conflict, settled
// by onConflict (ConflictFail, ConflictKeep or ConflictReplace; "" is ConflictFail):
// with ConflictFail the first conflicting source is refused, with an error naming it,
// the number of conflicting runs and one key, and nothing of it is merged. It returns
// the number of runs added (replaced runs count as added). Runs of different code have
// different keys, so they stay distinct rows; the runs of a source from before code keys
// get the code UnknownCode.
func (db *DB) MergeWith(srcs []string, onConflict string) (int64, error) {
	switch onConflict {
	case "":
		onConflict = ConflictFail
	case ConflictFail, ConflictKeep, ConflictReplace:
	default:
		return 0, errs.BadParam("merge: conflict policy %s (allowed: fail, keep, replace)", errs.Quote([]byte(onConflict)))
	}
	if db.readonly {
		return 0, errs.BadParam("merge into %s: opened read-only", fileName(db.path))
	}
	type source struct {
		path      string
		uri       string
		nonfinite bool
		noCode    bool
	}
	var ss []source
	target, _ := os.Stat(db.path)
	for _, src := range srcs {
		fi, err := os.Stat(src)
		if err != nil {
			return 0, wrapf(shortPathErr(err), "merge")
		}
		if target != nil && os.SameFile(fi, target) {
			return 0, errs.BadParam("merge: source %s is the target %s", fileName(src), fileName(db.path))
		}
		s, err := OpenDBReadOnly(src)
		if err != nil {
			return 0, wrapf(err, "merge")
		}
		hasRuns := s.tables["runs"]
		nf := s.tables["nonfinite"]
		noCode := s.noCode
		s.Close()
		if !hasRuns {
			return 0, fmt.Errorf("%w: merge: %s has no runs table", ErrNotResults, fileName(src))
		}
		uri, err := dbURI(src, "mode=ro")
		if err != nil {
			return 0, err
		}
		ss = append(ss, source{path: src, uri: uri, nonfinite: nf, noCode: noCode})
	}
	var added int64
	for _, src := range ss {
		cols := runColumns
		if src.noCode {
			cols = runColumns1 // the target gives its runs the code UnknownCode
		}
		n, err := db.mergeOne(src.path, src.uri, src.nonfinite, cols, onConflict)
		added += n
		if err != nil {
			return added, err
		}
	}
	return added, nil
}

func (db *DB) mergeOne(path, uri string, nonfinite bool, runCols []string, onConflict string) (int64, error) {
	name := files.Name(path)
	ctx := context.Background()
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		return 0, wrapf(err, "merge %s into %s", name, fileName(db.path))
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `ATTACH DATABASE ? AS src`, uri); err != nil {
		return 0, wrapf(err, "merge %s", name)
	}
	defer conn.ExecContext(ctx, `DETACH DATABASE src`)
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return 0, wrapf(err, "merge %s", name)
	}
	defer tx.Rollback()
	conflicts := `SELECT s.key FROM src.runs s JOIN main.runs m ON s.key = m.key WHERE ` + conflictWhere(runCols)
	var count int64
	var first string
	if err := tx.QueryRowContext(ctx, `SELECT count(*), coalesce(min(key), '') FROM (`+conflicts+`)`).Scan(&count, &first); err != nil {
		return 0, wrapf(err, "merge %s", name)
	}
	if count > 0 {
		switch onConflict {
		case ConflictFail:
			return 0, errs.BadParam("merge %s: %d runs differ from the runs of the same key in %s (first key %s); nothing of it merged (choose the winner with --on-conflict keep or replace)",
				name, count, fileName(db.path), errs.Quote([]byte(first)))
		case ConflictReplace:
			for _, t := range []string{"traces", "nonfinite", "runs"} {
				if _, err := tx.ExecContext(ctx, `DELETE FROM main.`+t+` WHERE key IN (`+conflicts+`)`); err != nil {
					return 0, wrapf(err, "merge %s", name)
				}
			}
		}
	}
	// Traces and flags first, of the runs the target lacks (a kept run keeps its own).
	absent := ` WHERE key NOT IN (SELECT key FROM main.runs)`
	if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO main.traces SELECT * FROM src.traces`+absent); err != nil {
		return 0, wrapf(err, "merge %s", name)
	}
	if nonfinite {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO main.nonfinite (key, metric, value) SELECT key, metric, value FROM src.nonfinite`+absent); err != nil {
			return 0, wrapf(err, "merge %s", name)
		}
	}
	cols := strings.Join(runCols, ",")
	res, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO main.runs (`+cols+`) SELECT `+cols+` FROM src.runs`)
	if err != nil {
		return 0, wrapf(err, "merge %s", name)
	}
	n, _ := res.RowsAffected()
	if err := tx.Commit(); err != nil {
		return 0, wrapf(err, "merge %s", name)
	}
	return n, nil
}
