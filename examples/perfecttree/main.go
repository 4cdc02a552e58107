// Command perfecttree reproduces and measures Margara, Pistocchi and Vassura, "Perfect
// token distribution on trees", with the library's two runtimes (simulated and
// concurrent) of the same anonymous node program, and compares it with THRESHOLD-1 and
// DISCREPANCY-1 of Houle, Symvonis and Wood on the same trees.
//
//	go run ./examples/perfecttree                 # about a minute on two cores
//	go run ./examples/perfecttree -quick -out /tmp/pt
//
// It prints four tables (sweep and measured constants, comparison, scaling, the
// erratum) and writes CSV/JSON data and SVG plots into -out.
package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/plot"
)

type config struct {
	maxN  int
	big   int
	seed  uint64
	out   string
	quick bool
}

func main() {
	var c config
	flag.IntVar(&c.maxN, "n", 200, "largest tree of the sweep and the comparison")
	flag.IntVar(&c.big, "big", 10000, "largest tree of the scaling runs")
	flag.Uint64Var(&c.seed, "seed", 1, "seed of every random choice")
	flag.StringVar(&c.out, "out", filepath.Join("out", "perfecttree"), "folder for CSV, JSON and SVG output")
	flag.BoolVar(&c.quick, "quick", false, "tiny sizes (a few seconds)")
	flag.Parse()
	if c.quick {
		c.maxN, c.big = 40, 400
	}
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		fail(err)
	}
	start := time.Now()
	for _, step := range []func(config) error{sweep, compare, scaling, erratum} {
		if err := step(c); err != nil {
			fail(err)
		}
	}
	progress("")
	fmt.Printf("\nDone in %.1fs; output in %s/\n", time.Since(start).Seconds(), c.out)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "perfecttree:", err)
	os.Exit(1)
}

func progress(format string, args ...any) {
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		fmt.Fprintf(os.Stderr, "\r\033[K"+format, args...)
	}
}

func table(header []string, rows [][]string) {
	w := tabwriter.NewWriter(os.Stdout, 2, 0, 2, ' ', 0)
	fmt.Fprintln(w, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(w, strings.Join(r, "\t"))
	}
	w.Flush()
}

func writeCSV(c config, name string, header []string, rows [][]string) error {
	f, err := os.Create(filepath.Join(c.out, name))
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write(header)
	w.WriteAll(rows)
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func writeJSON(c config, name string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(c.out, name), b, 0o644)
}

func savePlot(c config, name string, lines []plot.Line, o *plot.Options) error {
	svg, err := plot.Lines(lines, o)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(c.out, name), svg, 0o644)
}

type tree struct {
	name string
	g    *tokendist.Graph
}

func must(g *tokendist.Graph, err error) *tokendist.Graph {
	if err != nil {
		fail(err)
	}
	return g
}

func caterpillar(spine, legs int) *tokendist.Graph {
	var e [][2]int
	for i := 1; i < spine; i++ {
		e = append(e, [2]int{i - 1, i})
	}
	k := spine
	for i := 0; i < spine; i++ {
		for j := 0; j < legs; j++ {
			e = append(e, [2]int{i, k})
			k++
		}
	}
	return must(tokendist.NewGraph(k, e))
}

// families returns the sweep's and the comparison's trees, up to maxN nodes.
func families(c config) []tree {
	var out []tree
	for _, n := range sizes(c.maxN) {
		out = append(out,
			tree{fmt.Sprintf("random-tree(n=%d)", n), must(tokendist.RandomTree(n, c.seed+uint64(n)))},
			tree{fmt.Sprintf("star(n=%d)", n), must(tokendist.Star(n))},
			tree{fmt.Sprintf("path(n=%d)", n), must(tokendist.Path(n))},
			tree{fmt.Sprintf("Caterpillar(%d,3)", n/4), caterpillar(n/4, 3)})
	}
	for h := 2; ; h++ {
		n, err := tokendist.KaryTreeOrder(tokendist.KaryShape{Height: h, Arity: 2})
		if err != nil || n > c.maxN {
			break
		}
		out = append(out, tree{fmt.Sprintf("kary-tree(height=%d, arity=2)", h), must(tokendist.KaryTree(tokendist.KaryShape{Height: h, Arity: 2}))})
	}
	return out
}

func sizes(maxN int) []int {
	var out []int
	for _, n := range []int{10, 20, 50, 100, 200, 500, 1000} {
		if n <= maxN {
			out = append(out, n)
		}
	}
	return out
}

type loadSet struct {
	name  string
	loads tokendist.Loads
}

func loadSets(n int, seed uint64) []loadSet {
	mk := func(l tokendist.Loads, err error) tokendist.Loads {
		if err != nil {
			fail(err)
		}
		return l
	}
	return []loadSet{
		{"random 0..30", mk(tokendist.RandomRange(n, 0, 30, seed))},
		{"all on one node", mk(tokendist.PointMass(n, int64(3*n+7), int(seed)%n))},
		{"all zero", make(tokendist.Loads, n)},
		{"T < N", mk(tokendist.UniformRandom(n, int64(n/2+1), seed))},
		{"N divides T", mk(tokendist.UniformRandom(n, int64(5*n), seed))},
	}
}

func policies() []tokendist.Delays {
	r, _ := tokendist.NewRandomDelays(5)
	rv, _ := tokendist.NewReverseDelays(7)
	sl, _ := tokendist.NewSlowLinkDelays(6)
	u, _ := tokendist.NewUnitDelays()
	se, _ := tokendist.NewSerialDelays()
	return []tokendist.Delays{u, r, se, rv, sl}
}

// sweep runs every tree, load set and delay policy on the simulated runtime and a
// subset on the concurrent one, checks Theorems 1-3, and reports the constants of the
// time and move bounds.
func sweep(c config) error {
	fmt.Println("== Sweep: every run must end perfect with Theorems 1-3 holding")
	var rows [][]string
	var pts []plot.Line
	var tx, ty []float64
	type agg struct {
		runs, perfect    int
		maxTime, maxExcs float64
	}
	per := map[string]*agg{}
	var keys []string
	ctx := context.Background()
	runs := 0
	for _, tr := range families(c) {
		g := tr.g
		diam, _ := g.Diameter()
		d := int64(g.MaxDegree())
		for _, ls := range loadSets(g.Order(), c.seed) {
			for pi, p := range append(policies(), nil) {
				progress("sweep: %s, %s, %v", tr.name, ls.name, p)
				var r ptRun
				var err error
				key := fmt.Sprint(p)
				if p == nil {
					key = "concurrent"
					if g.Order() > 100 {
						continue
					}
					r, err = runPT(ctx, g, ls.loads, &tokendist.PerfectTreeOptions{Goroutines: true, Jitter: true}, c.seed)
				} else {
					r, err = runPT(ctx, g, ls.loads, &tokendist.PerfectTreeOptions{Delays: p, ShufflePorts: runs%2 == 1}, c.seed)
				}
				runs++
				if err != nil {
					return fmt.Errorf("%s %s %s: %w", tr.name, ls.name, key, err)
				}
				a := per[key]
				if a == nil {
					a = &agg{}
					per[key] = a
					keys = append(keys, key)
				}
				a.runs++
				if r.CheckTheorems(g) == nil {
					a.perfect++
				}
				if diam > 0 && pi == 0 {
					x := float64(int64(diam) * (r.T + d))
					a.maxTime = math.Max(a.maxTime, float64(r.Time)/x)
					tx, ty = append(tx, x), append(ty, float64(r.Time))
				}
				if r.Extra > 0 && diam > 0 {
					a.maxExcs = math.Max(a.maxExcs, float64(r.ExcessMoves)/float64(int64(diam)*r.Extra))
				}
				rows = append(rows, []string{tr.name, ls.name, key, strconv.Itoa(r.N), strconv.FormatInt(r.T, 10),
					strconv.Itoa(diam), strconv.FormatInt(d, 10), strconv.Itoa(r.Root), strconv.FormatBool(r.Perfect),
					strconv.FormatInt(r.Time, 10), strconv.FormatInt(r.PhaseTime[0], 10), strconv.FormatInt(r.PhaseTime[1], 10),
					strconv.FormatInt(r.Messages[0], 10), strconv.FormatInt(r.Messages[1], 10), strconv.FormatInt(r.Messages[2], 10),
					strconv.FormatInt(r.TotalMoves(), 10), strconv.FormatInt(r.OptimalMoves, 10), strconv.FormatInt(r.ExcessMoves, 10)})
			}
		}
	}
	progress("")
	var summary [][]string
	for _, k := range keys {
		a := per[k]
		tm := "-"
		if k == "unit" {
			tm = fmt.Sprintf("%.3f", a.maxTime)
		}
		summary = append(summary, []string{k, strconv.Itoa(a.runs), strconv.Itoa(a.perfect), tm, fmt.Sprintf("%.3f", a.maxExcs)})
	}
	table([]string{"runtime / delays", "runs", "Theorems 1-3 held", "max time/(D·(T+d))", "max excess/(D·(T mod N))"}, summary)
	if err := writeCSV(c, "sweep.csv", []string{"tree", "loads", "runtime", "n", "T", "D", "maxdeg", "root", "perfect",
		"time", "phase1_end", "phase2_end", "messages1", "messages2", "messages3", "moves", "optimum", "excess"}, rows); err != nil {
		return err
	}
	pts = append(pts, plot.Line{Name: "PerfectTree, unit delays", X: tx, Y: ty})
	return savePlot(c, "sweep-time.svg", pts, &plot.Options{Title: "Completion time against D·(T+d)",
		XLabel: "D·(T+d)", YLabel: "time units", LogX: true, LogY: true, Points: true})
}

// outcome is one algorithm's run in the comparison.
type outcome struct {
	Tree        string  `json:"tree"`
	Loads       string  `json:"loads"`
	N           int     `json:"n"`
	T           int64   `json:"t"`
	Algorithm   string  `json:"algorithm"`
	Discrepancy int64   `json:"final_discrepancy"`
	Perfect     bool    `json:"perfect"`
	LastMove    int64   `json:"last_move_time"`
	Stop        int64   `json:"stop_time"` // -1: the algorithm has no termination rule
	Moves       int64   `json:"moves"`
	Optimum     int64   `json:"optimum"`
	Ratio       float64 `json:"ratio"`
}

// compare runs PerfectTree, THRESHOLD-1 and DISCREPANCY-1 on the same trees and loads.
func compare(c config) error {
	fmt.Println("\n== Comparison with THRESHOLD-1 and DISCREPANCY-1 (Houle, Symvonis, Wood) on the same trees")
	var all []outcome
	ctx := context.Background()
	for _, tr := range families(c) {
		g := tr.g
		for _, ls := range loadSets(g.Order(), c.seed)[:2] {
			opt, err := tokendist.OptimalPerfectMoves(g, ls.loads)
			if err != nil {
				return err
			}
			progress("compare: %s, %s", tr.name, ls.name)
			r, err := runPT(ctx, g, ls.loads, nil, c.seed)
			if err != nil {
				return err
			}
			all = append(all, outcome{tr.name, ls.name, g.Order(), r.T, "PerfectTree", r.Loads.Discrepancy(), r.Perfect,
				r.LastMove, r.Time, r.TotalMoves(), opt, ratio(r.TotalMoves(), opt)})
			for _, alg := range []string{"THRESHOLD-1", "DISCREPANCY-1"} {
				o, err := runDimex(ctx, alg, g, ls.loads, c.seed)
				if err != nil {
					return fmt.Errorf("%s on %s: %w", alg, tr.name, err)
				}
				o.Tree, o.Loads, o.N, o.T, o.Optimum, o.Ratio = tr.name, ls.name, g.Order(), r.T, opt, ratio(o.Moves, opt)
				all = append(all, o)
			}
		}
	}
	progress("")
	var rows [][]string
	for _, o := range all {
		stop := "never (no rule)"
		if o.Stop >= 0 {
			stop = strconv.FormatInt(o.Stop, 10)
		}
		rows = append(rows, []string{o.Tree, o.Loads, o.Algorithm, strconv.FormatInt(o.Discrepancy, 10), strconv.FormatBool(o.Perfect),
			strconv.FormatInt(o.LastMove, 10), stop, strconv.FormatInt(o.Moves, 10), strconv.FormatInt(o.Optimum, 10), fmt.Sprintf("%.2f", o.Ratio)})
	}
	header := []string{"tree", "loads", "algorithm", "final disc.", "perfect", "last move", "terminates at", "moves", "optimum", "moves/opt"}
	table(header, rows)
	if err := writeCSV(c, "comparison.csv", header, rows); err != nil {
		return err
	}
	if err := writeJSON(c, "comparison.json", all); err != nil {
		return err
	}
	// Plots over the random trees: time, moves ratio and final discrepancy against n.
	for _, pl := range []struct {
		file, title, ylabel string
		y                   func(o outcome) float64
		logY                bool
	}{
		{"comparison-time.svg", "Time to the last token move (random trees, random loads)", "time units", func(o outcome) float64 { return float64(o.LastMove) }, true},
		{"comparison-moves.svg", "Token moves / optimum (random trees, random loads)", "ratio", func(o outcome) float64 { return o.Ratio }, false},
		{"comparison-discrepancy.svg", "Final discrepancy (random trees, random loads)", "discrepancy", func(o outcome) float64 { return float64(o.Discrepancy) }, false},
	} {
		byAlg := map[string]*plot.Line{}
		var names []string
		for _, o := range all {
			if !strings.HasPrefix(o.Tree, "RandomTree") || o.Loads != "random 0..30" {
				continue
			}
			ln := byAlg[o.Algorithm]
			if ln == nil {
				ln = &plot.Line{Name: o.Algorithm}
				byAlg[o.Algorithm] = ln
				names = append(names, o.Algorithm)
			}
			ln.X = append(ln.X, float64(o.N))
			ln.Y = append(ln.Y, pl.y(o))
		}
		sort.Strings(names)
		var lines []plot.Line
		for _, nm := range names {
			lines = append(lines, *byAlg[nm])
		}
		if err := savePlot(c, pl.file, lines, &plot.Options{Title: pl.title, XLabel: "nodes", YLabel: pl.ylabel,
			LogY: pl.logY, Points: true}); err != nil {
			return err
		}
	}
	return nil
}

func ratio(moves, opt int64) float64 {
	switch {
	case moves == opt:
		return 1
	case opt == 0:
		return math.Inf(1)
	}
	return float64(moves) / float64(opt)
}

// runDimex runs THRESHOLD-1 until its loads are stable, or DISCREPANCY-1 until every
// node has decided to stop, and finds the time of the last token move from a trace
// sampled once per round.
func runDimex(ctx context.Context, alg string, g *tokendist.Graph, loads tokendist.Loads, seed uint64) (outcome, error) {
	var d interface {
		tokendist.Balancer
		Colors() int
	}
	var err error
	if alg == "THRESHOLD-1" {
		d, err = tokendist.NewThreshold1(g, nil)
	} else {
		d, err = tokendist.NewDiscrepancy1(g, nil, nil)
	}
	if err != nil {
		return outcome{}, err
	}
	every := int64(max(d.Colors(), 1))
	// DISCREPANCY-1 stops by its own local rule, not by Run's stability check.
	opts := &tokendist.RunOptions{MaxSteps: 1 << 26, SampleEvery: every, Seed: seed, NoStability: alg == "DISCREPANCY-1"}
	res, err := tokendist.Run(ctx, g, loads, d, opts)
	if err != nil && !errors.Is(err, context.Canceled) {
		return outcome{}, err
	}
	o := outcome{Algorithm: alg, Discrepancy: res.Discrepancy(), Perfect: tokendist.IsPerfectDistribution(res.Loads),
		Moves: res.Moved, Stop: -1}
	for i := len(res.Trace) - 1; i > 0; i-- {
		if res.Trace[i-1].Moved != res.Trace[i].Moved {
			o.LastMove = res.Trace[i].Time
			break
		}
	}
	if alg == "DISCREPANCY-1" {
		if res.Status != tokendist.StatusDone {
			return o, fmt.Errorf("DISCREPANCY-1 stopped with %v", res.Status)
		}
		o.Stop = res.Time
	}
	return o, nil
}

// scaling runs both runtimes on random trees up to -big nodes with ten tokens per node.
func scaling(c config) error {
	fmt.Println("\n== Scaling: random trees, T = 10·N spread uniformly, and all T on one node")
	var rows [][]string
	lines := map[string]*plot.Line{}
	var names []string
	ctx := context.Background()
	for _, n := range []int{c.big / 10, c.big / 3, c.big} {
		g := must(tokendist.RandomTree(n, c.seed))
		diam, _ := g.Diameter()
		for _, kind := range []string{"uniform", "one node"} {
			var loads tokendist.Loads
			var err error
			if kind == "uniform" {
				loads, err = tokendist.UniformRandom(n, int64(10*n), c.seed)
			} else {
				loads, err = tokendist.PointMass(n, int64(10*n), 0)
			}
			if err != nil {
				return err
			}
			for _, rt := range []string{"simulated", "concurrent"} {
				progress("scaling: n = %d, %s, %s", n, kind, rt)
				var r ptRun
				if rt == "simulated" {
					r, err = runPT(ctx, g, loads, nil, 0)
				} else {
					r, err = runPT(ctx, g, loads, &tokendist.PerfectTreeOptions{Goroutines: true}, 0)
				}
				if err != nil {
					return err
				}
				if err := r.CheckTheorems(g); err != nil {
					return err
				}
				rows = append(rows, []string{strconv.Itoa(n), strconv.Itoa(diam), kind, rt, strconv.FormatInt(r.Time, 10),
					strconv.FormatInt(r.TotalMoves(), 10), strconv.FormatInt(r.TotalMessages(), 10), fmt.Sprintf("%.3f", r.Wall.Seconds())})
				key := rt + ", " + kind
				if lines[key] == nil {
					lines[key] = &plot.Line{Name: key}
					names = append(names, key)
				}
				lines[key].X = append(lines[key].X, float64(n))
				lines[key].Y = append(lines[key].Y, r.Wall.Seconds())
			}
		}
	}
	progress("")
	header := []string{"n", "D", "loads", "runtime", "time units", "moves", "messages", "wall s"}
	table(header, rows)
	if err := writeCSV(c, "scaling.csv", header, rows); err != nil {
		return err
	}
	var ls []plot.Line
	for _, k := range names {
		ls = append(ls, *lines[k])
	}
	return savePlot(c, "scaling.svg", ls, &plot.Options{Title: "Wall time of the two runtimes", XLabel: "nodes",
		YLabel: "seconds", LogX: true, LogY: true, Points: true})
}

// erratum shows the paper's pseudo-code stranding a token on the minimal counterexample.
func erratum(c config) error {
	fmt.Println("\n== Erratum: phases 2 and 3 overlap; the literal pseudo-code strands a token (Path(4), loads 2 0 3 1)")
	g := must(tokendist.Path(4))
	loads := tokendist.Loads{2, 0, 3, 1}
	var rows [][]string
	for _, literal := range []bool{true, false} {
		r, err := runPT(context.Background(), g, loads, &tokendist.PerfectTreeOptions{Literal: literal}, 0)
		if err != nil {
			return err
		}
		name := "corrected (phase-3 messages tagged)"
		if literal {
			name = "literal pseudo-code"
		}
		rows = append(rows, []string{name, fmt.Sprint(r.Loads), strconv.FormatBool(r.Perfect), strconv.Itoa(r.Finished), fmt.Sprint(r.CheckTheorems(g))})
	}
	table([]string{"program", "final loads", "perfect", "finished", "theorems"}, rows)
	return nil
}

// ptRun is one perfect-tree run: the protocol's report, the final loads and the
// wall-clock time.
type ptRun struct {
	tokendist.PerfectTreeReport
	Loads tokendist.Loads
	Wall  time.Duration
}

// runPT runs the perfect-tree protocol on g from loads with Run until every node is
// Finished (no step budget).
func runPT(ctx context.Context, g *tokendist.Graph, loads tokendist.Loads, opts *tokendist.PerfectTreeOptions, seed uint64) (ptRun, error) {
	b, err := tokendist.NewPerfectTree(g, opts)
	if err != nil {
		return ptRun{}, err
	}
	start := time.Now()
	res, err := tokendist.Run(ctx, g, loads, b, &tokendist.RunOptions{MaxSteps: math.MaxInt64, NoStability: true, Seed: seed})
	rep, _ := res.Report.(tokendist.PerfectTreeReport)
	return ptRun{PerfectTreeReport: rep, Loads: res.Loads, Wall: time.Since(start)}, err
}
