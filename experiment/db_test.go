package experiment

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/registry"
)

// TestRunKeyContents: a run's key (32 hex digits) is fixed by the code's version, the
// canonical spec and the contents of the files the network and the workloads read, and
// changes when any of them does: another version, another seed, another byte in the
// network's edge list or the workload's trace (at the same path). A file that cannot be
// read is an error naming it.
func TestRunKeyContents(t *testing.T) {
	dir := t.TempDir()
	edges, trace := filepath.Join(dir, "net.txt"), filepath.Join(dir, "trace.csv")
	write := func(name, s string) {
		t.Helper()
		if err := os.WriteFile(name, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(edges, "0 1\n1 2\n2 0\n")
	write(trace, "step,node,count\n1,0,5\n")
	spec := registry.Spec{
		Network:   registry.Choice{Name: "edge-list", Params: map[string]any{"file": edges}},
		Loads:     registry.Choice{Name: "point-mass", Params: map[string]any{"tokens": 9}},
		Algorithm: registry.Choice{Name: "rsw-diffusion"},
		Workload:  []registry.Choice{{Name: "poisson", Params: map[string]any{"rate": 0.5}}, {Name: "trace", Params: map[string]any{"file": trace}}},
		Seed:      1,
	}
	key := func(version string, s registry.Spec) string {
		t.Helper()
		k, err := runKey(version, s)
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(k) {
			t.Fatalf("key %q is not 32 hex digits", k)
		}
		return k
	}
	k0 := key("v1", spec)
	if k := key("v1", spec); k != k0 {
		t.Fatalf("the same run has keys %s and %s", k0, k)
	}
	seen := map[string]string{k0: "base"}
	distinct := func(what, k string) {
		t.Helper()
		if prev, ok := seen[k]; ok {
			t.Errorf("%s has the key of %s", what, prev)
		}
		seen[k] = what
	}
	distinct("another version", key("v2", spec))
	s2 := spec
	s2.Seed = 2
	distinct("another seed", key("v1", s2))
	write(edges, "0 1\n1 2\n2 0\n0 2\n")
	distinct("another network file", key("v1", spec))
	write(trace, "step,node,count\n1,0,6\n")
	distinct("another trace file", key("v1", spec))
	for _, name := range []string{edges, trace} {
		if err := os.Remove(name); err != nil {
			t.Fatal(err)
		}
		_, err := runKey("v1", spec)
		if err == nil || !strings.HasPrefix(err.Error(), "tokendist: ") || !strings.Contains(err.Error(), name) || !errors.Is(err, os.ErrNotExist) {
			t.Errorf("key with %s missing: %v", name, err)
		}
		write(name, "0 1\n")
	}
}

// dbRecord is a stored run with the given key, status, error and two trace samples.
func dbRecord(key string, status tokendist.Status, err error) Record {
	res := tokendist.Result{Status: status, Loads: tokendist.Loads{1, 2}, Steps: 2,
		Trace: []tokendist.Sample{{Step: 0, Discrepancy: 3}, {Step: 2, Discrepancy: 1}}}
	return Record{Run: Run{Key: key, Trace: true, Spec: registry.Spec{Seed: 1}}, Experiment: "x", Out: registry.Result{Result: res}, Err: err}
}

// dbStatus returns the stored status and error of key, and its number of trace rows.
func dbStatus(t *testing.T, db *DB, key string) (status, errText string, traces int) {
	t.Helper()
	if err := db.sql.QueryRow(`SELECT status, error FROM runs WHERE key = ?`, key).Scan(&status, &errText); err != nil {
		t.Fatalf("run %s: %v", key, err)
	}
	if err := db.sql.QueryRow(`SELECT count(*) FROM traces WHERE key = ?`, key).Scan(&traces); err != nil {
		t.Fatal(err)
	}
	return status, errText, traces
}

// TestDBFailedStatusAndRetry: a run that returned an error is stored as Failed with the
// error's text, whatever status its result carries (a balancer that failed mid-run may
// leave its status at MaxSteps, a canceled spec check leaves it zero); a run without an
// error keeps its status and an empty error. The metrics column is a JSON object, {}
// without metrics. A key already stored is left as it is (and the records after it in
// the same batch are stored); a run without Trace stores no samples. A
// retry (deleteFailed) deletes exactly the failed runs and their traces, keeping the
// others and theirs.
func TestDBFailedStatusAndRetry(t *testing.T) {
	db, err := OpenDB(filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	boom := errors.New("tokendist: boom")
	recs := []Record{
		dbRecord("ok", tokendist.StatusMaxSteps, nil),
		dbRecord("stable", tokendist.StatusStable, nil),
		dbRecord("err-maxsteps", tokendist.StatusMaxSteps, boom),
		dbRecord("err-zero", 0, boom),
		dbRecord("err-failed", tokendist.StatusFailed, boom),
	}
	if err := db.Insert(recs); err != nil {
		t.Fatal(err)
	}
	withMetrics := dbRecord("metrics", tokendist.StatusMaxSteps, nil)
	withMetrics.Out.Metrics = map[string]float64{"arrived": 3}
	if err := db.Insert([]Record{withMetrics}); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"ok": "{}", "metrics": `{"arrived":3}`} {
		var got string
		if err := db.sql.QueryRow(`SELECT metrics FROM runs WHERE key = ?`, key).Scan(&got); err != nil || got != want {
			t.Errorf("run %s: metrics %q (%v), want the JSON object %s", key, got, err, want)
		}
	}
	for _, tc := range []struct{ key, status, err string }{
		{"ok", "MaxSteps", ""}, {"stable", "Stable", ""},
		{"err-maxsteps", "Failed", "tokendist: boom"}, {"err-zero", "Failed", "tokendist: boom"}, {"err-failed", "Failed", "tokendist: boom"},
	} {
		st, e, n := dbStatus(t, db, tc.key)
		if st != tc.status || e != tc.err || n != 2 {
			t.Errorf("run %s stored as %q, error %q, %d trace rows; want %q, %q, 2", tc.key, st, e, n, tc.status, tc.err)
		}
	}
	again := dbRecord("ok", tokendist.StatusStable, boom)
	again.Out.Result.Trace = append(again.Out.Result.Trace, tokendist.Sample{Step: 3})
	untraced := dbRecord("untraced", tokendist.StatusMaxSteps, nil)
	untraced.Run.Trace = false
	if err := db.Insert([]Record{again, untraced, dbRecord("later", tokendist.StatusStable, nil)}); err != nil {
		t.Fatal(err)
	}
	if st, e, n := dbStatus(t, db, "ok"); st != "MaxSteps" || e != "" || n != 2 {
		t.Errorf("a stored key was overwritten: %q %q, %d trace rows", st, e, n)
	}
	if _, _, n := dbStatus(t, db, "untraced"); n != 0 {
		t.Errorf("a run without Trace stored %d trace rows", n)
	}
	if st, _, n := dbStatus(t, db, "later"); st != "Stable" || n != 2 {
		t.Errorf("the run after a stored key and an untraced one: %q, %d trace rows", st, n)
	}
	if err := db.deleteFailed(); err != nil {
		t.Fatal(err)
	}
	done, err := db.Done()
	if err != nil {
		t.Fatal(err)
	}
	if len(done) != 5 || !done["ok"] || !done["stable"] || !done["metrics"] || !done["untraced"] || !done["later"] {
		t.Errorf("after the retry's delete: runs %v, want ok, stable, metrics, untraced and later", done)
	}
	var traces int
	if err := db.sql.QueryRow(`SELECT count(*) FROM traces`).Scan(&traces); err != nil {
		t.Fatal(err)
	}
	if traces != 8 {
		t.Errorf("after the retry's delete: %d trace rows, want the 8 of ok, stable, metrics and later", traces)
	}
}
