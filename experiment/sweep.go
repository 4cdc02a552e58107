package experiment

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/internal/errs"
	"github.com/tokendist/tokendist/registry"
)

// Shard selects the runs of a grid with Index mod Count == Index of the shard.
type Shard struct {
	Index, Count int
}

// ParseShard parses "i/n" (0 ≤ i < n).
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, errs.BadParam("bad shard %s (want i/n with 0 ≤ i < n, e.g. 0/4)", errs.Quote([]byte(s)))
	}
	return Shard{i, n}, nil
}

// ShardFromEnv reads the shard from a Slurm job array (SLURM_ARRAY_TASK_ID with
// SLURM_ARRAY_TASK_COUNT, or with SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_MAX, and
// SLURM_ARRAY_TASK_STEP for an array such as --array=0-10:2, whose tasks are shards
// (id−min)/step of count) or a
// Kubernetes Indexed Job (JOB_COMPLETION_INDEX, with count, or TOKENDIST_SHARDS when
// count is 0). It reports ok false when none is set.
func ShardFromEnv(getenv func(string) string, count int) (Shard, bool, error) {
	num := func(k string) (int, error) {
		v, err := strconv.Atoi(strings.TrimSpace(getenv(k)))
		if err != nil {
			return 0, errs.BadParam("%s=%s is not an integer", k, errs.Quote([]byte(getenv(k))))
		}
		return v, nil
	}
	if getenv("SLURM_ARRAY_TASK_ID") != "" {
		return slurmShard(getenv, num)
	}
	if getenv("JOB_COMPLETION_INDEX") != "" {
		id, err := num("JOB_COMPLETION_INDEX")
		if err != nil {
			return Shard{}, false, err
		}
		if count == 0 && getenv("TOKENDIST_SHARDS") != "" {
			if count, err = num("TOKENDIST_SHARDS"); err != nil {
				return Shard{}, false, err
			}
		}
		if count < 1 || id < 0 || id >= count {
			return Shard{}, false, errs.BadParam("JOB_COMPLETION_INDEX=%d needs the shard count (--shards or TOKENDIST_SHARDS, the Job's completions) greater than it", id)
		}
		return Shard{id, count}, true, nil
	}
	return Shard{}, false, nil
}

// SweepOptions configures Sweep.
type SweepOptions struct {
	// Workers is the number of runs in parallel (0: GOMAXPROCS).
	Workers int
	// Shard selects a slice of the grid (Count 0: all).
	Shard Shard
	// Progress receives the progress display (nil: none); Terminal selects the bar.
	// With a Progress writer, Sweep first sizes one run of each class of runs (runs
	// that differ only by seed) and times a few short runs of it, for about 10 s at
	// most, so that the ETA follows the cost of the remaining runs, not their count.
	Progress io.Writer
	Terminal bool
	// Every is the interval of plain progress lines (0: 10 s).
	Every time.Duration
	// Experiment names the runs in the database.
	Experiment string
	// Retry runs again the runs stored as failed (they are replaced).
	Retry bool
	// BatchSize bounds the runs per transaction (0: 256); a batch is also committed
	// after 200 ms.
	BatchSize int
}

// SweepStats summarises a sweep.
type SweepStats struct {
	Total, Skipped, Ran, Failed int
	Wall                        time.Duration
	// RunTime is the summed wall time of the runs themselves (across workers).
	RunTime time.Duration
	// OtherCode counts the runs to do whose spec the database already holds from other
	// code (another code identity or label, or UnknownCode): they run anew and are
	// stored beside the others, never in their place. OtherCodes are those codes'
	// identities, sorted.
	OtherCode  int
	OtherCodes []string
	// NonFinite counts, by metric name, the stored runs whose metric was NaN or ±Inf:
	// stored as absent and flagged in the table nonfinite (DB.NonFinite), never as a
	// number. Nil when there were none.
	NonFinite map[string]int
}

// Select returns the runs of shard s (all for Count 0).
func Select(runs []Run, s Shard) []Run {
	if s.Count <= 1 {
		return runs
	}
	var out []Run
	for _, r := range runs {
		if r.Index%s.Count == s.Index {
			out = append(out, r)
		}
	}
	return out
}

// Sweep runs the runs missing from db (every run of the shard whose key is absent) in
// parallel and stores each in db as it finishes, in batches of one transaction each.
// Cancelling ctx stops the workers between runs: runs in progress are dropped (they are
// not stored, so the next sweep runs them), finished runs are committed before Sweep
// returns. Each run uses one goroutine per step (results do not depend on it).
//
// The first database error stops the sweep: Sweep cancels the workers (runs in progress
// are dropped as on cancellation), waits for every worker to return, and returns the
// error ("tokendist: sweep: database ..."), wrapping the driver's. With o.Retry the
// failed runs and their traces are deleted in one transaction before the sweep (both or
// neither).
//
// Every run goes through one recovery point: user code (a registered constructor,
// balancer, metric, workload or churn) that panics makes a failed run whose error holds
// the panic value and the stack (it wraps ErrPanic); the sweep goes on. o.Workers must be
// at most 4096.
//
// Runs of other code (SweepStats.OtherCode) are counted before the sweep starts: O(rows
// of other code in db) time and memory of one hash per such row.
func Sweep(ctx context.Context, reg *registry.Registry, runs []Run, db *DB, o SweepOptions) (SweepStats, error) {
	return sweep(ctx, reg, runs, db, o, nil, nil)
}

// sweep is Sweep, recording the runs in progress in fl (nil: not recorded) and writing
// the one-line notice of runs from other code to notice (nil: none).
func sweep(ctx context.Context, reg *registry.Registry, runs []Run, db *DB, o SweepOptions, fl *inflight, notice io.Writer) (SweepStats, error) {
	start := time.Now()
	if err := checkWorkers(o.Workers); err != nil {
		return SweepStats{}, wrapf(err, "sweep")
	}
	if reg == nil || db == nil {
		return SweepStats{}, errs.BadParam("sweep: nil registry or database")
	}
	runs = Select(runs, o.Shard)
	st := SweepStats{Total: len(runs)}
	if o.Retry {
		if err := db.deleteFailed(); err != nil {
			return st, wrapf(err, "sweep --retry")
		}
	}
	done, err := db.Done()
	if err != nil {
		return st, wrapf(err, "sweep")
	}
	var todo []Run
	for _, r := range runs {
		if done[r.Key] {
			st.Skipped++
			continue
		}
		todo = append(todo, r)
	}
	if len(todo) > 0 {
		n, codes, mine, err := db.otherCode(todo)
		if err != nil {
			return st, wrapf(err, "sweep")
		}
		st.OtherCode, st.OtherCodes = n, codes
		if n > 0 && notice != nil {
			fmt.Fprintf(notice, "sweep: the database holds %d of these runs from other code (%s); running them anew for %s (reports keep the codes apart)\n",
				n, listCodes(codes), strings.Join(mine, "; "))
		}
	}
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, len(todo)))
	batch := o.BatchSize
	if batch <= 0 {
		batch = 256
	}
	// wctx is the workers' context: cancelled with ctx, or by the first database error.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan Run)
	results := make(chan Record, 4*workers)
	prog := newProgressShell(o, todo, st.Skipped, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range jobs {
				if wctx.Err() != nil {
					continue // stopping: drain the jobs without running them
				}
				t0 := time.Now()
				fl.add(r)
				prog.begin(r.Key)
				out, err := runSafely(wctx, reg, r, &tokendist.RunOptions{Workers: 1})
				wall := time.Since(t0)
				if wctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || out.Result.Status == tokendist.StatusCanceled) {
					fl.remove(r)
					continue // interrupted: not stored, run again next time
				}
				results <- Record{Run: r, Experiment: o.Experiment, Out: out, Err: err, Wall: wall}
			}
		}()
	}
	go func() {
		defer close(jobs)
		for _, r := range todo {
			if wctx.Err() != nil {
				return
			}
			select {
			case jobs <- r:
			case <-wctx.Done():
				return
			}
		}
	}()
	go func() {
		wg.Wait()
		close(results)
	}()
	prog.sizeRuns(reg, todo) // while the workers run
	var pending []Record
	var werr error
	flush := func() {
		if len(pending) == 0 || werr != nil {
			return
		}
		if err := db.Insert(pending); err != nil {
			werr = err
			cancel() // stop the workers; the loop below drains them until they return
			return
		}
		for _, r := range pending {
			fl.remove(r.Run) // committed
			st.Ran++
			st.RunTime += r.Wall
			if r.Err != nil || r.Out.Result.Status == tokendist.StatusFailed {
				st.Failed++
			}
			if _, bad := splitMetrics(r.Out.Metrics); len(bad) > 0 {
				if st.NonFinite == nil {
					st.NonFinite = map[string]int{}
				}
				for _, m := range bad {
					st.NonFinite[m[0]]++
				}
			}
		}
		prog.add(pending, st.Failed)
		pending = pending[:0]
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
loop:
	for {
		select {
		case r, ok := <-results:
			if !ok {
				break loop
			}
			pending = append(pending, r)
			if len(pending) >= batch {
				flush()
			}
		case <-tick.C:
			flush()
			prog.tick()
		}
	}
	flush()
	// results is closed: every worker has returned.
	st.Wall = time.Since(start)
	prog.finish(st)
	if werr != nil {
		return st, wrapf(werr, "sweep")
	}
	if err := ctx.Err(); err != nil {
		return st, wrapf(err, "sweep interrupted after %d runs", st.Ran)
	}
	return st, nil
}

// slurmShard is ShardFromEnv for a Slurm job array. An array with a step (--array=0-10:2)
// is handled: task id is shard (id−min)/step of (max−min)/step+1. An array that is not a
// range with a step (a list such as --array=1,3,7, whose count disagrees with its
// bounds) is refused, since its tasks would not cover the shards.
func slurmShard(getenv func(string) string, num func(string) (int, error)) (Shard, bool, error) {
	id, err := num("SLURM_ARRAY_TASK_ID")
	if err != nil {
		return Shard{}, false, err
	}
	opt := func(k string, def int) (int, bool, error) {
		if getenv(k) == "" {
			return def, false, nil
		}
		v, err := num(k)
		return v, true, err
	}
	lo, _, err := opt("SLURM_ARRAY_TASK_MIN", 0)
	if err != nil {
		return Shard{}, false, err
	}
	step, _, err := opt("SLURM_ARRAY_TASK_STEP", 1)
	if err != nil {
		return Shard{}, false, err
	}
	count, hasCount, err := opt("SLURM_ARRAY_TASK_COUNT", 0)
	if err != nil {
		return Shard{}, false, err
	}
	hi, hasMax, err := opt("SLURM_ARRAY_TASK_MAX", 0)
	if err != nil {
		return Shard{}, false, err
	}
	const big = 1 << 30 // bounds every value, so that no arithmetic below overflows
	for _, v := range []struct {
		k string
		v int
	}{{"SLURM_ARRAY_TASK_ID", id}, {"SLURM_ARRAY_TASK_MIN", lo}, {"SLURM_ARRAY_TASK_MAX", hi}, {"SLURM_ARRAY_TASK_COUNT", count}} {
		if v.v < 0 || v.v > big {
			return Shard{}, false, errs.BadParam("%s=%d is outside 0..%d", v.k, v.v, big)
		}
	}
	if step < 1 || step > big {
		return Shard{}, false, errs.BadParam("SLURM_ARRAY_TASK_STEP=%d (want a step ≥ 1)", step)
	}
	if !hasCount && !hasMax {
		return Shard{}, false, errs.BadParam("SLURM_ARRAY_TASK_ID is set but neither SLURM_ARRAY_TASK_COUNT nor SLURM_ARRAY_TASK_MAX")
	}
	n := count
	if hasMax {
		if hi < lo {
			return Shard{}, false, errs.BadParam("SLURM_ARRAY_TASK_MAX=%d is below SLURM_ARRAY_TASK_MIN=%d", hi, lo)
		}
		n = (hi-lo)/step + 1
		if hasCount && count != n {
			return Shard{}, false, errs.BadParam("Slurm array of %d tasks from %d to %d with step %d is not a range with a step (a list such as --array=1,3,7?): its tasks would not cover the %d shards; submit with --array=0-N or --array=0-N:STEP",
				count, lo, hi, step, n)
		}
	}
	if (id-lo)%step != 0 {
		return Shard{}, false, errs.BadParam("Slurm array task %d is not min %d plus a multiple of the step %d", id, lo, step)
	}
	s := Shard{(id - lo) / step, n}
	if n < 1 || id < lo || s.Index >= n {
		return Shard{}, false, errs.BadParam("Slurm array task %d is not in %d..%d step %d (submit with --array=0-N or --array=0-N:STEP)", id, lo, lo+(n-1)*step, step)
	}
	return s, true, nil
}

// otherCode counts the runs of todo whose spec (their config JSON) db holds from other
// code than the run's own, and returns those codes' identities and the runs' own
// (sorted). It reads the config of every row of another code once.
func (db *DB) otherCode(todo []Run) (int, []string, []string, error) {
	mine := map[string]bool{}
	for _, r := range todo {
		c, err := codeFor(r.Code)
		if err != nil {
			return 0, nil, nil, err
		}
		mine[c.identity(true)] = true
	}
	own := sortedSet(mine)
	args := make([]any, len(own))
	for i, c := range own {
		args[i] = c
	}
	ph := strings.TrimSuffix(strings.Repeat("?,", len(own)), ",")
	rows, err := db.sql.Query(`SELECT config, code FROM `+db.runsTable()+` WHERE code NOT IN (`+ph+`)`, args...)
	if err != nil {
		return 0, nil, nil, wrapf(err, "database %s", fileName(db.path))
	}
	defer rows.Close()
	held := map[[16]byte][]string{}
	interned := map[string]string{} // one copy of each code, however many rows hold it
	for rows.Next() {
		var cfg, code string
		if err := rows.Scan(&cfg, &code); err != nil {
			return 0, nil, nil, wrapf(err, "database %s", fileName(db.path))
		}
		if c, ok := interned[code]; ok {
			code = c
		} else {
			interned[code] = code
		}
		h := sha256.Sum256([]byte(cfg))
		k := [16]byte(h[:16])
		if !contains(held[k], code) {
			held[k] = append(held[k], code)
		}
	}
	if err := rows.Err(); err != nil {
		return 0, nil, nil, wrapf(err, "database %s", fileName(db.path))
	}
	if len(held) == 0 {
		return 0, nil, own, nil
	}
	n := 0
	others := map[string]bool{}
	for _, r := range todo {
		js, err := json.Marshal(r.Spec)
		if err != nil {
			return 0, nil, nil, err
		}
		h := sha256.Sum256(js)
		codes := held[[16]byte(h[:16])]
		if len(codes) == 0 {
			continue
		}
		n++
		for _, c := range codes {
			others[c] = true
		}
	}
	return n, sortedSet(others), own, nil
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// listCodes joins code identities for a one-line message: at most three, then how many
// more.
func listCodes(codes []string) string {
	if len(codes) <= 3 {
		return strings.Join(codes, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(codes[:3], "; "), len(codes)-3)
}
