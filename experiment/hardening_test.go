package experiment

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/registry"
)

const tinyFile = "name: tiny\nnetworks:\n  - name: ring\n    n: 8\nloads:\n  - name: point-mass\n    tokens: 40\nalgorithms: [rsw-diffusion, threshold-2]\nstop:\n  max_steps: 30\nseeds: 2\n"

// sweepFile sweeps text into the database at path (created) and returns the stats.
func sweepFile(t *testing.T, reg *registry.Registry, path, text string) SweepStats {
	t.Helper()
	f, err := Parse("t.yaml", []byte(text), reg, false)
	require.NoError(t, err)
	runs, err := f.Specs()
	require.NoError(t, err)
	db, err := OpenDB(path)
	require.NoError(t, err)
	defer db.Close()
	st, err := Sweep(context.Background(), reg, runs, db, SweepOptions{Workers: 2, Experiment: f.Name})
	require.NoError(t, err)
	return st
}

// TestDBPathsAreFiles: a path with the characters an SQLite URI gives a meaning names
// exactly that file; nothing else is created.
func TestDBPathsAreFiles(t *testing.T) {
	for _, name := range []string{"a#b.db", "a?mode=ro.db", "a%3Fb.db", "a%b.db", "x?_pragma=journal_mode(DELETE)#y.db", "file:z.db"} {
		dir := t.TempDir()
		path := filepath.Join(dir, name)
		st := sweepFile(t, registry.New(), path, tinyFile)
		require.Equal(t, 4, st.Ran, name)
		ents, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range ents {
			require.True(t, strings.HasPrefix(e.Name(), name), "%s: the sweep wrote %s", name, e.Name())
		}
		db, err := OpenDBReadOnly(path)
		require.NoError(t, err, name)
		_, rows, err := db.Query("")
		require.NoError(t, err)
		require.Len(t, rows, 4, name)
		require.NoError(t, db.Close())
	}
}

// TestOpenDBRefusesOtherFiles: another program's SQLite file, a text file and a damaged
// database are refused by OpenDB and OpenDBReadOnly and left byte for byte unchanged.
func TestOpenDBRefusesOtherFiles(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other.db")
	s, err := sql.Open("sqlite", other)
	require.NoError(t, err)
	_, err = s.Exec(`CREATE TABLE customers (id INTEGER PRIMARY KEY); INSERT INTO customers VALUES (7)`)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	text := filepath.Join(dir, "text.db")
	require.NoError(t, os.WriteFile(text, []byte("not sqlite at all, but long enough to look like a header........................................................."), 0o644))
	damaged := filepath.Join(dir, "damaged.db")
	sweepFile(t, registry.New(), damaged, tinyFile)
	b, err := os.ReadFile(damaged)
	require.NoError(t, err)
	page := int(b[16])<<8 | int(b[17])
	for i := page; i < page+8; i++ {
		b[i] ^= 0xa5
	}
	require.NoError(t, os.WriteFile(damaged, b, 0o644))
	for _, c := range []struct {
		path string
		want error
	}{{other, ErrNotResults}, {text, ErrCorrupt}, {damaged, ErrCorrupt}} {
		before, err := os.ReadFile(c.path)
		require.NoError(t, err)
		_, err = OpenDB(c.path)
		require.ErrorIs(t, err, c.want, c.path)
		_, err = OpenDBReadOnly(c.path)
		require.ErrorIs(t, err, c.want, c.path)
		require.True(t, strings.HasPrefix(err.Error(), "tokendist: "))
		after, err := os.ReadFile(c.path)
		require.NoError(t, err)
		require.Equal(t, before, after, "%s changed", c.path)
	}
	ro, err := OpenDBReadOnly(filepath.Join(dir, "missing.db"))
	require.Error(t, err)
	require.Nil(t, ro)
	require.NoFileExists(t, filepath.Join(dir, "missing.db"), "a read-only open created the file")
}

// TestMergeConflicts: a run stored with different results in two databases is refused
// by default and settled by keep or replace; sources are never written.
func TestMergeConflicts(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	sweepFile(t, registry.New(), a, tinyFile)
	sweepFile(t, registry.New(), b, tinyFile)
	s, err := sql.Open("sqlite", b)
	require.NoError(t, err)
	_, err = s.Exec(`UPDATE runs SET discrepancy = discrepancy + 100 WHERE seed = 1`)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	hashA, _ := os.ReadFile(a)
	hashB, _ := os.ReadFile(b)
	discrepancies := func(path string) []string {
		db, err := OpenDBReadOnly(path)
		require.NoError(t, err)
		defer db.Close()
		cols, rows, err := db.Query("")
		require.NoError(t, err)
		var out []string
		for _, r := range rows {
			for i, c := range cols {
				if c == "discrepancy" {
					out = append(out, fmt.Sprint(r[i]))
				}
			}
		}
		return out
	}
	for _, c := range []struct {
		policy string
		added  int64
		fails  bool
		like   string
	}{{ConflictFail, 4, true, a}, {ConflictKeep, 4, false, a}, {ConflictReplace, 6, false, b}} {
		out := filepath.Join(dir, "out-"+c.policy+".db")
		db, err := OpenDB(out)
		require.NoError(t, err)
		n, err := db.MergeWith([]string{a, b}, c.policy)
		require.NoError(t, db.Close())
		require.Equal(t, c.added, n, c.policy)
		if c.fails {
			require.ErrorIs(t, err, tokendist.ErrBadParameter)
			require.Contains(t, err.Error(), "2 runs differ")
		} else {
			require.NoError(t, err, c.policy)
			require.Equal(t, discrepancies(c.like), discrepancies(out), c.policy)
		}
	}
	afterA, _ := os.ReadFile(a)
	afterB, _ := os.ReadFile(b)
	require.Equal(t, hashA, afterA, "merge wrote into a source")
	require.Equal(t, hashB, afterB, "merge wrote into a source")
	db, err := OpenDB(filepath.Join(dir, "x.db"))
	require.NoError(t, err)
	_, err = db.MergeWith([]string{a}, "maybe")
	require.ErrorIs(t, err, tokendist.ErrBadParameter)
	require.NoError(t, db.Close())
}

// TestMergeLeavesNoTarget: merge --into a new file with a bad source exits non-zero and
// leaves no file.
func TestMergeLeavesNoTarget(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.db")
	require.NoError(t, os.WriteFile(bad, []byte("garbage"), 0o644))
	good := filepath.Join(dir, "good.db")
	sweepFile(t, registry.New(), good, tinyFile)
	for _, srcs := range [][]string{{bad}, {good, bad}, {filepath.Join(dir, "missing.db")}} {
		into := filepath.Join(dir, "x.db")
		var out, errb strings.Builder
		code := Main(registry.New(), append([]string{"merge", "--into", into}, srcs...), &out, &errb)
		require.NotEqual(t, ExitOK, code, errb.String())
		require.True(t, strings.HasPrefix(errb.String(), "tokendist: "), errb.String())
		require.NoFileExists(t, into, "a failed merge left %s", into)
	}
}

// TestNonFiniteMetrics: a metric that is NaN or ±Inf is stored as absent with a flag;
// the run, and every other run of the batch, is stored.
func TestNonFiniteMetrics(t *testing.T) {
	reg := registry.New()
	vals := map[int64]float64{40: math.NaN(), 41: math.Inf(1), 42: math.Inf(-1), 43: 2.5}
	require.NoError(t, reg.RegisterMetric(registry.Entry{Name: "odd"}, func(m registry.MetricInput) (float64, error) {
		return vals[m.Loads.Total()], nil
	}))
	path := filepath.Join(t.TempDir(), "m.db")
	text := strings.Replace(strings.Replace(tinyFile, "seeds: 2", "seeds: 1", 1), "tokens: 40", "tokens: [40, 41, 42, 43]", 1)
	st := sweepFile(t, reg, path, text+"record:\n  metrics: [odd]\n")
	require.Equal(t, 8, st.Ran)
	require.Zero(t, st.Failed)
	require.Equal(t, map[string]int{"odd": 6}, st.NonFinite)
	// The command says so on stderr, naming the metric, and still exits 0 (the runs
	// are stored).
	file := filepath.Join(t.TempDir(), "m.yaml")
	require.NoError(t, os.WriteFile(file, []byte(text+"record:\n  metrics: [odd]\n"), 0o644))
	var out, errb strings.Builder
	code := Main(reg, []string{"sweep", "--db", filepath.Join(t.TempDir(), "cli.db"), "--progress", "none", file}, &out, &errb)
	require.Equal(t, ExitOK, code, errb.String())
	require.Contains(t, errb.String(), "tokendist: sweep: metrics that were NaN or infinite, stored as empty and flagged in the table nonfinite: odd in 6 runs\n")
	require.Equal(t, "a in 1 run, b in 2 runs", nonFiniteSummary(map[string]int{"b": 2, "a": 1}))
	db, err := OpenDBReadOnly(path)
	require.NoError(t, err)
	defer db.Close()
	cols, rows, err := db.Query("")
	require.NoError(t, err)
	require.Len(t, rows, 8)
	col := map[string]int{}
	for i, c := range cols {
		col[c] = i
	}
	want := map[int64]string{40: "NaN", 41: "+Inf", 42: "-Inf"}
	for _, r := range rows {
		seed := r[col["total"]].(int64)
		nf, err := db.NonFinite(r[col["key"]].(string))
		require.NoError(t, err)
		metrics := r[col["metrics"]].(string)
		if w, ok := want[seed]; ok {
			require.Equal(t, map[string]string{"odd": w}, nf, "seed %d", seed)
			require.NotContains(t, metrics, "odd", "seed %d", seed)
		} else {
			require.Empty(t, nf)
			require.Contains(t, metrics, `"odd":2.5`)
		}
	}
}

// TestPanickingRunIsAFailedRun: a user algorithm that panics in Step, and one that
// panics in its constructor, make failed runs whose error holds the panic value and the
// stack; the other runs of the sweep are stored normally.
func TestPanickingRunIsAFailedRun(t *testing.T) {
	reg := registry.New()
	c, err := reg.Constructor(registry.KindAlgorithm, "rsw-diffusion")
	require.NoError(t, err)
	inner := c.(registry.AlgorithmFunc)
	require.NoError(t, reg.RegisterAlgorithm(registry.Entry{Name: "boom"}, func(g *tokendist.Graph, l tokendist.Loads, p registry.Params) (tokendist.Balancer, error) {
		b, err := inner(g, l, p)
		return &panicky{Balancer: b}, err
	}))
	require.NoError(t, reg.RegisterAlgorithm(registry.Entry{Name: "boom-ctor"}, func(*tokendist.Graph, tokendist.Loads, registry.Params) (tokendist.Balancer, error) {
		panic(fmt.Errorf("constructor exploded"))
	}))
	path := filepath.Join(t.TempDir(), "p.db")
	st := sweepFile(t, reg, path, strings.Replace(tinyFile, "[rsw-diffusion, threshold-2]", "[rsw-diffusion, boom, boom-ctor]", 1))
	require.Equal(t, 6, st.Ran)
	require.Equal(t, 4, st.Failed)
	db, err := OpenDBReadOnly(path)
	require.NoError(t, err)
	defer db.Close()
	_, rows, err := db.Query("status = 'Failed'")
	require.NoError(t, err)
	require.Len(t, rows, 4)
	for _, r := range rows {
		msg := r[16].(string)
		require.Contains(t, msg, "user code panicked")
		require.True(t, strings.Contains(msg, "step 2 exploded") || strings.Contains(msg, "constructor exploded"), msg)
		require.Contains(t, msg, "goroutine ", "the stack is stored")
		require.Contains(t, msg, "runSafely")
	}
}

type panicky struct {
	tokendist.Balancer
	steps int
}

func (p *panicky) Init(s *tokendist.State) error {
	p.steps = 0
	return p.Balancer.(tokendist.Initializer).Init(s)
}

func (p *panicky) Step(s *tokendist.State) error {
	if p.steps++; p.steps == 2 {
		panic("step 2 exploded")
	}
	return p.Balancer.Step(s)
}

// TestGridSizedBeforeExpansion: a grid over MaxRuns, or over the memory budget, is
// refused at once, without expanding it.
func TestGridSizedBeforeExpansion(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(256 << 20))
	for _, text := range []string{
		strings.Replace(tinyFile, "seeds: 2", "seeds: 1048576", 1),                                                                      // 2^21 runs: 1 GiB of runs, over a budget of 256 MiB
		strings.Replace(strings.Replace(tinyFile, "n: 8", "n: [8, 9, 10, 11, 12, 13, 14, 15, 16]", 1), "seeds: 2", "seeds: 1048576", 1), // over MaxRuns
	} {
		start := time.Now()
		_, err := Parse("g.yaml", []byte(text), registry.New(), false)
		require.Error(t, err)
		require.Less(t, time.Since(start), 2*time.Second, "refused after expanding")
		require.ErrorIs(t, err, ErrFile)
		require.True(t, strings.Contains(err.Error(), "more than") || strings.Contains(err.Error(), "memory budget"), err.Error())
	}
}

// TestSlurmStep: the tasks of --array=0-10:2 are the shards 0..5 of 6; a list array
// (count inconsistent with the bounds) and a task off the step are refused.
func TestSlurmStep(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	seen := map[int]bool{}
	for id := 0; id <= 10; id += 2 {
		s, ok, err := ShardFromEnv(env(map[string]string{"SLURM_ARRAY_TASK_ID": fmt.Sprint(id), "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "10", "SLURM_ARRAY_TASK_STEP": "2", "SLURM_ARRAY_TASK_COUNT": "6"}), 0)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, 6, s.Count)
		require.Equal(t, id/2, s.Index)
		seen[s.Index] = true
	}
	require.Len(t, seen, 6)
	for _, kv := range []map[string]string{
		{"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "10", "SLURM_ARRAY_TASK_STEP": "2"},
		{"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "7", "SLURM_ARRAY_TASK_COUNT": "3"},
		{"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_MAX": "10", "SLURM_ARRAY_TASK_STEP": "0"},
	} {
		_, _, err := ShardFromEnv(env(kv), 0)
		require.ErrorIs(t, err, tokendist.ErrBadParameter, "%v", kv)
	}
}

// TestWorkersBounded: --workers above the cap is a usage error, not gigabytes.
func TestWorkersBounded(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "t.yaml")
	require.NoError(t, os.WriteFile(f, []byte(tinyFile), 0o644))
	for _, args := range [][]string{{"run", "--workers", "3000000", f}, {"sweep", "--workers", "3000000", "--db", filepath.Join(dir, "w.db"), f}} {
		var out, errb strings.Builder
		require.Equal(t, ExitUsage, Main(registry.New(), args, &out, &errb), errb.String())
		require.True(t, strings.HasPrefix(errb.String(), "tokendist: "), errb.String())
		require.Contains(t, errb.String(), "3000000")
	}
	_, err := Sweep(context.Background(), registry.New(), nil, nil, SweepOptions{Workers: 1 << 20})
	require.ErrorIs(t, err, tokendist.ErrBadParameter)
}

// TestFlagErrorsPrefixed: the flag package's errors come out prefixed, on one line.
func TestFlagErrorsPrefixed(t *testing.T) {
	for _, args := range [][]string{{"run", "--bogus"}, {"sweep", "--workers", "x"}, {"report", "--format"}} {
		var out, errb strings.Builder
		require.Equal(t, ExitUsage, Main(registry.New(), args, &out, &errb))
		require.True(t, strings.HasPrefix(errb.String(), "tokendist: "+args[0]+": "), errb.String())
		require.Equal(t, 1, strings.Count(strings.TrimSpace(errb.String()), "\n")+1, errb.String())
	}
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, fmt.Errorf("disk full") }

// TestFailedWriteIsAnError: a failed write of the output is an error and exit 1.
func TestFailedWriteIsAnError(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "t.yaml")
	require.NoError(t, os.WriteFile(f, []byte(tinyFile), 0o644))
	var errb strings.Builder
	require.Equal(t, ExitFailed, Main(registry.New(), []string{"run", f}, failingWriter{}, &errb))
	require.Contains(t, errb.String(), "tokendist: writing the output: disk full")
	errb.Reset()
	require.Equal(t, ExitFailed, Main(registry.New(), []string{"list"}, failingWriter{}, &errb))
}
