// Command gen regenerates the study tables of docs/async.md from the experiment files
// experiments/async-threshold1.yaml, async-diffusion.yaml and async-perfect-tree.yaml:
// it sweeps them through package experiment into a temporary SQLite database (removed
// at the end) and writes each table between its marker comments,
//
//	<!-- gen:NAME begin --> ... <!-- gen:NAME end -->
//
// in docs/async.md. Nothing is written into the work tree except docs/async.md with -w.
// Every run is seeded, so the tables are the same on every machine:
//
//	go run ./docs/async/gen             # print the three tables
//	go run ./docs/async/gen -w          # rewrite them in docs/async.md
//	go run ./docs/async/gen -check      # exit 1 when docs/async.md differs
//	go run ./docs/async/gen -db FILE    # read the runs from FILE instead of running them
//
// With -db the runs are read from a database that tokendist sweep filled from the three
// files (each run of an experiment once); -quick sweeps the files' quick variants (for
// the tests, not for the document).
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/tokendist/tokendist/experiment"
	"github.com/tokendist/tokendist/registry"
)

func main() {
	write := flag.Bool("w", false, "rewrite the tables in the document")
	check := flag.Bool("check", false, "exit 1 when the document's tables differ")
	doc := flag.String("doc", filepath.Join("docs", "async.md"), "the document")
	dir := flag.String("experiments", "experiments", "the directory of the experiment files")
	dbPath := flag.String("db", "", "read the runs from this database instead of running them")
	quick := flag.Bool("quick", false, "sweep the files' quick variants")
	flag.Parse()
	if err := run(*doc, *dir, *dbPath, *quick, *write, *check); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// studies are the document's tables: marker name, experiment file and the function
// that renders the table from the file's runs.
var studies = []struct {
	name, file string
	render     func(rows []row) (string, error)
}{
	{"threshold1", "async-threshold1.yaml", threshold1},
	{"diffusion", "async-diffusion.yaml", diffusion},
	{"perfect-tree", "async-perfect-tree.yaml", perfectTree},
}

func run(doc, dir, dbPath string, quick, write, check bool) error {
	tables, err := generate(dir, dbPath, quick)
	if err != nil {
		return err
	}
	if !write && !check {
		for _, s := range studies {
			fmt.Printf("<!-- %s -->\n%s\n", s.name, tables[s.name])
		}
		return nil
	}
	old, err := os.ReadFile(doc)
	if err != nil {
		return err
	}
	updated, err := replace(old, tables)
	if err != nil {
		return fmt.Errorf("%s: %w", doc, err)
	}
	if check {
		if !bytes.Equal(old, updated) {
			return fmt.Errorf("%s: the study tables differ from the experiment files' runs: run go run ./docs/async/gen -w", doc)
		}
		return nil
	}
	if bytes.Equal(old, updated) {
		return nil
	}
	return os.WriteFile(doc, updated, 0o644)
}

// generate returns the tables by marker name.
func generate(dir, dbPath string, quick bool) (map[string]string, error) {
	if dbPath == "" {
		tmp, err := os.MkdirTemp("", "async-gen-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		dbPath = filepath.Join(tmp, "runs.db")
		if err := sweep(dir, dbPath, quick); err != nil {
			return nil, err
		}
	}
	db, err := experiment.OpenDBReadOnly(dbPath)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	reg := registry.Default()
	tables := map[string]string{}
	for _, s := range studies {
		f, err := experiment.ReadFile(filepath.Join(dir, s.file), reg, quick)
		if err != nil {
			return nil, err
		}
		t, err := experiment.ExportTable(db, "experiment = '"+strings.ReplaceAll(f.Name, "'", "''")+"'")
		if err != nil {
			return nil, err
		}
		rows, err := rowsOf(t)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.file, err)
		}
		if len(rows) == 0 {
			return nil, fmt.Errorf("%s: no runs of experiment %s in the database", s.file, f.Name)
		}
		if tables[s.name], err = s.render(rows); err != nil {
			return nil, fmt.Errorf("%s: %w", s.file, err)
		}
	}
	return tables, nil
}

// sweep runs the three files into the database at path.
func sweep(dir, path string, quick bool) error {
	db, err := experiment.OpenDB(path)
	if err != nil {
		return err
	}
	defer db.Close()
	reg := registry.Default()
	for _, s := range studies {
		f, err := experiment.ReadFile(filepath.Join(dir, s.file), reg, quick)
		if err != nil {
			return err
		}
		runs, err := f.Specs()
		if err != nil {
			return err
		}
		st, err := experiment.Sweep(context.Background(), reg, runs, db,
			experiment.SweepOptions{Workers: runtime.GOMAXPROCS(0), Experiment: f.Name})
		if err != nil {
			return err
		}
		if st.Failed > 0 {
			return fmt.Errorf("%s: %d of %d runs failed", s.file, st.Failed, st.Total)
		}
	}
	return nil
}

// row is one run: its network, fault, patience and figures.
type row struct {
	network          string
	fault            string
	faultRank        int // the order of the faults: none, delays, losses, crash rates
	patience         int64
	status           string
	discrepancy, msd float64
	ratio, time      float64
}

// rowsOf reads the runs of an exported table.
func rowsOf(t experiment.Table) ([]row, error) {
	col := map[string]int{}
	for i, c := range t.Cols {
		col[c] = i
	}
	num := func(r []any, name string) float64 {
		i, ok := col[name]
		if !ok || r[i] == nil {
			return 0
		}
		switch v := r[i].(type) {
		case int64:
			return float64(v)
		case float64:
			return v
		case string:
			x, _ := strconv.ParseFloat(v, 64)
			return x
		}
		return 0
	}
	var out []row
	for _, r := range t.Rows {
		x := row{network: fmt.Sprint(r[col["network"]]), status: fmt.Sprint(r[col["status"]])}
		if x.status == "Failed" {
			return nil, fmt.Errorf("run %v failed: %v", r[col["key"]], r[col["error"]])
		}
		x.patience = int64(num(r, "model.patience"))
		x.discrepancy, x.msd, x.ratio, x.time = num(r, "discrepancy"), num(r, "m.msd"), num(r, "m.moves_ratio"), num(r, "time")
		switch crash, loss, dmax := num(r, "model.crash_rate"), num(r, "model.loss"), num(r, "model.delay.max"); {
		case crash > 0:
			x.fault, x.faultRank = "crash rate "+g(crash), int(3e6+1e6*crash)
		case loss > 0:
			x.fault, x.faultRank = "loss "+g(100*loss)+" %", int(2e6+1e4*loss)
		case dmax > 0:
			x.fault, x.faultRank = "delay on ["+g(num(r, "model.delay.min"))+", "+g(dmax)+"]", int(1e6+dmax)
		default:
			x.fault = "none"
		}
		out = append(out, x)
	}
	return out, nil
}

// g formats a number as the document writes it: integers without a fraction, others
// in the shortest form.
func g(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// group returns the rows grouped by key, the groups in the order of rank then key.
func group(rows []row, key func(row) (string, int)) (keys []string, by map[string][]row) {
	by = map[string][]row{}
	rank := map[string]int{}
	for _, r := range rows {
		k, rk := key(r)
		if _, ok := by[k]; !ok {
			keys = append(keys, k)
			rank[k] = rk
		}
		by[k] = append(by[k], r)
	}
	slices.SortStableFunc(keys, func(a, b string) int { return rank[a] - rank[b] })
	return keys, by
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// thousands writes a non-negative integer with a thin space every three digits, as the
// document does (1 396).
func thousands(x float64) string {
	s := strconv.FormatInt(int64(math.Round(x)), 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// threshold1: per patience and fault, the runs above MSD and the largest excess.
func threshold1(rows []row) (string, error) {
	keys, by := group(rows, func(r row) (string, int) {
		return fmt.Sprintf("| %d | %s |", r.patience, r.fault), int(r.patience)*10_000_000 + r.faultRank
	})
	var b strings.Builder
	b.WriteString("| patience | fault | runs | runs above MSD | largest excess |\n|---|---|---|---|---|\n")
	for _, k := range keys {
		above, excess := 0, 0.0
		for _, r := range by[k] {
			if r.msd <= 0 && r.discrepancy > 0 {
				return "", errors.New("a run without the msd metric")
			}
			if e := r.discrepancy - r.msd; e > 0 {
				above++
				excess = max(excess, e)
			}
		}
		fmt.Fprintf(&b, "%s %d | %d | %s |\n", k, len(by[k]), above, g(excess))
	}
	return b.String(), nil
}

// diffusion: per fault and patience, the mean (largest) discrepancy and the mean
// simulated time on each network (the networks in the order of their names).
func diffusion(rows []row) (string, error) {
	var nets []string
	for _, r := range rows {
		if !slices.Contains(nets, r.network) {
			nets = append(nets, r.network)
		}
	}
	slices.Sort(nets)
	keys, by := group(rows, func(r row) (string, int) {
		return fmt.Sprintf("| %s | %d |", r.fault, r.patience), r.faultRank*10 + int(r.patience)
	})
	var b strings.Builder
	b.WriteString("| fault | patience |")
	for _, n := range nets {
		b.WriteString(" " + n + " |")
	}
	for _, n := range nets {
		b.WriteString(" time, " + n + " |")
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", 2*len(nets)) + "\n")
	for _, k := range keys {
		b.WriteString(k)
		var times []string
		for _, n := range nets {
			var ds, ts []float64
			for _, r := range by[k] {
				if r.network == n {
					ds = append(ds, r.discrepancy)
					ts = append(ts, r.time)
				}
			}
			if len(ds) == 0 {
				b.WriteString(" – |")
				times = append(times, " – |")
				continue
			}
			fmt.Fprintf(&b, " %.1f (%s) |", mean(ds), g(slices.Max(ds)))
			times = append(times, " "+thousands(mean(ts))+" |")
		}
		b.WriteString(strings.Join(times, "") + "\n")
	}
	return b.String(), nil
}

// perfectTree: per fault, the runs, those ending with discrepancy ≤ 1, the moves
// against the optimum and the simulated time.
func perfectTree(rows []row) (string, error) {
	keys, by := group(rows, func(r row) (string, int) { return "| " + r.fault + " |", r.faultRank })
	var b strings.Builder
	b.WriteString("| fault | runs | discrepancy ≤ 1 | moves / optimum, mean | max | simulated time, mean |\n|---|---|---|---|---|---|\n")
	for _, k := range keys {
		perfect := 0
		var ratios, times []float64
		for _, r := range by[k] {
			if r.discrepancy <= 1 {
				perfect++
			}
			ratios = append(ratios, r.ratio)
			times = append(times, r.time)
		}
		fmt.Fprintf(&b, "%s %d | %d | %.3f | %.3f | %s |\n", k, len(by[k]), perfect, mean(ratios), slices.Max(ratios), thousands(mean(times)))
	}
	return b.String(), nil
}

// replace returns doc with each table between its markers replaced.
func replace(doc []byte, tables map[string]string) ([]byte, error) {
	out := doc
	for _, s := range studies {
		begin, end := []byte("<!-- gen:"+s.name+" begin -->\n"), []byte("<!-- gen:"+s.name+" end -->")
		i := bytes.Index(out, begin)
		j := bytes.Index(out, end)
		if i < 0 || j < i {
			return nil, fmt.Errorf("no markers %q ... %q", strings.TrimSpace(string(begin)), end)
		}
		var b bytes.Buffer
		b.Write(out[:i+len(begin)])
		b.WriteString(tables[s.name])
		b.Write(out[j:])
		out = b.Bytes()
	}
	return out, nil
}
