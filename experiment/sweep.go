package experiment

import (
	"context"
	"errors"
	"io"
	"runtime"
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
		return Shard{}, errs.BadParam("bad shard %q (want i/n with 0 ≤ i < n, e.g. 0/4)", s)
	}
	return Shard{i, n}, nil
}

// ShardFromEnv reads the shard from a Slurm job array (SLURM_ARRAY_TASK_ID with
// SLURM_ARRAY_TASK_COUNT, or with SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_MAX) or a
// Kubernetes Indexed Job (JOB_COMPLETION_INDEX, with count, or TOKENDIST_SHARDS when
// count is 0). It reports ok false when none is set.
func ShardFromEnv(getenv func(string) string, count int) (Shard, bool, error) {
	num := func(k string) (int, error) {
		v, err := strconv.Atoi(strings.TrimSpace(getenv(k)))
		if err != nil {
			return 0, errs.BadParam("%s=%q is not an integer", k, getenv(k))
		}
		return v, nil
	}
	if getenv("SLURM_ARRAY_TASK_ID") != "" {
		id, err := num("SLURM_ARRAY_TASK_ID")
		if err != nil {
			return Shard{}, false, err
		}
		lo, n := 0, 0
		if getenv("SLURM_ARRAY_TASK_MIN") != "" {
			if lo, err = num("SLURM_ARRAY_TASK_MIN"); err != nil {
				return Shard{}, false, err
			}
		}
		switch {
		case getenv("SLURM_ARRAY_TASK_COUNT") != "":
			if n, err = num("SLURM_ARRAY_TASK_COUNT"); err != nil {
				return Shard{}, false, err
			}
		case getenv("SLURM_ARRAY_TASK_MAX") != "":
			hi, err := num("SLURM_ARRAY_TASK_MAX")
			if err != nil {
				return Shard{}, false, err
			}
			n = hi - lo + 1
		default:
			return Shard{}, false, errs.BadParam("SLURM_ARRAY_TASK_ID is set but neither SLURM_ARRAY_TASK_COUNT nor SLURM_ARRAY_TASK_MAX")
		}
		s := Shard{id - lo, n}
		if n < 1 || s.Index < 0 || s.Index >= n {
			return Shard{}, false, errs.BadParam("Slurm array task %d is not in %d..%d (submit with --array=0-N, step 1)", id, lo, lo+n-1)
		}
		return s, true, nil
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
func Sweep(ctx context.Context, reg *registry.Registry, runs []Run, db *DB, o SweepOptions) (SweepStats, error) {
	start := time.Now()
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
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	batch := o.BatchSize
	if batch <= 0 {
		batch = 256
	}
	// wctx is the workers' context: cancelled with ctx, or by the first database error.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan Run)
	results := make(chan Record, 4*workers)
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
				out, err := reg.Run(wctx, r.Spec, &tokendist.RunOptions{Workers: 1})
				wall := time.Since(t0)
				if wctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || out.Result.Status == tokendist.StatusCanceled) {
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
	prog := newProgress(o, reg, todo, st.Skipped, workers)
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
			st.Ran++
			st.RunTime += r.Wall
			if r.Err != nil || r.Out.Result.Status == tokendist.StatusFailed {
				st.Failed++
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
