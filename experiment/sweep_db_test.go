package experiment

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/registry"
)

// countingRegistry returns a registry with the algorithm "counted", randomized diffusion
// that counts the runs it starts in *started.
func countingRegistry(t *testing.T, started *atomic.Int64) *registry.Registry {
	t.Helper()
	reg := registry.New()
	c, err := reg.Constructor(registry.KindAlgorithm, "randomized-diffusion")
	if err != nil {
		t.Fatal(err)
	}
	f := c.(registry.AlgorithmFunc)
	e, err := reg.Lookup(registry.KindAlgorithm, "randomized-diffusion")
	if err != nil {
		t.Fatal(err)
	}
	e.Name = "counted"
	err = reg.RegisterAlgorithm(e, func(net *tokendist.Graph, l tokendist.Loads, p registry.Params) (tokendist.Balancer, error) {
		started.Add(1)
		return f(net, l, p)
	})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// sweepWithin runs Sweep in a goroutine and fails the test if it does not return within
// the limit.
func sweepWithin(t *testing.T, limit time.Duration, reg *registry.Registry, runs []Run, db *DB, o SweepOptions) (SweepStats, error) {
	t.Helper()
	type out struct {
		st  SweepStats
		err error
	}
	ch := make(chan out, 1)
	go func() {
		st, err := Sweep(context.Background(), reg, runs, db, o)
		ch <- out{st, err}
	}()
	select {
	case r := <-ch:
		return r.st, r.err
	case <-time.After(limit):
		t.Fatalf("Sweep did not return within %v", limit)
		return SweepStats{}, nil
	}
}

// TestSweepStopsOnDatabaseError: a database that fails on its sixth run (a trigger
// aborts the insert: a real SQLite error, at a fixed point) stops the sweep: Sweep
// returns the error with the prefix, every worker has returned (no run starts after
// Sweep returns, no goroutine is left), and only the runs in flight at the failure ran.
func TestSweepStopsOnDatabaseError(t *testing.T) {
	var started atomic.Int64
	reg := countingRegistry(t, &started)
	const seeds = 400
	text := "networks:\n  - name: ring\n    n: 64\nloads:\n  - name: point-mass\n    tokens: 1000\nalgorithms: [counted]\nstop:\n  max_steps: 200\nseeds: 400\n"
	f, err := Parse("fail.yaml", []byte(text), reg, false)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := f.Specs()
	if err != nil || len(runs) != seeds {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	db, err := OpenDB(filepath.Join(t.TempDir(), "fail.db"))
	if err != nil {
		t.Fatal(err)
	}
	const stored = 5
	if _, err := db.sql.Exec(`CREATE TRIGGER fail BEFORE INSERT ON runs WHEN (SELECT count(*) FROM runs) >= 5
		BEGIN SELECT RAISE(ABORT, 'injected failure'); END`); err != nil {
		t.Fatal(err)
	}
	const workers = 2
	st, err := sweepWithin(t, 2*time.Minute, reg, runs, db, SweepOptions{Workers: workers, BatchSize: 1, Experiment: "fail"})
	if err == nil {
		t.Fatal("no error")
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "tokendist: sweep: database ") || strings.Count(msg, "tokendist: ") != 1 ||
		!strings.Contains(msg, "injected failure") {
		t.Errorf("error %q: want one prefix, the database and the cause", msg)
	}
	if st.Ran != stored {
		t.Errorf("%d runs stored, want %d", st.Ran, stored)
	}
	// At the failure at most the failing run, a full results buffer (4 per worker) and
	// one run per worker had started.
	n := started.Load()
	if limit := int64(stored + 1 + 5*workers); n > limit {
		t.Errorf("%d runs started, want at most %d: the workers did not stop", n, limit)
	}
	time.Sleep(50 * time.Millisecond)
	if m := started.Load(); m != n {
		t.Errorf("%d runs started after Sweep returned", m-n)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	goleak.VerifyNone(t)
}

// TestSweepRetryOneTransaction: --retry deletes the failed runs and their traces in one
// transaction: when the second DELETE fails (a trigger aborts it) the traces are still
// there; once it succeeds the failed runs are run again.
func TestSweepRetryOneTransaction(t *testing.T) {
	reg := registry.New()
	text := "networks:\n  - name: path\n    n: 8\nloads:\n  - name: point-mass\n    tokens: 10\nalgorithms: [threshold-1]\nseeds: 3\nrecord:\n  trace: true\n"
	f, err := Parse("retry.yaml", []byte(text), reg, false)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := f.Specs()
	if err != nil || len(runs) != 3 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	db, err := OpenDB(filepath.Join(t.TempDir(), "retry.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var recs []Record
	for _, r := range runs {
		out := registry.Result{Spec: r.Spec, Result: tokendist.Result{Status: tokendist.StatusFailed, Trace: tokendist.Trace{{Step: 0}, {Step: 1}}}}
		recs = append(recs, Record{Run: r, Experiment: "retry", Out: out, Err: errors.New("tokendist: injected run failure")})
	}
	if err := db.Insert(recs); err != nil {
		t.Fatal(err)
	}
	count := func(q string) int {
		t.Helper()
		var n int
		if err := db.sql.QueryRow(q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	const failed = `SELECT count(*) FROM runs WHERE status = 'Failed'`
	const traces = `SELECT count(*) FROM traces`
	if count(failed) != 3 || count(traces) != 6 {
		t.Fatalf("setup: %d failed runs, %d trace rows", count(failed), count(traces))
	}
	if _, err := db.sql.Exec(`CREATE TRIGGER keep BEFORE DELETE ON runs BEGIN SELECT RAISE(ABORT, 'injected delete failure'); END`); err != nil {
		t.Fatal(err)
	}
	st, err := sweepWithin(t, time.Minute, reg, runs, db, SweepOptions{Workers: 1, Retry: true, Experiment: "retry"})
	if err == nil || !strings.HasPrefix(err.Error(), "tokendist: sweep --retry: database ") || !strings.Contains(err.Error(), "injected delete failure") {
		t.Errorf("retry with a failing DELETE: %v", err)
	}
	if st.Ran != 0 || count(failed) != 3 || count(traces) != 6 {
		t.Errorf("after the failed retry: %d ran, %d failed runs, %d trace rows; want 0, 3, 6 (rolled back)", st.Ran, count(failed), count(traces))
	}
	if _, err := db.sql.Exec(`DROP TRIGGER keep`); err != nil {
		t.Fatal(err)
	}
	st, err = sweepWithin(t, time.Minute, reg, runs, db, SweepOptions{Workers: 1, Retry: true, Experiment: "retry"})
	if err != nil || st.Ran != 3 || st.Failed != 0 {
		t.Fatalf("retry: %+v, %v", st, err)
	}
	if count(failed) != 0 || count(`SELECT count(*) FROM runs`) != 3 {
		t.Errorf("after the retry: %d failed runs of %d", count(failed), count(`SELECT count(*) FROM runs`))
	}
	if n := count(`SELECT count(*) FROM traces WHERE step = 1 AND discrepancy = 0 AND max_load = 0`); n != 0 {
		t.Errorf("%d trace rows of the failed runs remain", n)
	}
}
