package experiment

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tokendist/tokendist/internal/errs"
)

const reportManual = `Usage: tokendist report [flags] --db FILE

Prints the runs stored in a results database, one row per run: experiment, network, n,
loads, algorithm, one column per parameter of the network, loads, algorithm and stop rule
(network_name, network.PARAM, ..., stop.FIELD), seed, status, error, final and initial
discrepancy, steps, model time, tokens moved, messages, negative steps, wall seconds, the
run key and one column m.NAME per metric. A failed run shows its status and error and
no numbers. CSV and JSON Lines carry every number in full precision and read directly
into pandas, R, Polars or DuckDB (which also turn them into Parquet in one line).

With --summary, one row per group of runs (--by, default experiment, network, n, loads,
algorithm): the number of runs, the runs per status (status.Done, status.MaxSteps,
status.Failed, ...), and for each column of --values (default discrepancy, steps, moved
and every metric) its count, mean, standard deviation, 95% confidence interval of the
mean (Student's t), minimum, quartiles, median and maximum, as COLUMN_n, COLUMN_mean,
COLUMN_sd, COLUMN_ci95_low, COLUMN_ci95_high, COLUMN_min, COLUMN_q1, COLUMN_median,
COLUMN_q3 and COLUMN_max.

With --traces, the stored trace samples (record.trace: true) of the runs: key,
experiment, network, loads, algorithm, seed, step, time, discrepancy, max_load, min_load,
potential, moved, messages, negative.

--format html writes one self-contained page (--out FILE.html): the experiment file, the
summary table and the standard plots (final discrepancy and steps against n per
algorithm and network family, and the traces when stored), as inline SVG and CSS.

  --db FILE       the database (required)
  --format F      text (default), csv, markdown, jsonl or html
  --out FILE      write to FILE instead of standard output (required for html)
  --summary       aggregate over seeds
  --by COLS       the columns the summary groups by (comma-separated)
  --values COLS   the numeric columns the summary describes (comma-separated)
  --traces        print the stored trace samples
  --where SQL     an SQL condition on the runs table, e.g. "algorithm_name = 'threshold-1'"
  --file F        html: the experiment file to show (default: the one stored by sweep)
  --no-timing     leave out the wall time, so that equal databases print equal reports
  --digits N      significant digits of the numbers in text, markdown and html (default
                  4; 0: full precision); csv and jsonl always carry full precision.
                  The text summary fits 120 columns: one table when it fits, else
                  one block per group with a line per described column
  --all-code      pool the runs of different code in the summary and the HTML plots

Runs of different code (see tokendist version: the main module, its VCS revision, the
digest of the executable where those cannot tell two builds apart, and the sweep's
--code label) are never pooled: when the runs come from more than one code, every table
has a column code saying which code each row is from, and the summary groups by it,
unless --all-code asks to pool them.
`

// reportFormats are the formats tokendist report writes.
var reportFormats = []string{"text", "csv", "markdown", "jsonl", "html"}

func (c *command) report(args []string) int {
	fs := c.flags("report", reportManual)
	dbPath := fs.String("db", "", "results database")
	format := fs.String("format", "text", "text, csv, markdown, jsonl or html")
	out := fs.String("out", "", "output file (default: standard output)")
	summary := fs.Bool("summary", false, "aggregate over seeds")
	by := fs.String("by", "", "summary: group by these columns (comma-separated)")
	values := fs.String("values", "", "summary: numeric columns to describe (comma-separated)")
	traces := fs.Bool("traces", false, "print the stored trace samples")
	where := fs.String("where", "", "SQL condition")
	file := fs.String("file", "", "html: the experiment file to show")
	noTiming := fs.Bool("no-timing", false, "leave out wall_seconds (to compare databases)")
	digits := fs.Int("digits", DefaultDigits, "significant digits of the numbers in text, markdown and html (0: full precision; csv and jsonl always have it)")
	allCode := fs.Bool("all-code", false, "pool the runs of different code in summaries and plots (default: kept apart)")
	pos, code, ok := c.parse(fs, args)
	if !ok {
		return code
	}
	if *dbPath == "" && len(pos) == 1 {
		*dbPath, pos = pos[0], nil
	}
	if *dbPath == "" || len(pos) > 0 {
		fmt.Fprintln(c.stderr, "tokendist: report needs --db FILE and no other argument")
		return ExitUsage
	}
	if !contains(reportFormats, *format) {
		fmt.Fprintf(c.stderr, "tokendist: --format %s (allowed: %s)\n", errs.Quote([]byte(*format)), strings.Join(reportFormats, ", "))
		return ExitUsage
	}
	if *format == "html" && *out == "" {
		fmt.Fprintln(c.stderr, "tokendist: --format html needs --out FILE.html")
		return ExitUsage
	}
	if *digits < 0 || *digits > 17 {
		fmt.Fprintf(c.stderr, "tokendist: report --digits %d (allowed: 1 to 17 significant digits, or 0 for full precision)\n", *digits)
		return ExitUsage
	}
	if *traces && *summary {
		fmt.Fprintln(c.stderr, "tokendist: --traces and --summary exclude each other")
		return ExitUsage
	}
	if (*by != "" || *values != "") && !*summary {
		fmt.Fprintln(c.stderr, "tokendist: --by and --values need --summary")
		return ExitUsage
	}
	db, err := openExisting(*dbPath)
	if err != nil {
		return c.fail(ExitUsage, err)
	}
	defer db.Close()
	if *format == "html" {
		page, err := HTMLReport(db, HTMLOptions{Where: *where, File: *file, By: splitList(*by), AllCode: *allCode, Digits: htmlDigits(*digits)})
		if err != nil {
			return c.fail(ExitUsage, err)
		}
		if err := os.WriteFile(*out, page, 0o644); err != nil {
			return c.fail(ExitFailed, err)
		}
		fmt.Fprintf(c.stderr, "report: wrote %s\n", *out)
		return ExitOK
	}
	var t Table
	if *traces {
		t, err = TracesTable(db, *where)
	} else {
		t, err = ExportTable(db, *where)
		if err == nil && *noTiming {
			t = t.Without("wall_seconds")
		}
		if err == nil && *summary {
			if *allCode {
				t = t.Without("code")
			}
			t, err = Summary(t, splitList(*by), splitList(*values))
		}
	}
	if err != nil {
		return c.fail(ExitUsage, err)
	}
	var w io.Writer = c.stdout
	var fh *os.File
	if *out != "" {
		if fh, err = os.Create(*out); err != nil {
			return c.fail(ExitFailed, err)
		}
		w = fh
	}
	if *summary && *format == "text" {
		err = writeSummaryText(w, t, *digits)
	} else {
		err = t.WriteDigits(w, *format, *digits)
	}
	if fh != nil {
		if cerr := fh.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return c.fail(ExitFailed, err)
	}
	return ExitOK
}

// htmlDigits maps --digits (0: full precision) to HTMLOptions.Digits (negative: full
// precision).
func htmlDigits(d int) int {
	if d == 0 {
		return -1
	}
	return d
}

// splitList splits a comma-separated list, dropping blanks ("" gives nil).
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
