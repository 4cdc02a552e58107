package experiment

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/internal/errs"
	"github.com/tokendist/tokendist/plot"
	"github.com/tokendist/tokendist/registry"
)

// Exit codes of Main.
const (
	ExitOK     = 0 // success
	ExitFailed = 1 // some runs failed (or a database error)
	ExitUsage  = 2 // bad usage or a bad experiment file
)

const mainUsage = `tokendist — token-distribution experiments from files

Usage:
  tokendist run FILE        run every run of FILE now, print a table (no database)
  tokendist sweep FILE      run FILE's grid in parallel into a results database (resumable)
  tokendist list            list the networks, loads, algorithms, metrics, workloads and churns files can name
  tokendist report          print the runs, a summary or the traces of a database (text, CSV,
                            Markdown, JSON Lines), or one HTML page
  tokendist plot            draw a plot from a database (SVG, PNG or PDF)
  tokendist animate FILE    draw one run as an animation (GIF, HTML page or SVG frame)
  tokendist merge           fold result databases into one (idempotent)
  tokendist version         print the module version and VCS revision
  tokendist help COMMAND    the manual of COMMAND (same as COMMAND --help)

Exit status: 0 success, 1 some runs failed, 2 bad usage or a bad file.
The file format and workflow: docs/experiments.md; clusters: docs/cluster.md.
`

// Main runs the tokendist command line with args (without the program name) against
// reg and returns the exit status. Interrupts (SIGINT, SIGTERM) stop a sweep between
// runs after committing the finished ones.
//
// Every write to stdout is checked: a failed write (a full disk, a closed pipe) makes
// Main print the error on stderr and return ExitFailed.
func Main(reg *registry.Registry, args []string, stdout, stderr io.Writer) int {
	out := &checkedWriter{w: stdout}
	code := mainCmd(reg, args, out, stderr)
	if out.err != nil {
		fmt.Fprintf(stderr, "tokendist: writing the output: %v\n", out.err)
		return max(code, ExitFailed)
	}
	return code
}

func mainCmd(reg *registry.Registry, args []string, stdout, stderr io.Writer) int {
	if reg == nil {
		fmt.Fprintln(stderr, "tokendist: nil registry")
		return ExitUsage
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, mainUsage)
		return ExitUsage
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "-h", "--help", "-help":
		fmt.Fprint(stdout, mainUsage)
		return ExitOK
	case "help":
		if len(rest) == 0 {
			fmt.Fprint(stdout, mainUsage)
			return ExitOK
		}
		cmd, rest = rest[0], []string{"--help"}
	}
	c := &command{reg: reg, stdout: stdout, stderr: stderr, exit: os.Exit}
	switch cmd {
	case "run":
		return c.run(rest)
	case "sweep":
		return c.sweep(rest)
	case "list":
		return c.list(rest)
	case "report":
		return c.report(rest)
	case "plot":
		return c.plot(rest)
	case "animate":
		return c.animate(rest)
	case "merge":
		return c.merge(rest)
	case "version":
		return c.version(rest)
	}
	fmt.Fprintf(stderr, "tokendist: unknown command %s (the commands: run, sweep, list, report, plot, animate, merge, help; see tokendist help)\n", errs.Quote([]byte(cmd)))
	return ExitUsage
}

type command struct {
	reg            *registry.Registry
	stdout, stderr io.Writer
	helping        bool // set while parsing arguments that ask for --help
	exit           func(int)
}

// flags returns a FlagSet whose --help prints manual.
func (c *command) flags(name, manual string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	fs.Usage = func() {
		if c.helping { // --help: parse prints the manual on stdout once
			return
		}
		fmt.Fprint(fs.Output(), manual)
		fmt.Fprintln(fs.Output(), "\nFlags:")
		fs.PrintDefaults()
	}
	return fs
}

// parse parses args (flags may follow positional arguments) and returns the positional
// ones, or an exit code.
func (c *command) parse(fs *flag.FlagSet, args []string) ([]string, int, bool) {
	var pos []string
	for {
		c.helping = slices.ContainsFunc(args, func(a string) bool {
			return a == "-h" || a == "-help" || a == "--help" || a == "--h"
		})
		// The flag package prints its own unprefixed message and the usage on an
		// error: it writes nowhere, and the error is reported here with the prefix.
		fs.SetOutput(io.Discard)
		err := fs.Parse(args)
		fs.SetOutput(c.stderr)
		c.helping = false
		if err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(c.stdout)
				fs.Usage()
				return nil, ExitOK, false
			}
			fmt.Fprintf(c.stderr, "tokendist: %s: %s (see tokendist help %s)\n", fs.Name(), errs.Quote([]byte(err.Error())), fs.Name())
			return nil, ExitUsage, false
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, 0, true
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// readRuns reads the one experiment FILE that cmd takes and expands its grid, or returns
// the exit code of a usage or file error (already reported).
func (c *command) readRuns(cmd string, pos []string, quick bool) (*File, []Run, int, bool) {
	if len(pos) != 1 {
		fmt.Fprintf(c.stderr, "tokendist: %s needs exactly one FILE\n", cmd)
		return nil, nil, ExitUsage, false
	}
	f, err := ReadFile(pos[0], c.reg, quick)
	if err != nil {
		return nil, nil, c.fail(ExitUsage, err), false
	}
	runs, err := f.Specs()
	if err != nil {
		return nil, nil, c.fail(ExitUsage, err), false
	}
	return f, runs, 0, true
}

func (c *command) fail(code int, err error) int {
	msg := err.Error()
	if !strings.HasPrefix(msg, "tokendist: ") {
		msg = "tokendist: " + msg
	}
	fmt.Fprintln(c.stderr, msg)
	return code
}

const runManual = `Usage: tokendist run [flags] FILE

Runs every run of the experiment FILE now, in parallel, without a database, and prints
one row per run (network, loads, algorithm, the model.KEY fields of a network_model that
differ between runs, seed, status, final discrepancy, steps, model time, tokens moved,
metrics). Use it to try a file before sweeping it.

  --quick         use the file's quick section
  --format F      text (default), csv, markdown or jsonl
  --trace-dir D   write each run's trace as D/<key>.csv (the table's trace_file column)
  --plot F        draw every run's discrepancy against steps into F (.svg, .png or .pdf)

Exit status: 0 if every run succeeded, 1 if some failed, 2 for a bad file or flag.
`

func (c *command) run(args []string) int {
	fs := c.flags("run", runManual)
	quick := fs.Bool("quick", false, "use the file's quick section")
	format := fs.String("format", "text", "text, csv, markdown or jsonl")
	traceDir := fs.String("trace-dir", "", "directory for per-run trace CSV files")
	plotFile := fs.String("plot", "", "image file for the discrepancy traces (.svg, .png or .pdf)")
	workers := fs.Int("workers", 0, "runs in parallel (0: all cores)")
	pos, code, ok := c.parse(fs, args)
	if !ok {
		return code
	}
	f, runs, code, ok := c.readRuns("run", pos, *quick)
	if !ok {
		return code
	}
	if err := checkWorkers(*workers); err != nil {
		return c.fail(ExitUsage, err)
	}
	plotFormat := ""
	if *plotFile != "" {
		var err error
		if plotFormat, err = plot.FormatOf(*plotFile); err != nil {
			return c.fail(ExitUsage, err)
		}
	}
	if *traceDir != "" {
		if err := os.MkdirAll(*traceDir, 0o755); err != nil {
			return c.fail(ExitUsage, wrapf(err, "run --trace-dir"))
		}
	}
	fl := newInflight()
	ctx, stop := c.interrupts("run", fl)
	defer stop()
	outs := make([]registry.Result, len(runs))
	errs := make([]error, len(runs))
	w := *workers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	w = max(1, min(w, len(runs)))
	var wg sync.WaitGroup
	next := make(chan int)
	for i := 0; i < w; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				fl.add(runs[j])
				outs[j], errs[j] = runSafely(ctx, c.reg, runs[j], &tokendist.RunOptions{Workers: 1})
				fl.remove(runs[j])
			}
		}()
	}
	for j := range runs {
		next <- j
	}
	close(next)
	wg.Wait()
	// The network model's fields that differ between runs, as model.KEY columns after
	// the algorithm, so that the runs of different models can be told apart.
	models := make([]map[string]any, len(runs))
	mcols := map[string]bool{}
	for i, r := range runs {
		if r.Spec.NetworkModel == nil {
			continue
		}
		js, err := json.Marshal(r.Spec)
		if err != nil {
			return c.fail(ExitFailed, err)
		}
		models[i] = map[string]any{}
		for k, v := range specColumns(string(js)) {
			if strings.HasPrefix(k, "model.") {
				models[i][k] = v
				mcols[k] = true
			}
		}
	}
	var modelCols []string
	for k := range mcols {
		for i := range runs {
			if fmt.Sprint(models[i][k]) != fmt.Sprint(models[0][k]) {
				modelCols = append(modelCols, k)
				break
			}
		}
	}
	sort.Strings(modelCols)
	t := Table{Cols: append(append([]string{"network", "loads", "algorithm"}, modelCols...), "seed", "status", "discrepancy", "steps", "time", "moved")}
	mset := map[string]bool{}
	for _, o := range outs {
		for k := range o.Metrics {
			mset[k] = true
		}
	}
	var ms []string
	for k := range mset {
		ms = append(ms, k)
	}
	sort.Strings(ms)
	for _, m := range ms {
		t.Cols = append(t.Cols, "m."+m)
	}
	if *traceDir != "" {
		t.Cols = append(t.Cols, "trace_file")
	}
	failed := 0
	var series []plot.Series
	for i, r := range runs {
		o := outs[i]
		st := o.Result.Status.String()
		if errs[i] != nil {
			failed++
			st, _, _ = strings.Cut("Failed: "+errs[i].Error(), "\n") // a panic's stack is not shown in the table
		}
		row := []any{r.Network, r.Loads, r.Algorithm}
		for _, k := range modelCols {
			row = append(row, models[i][k])
		}
		row = append(row, r.Spec.Seed, st, o.Result.Loads.Discrepancy(), o.Result.Steps, o.Result.Time, o.Result.Moved)
		if errs[i] != nil {
			row = append(row[:len(row)-4], nil, nil, nil, nil) // a failed run has no results
		}
		for _, m := range ms {
			if v, ok := o.Metrics[m]; ok && errs[i] == nil {
				row = append(row, v)
			} else {
				row = append(row, nil)
			}
		}
		if *traceDir != "" {
			name := filepath.Join(*traceDir, r.Key+".csv")
			if errs[i] != nil {
				name = "" // a failed run has no trace
			}
			row = append(row, name)
		}
		t.Rows = append(t.Rows, row)
		if *traceDir != "" && errs[i] == nil {
			if err := writeTraceFile(filepath.Join(*traceDir, r.Key+".csv"), o.Result.Trace); err != nil {
				return c.fail(ExitFailed, err)
			}
		}
		series = append(series, plot.Series{Name: fmt.Sprintf("%s %s s%d", r.Algorithm, r.Network, r.Spec.Seed), Trace: o.Result.Trace})
	}
	if err := t.Write(c.stdout, *format); err != nil {
		return c.fail(ExitUsage, err)
	}
	if *plotFile != "" {
		img, err := tracesImage(series, f.Name, plotFormat)
		if err == nil {
			err = os.WriteFile(*plotFile, img, 0o644)
		}
		if err != nil {
			return c.fail(ExitFailed, err)
		}
	}
	if failed > 0 {
		fmt.Fprintf(c.stderr, "tokendist: %d of %d runs failed\n", failed, len(runs))
		return ExitFailed
	}
	return ExitOK
}

const sweepManual = `Usage: tokendist sweep [flags] FILE

Runs the grid of the experiment FILE into an SQLite results database, in parallel on
every core. Each run is stored once, keyed by a hash of its canonical configuration and
the code identity (tokendist version prints it: the main module and tokendist versions,
VCS revision, and the SHA-256 of the executable where those cannot tell two builds
apart), with its full configuration (JSON), status, final discrepancy, counters,
metrics, wall time and seed; traces go to their own table when the file's record.trace
is true. A rebuilt program with a changed line has a new identity: runs the database
holds from other code are run anew (a one-line notice on stderr says how many and from
which code), and reports keep the codes apart. --code LABEL (or the file's code: key)
adds a label for what the identity cannot see, such as data files or external tools.

Resume: interrupt a sweep at any moment (Ctrl-C, SIGTERM, even SIGKILL) and run the same
command again: it runs only the runs missing from the database. Finished runs are
committed in transactions every 200 ms, so no row is ever half written; runs in progress
at the interruption are not stored and run again. A second interrupt exits at once,
naming the runs in progress it abandons. Failed runs are stored with their error (a
run whose code panicked, with the panic and its stack) and not retried unless --retry
is given.

Shards: --shard i/n runs the i-th of n disjoint slices of the grid (run number mod n);
without the flag, a Slurm job array (SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_COUNT or
SLURM_ARRAY_TASK_MIN/MAX, and SLURM_ARRAY_TASK_STEP for --array=0-N:STEP) or a
Kubernetes Indexed Job (JOB_COMPLETION_INDEX with --shards or TOKENDIST_SHARDS) selects
the shard. Give each shard its own database: in
--db, {i} and {n} are replaced by the shard index and count (default: FILE's name with
.db, or .shard-{i}-of-{n}.db when sharded; with --quick, .quick.db and
.quick.shard-{i}-of-{n}.db, so that quick results never mix with full ones). The
repository's .gitignore ignores *.db. Combine shards with tokendist merge.

Progress goes to stderr: a bar on a terminal, a line every --every otherwise, with the
runs done, failed and the elapsed time, and an ETA from the estimated cost of the
remaining runs (each run's network size and step budget, at the wall time that finished
runs of the same kind took, shared among the workers); it reads "estimating" until the
finished runs say enough.

Exit status: 0 if every run of the shard is stored without failure, 1 if some failed or
the sweep was interrupted, 2 for a bad file or flag.
`

func (c *command) sweep(args []string) int {
	fs := c.flags("sweep", sweepManual)
	quick := fs.Bool("quick", false, "use the file's quick section")
	dbPath := fs.String("db", "", "results database (default FILE.db, FILE.quick.db with --quick; {i} and {n} name the shard)")
	workers := fs.Int("workers", 0, "runs in parallel (0: all cores)")
	shardFlag := fs.String("shard", "", "run shard i/n of the grid")
	shards := fs.Int("shards", 0, "shard count for a Kubernetes Indexed Job (JOB_COMPLETION_INDEX)")
	retry := fs.Bool("retry", false, "run again the runs stored as failed")
	prog := fs.String("progress", "auto", "auto, bar, lines or none")
	every := fs.Duration("every", 10*time.Second, "interval of plain progress lines")
	name := fs.String("name", "", "experiment name stored with the runs (default: the file's name key or base name)")
	codeLabel := fs.String("code", "", "label of the code, part of every run's key (replaces the file's code key): for data files or tools the program reads")
	pos, code, ok := c.parse(fs, args)
	if !ok {
		return code
	}
	if err := checkWorkers(*workers); err != nil {
		return c.fail(ExitUsage, err)
	}
	f, runs, code, ok := c.readRuns("sweep", pos, *quick)
	if !ok {
		return code
	}
	codeSet := false
	fs.Visit(func(fl *flag.Flag) { codeSet = codeSet || fl.Name == "code" })
	if codeSet && *codeLabel != f.Code {
		f.Code = *codeLabel
		var err error
		if runs, err = f.Specs(); err != nil {
			return c.fail(ExitUsage, wrapf(err, "sweep --code"))
		}
	}
	var shard Shard
	var err error
	if *shardFlag != "" {
		if shard, err = ParseShard(*shardFlag); err != nil {
			return c.fail(ExitUsage, err)
		}
	} else if s, ok, err := ShardFromEnv(os.Getenv, *shards); err != nil {
		return c.fail(ExitUsage, err)
	} else if ok {
		shard = s
	}
	path := *dbPath
	base := strings.TrimSuffix(pos[0], filepath.Ext(pos[0]))
	if path == "" {
		path = defaultDB(base, *quick, shard.Count > 1)
	}
	path = strings.ReplaceAll(strings.ReplaceAll(path, "{i}", fmt.Sprint(shard.Index)), "{n}", fmt.Sprint(shard.Count))
	if *dbPath == "" {
		fmt.Fprintf(c.stderr, "sweep: results in %s (the default database; --db chooses another)\n", path)
	}
	db, err := OpenDB(path)
	if err != nil {
		return c.fail(ExitFailed, err)
	}
	defer db.Close()
	exp := *name
	if exp == "" {
		exp = f.Name
	}
	if exp == "" {
		exp = filepath.Base(base)
	}
	if err := db.storeExperimentFile(exp, pos[0]); err != nil {
		return c.fail(ExitFailed, err)
	}
	o := SweepOptions{Workers: *workers, Shard: shard, Experiment: exp, Retry: *retry, Every: *every}
	switch *prog {
	case "auto":
		o.Progress = c.stderr
		if fh, ok := c.stderr.(*os.File); ok {
			o.Terminal = isTerminal(fh)
		}
	case "bar":
		o.Progress, o.Terminal = c.stderr, true
	case "lines":
		o.Progress = c.stderr
	case "none":
	default:
		fmt.Fprintf(c.stderr, "tokendist: --progress %s (allowed: auto, bar, lines, none)\n", errs.Quote([]byte(*prog)))
		return ExitUsage
	}
	if shard.Count > 1 {
		fmt.Fprintf(c.stderr, "sweep: shard %d/%d into %s\n", shard.Index, shard.Count, path)
	}
	fl := newInflight()
	ctx, stop := c.interrupts("sweep", fl)
	defer stop()
	st, err := sweep(ctx, c.reg, runs, db, o, fl, c.stderr)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(c.stderr, "tokendist: sweep interrupted: %d runs stored; run the same command to finish\n", st.Ran)
			return ExitFailed
		}
		if m := err.Error(); strings.Contains(m, "disk I/O error") || strings.Contains(m, "disk is full") || strings.Contains(m, "readonly database") {
			err = fmt.Errorf("%w (%d runs stored before it; the disk may be full or the file not writable: fix that and run the same command to finish)", err, st.Ran)
		}
		return c.fail(ExitFailed, err)
	}
	if len(st.NonFinite) > 0 {
		fmt.Fprintf(c.stderr, "tokendist: sweep: metrics that were NaN or infinite, stored as empty and flagged in the table nonfinite: %s\n", nonFiniteSummary(st.NonFinite))
	}
	if st.Failed > 0 {
		fmt.Fprintf(c.stderr, "tokendist: %d runs failed (see tokendist report --db %s --where \"status = 'Failed'\")\n", st.Failed, path)
		return ExitFailed
	}
	return ExitOK
}

const listManual = `Usage: tokendist list [flags] [KIND]

Lists every name an experiment file can use: networks, loads, algorithms, metrics (and
any other kind registered), with each parameter's type, default and meaning and the
paper section the entry implements. KIND restricts the list to one kind.

  --json   print the entries as JSON
`

func (c *command) list(args []string) int {
	fs := c.flags("list", listManual)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, code, ok := c.parse(fs, args)
	if !ok {
		return code
	}
	kinds := c.reg.Kinds()
	if len(pos) > 1 {
		fmt.Fprintln(c.stderr, "tokendist: list takes at most one KIND")
		return ExitUsage
	}
	if len(pos) == 1 {
		k := registry.Kind(strings.TrimSuffix(pos[0], "s"))
		if pos[0] == "loads" {
			k = registry.KindLoads
		}
		found := false
		for _, x := range kinds {
			found = found || x == k
		}
		if !found {
			fmt.Fprintf(c.stderr, "tokendist: unknown kind %s (kinds: %v)\n", errs.Quote([]byte(pos[0])), kinds)
			return ExitUsage
		}
		kinds = []registry.Kind{k}
	}
	if *asJSON {
		var all []registry.Entry
		for _, k := range kinds {
			all = append(all, c.reg.Entries(k)...)
		}
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(all); err != nil {
			return c.fail(ExitFailed, err)
		}
		return ExitOK
	}
	for _, k := range kinds {
		fmt.Fprintln(c.stdout, kindHeading(k))
		for _, e := range c.reg.Entries(k) {
			fmt.Fprintf(c.stdout, "  %s — %s\n", e.Name, e.Doc)
			if e.Paper != "" {
				fmt.Fprintf(c.stdout, "      paper: %s\n", e.Paper)
			}
			for _, p := range e.Params {
				def := "required"
				if p.Default != nil {
					def = "default " + fmtValue(p.Default)
				}
				fmt.Fprintf(c.stdout, "      %s (%s, %s): %s", p.Name, p.Type, def, p.Doc)
				if len(p.Allowed) > 0 {
					fmt.Fprintf(c.stdout, " [%s]", strings.Join(p.Allowed, ", "))
				}
				fmt.Fprintln(c.stdout)
			}
		}
		fmt.Fprintln(c.stdout)
	}
	return ExitOK
}

// kindHeading is the heading of a kind in tokendist list: its name in capitals, in the
// plural ("NETWORKS", "LOADS", "CHURNS").
func kindHeading(k registry.Kind) string {
	h := strings.ToUpper(string(k))
	if !strings.HasSuffix(h, "S") {
		h += "S"
	}
	return h
}

// openExisting opens a database to read (report, plot): read-only, never created.
func openExisting(path string) (*DB, error) { return OpenDBReadOnly(path) }

const mergeManual = `Usage: tokendist merge [--on-conflict fail|keep|replace] --into OUT.db SRC.db...

Copies into OUT.db (created if missing) every run and trace of the SRC databases that OUT
lacks, one transaction per source. Runs are keyed by their configuration hash, so merging
a database twice, or overlapping shards, stores each run once: merge is idempotent.

The sources are opened read-only and checked (PRAGMA quick_check) before anything is
written; a merge that fails leaves no OUT.db it created. A run stored in two databases
with different results is a conflict: merge refuses the source (exit 1) unless
--on-conflict says which row wins: keep (the one already in OUT.db) or replace (the
source's).
`

func (c *command) merge(args []string) int {
	fs := c.flags("merge", mergeManual)
	into := fs.String("into", "", "target database")
	onConflict := fs.String("on-conflict", ConflictFail, "a run stored with different results in two databases: fail, keep (the target's row) or replace (the source's row)")
	pos, code, ok := c.parse(fs, args)
	if !ok {
		return code
	}
	if *into == "" || len(pos) == 0 {
		fmt.Fprintln(c.stderr, "tokendist: merge needs --into OUT.db and at least one SRC.db")
		return ExitUsage
	}
	switch *onConflict {
	case ConflictFail, ConflictKeep, ConflictReplace:
	default:
		fmt.Fprintf(c.stderr, "tokendist: merge: --on-conflict %s (allowed: fail, keep, replace)\n", errs.Quote([]byte(*onConflict)))
		return ExitUsage
	}
	// Every source is checked (read-only) before the target is opened, so that a bad
	// source leaves no target behind.
	target, _ := os.Stat(*into)
	for _, p := range pos {
		fi, err := os.Stat(p)
		if err != nil {
			return c.fail(ExitUsage, wrapf(shortPathErr(err), "merge"))
		}
		if a, _ := filepath.Abs(p); a != "" {
			if b, _ := filepath.Abs(*into); a == b || (target != nil && os.SameFile(fi, target)) {
				fmt.Fprintf(c.stderr, "tokendist: merge: %s is the target\n", fileName(p))
				return ExitUsage
			}
		}
		s, err := OpenDBReadOnly(p)
		if err != nil {
			return c.fail(ExitFailed, wrapf(err, "merge"))
		}
		s.Close()
	}
	created := target == nil
	db, err := OpenDB(*into)
	if err != nil {
		return c.fail(ExitFailed, err)
	}
	n, err := db.MergeWith(pos, *onConflict)
	cerr := db.Close()
	if err == nil && cerr != nil {
		err = wrapf(cerr, "merge: close %s", fileName(*into))
	}
	if err != nil {
		if created {
			removeDB(*into) // a target this merge created holds nothing of value
		}
		return c.fail(ExitFailed, err)
	}
	fmt.Fprintf(c.stderr, "merge: %d runs added to %s\n", n, *into)
	return ExitOK
}

// removeDB removes a database file and its WAL and shared-memory files.
func removeDB(path string) {
	for _, suf := range []string{"", "-wal", "-shm", "-journal"} {
		os.Remove(path + suf)
	}
}

// nonFiniteSummary names each metric with the number of runs in which it was NaN or
// infinite, by name: "ratio in 3 runs, speed in 1 run".
func nonFiniteSummary(counts map[string]int) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(counts)) {
		runs := "runs"
		if counts[name] == 1 {
			runs = "run"
		}
		parts = append(parts, fmt.Sprintf("%s in %d %s", name, counts[name], runs))
	}
	return strings.Join(parts, ", ")
}
