package experiment

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tokendist/tokendist/registry"
)

// killFile is a grid of 160 runs of a few milliseconds each.
const killFile = `name: kill
networks:
  - name: random-regular
    n: 1000
    d: 4
loads:
  - name: point-mass
    tokens: 100000
algorithms: [randomized-diffusion, rsw-diffusion, fgs-deterministic, random-matching]
stop:
  max_steps: [100, 200]
seeds: 20
record:
  trace: true
  sample_every: 50
`

func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the command")
	}
	bin := filepath.Join(t.TempDir(), "tokendist")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/tokendist").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func dump(t *testing.T, path string) []string {
	t.Helper()
	db, err := OpenDB(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	d, err := db.Dump()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// finished returns key → finished_at of the stored runs.
func finished(t *testing.T, path string) map[string]string {
	t.Helper()
	s, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows, err := s.Query(`SELECT key, finished_at FROM runs`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, f string
		rows.Scan(&k, &f)
		out[k] = f
	}
	return out
}

func countRows(path string) int {
	s, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(1000)")
	if err != nil {
		return 0
	}
	defer s.Close()
	var n int
	if err := s.QueryRow(`SELECT count(*) FROM runs`).Scan(&n); err != nil {
		return 0
	}
	return n
}

// TestSweepKillResume kills a real sweep process (SIGKILL, then SIGINT), runs the same
// command again, and compares the database row for row with an uninterrupted sweep: no
// run lost, none twice, none torn, and no committed run re-run.
func TestSweepKillResume(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "kill.yaml")
	os.WriteFile(file, []byte(killFile), 0o644)
	ref := filepath.Join(dir, "ref.db")
	if out, err := exec.Command(bin, "sweep", "--progress", "none", "--db", ref, file).CombinedOutput(); err != nil {
		t.Fatalf("reference sweep: %v\n%s", err, out)
	}
	want := dump(t, ref)
	if len(want) < 160 {
		t.Fatalf("reference has %d lines", len(want))
	}
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGINT} {
		db := filepath.Join(dir, "kill-"+sig.String()+".db")
		cmd := exec.Command(bin, "sweep", "--progress", "none", "--db", db, file)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(60 * time.Second)
		for countRows(db) < 10 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		cmd.Process.Signal(sig)
		err := cmd.Wait()
		before := finished(t, db)
		t.Logf("%v: %d of 160 runs committed before the signal (exit %v)", sig, len(before), err)
		if len(before) == 0 || len(before) >= 160 {
			t.Errorf("%v: the signal came at %d runs, not mid-way", sig, len(before))
		}
		if sig == syscall.SIGINT && !strings.Contains(stderr.String(), "interrupted") {
			t.Errorf("SIGINT: stderr %q", stderr.String())
		}
		out, err := exec.Command(bin, "sweep", "--progress", "lines", "--db", db, file).CombinedOutput()
		if err != nil {
			t.Fatalf("resumed sweep: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), " already in the database") ||
			!strings.Contains(string(out), "sweep: "+strconv.Itoa(160-len(before))+" runs to do, "+strconv.Itoa(len(before))+" already") {
			t.Errorf("%v: resumed sweep says %q, want %d to do", sig, out, 160-len(before))
		}
		after := finished(t, db)
		for k, f := range before {
			if after[k] != f {
				t.Errorf("%v: committed run %s was run again (%s then %s)", sig, k, f, after[k])
			}
		}
		if got := dump(t, db); !reflect.DeepEqual(got, want) {
			t.Errorf("%v: resumed database differs from the reference (%d vs %d lines)", sig, len(got), len(want))
		}
	}
}

// TestShardsMergeEqualSingle sweeps a grid as 3 shards, merges them (twice), and compares
// with one sweep.
func TestShardsMergeEqualSingle(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "g.yaml")
	os.WriteFile(file, []byte(goodFile+"  trace: true\n"), 0o644)
	reg := registry.New()
	f, err := ReadFile(file, reg, false)
	if err != nil {
		t.Fatal(err)
	}
	runs, _ := f.Specs()
	single := filepath.Join(dir, "single.db")
	db, err := OpenDB(single)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Sweep(context.Background(), reg, runs, db, SweepOptions{Experiment: "g"}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	var shards []string
	for i := 0; i < 3; i++ {
		p := filepath.Join(dir, "s"+strconv.Itoa(i)+".db")
		db, err := OpenDB(p)
		if err != nil {
			t.Fatal(err)
		}
		st, err := Sweep(context.Background(), reg, runs, db, SweepOptions{Experiment: "g", Shard: Shard{i, 3}, Workers: 1})
		if err != nil || st.Ran == 0 {
			t.Fatal(err, st)
		}
		db.Close()
		shards = append(shards, p)
	}
	var stdout, stderr bytes.Buffer
	merged := filepath.Join(dir, "merged.db")
	for i := 0; i < 2; i++ {
		if code := Main(reg, append([]string{"merge", "--into", merged}, shards...), &stdout, &stderr); code != 0 {
			t.Fatalf("merge: %d %s", code, stderr.String())
		}
	}
	if !strings.Contains(stderr.String(), "merge: 32 runs added") || !strings.Contains(stderr.String(), "merge: 0 runs added") {
		t.Errorf("merge output %q", stderr.String())
	}
	if a, b := dump(t, merged), dump(t, single); !reflect.DeepEqual(a, b) {
		t.Errorf("merged shards differ from the single sweep (%d vs %d lines)", len(a), len(b))
	}
}

// TestCommandExitCodes checks the exit codes and that report, plot and list work.
func TestCommandExitCodes(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "g.yaml")
	os.WriteFile(file, []byte(goodFile), 0o644)
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("networks: [nope]\n"), 0o644)
	failing := filepath.Join(dir, "fail.yaml")
	os.WriteFile(failing, []byte("networks:\n  - name: path\n    n: 6\nloads:\n  - name: point-mass\n    tokens: 9\nalgorithms: [hypercube-balance]\n"), 0o644)
	db := filepath.Join(dir, "g.db")
	reg := registry.New()
	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{}, 2, ""},
		{[]string{"frobnicate"}, 2, ""},
		{[]string{"sweep", "--help"}, 0, "Resume:"},
		{[]string{"help", "report"}, 0, "--summary"},
		{[]string{"sweep", bad}, 2, ""},
		{[]string{"sweep", "--bogus", file}, 2, ""},
		{[]string{"sweep", "--shard", "3/3", file}, 2, ""},
		{[]string{"sweep", "--progress", "none", "--db", db, file}, 0, ""},
		{[]string{"run", failing}, 1, "Failed"},
		{[]string{"sweep", "--progress", "none", "--db", filepath.Join(dir, "f.db"), failing}, 1, ""},
		{[]string{"report", "--db", db, "--format", "csv"}, 0, "experiment,network,n,loads"},
		{[]string{"report", "--db", db, "--summary", "--format", "markdown"}, 0, "| experiment | network |"},
		{[]string{"report", "--db", db, "--format", "jsonl", "--where", "seed = 2"}, 0, `"seed":2`},
		{[]string{"report", "--db", db, "--format", "xml"}, 2, ""},
		{[]string{"report", "--db", filepath.Join(dir, "none.db")}, 2, ""},
		{[]string{"plot", "--db", db, "--out", filepath.Join(dir, "p.svg"), "--spread"}, 0, ""},
		{[]string{"plot", "--db", db, "--out", filepath.Join(dir, "p.svg"), "--y", "nope"}, 2, ""},
		{[]string{"list"}, 0, "randomized-diffusion"},
		{[]string{"list", "algorithms", "--json"}, 0, `"name": "threshold-1"`},
		{[]string{"run", file, "--format", "markdown"}, 0, "| network |"},
	} {
		var stdout, stderr bytes.Buffer
		code := Main(reg, tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String(), tc.out) {
			t.Errorf("%v: exit %d (want %d), stdout %.200q, stderr %.300q", tc.args, code, tc.code, stdout.String(), stderr.String())
		}
	}
	if svg, err := os.ReadFile(filepath.Join(dir, "p.svg")); err != nil || !bytes.Contains(svg, []byte("<svg")) {
		t.Errorf("plot: %v", err)
	}
}
